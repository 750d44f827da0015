"""Finding records and reading their per-sample scores, for the analyses.

A record is named by its uuid or by a unique prefix of at least 8 hex digits. Its sidecar
is read from the work tree (``<uuid>_samples.jsonl`` beside the record); a sidecar that
DVC tracks but that was not pulled is reported as such, never treated as empty.

Only what the statistics need is kept from a row: the sample id and hash, the result it
belongs to (``evaluation_result_id``, else ``evaluation_name``), ``evaluation.score`` and
``evaluation.is_correct``. Rows repeating a sample within one result (epochs) are averaged.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from eee.catalog.table import record_paths
from eee.reporting.findings import Finding, Refused
from eee.store.limits import RECORD_MAX_BYTES, Unreadable, iter_lines, read_regular
from eee.store.paths import POINTER_SUFFIX, SIDECAR_SUFFIX

MIN_PREFIX = 8
_HEX = re.compile(r"^[0-9a-f-]+$")

# why a record has no per-sample scores to compare
NO_SIDECAR = "no sidecar"  # the record declares no detailed_evaluation_results
NOT_PULLED = "not pulled"  # tracked by DVC, not in the work tree
UNREADABLE = "unreadable"


class StoredRecord:
    """A record of the store: its uuid, path, document and governance status."""

    __slots__ = ("doc", "path", "rel", "status", "uuid")

    def __init__(self, uuid: str, rel: str, path: Path, doc: dict[str, Any], status: str = "active") -> None:
        self.uuid = uuid
        self.rel = rel
        self.path = path
        self.doc = doc
        self.status = status

    @property
    def benchmark(self) -> str:
        return self.rel.split("/")[1]

    @property
    def model_id(self) -> str:
        info = self.doc.get("model_info")
        mid = info.get("id") if isinstance(info, dict) else None
        return mid if isinstance(mid, str) else "/".join(self.rel.split("/")[2:4])

    @property
    def eval_library(self) -> str | None:
        lib = self.doc.get("eval_library")
        name = lib.get("name") if isinstance(lib, dict) else None
        return name if isinstance(name, str) else None

    @property
    def sidecar(self) -> Path:
        return self.path.with_name(self.uuid + SIDECAR_SUFFIX)

    def sidecar_state(self) -> str | None:
        """None when the sidecar is there to read, else why not (NO_SIDECAR, NOT_PULLED)."""
        if self.sidecar.is_file():
            return None
        if not isinstance(self.doc.get("detailed_evaluation_results"), dict):
            return NO_SIDECAR
        return NOT_PULLED

    def label(self) -> str:
        lib = self.eval_library
        return f"{self.model_id} ({lib}, {self.uuid[:8]})" if lib else f"{self.model_id} ({self.uuid[:8]})"


def _load_doc(path: Path) -> dict[str, Any]:
    from eee.store.strictjson import JSONProblem, loads

    try:
        doc = loads(read_regular(path, RECORD_MAX_BYTES, "record"))
    except (OSError, JSONProblem) as exc:
        raise Refused(Finding(str(path), "$", f"the record cannot be read: {exc}", check="analysis")) from None
    if not isinstance(doc, dict):
        raise Refused(Finding(str(path), "$", "the record is not a JSON object", check="analysis"))
    return doc


def lifecycle(state: Any) -> str:
    """The status the analyses show: ``retracted``, ``superseded`` or ``duplicate`` when
    the ledger takes the record out of the default statistics (one meaning of active: the
    catalogue's :func:`eee.catalog.table.exclusion`), else the fold's status (active,
    flagged, disputed)."""
    from eee.catalog.table import exclusion

    return exclusion(state) or str(state.status)


def _status_of(root: Path, uuid: str, ledger: Any = None) -> str:
    if ledger is None:
        from eee.governance.status import read_ledger

        ledger = read_ledger(root)
    return lifecycle(ledger.state(uuid))


def resolve(root: Path, ref: str, ledger: Any = None) -> StoredRecord:
    """The record named by ``ref`` (a uuid or a unique prefix of at least 8 hex digits).
    Raises Refused when it is too short, unknown or ambiguous."""
    want = ref.strip().lower()
    if not _HEX.match(want) or len(want.replace("-", "")) < MIN_PREFIX:
        raise Refused(
            Finding(
                ref,
                "$",
                f"{ref!r} is not a record uuid or a prefix of at least {MIN_PREFIX} hex digits",
                hint="give the uuid (the record's file name) or its first 8 characters or more",
                check="analysis",
            )
        )
    found = [(u, rel) for u, rel in record_paths(root) if u.startswith(want)]
    if not found:
        raise Refused(
            Finding(ref, "$", f"no record in the store starts with {want}", hint="check the uuid", check="analysis")
        )
    if len(found) > 1:
        raise Refused(
            Finding(
                ref,
                "$",
                f"{want} is the start of {len(found)} records: " + ", ".join(u for u, _ in found[:5]),
                hint="give more characters of the uuid",
                check="analysis",
            )
        )
    uuid, rel = found[0]
    return StoredRecord(uuid, rel, root / rel, _load_doc(root / rel), _status_of(root, uuid, ledger))


def records_of(
    root: Path, benchmark: str, model: str | None = None, active_only: bool = True, ledger: Any = None
) -> Iterator[StoredRecord]:
    """The records of one benchmark folder (of one model_info.id when ``model`` is given),
    active ones only unless ``active_only`` is false."""
    from eee.catalog.table import is_active

    if ledger is None:
        from eee.governance.status import read_ledger

        ledger = read_ledger(root)
    folder = root / "data" / benchmark
    if not folder.is_dir():
        return
    for developer in sorted(p.name for p in folder.iterdir() if p.is_dir()):
        for model_dir in sorted(p.name for p in (folder / developer).iterdir() if p.is_dir()):
            for path in sorted((folder / developer / model_dir).glob("*.json")):
                uuid = path.name[: -len(".json")]
                state = ledger.state(uuid)
                if active_only and not is_active(state):
                    continue
                status = lifecycle(state)
                try:
                    doc = _load_doc(path)
                except Refused:
                    continue
                rec = StoredRecord(uuid, f"data/{benchmark}/{developer}/{model_dir}/{path.name}", path, doc, status)
                if model is not None and rec.model_id != model and f"{developer}/{model_dir}" != model:
                    continue
                yield rec


def pointer_exists(rec: StoredRecord) -> bool:
    return rec.path.with_name(rec.uuid + SIDECAR_SUFFIX + POINTER_SUFFIX).is_file()


class ResultSamples:
    """The per-sample scores of one result of one record."""

    __slots__ = ("correct", "hashes", "ids", "key", "repeated", "score")

    def __init__(self, key: str) -> None:
        self.key = key
        self.ids: list[str] = []
        self.hashes: list[str | None] = []
        self.score: Any = None  # numpy float array, one per sample
        self.correct: Any = None  # numpy float array of 0/1, nan where is_correct is absent
        self.repeated = 0  # rows that repeated a sample already seen (averaged in)

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def binary(self) -> bool:
        import numpy as np

        return len(self.ids) > 0 and bool(np.all((self.score == 0.0) | (self.score == 1.0)))

    @property
    def has_correct(self) -> bool:
        import numpy as np

        c = self.correct
        return len(self.ids) > 0 and bool(np.all((c == 0.0) | (c == 1.0)))  # no nan, no averaged epochs

    def outcomes(self) -> Any:
        """0/1 outcomes: the score when it is binary, else is_correct (None when neither)."""
        if self.binary:
            return self.score
        if self.has_correct:
            return self.correct
        return None


class SidecarProblem(Exception):
    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line
        self.message = message


def _rows(path: Path) -> Iterator[tuple[int, str, str, Any, float, float]]:
    """The rows of a sidecar, streamed (one line in memory at a time): (line number, result
    key, sample id, sample hash as given, score, is_correct as 1.0/0.0/nan). Blank lines are
    skipped. Raises SidecarProblem on a row that is not JSON or has no sample id or numeric
    score, and on a file the store's limits refuse (a link, too large, a line too long)."""
    import orjson

    nan = float("nan")
    loads = orjson.loads
    lines = iter_lines(path)  # a regular file, never through a link, every line within its cap
    n = 0
    while True:
        try:
            line = next(lines)
        except StopIteration:
            return
        except Unreadable as exc:
            raise SidecarProblem(n + 1, exc.message) from None
        n += 1
        try:
            row = loads(line)
        except orjson.JSONDecodeError as exc:
            if not line.strip():
                continue
            raise SidecarProblem(n, f"not JSON ({exc})") from None
        if type(row) is not dict:
            raise SidecarProblem(n, "not a JSON object")
        sid = row.get("sample_id")
        ev = row.get("evaluation")
        score = ev.get("score") if type(ev) is dict else None
        if type(score) is not float:
            if isinstance(score, int):  # bool included: True is 1
                score = float(score)
            else:
                raise SidecarProblem(n, "no numeric evaluation.score")
        if type(sid) is not str:
            if isinstance(sid, int) and not isinstance(sid, bool):
                sid = str(sid)
            else:
                raise SidecarProblem(n, "no sample_id")
        key = row.get("evaluation_result_id") or row.get("evaluation_name") or ""
        correct = ev.get("is_correct")
        c = (1.0 if correct else 0.0) if type(correct) is bool else nan
        yield n, key if type(key) is str else str(key), sid, row.get("sample_hash"), score, c


def read_samples(path: Path) -> dict[str, ResultSamples]:
    """The per-sample scores of a sidecar, by result key, in the order results first appear.
    Raises SidecarProblem on a row that is not JSON or has no sample id or numeric score."""
    import numpy as np

    acc: dict[str, tuple[dict[str, int], list[str], list[str | None], list[float], list[float], list[int]]] = {}
    last_key: Any = None
    index: dict[str, int] = {}
    ids: list[str] = []
    hashes: list[str | None] = []
    scores: list[float] = []
    corrects: list[float] = []
    counts: list[int] = []
    for _n, key, sid, h, score, c in _rows(path):
        if key != last_key:
            index, ids, hashes, scores, corrects, counts = acc.setdefault(key, ({}, [], [], [], [], []))
            last_key = key
        at = index.get(sid)
        if at is None:
            index[sid] = len(ids)
            ids.append(sid)
            hashes.append(h if type(h) is str else None)
            scores.append(score)
            corrects.append(c)
            counts.append(1)
        else:  # a repeated sample (epochs): running mean
            k = counts[at] + 1
            scores[at] += (score - scores[at]) / k
            corrects[at] += (c - corrects[at]) / k
            counts[at] = k
    out: dict[str, ResultSamples] = {}
    for key, (_index, ids, hashes, scores, corrects, counts) in acc.items():
        rs = ResultSamples(key)
        rs.ids, rs.hashes = ids, hashes
        rs.score = np.asarray(scores, dtype=float)
        rs.correct = np.asarray(corrects, dtype=float)
        rs.repeated = sum(counts) - len(counts)
        out[key] = rs
    return out


class ResultOutcomes:
    """The 0/1 outcomes of one result of one record, compact, for the Rasch fit: the samples
    as indices into a list of sample ids shared by every record read (:class:`ItemIndex`),
    one byte per outcome. Repeated samples (epochs) are averaged first, as in
    :class:`ResultSamples`, whose rules (score when binary, else is_correct) decide."""

    __slots__ = ("items", "key", "mean", "outcome", "repeated")

    def __init__(self, key: str, items: Any, outcome: Any, mean: float, repeated: int) -> None:
        self.key = key
        self.items = items  # numpy int32: indices into the ItemIndex, one per sample
        self.outcome = outcome  # numpy uint8 0/1, one per sample; None: non-binary, no is_correct
        self.mean = mean  # mean score of the samples
        self.repeated = repeated

    def __len__(self) -> int:
        return len(self.items)


class ItemIndex:
    """Sample ids as small integers, shared by the records of one fit (each id kept once),
    and the rows read into it so far: at most ``budget`` (None: no limit)."""

    __slots__ = ("budget", "index", "rows")

    def __init__(self, budget: int | None = None) -> None:
        self.index: dict[str, int] = {}
        self.budget = budget
        self.rows = 0

    def __len__(self) -> int:
        return len(self.index)

    def names(self) -> list[str]:
        return list(self.index)  # insertion order: index k is the k-th name


class TooManyRows(Exception):
    """More rows than the reader was allowed to keep."""


def read_outcomes(path: Path, items: ItemIndex) -> dict[str, ResultOutcomes]:
    """The outcomes of a sidecar by result key (in the order results first appear), kept in
    about 5 bytes per sample (plus each new sample id once in ``items``). Raises
    SidecarProblem as :func:`read_samples`, and TooManyRows once ``items`` has taken more
    rows than its budget (this file's included)."""
    from array import array

    import numpy as np

    acc: dict[str, tuple[Any, Any, Any]] = {}
    last_key: Any = None
    index = items.index
    ids: Any = None
    scores: Any = None
    corrects: Any = None
    rows = items.rows
    budget = items.budget
    for _n, key, sid, _h, score, c in _rows(path):
        if key != last_key:
            ids, scores, corrects = acc.setdefault(key, (array("i"), array("d"), array("d")))
            last_key = key
        at = index.get(sid)
        if at is None:
            at = index[sid] = len(index)
        ids.append(at)
        scores.append(score)
        corrects.append(c)
        rows += 1
        if budget is not None and rows > budget:
            items.rows = rows
            raise TooManyRows(rows)
    items.rows = rows
    out: dict[str, ResultOutcomes] = {}
    for key, (ids, scores, corrects) in acc.items():
        item = np.frombuffer(ids, dtype=np.int32).copy()
        score = np.frombuffer(scores, dtype=float)
        correct = np.frombuffer(corrects, dtype=float)
        repeated = 0
        uniq, first, inverse, counts = np.unique(item, return_index=True, return_inverse=True, return_counts=True)
        if len(uniq) < len(item):  # repeated samples (epochs): their mean, in the order first seen
            order = np.argsort(first, kind="stable")
            item = uniq[order]
            score = (np.bincount(inverse, score, len(uniq)) / counts)[order]
            correct = (np.bincount(inverse, correct, len(uniq)) / counts)[order]
            repeated = int(counts.sum()) - len(uniq)
        if np.all((score == 0.0) | (score == 1.0)):
            outcome = (score >= 0.5).astype(np.uint8)
        elif np.all((correct == 0.0) | (correct == 1.0)):
            outcome = (correct >= 0.5).astype(np.uint8)
        else:
            outcome = None
        out[key] = ResultOutcomes(key, item, outcome, float(score.mean()), repeated)
    return out


def primary(groups: dict[str, ResultSamples], doc: dict[str, Any] | None = None) -> ResultSamples:
    """The result to use when a record has several and nothing else decides: the one with
    the most samples, then the one the record lists first."""
    order = {}
    if doc is not None:
        for i, r in enumerate(doc.get("evaluation_results") or []):
            if isinstance(r, dict):
                for k in (r.get("evaluation_result_id"), r.get("evaluation_name")):
                    if isinstance(k, str):
                        order.setdefault(k, i)
    return min(groups.values(), key=lambda g: (-len(g), order.get(g.key, 1 << 30), g.key))
