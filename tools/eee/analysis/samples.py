"""Finding records and reading their per-sample scores, for the analyses.

A record is named by its uuid or by a unique prefix of at least 8 hex digits. Its sidecar
is read from the work tree (``<uuid>_samples.jsonl`` beside the record); a sidecar that
DVC tracks but that was not pulled is reported as such, never treated as empty.

Sidecars are streamed, and only what the statistics need is kept from a row, in 32 bytes:
the sample id as a 16-byte key (:func:`sample_key`), ``evaluation.score`` and
``evaluation.is_correct``, grouped by the result the row belongs to
(``evaluation_result_id``, else ``evaluation_name``). Rows repeating a sample within one
result (epochs) are averaged. The ids (and sample hashes) of the few samples a report
names are read again from the sidecar. Memory follows the rows read, whatever the ids;
one analysis reads at most :data:`MAX_ROWS` rows unless told otherwise.
"""

from __future__ import annotations

import hashlib
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
        from eee.rules.ledger import read_ledger

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


def no_such_benchmark(benchmark: str) -> Refused:
    """The refusal of a command given a benchmark the store does not hold (no folder of it, nor
    of a name the identity registry knows for it)."""
    return Refused(
        Finding(
            f"data/{benchmark}",
            "$",
            f"no benchmark {benchmark!r} in the store",
            hint="give a benchmark folder under data/ (or an alias the identity registry knows)",
            check="analysis",
        )
    )


def benchmark_folders(root: Path, benchmark: str, names: Any = None) -> list[str]:
    """The benchmark folders of ``benchmark``: every folder whose canonical id (the identity
    registry's) is the benchmark's, so an alias and its canonical id are one benchmark."""
    from eee.catalog.table import read_names
    from eee.store.identity import BENCHMARK

    names = names if names is not None else read_names(root)
    wanted = names.canonical(BENCHMARK, benchmark)
    data = root / "data"
    found = sorted(p.name for p in data.iterdir() if p.is_dir()) if data.is_dir() else []
    return [b for b in found if b == benchmark or names.canonical(BENCHMARK, b) == wanted]


def records_of(
    root: Path, benchmark: str, model: str | None = None, active_only: bool = True, ledger: Any = None
) -> Iterator[StoredRecord]:
    """The records of one benchmark (its folders: :func:`benchmark_folders`), of one model
    when ``model`` is given (its canonical id: every spelling the identity registry makes one
    model), active ones only unless ``active_only`` is false."""
    from eee.catalog.table import is_active, read_names

    if ledger is None:
        from eee.rules.ledger import read_ledger

        ledger = read_ledger(root)
    names = read_names(root)
    wanted = names.canonical_model(model) if model is not None else None
    for bench in benchmark_folders(root, benchmark, names):
        folder = root / "data" / bench
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
                    rec = StoredRecord(uuid, f"data/{bench}/{developer}/{model_dir}/{path.name}", path, doc, status)
                    folders = f"{developer}/{model_dir}"
                    if (
                        model is None
                        or model in (folders, rec.model_id)
                        or names.canonical_model(rec.model_id) == wanted
                    ):
                        yield rec


def pointer_exists(rec: StoredRecord) -> bool:
    return rec.path.with_name(rec.uuid + SIDECAR_SUFFIX + POINTER_SUFFIX).is_file()


class SidecarProblem(Exception):
    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line
        self.message = message


# The rows one analysis reads by default (eee irt: every sidecar of the benchmark; eee
# compare: the two sidecars of a pair; --max-rows changes it): at its peak an analysis holds
# about ROW_BYTES per row read (benchmarks/bench_analysis.py), so the default stays near 1 GB.
MAX_ROWS = 8_000_000
ROW_BYTES = 130


class RowBudget:
    """How many sidecar rows one analysis may still read: at most ``limit`` (None: any)."""

    __slots__ = ("limit", "rows")

    def __init__(self, limit: int | None = None) -> None:
        self.limit = limit
        self.rows = 0


class TooManyRows(Exception):
    """More rows than the analysis's :class:`RowBudget` allows."""


def sample_key(text: str) -> bytes:
    """A sample id (or hash) as a fixed 16 bytes (BLAKE2b-128): what the analyses compare
    samples by, so that they hold 16 bytes per sample however long the ids are and however
    many are distinct (a collision is as unlikely as one of the store's content digests)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def keys_of(texts: list[str]) -> Any:
    """:func:`sample_key` of each text, as a numpy array of 16-byte values."""
    import numpy as np

    return np.frombuffer(b"".join(sample_key(t) for t in texts), dtype="V16").copy()


def first_seen(keys: Any) -> tuple[Any, Any]:
    """Distinct values of ``keys`` (a numpy array; 16-byte sample keys or integers) in the
    order first seen: (the index of each one's first occurrence, the number of the distinct
    value at each position). Sample keys are sorted by their first 8 bytes, then checked on
    the other 8 (exact; the full 16-byte sort only if two keys agree on the first half)."""
    import numpy as np

    n = len(keys)
    uniq = first = inverse = None
    if keys.dtype.kind == "V" and keys.dtype.itemsize == 16:
        pairs = np.ascontiguousarray(keys).view(np.uint64).reshape(n, 2)
        uniq, first, inverse = np.unique(pairs[:, 0], return_index=True, return_inverse=True)
        inverse = inverse.ravel()
        if not np.array_equal(pairs[first[inverse], 1], pairs[:, 1]):
            uniq = None
    if uniq is None:
        uniq, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        inverse = inverse.ravel()
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(order), dtype=np.int32)
    rank[order] = np.arange(len(order), dtype=np.int32)
    return first[order], rank[inverse]


class ResultSamples:
    """The per-sample scores of one result of one record, one entry per distinct sample in
    the order first seen. Read from a sidecar (:func:`read_samples`) it keeps 32 bytes per
    sample: the sample's 16-byte key and two floats; the sample ids and hashes are read
    again from the sidecar for the few samples that are shown (:meth:`names`,
    :meth:`hash_keys`). Built by hand, ``ids`` (and ``hashes``) are given instead."""

    __slots__ = (
        "cluster_names",
        "clusters",
        "correct",
        "error_items",
        "hashes",
        "ids",
        "infra",
        "key",
        "keys",
        "path",
        "repeated",
        "score",
        "valid",
    )

    def __init__(self, key: str) -> None:
        self.key = key
        self.ids: list[str] | None = None  # the sample ids, when kept
        self.hashes: list[str | None] | None = None  # their sample hashes, when kept
        self.keys: Any = None  # numpy void16: sample_key of each sample (from ids when not set)
        self.path: Path | None = None  # the sidecar the samples were read from
        self.score: Any = None  # numpy float array, one per sample
        self.correct: Any = None  # numpy float array of 0/1, nan where is_correct is absent
        self.repeated = 0  # rows that repeated a sample already seen (averaged in)
        self.infra: Any = None  # numpy bool per sample: every row of it an infrastructure error (None: none is)
        self.valid: Any = None  # numpy float per sample: the mean score of its rows without an infrastructure error
        self.clusters: Any = None  # numpy int32 per sample: its cluster's number in cluster_names (None: no clusters)
        self.cluster_names: list[str | None] = []
        self.error_items: dict[str, int] = {}  # error class -> samples with a row of that class

    def valid_scores(self) -> Any:
        """The per-sample scores without infrastructure errors (nan where every row was one)."""
        return self.score if self.valid is None else self.valid

    def infra_mask(self) -> Any:
        import numpy as np

        return np.zeros(len(self), dtype=bool) if self.infra is None else self.infra

    def __len__(self) -> int:
        return len(self.ids) if self.keys is None and self.ids is not None else len(self.sample_keys())

    def sample_keys(self) -> Any:
        if self.keys is None:
            self.keys = keys_of(self.ids or [])
        return self.keys

    def names(self, positions: list[int]) -> list[str]:
        """The sample ids at ``positions``; read again from the sidecar, only as far as needed."""
        if self.ids is not None:
            return [self.ids[k] for k in positions]
        keys = self.sample_keys()
        wanted: dict[bytes, int] = {}
        for k in positions:
            wanted.setdefault(keys[k].tobytes(), len(wanted))
        found: list[str | None] = [None] * len(wanted)
        if wanted and self.path is not None:
            name_samples(self.path, wanted, found, len(wanted))
        if any(name is None for name in found):
            raise SidecarProblem(0, "the sidecar changed while it was read (a sample id was not found again)")
        return [str(found[wanted[keys[k].tobytes()]]) for k in positions]

    def hash_keys(self) -> tuple[Any, Any]:
        """(the :func:`sample_key` of each sample's hash, whether it has one): the hash of its
        first row, as given (``hashes``) or read again from the sidecar."""
        import numpy as np

        n = len(self)
        out = np.zeros(n, dtype="V16")
        has = np.zeros(n, dtype=bool)
        if self.hashes is not None:
            for k, h in enumerate(self.hashes):
                if h:
                    out[k] = np.frombuffer(sample_key(h), dtype="V16")[0]
                    has[k] = True
            return out, has
        if self.path is None:
            return out, has
        at = {k.tobytes(): i for i, k in enumerate(self.sample_keys())}
        seen = np.zeros(n, dtype=bool)
        for _n, key, sid, h, _score, _c, _e, _cl in _rows(self.path):
            if key != self.key:
                continue
            i = at.get(sample_key(sid))
            if i is None or seen[i]:
                continue
            seen[i] = True
            if type(h) is str and h:
                out[i] = np.frombuffer(sample_key(h), dtype="V16")[0]
                has[i] = True
        return out, has

    @property
    def binary(self) -> bool:
        import numpy as np

        return len(self) > 0 and bool(np.all((self.score == 0.0) | (self.score == 1.0)))

    @property
    def has_correct(self) -> bool:
        import numpy as np

        c = self.correct
        return len(self) > 0 and bool(np.all((c == 0.0) | (c == 1.0)))  # no nan, no averaged epochs

    def outcomes(self) -> Any:
        """0/1 outcomes: the score when it is binary, else is_correct (None when neither)."""
        if self.binary:
            return self.score
        if self.has_correct:
            return self.correct
        return None


ERROR_CODES = {None: 0, "infrastructure": 1, "content": 2, "format": 3}
ERROR_NAMES = {v: k for k, v in ERROR_CODES.items()}


def _rows(path: Path, cluster_key: str | None = None) -> Iterator[tuple[int, str, str, Any, float, float, int, Any]]:
    """The rows of a sidecar, streamed (one line in memory at a time): (line number, result
    key, sample id, sample hash as given, score, is_correct as 1.0/0.0/nan, the error class's
    code (:data:`ERROR_CODES`, :func:`eee.store.items.error_class`), the cluster (the
    ``metadata`` value under ``cluster_key``, None without one)). Blank lines are
    skipped. Raises SidecarProblem on a row that is not JSON or has no sample id or numeric
    score, and on a file the store's limits refuse (a link, too large, a line too long)."""
    import orjson

    from eee.store.items import cluster_of, error_class

    nan = float("nan")
    loads = orjson.loads
    lines = iter_lines(path)  # a regular file, never through a link, every line within its cap
    n = 0
    try:
        for line in lines:
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
            err = ERROR_CODES[error_class(row)]
            cluster = cluster_of(row, cluster_key) if cluster_key is not None else None
            yield n, key if type(key) is str else str(key), sid, row.get("sample_hash"), score, c, err, cluster
    except Unreadable as exc:  # from the reading (a link, too large, a line too long)
        raise SidecarProblem(n + 1, exc.message) from None


def read_samples(
    path: Path, budget: RowBudget | None = None, cluster_key: str | None = None
) -> dict[str, ResultSamples]:
    """The per-sample scores of a sidecar, by result key, in the order results first appear,
    streamed into about 34 bytes per row (repeated samples, epochs, averaged at the end), with
    each sample's infrastructure errors and, with ``cluster_key`` (the record's declared
    cluster key), its cluster. Raises SidecarProblem on a row that is not JSON or has no
    sample id or numeric score, and TooManyRows once ``budget`` has given out its rows (this
    file's included)."""
    from array import array

    import numpy as np

    blake = hashlib.blake2b
    acc: dict[str, tuple[Any, Any, Any, Any, Any]] = {}
    clusters: dict[str, dict[Any, int]] = {}
    last_key: Any = None
    keys: Any = None
    scores: Any = None
    corrects: Any = None
    errors: Any = None
    codes: Any = None
    if budget is None:
        budget = RowBudget()
    rows, limit = budget.rows, budget.limit
    for _n, key, sid, _h, score, c, err, cluster in _rows(path, cluster_key):
        rows += 1
        if limit is not None and rows > limit:
            budget.rows = rows
            raise TooManyRows(rows)
        if key != last_key:
            keys, scores, corrects, errors, codes = acc.setdefault(
                key, (bytearray(), array("d"), array("d"), bytearray(), array("i"))
            )
            last_key = key
        keys += blake(sid.encode("utf-8", "surrogatepass"), digest_size=16).digest()  # sample_key, inline
        scores.append(score)
        corrects.append(c)
        errors.append(err)
        if cluster_key is not None:
            names = clusters.setdefault(key, {})
            codes.append(names.setdefault(cluster, len(names)))
    budget.rows = rows
    out: dict[str, ResultSamples] = {}
    for key, (keys, scores, corrects, errors, codes) in acc.items():
        rs = ResultSamples(key)
        rs.path = path
        sample = np.frombuffer(keys, dtype="V16")
        score = np.frombuffer(scores, dtype=float)
        correct = np.frombuffer(corrects, dtype=float)
        err = np.frombuffer(errors, dtype=np.uint8)
        first, group = first_seen(sample)
        counts = np.bincount(group, minlength=len(first))
        if len(first) < len(sample):  # repeated samples (epochs): their mean, in the order first seen
            rs.keys = sample[first]
            rs.score = np.bincount(group, score, len(first)) / counts
            rs.correct = np.bincount(group, correct, len(first)) / counts
            rs.repeated = len(group) - len(first)
        else:  # arrays of their own, not views of the buffers they were read into
            rs.keys, rs.score, rs.correct = sample.copy(), score.copy(), correct.copy()
        infra = err == ERROR_CODES["infrastructure"]
        if infra.any():
            ok = (~infra).astype(float)
            n_ok = np.bincount(group, ok, len(first))
            with np.errstate(invalid="ignore", divide="ignore"):
                rs.valid = np.bincount(group, score * ok, len(first)) / n_ok
            rs.infra = n_ok == 0
        for code in set(err.tolist()) - {0}:
            rs.error_items[ERROR_NAMES[code]] = int(np.unique(group[err == code]).size)
        if cluster_key is not None:
            rs.clusters = np.frombuffer(codes, dtype=np.int32)[first].copy()
            names = clusters.get(key, {})
            rs.cluster_names = [None] * len(names)
            for name, number in names.items():
                rs.cluster_names[number] = name
        out[key] = rs
    return out


def name_samples(path: Path, wanted: dict[bytes, int], names: list[str | None], left: int) -> int:
    """Fill ``names[wanted[k]]`` with the sample id whose :func:`sample_key` is ``k``, for the
    ids of the sidecar at ``path`` still unnamed (``left`` of them); stops reading once every
    one is named. Returns how many it named. Raises SidecarProblem as :func:`read_samples`."""
    blake = hashlib.blake2b
    found = 0
    rows = _rows(path)
    try:
        for _n, _key, sid, _h, _score, _c, _e, _cl in rows:
            at = wanted.get(blake(sid.encode("utf-8", "surrogatepass"), digest_size=16).digest())
            if at is not None and names[at] is None:
                names[at] = sid
                found += 1
                if found == left:
                    break
    finally:
        rows.close()  # the file is closed when the reading stops early
    return found


class ResultOutcomes:
    """The 0/1 outcomes of one result of one record, for the Rasch fit: 17 bytes per sample
    (its key and one byte), by the rules of :meth:`ResultSamples.outcomes`."""

    __slots__ = ("key", "keys", "mean", "outcome")

    def __init__(self, g: ResultSamples) -> None:
        import numpy as np

        o = g.outcomes()
        self.key = g.key
        self.keys = g.sample_keys()
        self.outcome = None if o is None else (o >= 0.5).astype(np.uint8)  # None: non-binary, no is_correct
        self.mean = float(g.score.mean()) if len(g) else float("nan")

    def __len__(self) -> int:
        return len(self.keys)


def read_outcomes(path: Path, budget: RowBudget | None = None) -> dict[str, ResultOutcomes]:
    """:func:`read_samples` kept as outcomes (17 bytes per sample)."""
    return {key: ResultOutcomes(g) for key, g in read_samples(path, budget).items()}


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
