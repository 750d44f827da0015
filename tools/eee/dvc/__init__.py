"""DVC without loading a DVC repository: pointer files (:mod:`.pointer`), the cache and
the remote through dvc-data (:mod:`.store`), and the pipeline's ``dvc repro``
(:mod:`.repro`). Named ``eee.dvc``; the DVC library itself is the top-level ``dvc``."""
