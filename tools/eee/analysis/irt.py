"""A Rasch (one-parameter logistic) fit over the instance rows of a benchmark's records.

P(model m solves item i) = 1 / (1 + exp(-(theta_m - b_i))). The fit is joint maximum
likelihood with a small ridge penalty (lambda/2 times the sum of squared parameters), which
keeps the estimates of items every model solves (or none does) finite; Newton steps
alternate between abilities and difficulties, vectorised in numpy. Difficulties are
centred on 0 at the end (abilities shifted with them; the likelihood does not change).

Standard errors are 1 / sqrt(information + lambda) at the estimate. Fit: outfit mean
square (mean squared standardised residual) and infit mean square (information-weighted);
both are near 1 where the model fits, far above 1 for items answered against the grain.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

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


def _sigmoid(x: Any) -> Any:
    import numpy as np

    return 0.5 * (1.0 + np.tanh(0.5 * x))  # stable for large |x|


def fit_rasch(y: Any, ridge: float = RIDGE, max_iter: int = MAX_ITER, tol: float = TOL) -> RaschFit:
    """Fit the Rasch model to ``y`` (models x items; 1, 0, or nan where not observed)."""
    import numpy as np

    y = np.asarray(y, dtype=float)
    if y.ndim != 2:
        raise ValueError("the response matrix must be two-dimensional (models x items)")
    seen = ~np.isnan(y)
    w = seen.astype(float)
    y0 = np.where(seen, y, 0.0)
    m, n = y.shape
    # start from the logits of the smoothed shares
    ps = (y0.sum(1) + 0.5) / (w.sum(1) + 1.0)
    pi = (y0.sum(0) + 0.5) / (w.sum(0) + 1.0)
    theta = np.log(ps / (1 - ps))
    b = -np.log(pi / (1 - pi))
    converged = False
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007 - the count is reported
        p = _sigmoid(theta[:, None] - b[None, :])
        r = (y0 - p) * w
        info = p * (1 - p) * w
        step_t = (r.sum(1) - ridge * theta) / (info.sum(1) + ridge)
        step_t = np.clip(step_t, -1.0, 1.0)
        theta = theta + step_t
        p = _sigmoid(theta[:, None] - b[None, :])
        r = (y0 - p) * w
        info = p * (1 - p) * w
        step_b = (-r.sum(0) - ridge * b) / (info.sum(0) + ridge)
        step_b = np.clip(step_b, -1.0, 1.0)
        b = b + step_b
        # the likelihood does not change when theta and b move together; along that
        # direction only the ridge decides, exactly at this shift (one line search)
        c = -(theta.sum() + b.sum()) / (m + n)
        theta, b = theta + c, b + c
        if max(np.abs(step_t).max(initial=0.0), np.abs(step_b).max(initial=0.0)) < tol:
            converged = True
            break
    p = _sigmoid(theta[:, None] - b[None, :])
    info = p * (1 - p) * w
    resid2 = ((y0 - p) ** 2) * w
    with np.errstate(divide="ignore", invalid="ignore"):
        z2 = np.where(seen, resid2 / np.maximum(p * (1 - p), 1e-12), 0.0)
        item_n = w.sum(0)
        person_n = w.sum(1)
        item_outfit = z2.sum(0) / item_n
        person_outfit = z2.sum(1) / person_n
        item_infit = resid2.sum(0) / info.sum(0)
        person_infit = resid2.sum(1) / info.sum(1)
        item_share = y0.sum(0) / item_n
        person_share = y0.sum(1) / person_n
        eps = 1e-12
        loglik = float(np.sum(w * (y0 * np.log(p + eps) + (1 - y0) * np.log(1 - p + eps))))
    shift = b.mean() if n else 0.0
    return RaschFit(
        ability=theta - shift,
        ability_se=1.0 / np.sqrt(info.sum(1) + ridge),
        difficulty=b - shift,
        difficulty_se=1.0 / np.sqrt(info.sum(0) + ridge),
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
        self.respondents: list[dict[str, Any]] = []  # one per record used
        self.items: list[str] = []
        self.notes: list[str] = []
        self.result_key: str | None = None
        self.fit: RaschFit | None = None
        self.y: Any = None

    def summary(self, worst: int = 10) -> dict[str, Any]:
        out: dict[str, Any] = {
            "benchmark": self.benchmark,
            "records": len(self.respondents),
            "items": len(self.items),
            "result": self.result_key,
            "notes": self.notes,
        }
        f = self.fit
        if f is None:
            return out
        out["fit"] = {
            "method": "joint maximum likelihood, ridge-penalised (Rasch / 1PL)",
            "ridge": f.ridge,
            "iterations": f.iterations,
            "converged": f.converged,
            "log_likelihood": f.loglik,
            "responses": int(self.y.size - int(_count_nan(self.y))),
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


def benchmark_irt(
    root: Path,
    benchmark: str,
    result: str | None = None,
    include_all: bool = False,
    ridge: float = RIDGE,
    records: list[Any] | None = None,
) -> BenchmarkIRT:
    """Fit the Rasch model over the sidecars of the (active) records of ``benchmark``.

    One respondent per record (the same model under two harnesses is two respondents); items
    are sample ids of one result per record: ``result`` if given, else the result id most
    records share, else each record's main result (most samples)."""
    import numpy as np

    from eee.analysis.samples import NOT_PULLED, SidecarProblem, primary, read_samples, records_of

    out = BenchmarkIRT(benchmark)
    recs = list(records) if records is not None else list(records_of(root, benchmark, active_only=not include_all))
    loaded = []
    for rec in recs:
        state = rec.sidecar_state()
        if state is not None:
            if state == NOT_PULLED:
                out.notes.append(f"{rec.uuid}: sidecar not pulled (run `eee samples pull`)")
            continue
        try:
            groups = read_samples(rec.sidecar)
        except (OSError, SidecarProblem) as exc:
            out.notes.append(f"{rec.uuid}: sidecar unreadable ({exc})")
            continue
        if groups:
            loaded.append((rec, groups))
    key = _choose_key([g for _, g in loaded], result)
    out.result_key = key
    columns: dict[str, int] = {}
    rows: list[tuple[list[int], Any]] = []
    for rec, groups in loaded:
        g = groups.get(key) if key is not None else None
        if g is None:
            if result is not None:
                out.notes.append(f"{rec.uuid}: no result {result!r}; left out")
                continue
            g = primary(groups, rec.doc)
        outcome = g.outcomes()
        if outcome is None:
            out.notes.append(f"{rec.uuid}: result {g.key!r} has non-binary scores and no is_correct; left out")
            continue
        idx = [columns.setdefault(sid, len(columns)) for sid in g.ids]
        rows.append((idx, outcome))
        out.respondents.append(
            {"record_uuid": rec.uuid, "model_id": rec.model_id, "eval_library": rec.eval_library, "result": g.key}
        )
    out.items = list(columns)
    if len(rows) < 2 or len(columns) < 2:
        out.notes.append("a Rasch fit needs at least two records with binary per-sample scores and two items")
        return out
    y = np.full((len(rows), len(columns)), np.nan)
    for k, (idx, outcome) in enumerate(rows):
        y[k, idx] = (np.asarray(outcome) >= 0.5).astype(float)
    out.y = y
    out.fit = fit_rasch(y, ridge=ridge)
    if not out.fit.converged:
        out.notes.append(f"the fit did not converge in {out.fit.iterations} iterations")
    return out


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


def _count_nan(y: Any) -> int:
    import numpy as np

    return int(np.isnan(y).sum())
