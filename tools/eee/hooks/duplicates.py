"""Hook ``eee-duplicates``: warn (never block) when a staged record looks like one already
in the store: same model, benchmark, metric, evaluator and eval library.

Such candidates live in the record's own folder (the folder is the model), so only that
folder is read.
"""

from __future__ import annotations

import functools
import os

from eee.hooks import data_paths, emit
from eee.jsonlite import load_object as _load
from eee.rules.commit import duplicate_findings


def main(argv: list[str]) -> int:
    # several staged records of one folder read and list it once
    load = functools.cache(_load)
    listing = functools.cache(lambda folder: sorted(os.listdir(folder)))
    findings = []
    for path in data_paths(argv):
        if not path.endswith(".json"):
            continue
        doc = load(path)
        if doc is None:
            continue
        folder = os.path.dirname(path)
        others = {}
        for name in listing(folder):
            other = f"{folder}/{name}"
            if name.endswith(".json") and other != path:
                loaded = load(other)
                if loaded is not None:
                    others[other] = loaded
        findings += duplicate_findings(path, doc, others)
    emit(findings)
    return 0
