"""What researchers get out of instance-level data: sample-by-sample comparison of two
runs (:mod:`eee.analysis.compare`), a Rasch fit over a benchmark's records
(:mod:`eee.analysis.irt`), and the pages with plots the pipeline writes for the site
(:mod:`eee.analysis.pages`, :mod:`eee.analysis.svg`).

numpy and scipy are imported inside the functions: nothing here is on the hook path.
"""

from __future__ import annotations
