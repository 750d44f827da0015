import sys

from eee.cli import main

sys.exit(main())
