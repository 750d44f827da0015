"""A Rasch (one-parameter logistic) fit over the instance rows of a benchmark's records.

P(model m solves item i) = 1 / (1 + exp(-(theta_m - b_i))). The fit is joint maximum
likelihood with a small ridge penalty (lambda/2 times the sum of squared parameters), which
keeps the estimates of items every model solves (or none does) finite; Newton steps
alternate between abilities and difficulties. Difficulties are centred on 0 at the end
(abilities shifted with them; the likelihood does not change).

The data are sparse: only the observed (record, item, outcome) cells are held, as three
arrays, and every sum over a record's or an item's cells is a ``numpy.bincount``. Memory and
time per iteration grow with the responses read, never with records x items: records of
one benchmark often answer different samples (subsets, or disjoint ids).

Standard errors are 1 / sqrt(information + lambda) at the estimate. Fit: outfit mean
square (mean squared standardised residual) and infit mean square (information-weighted);
both are near 1 where the model fits, far above 1 for items answered against the grain.

Over a benchmark (:func:`benchmark_irt`) abilities are comparable only between records
linked by shared items: the fit takes the largest group of records linked that way, names
the records left out, and says at once when no sample id is shared at all.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from eee.reporting.shown import command

RIDGE = 0.05
MAX_ITER = 500
TOL = 1e-6


class RaschFit:
    """Estimates of one fit; arrays in the order of the rows and columns given."""

    def __init__(self, **kw: Any) -> None:
        self.ability = kw["ability"]
        self.ability_se = kw["ability_se"]
        self.difficulty = kw["difficulty"]
        self.difficulty_se = kw["difficulty_se"]
        self.item_infit = kw["item_infit"]
        self.item_outfit = kw["item_outfit"]
        self.person_infit = kw["person_infit"]
        self.person_outfit = kw["person_outfit"]
        self.item_share = kw["item_share"]
        self.item_n = kw["item_n"]
        self.person_share = kw["person_share"]
        self.person_n = kw["person_n"]
        self.iterations: int = kw["iterations"]
        self.converged: bool = kw["converged"]
        self.loglik: float = kw["loglik"]
        self.ridge: float = kw["ridge"]
        self.responses: int = kw["responses"]


def _sigmoid(x: Any) -> Any:
    import numpy as np

    return 0.5 * (1.0 + np.tanh(0.5 * x))  # stable for large |x|


def _p(theta: Any, b: Any, rows: Any, cols: Any) -> Any:
    """The model's probability at every observed cell (one array the size of the cells)."""
    import numpy as np

    x = theta[rows]
    x -= b[cols]
    x *= 0.5
    np.tanh(x, out=x)
    x += 1.0
    x *= 0.5
    return x


def fit_rasch(y: Any, ridge: float = RIDGE, max_iter: int = MAX_ITER, tol: float = TOL) -> RaschFit:
    """Fit the Rasch model to ``y`` (models x items; 1, 0, or nan where not observed)."""
    import numpy as np

    y = np.asarray(y, dtype=float)
    if y.ndim != 2:
        raise ValueError("the response matrix must be two-dimensional (models x items)")
    rows, cols = np.nonzero(~np.isnan(y))
    return fit_rasch_cells(rows, cols, y[rows, cols], y.shape, ridge, max_iter, tol)


def fit_rasch_cells(
    rows: Any,
    cols: Any,
    y: Any,
    shape: tuple[int, int],
    ridge: float = RIDGE,
    max_iter: int = MAX_ITER,
    tol: float = TOL,
) -> RaschFit:
    """Fit the Rasch model to the observed cells only: outcome ``y[k]`` (0 or 1) of model
    ``rows[k]`` on item ``cols[k]``, in a ``shape`` = (models, items) table. Each cell is
    given at most once. The same estimates as a dense fit of that table with nan elsewhere."""
    import numpy as np

    m, n = int(shape[0]), int(shape[1])
    rows = np.asarray(rows, dtype=np.int32 if m < 2**31 else np.int64)
    cols = np.asarray(cols, dtype=np.int32 if n < 2**31 else np.int64)
    y = np.asarray(y, dtype=float)
    if not (rows.shape == cols.shape == y.shape and rows.ndim == 1):
        raise ValueError("rows, cols and y must be one-dimensional arrays of one length")
    person_n = np.bincount(rows, minlength=m).astype(float)
    item_n = np.bincount(cols, minlength=n).astype(float)
    person_sum = np.bincount(rows, y, m)
    item_sum = np.bincount(cols, y, n)
    # start from the logits of the smoothed shares
    ps = (person_sum + 0.5) / (person_n + 1.0)
    pi = (item_sum + 0.5) / (item_n + 1.0)
    theta = np.log(ps / (1 - ps))
    b = -np.log(pi / (1 - pi))
    converged = False
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007 - the count is reported
        p = _p(theta, b, rows, cols)
        grad = person_sum - np.bincount(rows, p, m)
        p -= p * p  # the information p(1-p), in place
        step_t = (grad - ridge * theta) / (np.bincount(rows, p, m) + ridge)
        step_t = np.clip(step_t, -1.0, 1.0)
        theta = theta + step_t
        p = _p(theta, b, rows, cols)
        grad = item_sum - np.bincount(cols, p, n)
        p -= p * p
        step_b = (-grad - ridge * b) / (np.bincount(cols, p, n) + ridge)
        step_b = np.clip(step_b, -1.0, 1.0)
        b = b + step_b
        del p
        # the likelihood does not change when theta and b move together; along that
        # direction only the ridge decides, exactly at this shift (one line search)
        c = -(theta.sum() + b.sum()) / (m + n)
        theta, b = theta + c, b + c
        if max(np.abs(step_t).max(initial=0.0), np.abs(step_b).max(initial=0.0)) < tol:
            converged = True
            break
    p = _p(theta, b, rows, cols)
    eps = 1e-12
    loglik = float(np.sum(y * np.log(p + eps) + (1.0 - y) * np.log(1.0 - p + eps)))
    resid2 = y - p
    resid2 *= resid2
    p -= p * p  # information
    info_t = np.bincount(rows, p, m)
    info_b = np.bincount(cols, p, n)
    np.maximum(p, 1e-12, out=p)
    z2 = resid2 / p
    del p
    with np.errstate(divide="ignore", invalid="ignore"):
        item_outfit = np.bincount(cols, z2, n) / item_n
        person_outfit = np.bincount(rows, z2, m) / person_n
        del z2
        item_infit = np.bincount(cols, resid2, n) / info_b
        person_infit = np.bincount(rows, resid2, m) / info_t
        item_share = item_sum / item_n
        person_share = person_sum / person_n
    shift = b.mean() if n else 0.0
    return RaschFit(
        ability=theta - shift,
        ability_se=1.0 / np.sqrt(info_t + ridge),
        difficulty=b - shift,
        difficulty_se=1.0 / np.sqrt(info_b + ridge),
        item_infit=item_infit,
        item_outfit=item_outfit,
        person_infit=person_infit,
        person_outfit=person_outfit,
        item_share=item_share,
        item_n=item_n,
        person_share=person_share,
        person_n=person_n,
        iterations=it,
        converged=converged,
        loglik=loglik,
        ridge=ridge,
        responses=len(y),
    )


def simulate(models: int, items: int, seed: int = 0) -> tuple[Any, Any, Any]:
    """Responses simulated from known parameters: (y, abilities, difficulties), both N(0, 1)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    theta = rng.normal(0.0, 1.0, models)
    b = rng.normal(0.0, 1.0, items)
    p = _sigmoid(theta[:, None] - b[None, :])
    return (rng.random((models, items)) < p).astype(float), theta, b


# -- over a benchmark of the store ---------------------------------------------------------


class BenchmarkIRT:
    """The data and the fit of one benchmark."""

    def __init__(self, benchmark: str) -> None:
        self.benchmark = benchmark
        self.respondents: list[dict[str, Any]] = []  # one per record fitted
        self.items: list[str] = []  # the sample ids of the items fitted
        self.item_count = 0  # distinct items of the records read (named in ``items`` when fitted)
        self.notes: list[str] = []
        self.result_key: str | None = None
        self.fit: RaschFit | None = None
        self.no_fit: str | None = None  # why there is no fit
        self.too_few = False  # no fit because the data are too few (not a failure of the run)
        self.left_out: dict[str, int] = {}  # records not counted, by why (retracted, superseded, ...)
        self.said: list[str] = []  # what the run says besides its notes (which are warnings)
        self.answered_once = 0  # items of the fit answered by one record only
        # uuid -> what reading its sidecar gave: {"state": "read", "samples", "mean"} (main
        # result), {"state": "unreadable", "problem"}, or {"state": NOT_PULLED / NO_SIDECAR}
        self.sidecars: dict[str, dict[str, Any]] = {}

    def summary(self, worst: int = 10) -> dict[str, Any]:
        out: dict[str, Any] = {
            "benchmark": self.benchmark,
            "records": len(self.respondents),
            "items": self.item_count,
            "result": self.result_key,
            "notes": self.notes,
            "left_out": self.left_out,
        }
        f = self.fit
        if f is None:
            out["no_fit"] = self.no_fit
            out["too_few"] = self.too_few  # the store holds too few records or items to fit (not a failure)
            return out
        out["fit"] = {
            "method": "joint maximum likelihood, ridge-penalised (Rasch / 1PL)",
            "ridge": f.ridge,
            "iterations": f.iterations,
            "converged": f.converged,
            "log_likelihood": f.loglik,
            "responses": f.responses,
            "items_answered_once": self.answered_once,
        }
        out["abilities"] = [
            {
                **r,
                "ability": float(f.ability[k]),
                "se": float(f.ability_se[k]),
                "share_correct": float(f.person_share[k]),
                "infit": float(f.person_infit[k]),
                "outfit": float(f.person_outfit[k]),
            }
            for k, r in sorted(enumerate(self.respondents), key=lambda t: -f.ability[t[0]])
        ]
        out["worst_fitting_items"] = self.worst_items(worst)
        return out

    def worst_items(self, count: int = 10) -> list[dict[str, Any]]:
        import numpy as np

        f = self.fit
        if f is None:
            return []
        out = np.nan_to_num(f.item_outfit, nan=-1.0)
        order = np.argsort(-out, kind="stable")[:count]
        return [self.item_row(int(i)) for i in order if f.item_n[i] > 0]

    def item_row(self, i: int) -> dict[str, Any]:
        f = self.fit
        assert f is not None
        return {
            "item": self.items[i],
            "difficulty": float(f.difficulty[i]),
            "se": float(f.difficulty_se[i]),
            "models": int(f.item_n[i]),
            "share_correct": float(f.item_share[i]),
            "infit": float(f.item_infit[i]),
            "outfit": float(f.item_outfit[i]),
        }


def _choose_key(groups: list[dict[str, Any]], wanted: str | None) -> str | None:
    if wanted is not None:
        return wanted
    counts: dict[str, int] = {}
    for g in groups:
        for k in g:
            counts[k] = counts.get(k, 0) + 1
    if not counts:
        return None
    best = max(counts.values())
    return None if best < 2 else min(k for k, c in counts.items() if c == best)


def _compact(ids: Any) -> tuple[Any, Any]:
    """(column of each cell, the ids of the columns): columns numbered in the order their
    id first appears among the cells."""
    from eee.analysis.samples import first_seen

    first, cols = first_seen(ids)
    return cols, ids[first]


def linked(rows: Any, cols: Any, m: int, n: int) -> Any:
    """The group of each of ``m`` records: records answering a common item (directly, or
    through other records) share the smallest record index of their group. Label
    propagation over the cells, with pointer jumping; each round costs one pass over them."""
    import numpy as np

    label = np.arange(m)
    while True:
        per_item = np.full(n, m)
        np.minimum.at(per_item, cols, label[rows])
        new = label.copy()
        np.minimum.at(new, rows, per_item[cols])
        new = new[new]
        if np.array_equal(new, label):
            return label
        label = new


def benchmark_irt(
    root: Path,
    benchmark: str,
    result: str | None = None,
    include_all: bool = False,
    ridge: float = RIDGE,
    records: list[Any] | None = None,
    max_rows: int | None = None,
) -> BenchmarkIRT:
    """Fit the Rasch model over the sidecars of the (active) records of ``benchmark``.

    One respondent per record (the same model under two harnesses is two respondents); items
    are sample ids of one result per record: ``result`` if given, else the result id most
    records share, else each record's main result (most samples). Sidecars are streamed
    into compact outcomes (a 16-byte key and one byte per sample), at most ``max_rows``
    rows in all (default :data:`eee.analysis.samples.MAX_ROWS`; beyond: no fit, said so); the names of the items
    fitted are read again afterwards, from as few sidecars as hold them. Records whose
    samples no fitted record shares are left out, named in a note."""
    import numpy as np

    from eee.analysis.samples import (
        MAX_ROWS,
        NOT_PULLED,
        ROW_BYTES,
        RowBudget,
        SidecarProblem,
        TooManyRows,
        primary,
        read_outcomes,
        records_of,
    )
    from eee.catalog.table import read_names

    names = read_names(root)  # respondents are named by their canonical model id too
    limit = MAX_ROWS if max_rows is None else max_rows
    out = BenchmarkIRT(benchmark)
    if records is None:
        from eee.catalog.table import exclusion
        from eee.rules.ledger import read_ledger

        ledger = read_ledger(root)
        recs = []
        for rec in records_of(root, benchmark, active_only=False, ledger=ledger):
            why = None if include_all else exclusion(ledger.state(rec.uuid))
            if why is not None:
                out.left_out[why] = out.left_out.get(why, 0) + 1
                continue
            recs.append(rec)
        if out.left_out:  # said, not a warning: only active records count, by default
            said = ", ".join(f"{n} {why}" for why, n in sorted(out.left_out.items()))
            out.said.append(
                f"records that no longer count are left out ({said}): `{command('irt', '--benchmark', benchmark)} "
                "--all` counts them"
            )
    else:
        recs = records
    budget = RowBudget(limit)
    loaded = []
    for rec in recs:
        state = rec.sidecar_state()
        if state is not None:
            out.sidecars[rec.uuid] = {"state": state}
            if state == NOT_PULLED:
                out.notes.append(f"{rec.uuid}: sidecar not pulled (run `{command('samples', 'pull', rec.sidecar)}`)")
            continue
        try:
            groups = read_outcomes(rec.sidecar, budget)
        except TooManyRows:
            out.no_fit = (
                f"the sidecars hold more than {limit:,} per-sample rows (the limit was passed in {rec.uuid}): "
                f"more than one fit reads by default; run `{command('irt', '--benchmark', benchmark)} --max-rows N` "
                f"where there is memory for it (about {ROW_BYTES} bytes per row)"
            )
            return out
        except (OSError, SidecarProblem) as exc:
            out.notes.append(f"{rec.uuid}: sidecar unreadable ({exc})")
            out.sidecars[rec.uuid] = {"state": "unreadable", "problem": str(exc)}
            continue
        if groups:
            main = primary(groups, rec.doc)
            out.sidecars[rec.uuid] = {"state": "read", "samples": len(main), "mean": main.mean}
            loaded.append((rec, groups))
        else:
            out.sidecars[rec.uuid] = {"state": "read", "samples": 0, "mean": None}
    key = _choose_key([g for _, g in loaded], result)
    out.result_key = key
    chosen = []
    fitted = []  # the records, for naming the items
    for rec, groups in loaded:
        g = groups.get(key) if key is not None else None
        if g is None:
            if result is not None:
                out.notes.append(f"{rec.uuid}: no result {result!r}; left out")
                continue
            g = primary(groups, rec.doc)
        if g.outcome is None:
            out.notes.append(f"{rec.uuid}: result {g.key!r} has non-binary scores and no is_correct; left out")
            continue
        chosen.append(g)
        fitted.append(rec)
        out.respondents.append(
            {
                "record_uuid": rec.uuid,
                "model_id": rec.model_id,
                "model_id_canonical": names.canonical_model(rec.model_id),
                "eval_library": rec.eval_library,
                "result": g.key,
            }
        )
    del loaded
    m = len(chosen)
    rows = np.repeat(np.arange(m, dtype=np.int32), [len(g) for g in chosen])
    keys = np.concatenate([g.keys for g in chosen]) if chosen else np.zeros(0, dtype="V16")
    y = np.concatenate([g.outcome for g in chosen]) if chosen else np.zeros(0, dtype=np.uint8)
    del chosen
    cols, col_keys = _compact(keys)
    del keys
    out.item_count = len(col_keys)
    if m < 2 or len(col_keys) < 2:
        out.no_fit = _too_few(out, m, len(col_keys))
        return out
    if not (np.bincount(cols, minlength=len(col_keys)) >= 2).any():
        what = f"of result {key!r} " if key is not None else ""
        out.no_fit = (
            f"no sample id {what}is shared by two of the {m} records: each answered samples no other did, "
            "so their abilities have no common scale; nothing to fit (check that the records use one "
            "benchmark's sample ids)"
        )
        return out
    group = linked(rows, cols, m, len(col_keys))
    sizes = np.bincount(group, minlength=m)
    responses = np.bincount(group, weights=np.bincount(rows, minlength=m), minlength=m)
    best = max(range(m), key=lambda k: (sizes[k], responses[k], -k))
    keep = group == best
    if not keep.all():
        gone = [out.respondents[k]["record_uuid"] for k in np.nonzero(~keep)[0].tolist()]
        out.notes.append(
            f"{len(gone)} record(s) share no sample id with the {int(keep.sum())} records fitted, directly or "
            "through other records (their abilities would not be on the same scale): left out: "
            + ", ".join(gone[:5])
            + (f" and {len(gone) - 5} more" if len(gone) > 5 else "")
        )
        cell = keep[rows]
        renumber = np.cumsum(keep, dtype=np.int64) - 1
        rows = renumber[rows[cell]].astype(np.int32)
        cols, col_keys = _compact(col_keys[cols[cell]])
        out.item_count = len(col_keys)
        y = y[cell]
        out.respondents = [r for r, k in zip(out.respondents, keep.tolist(), strict=True) if k]
        fitted = [r for r, k in zip(fitted, keep.tolist(), strict=True) if k]
        m = len(out.respondents)
        if len(col_keys) < 2:
            out.no_fit = _too_few(out, m, len(col_keys))
            return out
    names = _item_names(fitted, col_keys)
    if names is None:
        out.no_fit = "the sidecars changed while they were read (sample ids read first were not found again); run again"
        return out
    out.items = names
    out.answered_once = int(np.count_nonzero(np.bincount(cols, minlength=len(names)) == 1))
    out.fit = fit_rasch_cells(rows, cols, y, (m, len(names)), ridge=ridge)
    if not out.fit.converged:
        out.notes.append(f"the fit did not converge in {out.fit.iterations} iterations")
    return out


def _too_few(out: BenchmarkIRT, records: int, items: int) -> str:
    """Why there is nothing to fit: how many records and items there are against the two of
    each a fit needs, and what left records out."""
    out.too_few = True
    said = f"{records} record{'' if records == 1 else 's'} with binary per-sample scores and {items} item" + (
        "" if items == 1 else "s"
    )
    left = ", ".join(f"{n} {why}" for why, n in sorted(out.left_out.items()))
    without = sum(1 for s in out.sidecars.values() if s.get("state") != "read")
    reasons = ([f"{left}: left out"] if left else []) + ([f"{without} without a readable sidecar"] if without else [])
    return (
        f"a Rasch fit needs at least two records with binary per-sample scores and two items; {out.benchmark} has "
        f"{said}" + (f" ({'; '.join(reasons)})" if reasons else "")
    )


def _item_names(records: list[Any], keys: Any) -> list[str] | None:
    """The sample id of each key, read again from the sidecars of ``records`` in order, each
    only as far as needed (the first few usually name every item); None when one is missing."""
    from eee.analysis.samples import SidecarProblem, name_samples

    wanted = {k.tobytes(): i for i, k in enumerate(keys)}
    names: list[str | None] = [None] * len(keys)
    left = len(names)
    for rec in records:
        try:
            left -= name_samples(rec.sidecar, wanted, names, left)
        except (OSError, SidecarProblem):
            continue
        if not left:
            return [name for name in names if name is not None]  # every one
    return None


def write_parquet(res: BenchmarkIRT, folder: Path) -> list[Path]:
    """abilities.parquet and items.parquet of a fit, in ``folder`` (written atomically)."""
    import os

    import pyarrow as pa
    import pyarrow.parquet as pq

    from eee.store.fsutil import replace_file

    f = res.fit
    if f is None:
        return []
    folder.mkdir(parents=True, exist_ok=True)
    abilities = pa.table(
        {
            "record_uuid": [r["record_uuid"] for r in res.respondents],
            "model_id": [r["model_id"] for r in res.respondents],
            "model_id_canonical": [r.get("model_id_canonical") for r in res.respondents],
            "eval_library": [r["eval_library"] for r in res.respondents],
            "result": [r["result"] for r in res.respondents],
            "ability": f.ability,
            "se": f.ability_se,
            "items_answered": f.person_n.astype("int64"),
            "share_correct": f.person_share,
            "infit": f.person_infit,
            "outfit": f.person_outfit,
        }
    )
    items = pa.table(
        {
            "item": res.items,
            "difficulty": f.difficulty,
            "se": f.difficulty_se,
            "models": f.item_n.astype("int64"),
            "share_correct": f.item_share,
            "infit": f.item_infit,
            "outfit": f.item_outfit,
        }
    )
    written = []
    for name, table in (("abilities.parquet", abilities), ("items.parquet", items)):
        path = folder / name
        tmp = folder / f".{name}.tmp-{os.getpid()}"
        pq.write_table(table, tmp, compression="zstd")
        replace_file(tmp, path)
        written.append(path)
    return written
