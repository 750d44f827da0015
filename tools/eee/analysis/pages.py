"""The analysis pages the pipeline writes for the site: for each benchmark with instance
data, ``pages/<benchmark>.md`` with the IRT fit and the comparisons of records of one model,
and SVG plots beside it (relative image links); the fits as Parquet under ``irt/<benchmark>/``;
for every (canonical) benchmark, its leaderboards as JSON under ``leaderboards/``
(:mod:`eee.analysis.leaderboard`, from the catalogue the pipeline wrote before), which the
site's benchmark pages show.

The whole output folder is written fresh beside the old one and swapped in at the end.
"""

from __future__ import annotations

import os
import shutil
from collections import defaultdict
from itertools import combinations
from pathlib import Path
from typing import Any
from urllib.parse import quote

from eee.reporting.shown import command
from eee.site.mdraw import END as RAW_END
from eee.site.mdraw import START as RAW_START
from eee.site.mdtext import code, html, meta, text
from eee.store.fsutil import replace_folder

ANALYSIS_DIR = "build/analysis"
MAX_PAIRS = 20  # comparisons per benchmark page
MAX_POINTS = 5000  # items drawn in a scatter (evenly thinned beyond)
MAX_ROWS = 50  # abilities drawn and tabulated
RAW_ROWS = 200  # a longer table is written as HTML the site passes through (eee.site.mdraw), not searched


class Code(str):
    """Data shown as inline code in a table cell (any other value is shown as text); a cell
    may also be a tuple of such parts, shown with a space between. Every value is escaped
    for where it lands (:mod:`eee.site.mdtext`): the cells are data, never Markdown."""


def _cell(value: Any) -> str:
    if isinstance(value, tuple):
        return " ".join(_cell(v) for v in value)
    if isinstance(value, Code):
        return code(value)
    return text("" if value is None else value)


def _html_cell(value: Any) -> str:
    if isinstance(value, tuple):
        return " ".join(_html_cell(v) for v in value)
    if isinstance(value, Code):
        return f"<code>{html(value)}</code>"
    return html("" if value is None else value)


def _table(head: list[str], rows: list[list[Any]]) -> str:
    """A Markdown table; past ``RAW_ROWS`` rows the same table as HTML between the raw markers.

    Python-Markdown reads a table cell by cell (a benchmark with 10,000 records took seconds
    of the site's build), and the search plugin would then parse every row; the long table is
    left out of the search index (each of its records is found on its own page).
    """
    if len(rows) > RAW_ROWS:
        out = [RAW_START, "<div data-search-exclude>", "<table>"]
        out.append("<thead><tr>" + "".join(f"<th>{html(h)}</th>" for h in head) + "</tr></thead>")
        out.append("<tbody>")
        out += ["<tr>" + "".join(f"<td>{_html_cell(c)}</td>" for c in row) + "</tr>" for row in rows]
        out += ["</tbody>", "</table>", "</div>", RAW_END]
        return "\n".join(out) + "\n"
    out = ["| " + " | ".join(text(h) for h in head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(out) + "\n"


def _p(p: float) -> str:
    return f"{p:.3g}" if p >= 1e-4 else f"{p:.2e}"


def benchmarks_with_instance_data(root: Path, include_all: bool = False) -> dict[str, list[Any]]:
    """Benchmark -> its (active) records, for every benchmark where a record declares or has a sidecar."""
    from eee.analysis.samples import NO_SIDECAR, records_of
    from eee.rules.ledger import read_ledger

    ledger = read_ledger(root)
    data = root / "data"
    out: dict[str, list[Any]] = {}
    if not data.is_dir():
        return out
    for bench in sorted(p.name for p in data.iterdir() if p.is_dir()):
        recs = list(records_of(root, bench, active_only=not include_all, ledger=ledger))
        if any(r.sidecar_state() != NO_SIDECAR for r in recs):
            out[bench] = recs
    return out


def _with_instance_data(root: Path, bench: str, include_all: bool, ledger: Any) -> list[Any] | None:
    from eee.analysis.samples import NO_SIDECAR, records_of

    recs = list(records_of(root, bench, active_only=not include_all, ledger=ledger))
    return recs if any(r.sidecar_state() != NO_SIDECAR for r in recs) else None


def _thin(n: int, cap: int) -> list[int]:
    if n <= cap:
        return list(range(n))
    step = n / cap
    return [int(k * step) for k in range(cap)]


def benchmark_page(root: Path, bench: str, recs: list[Any], out: Path) -> dict[str, Any]:
    """Write the page, plots and IRT Parquet of one benchmark under ``out``; returns a summary."""
    from eee.analysis.compare import compare_records
    from eee.analysis.irt import benchmark_irt, write_parquet
    from eee.analysis.samples import NO_SIDECAR, NOT_PULLED
    from eee.analysis.svg import errorbar_plot, scatter_plot

    pages = out / "pages"
    title = f"{bench}: instance-level analysis"
    lines = [f"---\ntitle: {meta(title)}\n---\n", f"# {text(title)} {{ #analysis }}\n"]
    lines.append(
        "Generated by the pipeline (`eee analysis`) from the per-sample sidecars of the benchmark's active "
        f"records. Reproduce with {code(command('irt', '--benchmark', bench, cwd=root))} and "
        f"{code(command('compare', cwd=root))}.\n"
    )
    lines.append("## Records\n")
    res = benchmark_irt(root, bench, records=recs)  # reads each sidecar once, for the table too
    rows = []
    for r in recs:
        seen = res.sidecars.get(r.uuid) or {"state": "not read (the fit's row limit was reached)"}
        state = seen["state"]
        if state == "read":
            mean = seen["mean"]
            rows.append(
                [
                    Code(r.uuid[:8]),
                    r.model_id,
                    r.eval_library or "",
                    seen["samples"],
                    "" if mean is None else f"{mean:.4f}",
                    "read",
                ]
            )
        else:
            what = {NOT_PULLED: "not pulled (in DVC)", NO_SIDECAR: "no sidecar"}.get(state, state)
            if state == "unreadable":
                what = f"unreadable ({seen['problem']})"
            rows.append([Code(r.uuid[:8]), r.model_id, r.eval_library or "", "", "", what])
    lines.append(_table(["Record", "Model", "Library", "Samples (main result)", "Mean score", "Sidecar"], rows))
    if any(r.sidecar_state() == NOT_PULLED for r in recs):
        lines.append(
            "\nSome sidecars were not pulled from DVC when the pipeline ran; they are left out below "
            f"(`{command('samples', 'pull', cwd=root)}`, then run the pipeline again).\n"
        )

    lines.append("\n## Item response theory (Rasch)\n")
    summary: dict[str, Any] = {"benchmark": bench, "records": len(recs), "fit": res.fit is not None}
    if res.fit is None:
        lines.append(text(f"No fit: {res.no_fit}.") + "\n")
    else:
        f = res.fit
        write_parquet(res, out / "irt" / bench)
        lines.append(
            f"A one-parameter logistic model fitted by ridge-penalised joint maximum likelihood (ridge {f.ridge}) "
            f"over {len(res.respondents)} records and {len(res.items)} items"
            + (f" of result {code(res.result_key)}" if res.result_key else "")
            + (f" ({res.answered_once} answered by one record only)" if res.answered_once else "")
            + f"; {f.iterations} iterations, {'converged' if f.converged else 'not converged'}. "
            "Abilities and difficulties are on one logit scale (difficulties centred on 0); "
            f"the Parquet files are {code(f'{ANALYSIS_DIR}/irt/{bench}/abilities.parquet')} and `items.parquet`.\n"
        )
        order = sorted(range(len(res.respondents)), key=lambda k: -f.ability[k])[:MAX_ROWS]
        labels = [
            f"{res.respondents[k]['model_id']} ({res.respondents[k]['eval_library'] or '?'}, {res.respondents[k]['record_uuid'][:8]})"
            for k in order
        ]
        (pages / f"{bench}-abilities.svg").write_text(
            errorbar_plot(
                labels,
                [float(f.ability[k]) for k in order],
                [1.96 * float(f.ability_se[k]) for k in order],
                f"{bench}: model abilities (95% intervals)",
                "ability (logits)",
            )
        )
        keep = _thin(len(res.items), MAX_POINTS)
        (pages / f"{bench}-difficulty.svg").write_text(
            scatter_plot(
                [float(f.item_share[i]) for i in keep],
                [float(f.difficulty[i]) for i in keep],
                f"{bench}: item difficulty against the share of models solving it",
                "share of models solving the item",
                "difficulty (logits)",
            )
        )
        link = quote(bench, safe="")  # a relative link, every character but letters, digits and _.-~ percent-encoded
        lines.append(f"![Model abilities with 95% intervals]({link}-abilities.svg)\n")
        lines.append(f"![Item difficulty against the share of models solving each item]({link}-difficulty.svg)\n")
        lines.append("### Abilities\n")
        lines.append(
            _table(
                ["Model", "Library", "Record", "Ability", "SE", "Solved", "Infit", "Outfit"],
                [
                    [
                        res.respondents[k]["model_id"],
                        res.respondents[k]["eval_library"] or "",
                        Code(res.respondents[k]["record_uuid"][:8]),
                        f"{f.ability[k]:+.3f}",
                        f"{f.ability_se[k]:.3f}",
                        f"{f.person_share[k]:.1%}",
                        f"{f.person_infit[k]:.2f}",
                        f"{f.person_outfit[k]:.2f}",
                    ]
                    for k in order
                ],
            )
        )
        lines.append("\n### Items that fit worst\n")
        lines.append("Highest outfit mean square first (1 is a perfect fit).\n")
        lines.append(
            _table(
                ["Item", "Difficulty", "SE", "Solved by", "Infit", "Outfit"],
                [
                    [
                        Code(w["item"]),
                        f"{w['difficulty']:+.3f}",
                        f"{w['se']:.3f}",
                        f"{w['share_correct']:.0%} of {w['models']}",
                        f"{w['infit']:.2f}",
                        f"{w['outfit']:.2f}",
                    ]
                    for w in res.worst_items(10)
                ],
            )
        )
        summary.update(items=len(res.items), respondents=len(res.respondents))
    if res.notes:
        lines.append("\n" + "\n".join(f"- {text(n)}" for n in res.notes) + "\n")

    lines.append("\n## Comparisons of one model's records\n")
    lines.append(
        "Two records of one model may differ in protocol (another harness, prompt or judge): such a pair is "
        "compared here all the same, and the protocol fields that differ are named in the last column.\n"
    )
    by_model: dict[str, list[Any]] = defaultdict(list)
    for r in recs:
        if r.sidecar_state() != NO_SIDECAR:
            by_model[r.model_id].append(r)
    pairs = [p for m in sorted(by_model) for p in combinations(by_model[m], 2)][:MAX_PAIRS]
    if not pairs:
        lines.append("No model has two records with instance data on this benchmark.\n")
    crow = []
    for a, b in pairs:
        rep = compare_records(a, b, disagreements=0, across_protocols=True)
        s = rep["samples"]
        apart = sorted({d["field"] for c in rep.get("protocols") or [] for d in c["differing"]})
        protocols = "same" if not apart else "differ in " + ", ".join(apart)
        if not s:
            crow.append(
                [a.model_id, (Code(a.uuid[:8]), "vs", Code(b.uuid[:8])), "", "", "", "", "aggregates only", protocols]
            )
            continue
        for r in s["results"]:
            if not r["overlap"]:
                crow.append(
                    [
                        a.model_id,
                        (Code(a.uuid[:8]), "vs", Code(b.uuid[:8])),
                        0,
                        "",
                        "",
                        "",
                        "no sample in common",
                        protocols,
                    ]
                )
                continue
            lo, hi = r["difference_ci"]
            binary = r.get("binary")
            crow.append(
                [
                    a.model_id,
                    (Code(a.uuid[:8]), "vs", Code(b.uuid[:8])),
                    r["overlap"],
                    f"{r['agreement']:.1%}",
                    f"{r['difference']:+.4f} [{lo:+.4f}, {hi:+.4f}]",
                    _p(binary["mcnemar_exact_p"]) if binary else "",
                    f"{r['result_a']} vs {r['result_b']}",
                    protocols,
                ]
            )
    if crow:
        lines.append(
            _table(
                [
                    "Model",
                    "Records",
                    "Samples in common",
                    "Agreement",
                    "Difference A-B [95% CI]",
                    "McNemar p",
                    "Results",
                    "Protocols",
                ],
                crow,
            )
        )
    summary["comparisons"] = len(pairs)
    (pages / f"{bench}.md").write_text("\n".join(lines))
    return summary


KEYS_FILE = ".benchmarks.json"  # in the output folder: benchmark -> what its page was made from
KEYS_FORMAT = "eee-analysis-benchmarks/1"


def _ours(name: str) -> bool:
    return name in ("pages", "irt", "leaderboards", KEYS_FILE)


def write_leaderboards(root: Path, out: Path, benchmarks: set[str] | None = None) -> list[str]:
    """Write the leaderboards of every canonical benchmark of the store (or of those named in
    ``benchmarks``) to ``out/leaderboards/<benchmark>.json``, from the catalogue the pipeline
    wrote (``build/catalog``), else from the store; remove those of benchmarks that are gone.
    Returns the benchmarks written."""
    import json

    from eee.analysis.leaderboard import build, tables_from_catalog, tables_from_store
    from eee.catalog.table import CATALOG_DIR, atomic_write_text, read_names
    from eee.site.cataloguepages import leaderboard_file
    from eee.store.identity import BENCHMARK

    names = read_names(root)
    data = root / "data"
    folders = sorted(p.name for p in data.iterdir() if p.is_dir()) if data.is_dir() else []
    by_canonical: dict[str, list[str]] = defaultdict(list)
    for folder in folders:
        by_canonical[names.canonical(BENCHMARK, folder) or folder].append(folder)
    folder_out = out / "leaderboards"
    folder_out.mkdir(parents=True, exist_ok=True)
    wanted = {Path(leaderboard_file(b)).name for b in by_canonical}
    for path in folder_out.iterdir():
        if path.name not in wanted:
            _remove([path])
    catalog = root / CATALOG_DIR
    written = []
    for bench in sorted(by_canonical):
        if benchmarks is not None and bench not in benchmarks:
            continue
        parts = by_canonical[bench]
        present = catalog.is_dir() and all((catalog / f"benchmark={quote(f, safe='')}").is_dir() for f in parts)
        tables = tables_from_catalog(catalog, parts) if present else tables_from_store(root, parts)
        report = build(tables, bench)
        atomic_write_text(folder_out / Path(leaderboard_file(bench)).name, json.dumps(report, indent=1) + "\n")
        written.append(bench)
    return written


def benchmark_keys(manifest: dict[str, Any], ledger: Any, code: str, include_all: bool) -> dict[str, str]:
    """benchmark -> the digest of what its analysis reads: the paths and sha256 of its
    records, pointers and pulled sidecars (from the store manifest), the governance columns of
    its records, ``code`` and ``include_all``."""
    import hashlib
    import json

    from eee.store.paths import RECORD_SUFFIX

    per: dict[str, list[Any]] = defaultdict(list)
    for section in ("files", "sidecars_present"):
        for rel, digest in (manifest.get(section) or {}).items():
            parts = rel.split("/")
            if len(parts) < 3 or parts[0] != "data":
                continue
            fields = ledger.record_fields(parts[-1][: -len(RECORD_SUFFIX)]) if rel.endswith(RECORD_SUFFIX) else None
            per[parts[1]].append([section, rel, digest, fields])
    return {
        bench: hashlib.sha256(json.dumps([code, include_all, sorted(items)], default=str).encode()).hexdigest()
        for bench, items in per.items()
    }


def _bench_files(out: Path, bench: str) -> list[Path]:
    pages = out / "pages"
    return [
        pages / f"{bench}.md",
        pages / f"{bench}-abilities.svg",
        pages / f"{bench}-difficulty.svg",
        out / "irt" / bench,
    ]


def _remove(paths: list[Path]) -> None:
    for path in paths:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.exists() or path.is_symlink():
            path.unlink()


def update_pages(
    root: Path, out: Path, manifest: dict[str, Any], include_all: bool = False
) -> tuple[list[dict[str, Any]], list[str]]:
    """The analysis output in ``out`` brought up to date with the store ``manifest``: only
    the benchmarks whose key (:func:`benchmark_keys`) changed since the last run are read
    again and their page, plots and fit rewritten; those of benchmarks that are gone are
    removed. Returns the summaries of every benchmark with instance data and the benchmarks
    redone. The same files :func:`write_pages` writes, plus the keys file."""
    import json

    from eee.catalog.table import atomic_write_text, check_replaceable, code_version
    from eee.rules.ledger import read_ledger

    out = Path(out)
    check_replaceable(out, _ours, "the analysis output")
    ledger = read_ledger(root)
    keys = benchmark_keys(manifest, ledger, code_version(), include_all)
    try:
        old = json.loads((out / KEYS_FILE).read_text())
        old = old["benchmarks"] if old.get("format") == KEYS_FORMAT else {}
    except (OSError, ValueError, KeyError, AttributeError):
        old = {}
    if not old:  # no keys: whatever is there was not written by this function
        _remove([out / "pages", out / "irt", out / "leaderboards"])
    (out / "pages").mkdir(parents=True, exist_ok=True)
    (out / "irt").mkdir(exist_ok=True)
    fresh: dict[str, Any] = {}
    redone: list[str] = []
    for bench in sorted(keys):
        known = old.get(bench) or {}
        page_there = not known.get("summary") or (out / "pages" / f"{bench}.md").is_file()
        if known.get("key") == keys[bench] and page_there:
            fresh[bench] = known
            continue
        redone.append(bench)
        _remove(_bench_files(out, bench))
        recs = _with_instance_data(root, bench, include_all, ledger) if (root / "data" / bench).is_dir() else None
        summary = benchmark_page(root, bench, recs, out) if recs is not None else None
        fresh[bench] = {"key": keys[bench], "summary": summary}
    for bench in sorted(set(old) - set(keys)):
        _remove(_bench_files(out, bench))
        redone.append(bench)
    from eee.catalog.table import read_names
    from eee.store.identity import BENCHMARK

    names = read_names(root)
    missing = not (out / "leaderboards").is_dir()
    write_leaderboards(root, out, None if missing else {names.canonical(BENCHMARK, b) or b for b in redone})
    from eee.analysis.experiment import write_pages as experiment_pages

    experiment_pages(root, out / "pages")  # one page per experiment card, fresh each run
    text = json.dumps({"format": KEYS_FORMAT, "benchmarks": fresh}, indent=1) + "\n"
    if not (out / KEYS_FILE).is_file() or (out / KEYS_FILE).read_text() != text:
        atomic_write_text(out / KEYS_FILE, text)
    return [entry["summary"] for _, entry in sorted(fresh.items()) if entry.get("summary")], redone


def write_pages(root: Path, out: Path, include_all: bool = False) -> list[dict[str, Any]]:
    """Write every benchmark's page into a fresh ``out`` (``pages/`` and ``irt/``)."""
    from eee.catalog.table import check_replaceable

    out = Path(out)
    check_replaceable(out, _ours, "the analysis output")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    if tmp.exists():
        shutil.rmtree(tmp)
    (tmp / "pages").mkdir(parents=True)
    (tmp / "irt").mkdir()
    try:
        summaries = [
            benchmark_page(root, b, recs, tmp) for b, recs in benchmarks_with_instance_data(root, include_all).items()
        ]
        write_leaderboards(root, tmp)
        from eee.analysis.experiment import write_pages as experiment_pages

        experiment_pages(root, tmp / "pages")
        replace_folder(tmp, out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    return summaries
