"""The browsable catalogue: a page per benchmark, a page per record, and an index.

The rows come from the pipeline's catalogue (``build/catalog/catalog.parquet``, one row per
evaluation result, with the governance status of the one fold). When that file is absent
(someone runs ``mkdocs build`` by hand), the same table is built from the store with
:func:`eee.catalog.build`, and the index page says so.

Built to stay fast on a large store: rows are handled one benchmark at a time, a benchmark
with many results is split into pages of ``page_rows`` results, and record pages are made
for every record only while the store has at most ``record_pages`` records; beyond that only
records with a governance history (retracted, superseded, disputed, ...) get a page, and the
others link to their file in the repository. Big tables leave the search index once the
store has more than ``search_rows`` results; record pages are never in it (the benchmark
pages list every record). The results tables and the records' JSON are made as HTML and
put into their pages after the Markdown conversion (``GeneratedPage.inject``): parsing them
as Markdown was most of the build.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any

from eee.catalog import CATALOG_DIR, catalog_present, read_catalog
from eee.governance import STATUSES
from eee.governance.status import Ledger, read_ledger
from eee.site.context import GeneratedPage, SiteContext
from eee.site.mdtext import code, fence, number, relative, slug, table, text

PARQUET = CATALOG_DIR
JSON_LIMIT = 300_000  # characters of a record's JSON shown on its page
NAV_BENCHMARKS = 40  # benchmarks listed in the navigation up to this many
STATUS_ORDER = ("active", *(s for s in STATUSES if s != "active"))  # eee.governance.STATUSES
# record pages stay out of the search index (the benchmark pages list every record) and
# out of the navigation: indexing thousands of highlighted JSON documents is most of a build
RECORD_FRONT_MATTER = "---\nsearch:\n  exclude: true\nhide:\n  - navigation\n---\n"
WANTED = (
    "record_uuid",
    "record_path",
    "benchmark",
    "developer",
    "model",
    "model_id",
    "model_name",
    "schema_version",
    "read_as",
    "evaluation_id",
    "source_name",
    "source_organization",
    "evaluator_relationship",
    "eval_library",
    "eval_library_version",
    "evaluation_name",
    "metric_id",
    "metric_name",
    "metric_unit",
    "lower_is_better",
    "min_score",
    "max_score",
    "score",
    "status",
    "status_reason",
    "superseded_by",
    "preceded_by",
    "dispute_reference",
    "flags",
    "duplicate_of",
    "last_resolution",
    "relations",
)


@dataclass
class Options:
    """Limits that keep the site quick on a large store (``extra.catalogue`` in mkdocs.yml)."""

    record_pages: int = 2000
    page_rows: int = 1000
    search_rows: int = 50_000

    @classmethod
    def from_extra(cls, extra: dict[str, Any] | None) -> Options:
        given = (extra or {}).get("catalogue") or {}
        return cls(**{k: int(v) for k, v in given.items() if k in cls.__dataclass_fields__})


@dataclass
class Summary:
    """What the index says about one benchmark."""

    name: str
    page: str
    records: int = 0
    results: int = 0
    models: int = 0
    statuses: Counter[str] = field(default_factory=Counter)

    @classmethod
    def of(cls, name: str, rows: list[dict[str, Any]]) -> Summary:
        """The summary of one benchmark's catalogue rows."""
        return cls(
            name,
            benchmark_page(name),
            records=len({r["record_uuid"] for r in rows}),
            results=len(rows),
            models=len({r.get("model_id") or f"{r['developer']}/{r['model']}" for r in rows}),
            statuses=Counter(st for _, st in {(r["record_uuid"], r.get("status") or "active") for r in rows}),
        )


def load_table(root: Path, ledger: Ledger) -> tuple[Any, str]:
    """The catalogue table and where it came from (built from the store and ``ledger``
    when the pipeline's Parquet file is absent)."""
    path = root / PARQUET
    if catalog_present(path):
        return read_catalog(path, columns=list(WANTED)), PARQUET
    from eee.catalog import build

    table, _skipped = build(root, ledger=ledger)
    return table, ""


def benchmark_page(name: str, n: int = 1) -> str:
    base = f"catalogue/benchmarks/{slug(name)}"
    return f"{base}/index.md" if n == 1 else f"{base}/page-{n}.md"


def _uuid_link(ctx: SiteContext, uuid: str, page: str) -> str:
    target = ctx.record_page(uuid)
    return f"[{code(uuid[:8])}]({relative(target, page)})" if target else f"{code(uuid)} (not in the store)"


def _a(href: str, text: str, code_text: bool = False) -> str:
    inner = f"<code>{escape(text)}</code>" if code_text else escape(text)
    return f'<a href="{escape(href)}">{inner}</a>'


def _uuid_html(ctx: SiteContext, uuid: str, page: str) -> str:
    target = ctx.record_page(uuid)
    return _a(ctx.href(target, page), uuid[:8], True) if target else f"<code>{escape(uuid)}</code> (not in the store)"


def _record_html(ctx: SiteContext, row: dict[str, Any], page: str) -> str:
    uuid = row["record_uuid"]
    target = ctx.record_page(uuid)
    if target:
        return _a(ctx.href(target, page), uuid[:8], True)
    link = ctx.repo_link(row["record_path"])
    return _a(link, uuid[:8], True) if link else f"<code>{escape(uuid[:8])}</code>"


def status_html(ctx: SiteContext, row: dict[str, Any], page: str) -> str:
    """The governance status of a row, with the reason or the links it needs (HTML)."""
    status = row.get("status") or "active"
    parts: list[str] = []
    if status == "retracted":
        parts.append(f"<strong>retracted</strong>: {escape(row.get('status_reason') or 'no reason given')}")
    elif status == "superseded":
        parts.append(f"<strong>superseded</strong> by {_uuid_html(ctx, row['superseded_by'], page)}")
    elif status == "disputed":
        ref = row.get("dispute_reference")
        parts.append("<strong>disputed</strong>" + (f": {_a(ref, 'discussion')}" if ref else ""))
    else:
        parts.append(escape(status))
    if row.get("preceded_by"):
        parts.append(f"replaces {_uuid_html(ctx, row['preceded_by'], page)}")
    return "; ".join(parts)


HEADERS = ("Developer", "Model", "Evaluation", "Metric", "Score", "Source", "Library", "Status", "Record")


def results_html(ctx: SiteContext, rows: list[dict[str, Any]], page: str) -> str:
    """The results table of a benchmark page, as HTML. It is put into the page after the
    Markdown conversion: parsing thousands of rows would be most of the build."""
    out = ["<table>", "<thead><tr>" + "".join(f"<th>{h}</th>" for h in HEADERS) + "</tr></thead>", "<tbody>"]
    for r in rows:
        cells = (
            escape(r["developer"]),
            escape(r["model"]),
            escape(r.get("evaluation_name") or ""),
            escape(_metric(r)),
            escape(number(r.get("score"))),
            escape(r.get("source_organization") or r.get("source_name") or ""),
            escape(_library(r)),
            status_html(ctx, r, page),
            _record_html(ctx, r, page),
        )
        out.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    out += ["</tbody>", "</table>"]
    return "\n".join(out) + "\n"


def _metric(row: dict[str, Any]) -> str:
    name = row.get("metric_name") or row.get("metric_id") or ""
    unit = row.get("metric_unit")
    out = f"{name} ({unit})" if unit and name else name
    return out + (" ↓" if row.get("lower_is_better") else "")


def _library(row: dict[str, Any]) -> str:
    lib, version = row.get("eval_library"), row.get("eval_library_version")
    return f"{lib} {version}" if lib and version and version != "unknown" else (lib or "")


def _benchmark_pages(
    ctx: SiteContext, s: Summary, rows: list[dict[str, Any]], opts: Options, searchable: bool, listed: bool
) -> Iterator[GeneratedPage]:
    name = s.name
    chunks = [rows[i : i + opts.page_rows] for i in range(0, len(rows), opts.page_rows)] or [[]]
    said = ", ".join(f"{s.statuses[st]} {st}" for st in STATUS_ORDER if s.statuses.get(st))
    for n, chunk in enumerate(chunks, start=1):
        page = benchmark_page(name, n)
        out = ["---\nhide:\n  - toc\n" + ("" if searchable else "search:\n  exclude: true\n") + "---\n"]
        out.append(f"# {text(name)}" + (f" (page {n} of {len(chunks)})" if len(chunks) > 1 else "") + "\n")
        out.append(
            f"{s.records:,} records, {s.results:,} results, {s.models:,} models. Records by status: {said}. "
            f"One row per result, from the [catalogue]({relative('catalogue/index.md', page)}). "
            "Each record's page has its JSON and its governance history; ↓ marks a metric where lower is better.\n"
        )
        if len(chunks) > 1:
            links = [
                str(i) if i == n else f"[{i}]({relative(benchmark_page(name, i), page)})"
                for i in range(1, len(chunks) + 1)
            ]
            out.append("Pages: " + " · ".join(links) + "\n")
        out.append("## Results { #results }\n")
        out.append("<!-- eee:results -->\n")
        inject = {"results": results_html(ctx, chunk, page)}
        yield GeneratedPage(page, "\n".join(out), in_nav=listed and n == 1, inject=inject)


def _event_row(ctx: SiteContext, uuid: str, event: dict[str, Any], page: str) -> list[str]:
    action = str(event.get("action", "?"))
    details: list[str] = []
    if action == "supersede":
        if event.get("record") == uuid:
            details.append(f"replaced by {_uuid_link(ctx, str(event.get('replacement')), page)}")
        else:
            action = "supersede (as the replacement)"
            details.append(f"replaces {_uuid_link(ctx, str(event.get('record')), page)}")
    if event.get("outcome"):
        details.append(f"outcome: {text(event['outcome'])}")
    if event.get("reference"):
        details.append(f"[reference](<{event['reference']}>)")
    link = ctx.repo_link(f"governance/events/{event.get('id')}.yaml")
    details.append(f"[event file]({link})" if link else f"event {code(event.get('id', '?'))}")
    actor = event.get("actor") or {}
    return [
        str(event.get("timestamp", "")),
        f"**{action}**",
        text(actor.get("name", "")),
        text(event.get("reason", "")),
        "; ".join(details),
    ]


def _admonitions(ctx: SiteContext, state: Any, page: str) -> list[str]:
    out = []

    def who(event: dict[str, Any]) -> str:
        actor = event.get("actor") or {}
        return f"{text(actor.get('name', '?'))}, {event.get('timestamp', '?')}"

    def block(kind: str, title: str, lines: list[str]) -> None:
        out.append(f'!!! {kind} "{title}"\n' + "\n".join(f"    {line}" for line in lines) + "\n")

    if state.retraction is not None:
        ev = state.retraction
        lines = [f"**Reason:** {text(ev.get('reason', ''))}", "", f"Retracted by {who(ev)}."]
        if ev.get("reference"):
            lines.append(f"[Discussion](<{ev['reference']}>)")
        block("danger", "Retracted", lines)
    if state.superseded_by is not None:
        ev = state.supersession or {}
        block(
            "warning",
            "Superseded",
            [f"Replaced by {_uuid_link(ctx, state.superseded_by, page)}: {text(ev.get('reason', ''))} ({who(ev)})."],
        )
    if state.preceded_by is not None:
        block(
            "info",
            "Replaces an earlier record",
            [f"This record supersedes {_uuid_link(ctx, state.preceded_by, page)}."],
        )
    if state.dispute is not None:
        ev = state.dispute
        ref = ev.get("reference")
        lines = [f"**Contested:** {text(ev.get('reason', ''))} ({who(ev)})."]
        if ref:
            lines.append(f"[Discussion](<{ref}>)")
        block("warning", "Disputed", lines)
    for ev in state.open_flags:
        lines = [
            f"**Concern:** {text(ev.get('reason', ''))} ({who(ev)}).",
            "",
            f"Rule {code(ev.get('rule', '?'))} at {code(ev.get('path', '?'))}.",
        ]
        block("warning", "Flagged", lines)
    if state.duplicate_of is not None:
        ev = state.duplicate_event or {}
        block(
            "info",
            "Duplicate",
            [
                f"Repeats {_uuid_link(ctx, state.duplicate_of, page)}, which stands: {text(ev.get('reason', ''))} ({who(ev)})."
            ],
        )
    return out


def _relations_text(ctx: SiteContext, row: dict[str, Any], page: str) -> str:
    """The record's relations (DataCite names), from the catalogue's ``relations`` column."""
    try:
        relations = json.loads(row.get("relations") or "[]")
    except ValueError:
        return ""
    parts = []
    for rel in relations:
        if rel.get("record"):
            parts.append(f"{rel['relation']} {_uuid_link(ctx, rel['record'], page)}")
        else:
            parts.append(f"{rel['relation']} {text(rel.get('source', ''))} {code(rel.get('identifier') or '')}".strip())
    return "; ".join(parts)


def _record_json(root: Path, rel: str) -> tuple[str, str]:
    """A note (Markdown) and the record's JSON as a code block (HTML, put in after Markdown)."""
    try:
        text = (root / rel).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return f"The file could not be read: {exc}\n", ""
    try:
        text = json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except ValueError:
        pass
    note = ""
    if len(text) > JSON_LIMIT:
        text = text[:JSON_LIMIT] + "\n..."
        note = f"Only the first {JSON_LIMIT:,} characters are shown.\n\n"
    return note, json_block(text)


def json_block(text: str) -> str:
    """``text`` as a highlighted JSON code block, the HTML pymdownx.highlight writes."""
    try:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import JsonLexer

        body = highlight(text, JsonLexer(), HtmlFormatter(nowrap=True))
    except ImportError:
        body = escape(text)
    return f'<div class="language-json highlight"><pre><span></span><code>{body}</code></pre></div>\n'


def record_page(ctx: SiteContext, uuid: str, rows: list[dict[str, Any]], state: Any) -> GeneratedPage:
    """The page of one record: facts, status, results, history and the JSON."""
    page = f"catalogue/records/{uuid}.md"
    first = rows[0]
    out = [RECORD_FRONT_MATTER, f"# Record {code(uuid)}\n"]
    out += _admonitions(ctx, state, page)
    link = ctx.repo_link(first["record_path"])
    declared, read_as = first.get("schema_version"), first.get("read_as")
    facts = [
        ["File", code(first["record_path"]) + (f" ([in the repository]({link}))" if link else "")],
        ["Benchmark", f"[{text(first['benchmark'])}]({relative(benchmark_page(first['benchmark']), page)})"],
        ["Model", f"{code(first.get('model_id') or '')} {text(first.get('model_name'))}".strip()],
        ["Evaluation id", code(first.get("evaluation_id") or "")],
        [
            "Source",
            " · ".join(
                text(x)
                for x in (
                    first.get("source_organization"),
                    first.get("source_name"),
                    first.get("evaluator_relationship"),
                )
                if x
            ),
        ],
        ["Evaluation library", text(_library(first))],
        [
            "Schema version",
            f"{declared}" + (f" (the catalogue reads it as {read_as})" if read_as and read_as != declared else ""),
        ],
        ["Status", f"**{state.status}**"],
    ]
    if state.resolution is not None:
        res = state.resolution
        facts.append(["Last resolution", f"{text(res.get('outcome', ''))}: {text(res.get('reason', ''))}"])
    relations = _relations_text(ctx, first, page)
    if relations:
        facts.append(["Relations", relations])
    out.append("".join(f"- **{k}:** {v}\n" for k, v in facts))
    out.append("## Results { #results }\n")
    out.append(
        table(
            ["Evaluation", "Metric", "Score", "Range"],
            [
                [
                    text(r.get("evaluation_name")),
                    text(_metric(r)),
                    number(r.get("score")),
                    f"{number(r.get('min_score'))} … {number(r.get('max_score'))}"
                    if r.get("min_score") is not None or r.get("max_score") is not None
                    else "",
                ]
                for r in rows
            ],
        )
    )
    out.append("## History { #history }\n")
    if state.history:
        out.append("Every governance event about this record, oldest first (the ledger in `governance/events/`).\n")
        out.append(
            table(
                ["When (UTC)", "Event", "By", "Reason", "Details"],
                [_event_row(ctx, uuid, e, page) for e in state.history],
            )
        )
    else:
        out.append("No events: the record stands as it was accepted.\n")
    out.append("## Record JSON { #record-json }\n")
    out.append("The file as it is stored (pretty-printed).\n")
    note, block = _record_json(ctx.root, first["record_path"])
    out.append(note + "<!-- eee:json -->\n")
    return GeneratedPage(page, "\n".join(out), in_nav=False, inject={"json": block})


@dataclass
class CatalogueResult:
    """The catalogue pages, the nav entries and what other generators need."""

    pages: list[GeneratedPage]
    nav: list[str]
    examples: dict[str, list[str]]  # schema version -> a few record uuids that have pages
    records_by_version: dict[str, int]


def generate(ctx: SiteContext, opts: Options) -> CatalogueResult:
    """Every catalogue page. Fills ``ctx.record_pages`` first, so links agree with pages."""
    import pyarrow.compute as pc

    ledger = read_ledger(ctx.root)
    table_, origin = load_table(ctx.root, ledger)
    uuids = set(pc.unique(table_["record_uuid"]).to_pylist()) if table_.num_rows else set()
    with_history = {u for u, st in ledger.states.items() if st.history and u in uuids}
    ctx.record_pages = set(uuids) if len(uuids) <= opts.record_pages else with_history
    searchable = table_.num_rows <= opts.search_rows

    if table_.num_rows:
        table_ = table_.sort_by([(c, "ascending") for c in ("benchmark", "developer", "model", "record_path")])
    names = table_["benchmark"].to_pylist() if table_.num_rows else []
    listed = len(set(names)) <= NAV_BENCHMARKS
    pages: list[GeneratedPage] = []
    summaries: list[Summary] = []
    kept: dict[str, list[dict[str, Any]]] = defaultdict(list)
    by_version: dict[str, set[str]] = defaultdict(set)
    start = 0
    while start < len(names):
        end = start
        while end < len(names) and names[end] == names[start]:
            end += 1
        rows = table_.slice(start, end - start).to_pylist()
        s = Summary.of(names[start], rows)
        pages += _benchmark_pages(ctx, s, rows, opts, searchable, listed)
        summaries.append(s)
        for r in rows:
            by_version[str(r.get("schema_version"))].add(r["record_uuid"])
            if r["record_uuid"] in ctx.record_pages:
                kept[r["record_uuid"]].append(r)
        start = end
    for uuid, rows in kept.items():
        pages.append(record_page(ctx, uuid, rows, ledger.state(uuid)))
    examples = {v: sorted(u for u in us if u in ctx.record_pages)[:3] for v, us in by_version.items()}
    pages.append(
        GeneratedPage("catalogue/index.md", index_page(ctx, summaries, ledger, with_history, origin, len(uuids), opts))
    )
    nav = [s.page for s in summaries] if listed else []
    return CatalogueResult(pages, nav, examples, {v: len(us) for v, us in by_version.items()})


def index_page(
    ctx: SiteContext,
    summaries: list[Summary],
    ledger: Ledger,
    with_history: set[str],
    origin: str,
    records: int,
    opts: Options,
) -> str:
    """The catalogue's front page: benchmarks, records with a history (``with_history``, the
    records in the store whose ledger state has events), how to load the data."""
    from eee.catalog import COLUMNS

    page = "catalogue/index.md"
    results = sum(s.results for s in summaries)
    out = ["# Catalogue\n"]
    out.append(
        f"{records:,} records with {results:,} results across {len(summaries):,} benchmarks. "
        "Every record keeps its governance status: retracted records stay, with the reason; "
        "superseded records link to their replacement and back; disputed records link to the discussion.\n"
    )
    if origin:
        out.append(f"Built from the pipeline's catalogue, {code(origin)}.\n")
    else:
        out.append(
            '!!! note "Built from the store directly"\n'
            f"    {code(PARQUET)} was not there when the site was built, so the catalogue was read from "
            "`data/` and `governance/events/` at build time. The pipeline (`python3 tools/dev.py run`) "
            "writes the file first and the site uses it.\n"
        )
    if len(ctx.record_pages) < records:
        out.append(
            f"The store has more than {opts.record_pages:,} records, so only the {len(ctx.record_pages):,} records "
            "with a governance history have a page here; every other record links to its file in the repository.\n"
        )
    out.append("## Benchmarks { #benchmarks }\n")
    out.append(
        table(
            ["Benchmark", "Records", "Results", "Models", *(st.capitalize() for st in STATUS_ORDER[1:])],
            [
                [f"[{text(s.name)}]({relative(s.page, page)})", f"{s.records:,}", f"{s.results:,}", f"{s.models:,}"]
                + [str(s.statuses.get(st, 0)) for st in STATUS_ORDER[1:]]
                for s in summaries
            ],
        )
        if summaries
        else "The store holds no records yet.\n"
    )
    out.append("## Records with a history { #records-with-a-history }\n")
    rows = []
    for uuid in sorted(with_history):
        st = ledger.state(uuid)
        last = st.history[-1]
        rows.append(
            [
                f"[{code(uuid)}]({relative(f'catalogue/records/{uuid}.md', page)})",
                f"**{st.status}**",
                f"{last.get('action')}: {text(last.get('reason', ''))}",
                str(last.get("timestamp", "")),
            ]
        )
    out.append(table(["Record", "Status", "Latest event", "When (UTC)"], rows) if rows else "None yet.\n")
    out.append("## Load it yourself { #load-it-yourself }\n")
    out.append(
        "The pipeline writes the catalogue as Parquet partitioned by benchmark (hive layout), one row per result:\n\n"
        + fence(
            "from eee.catalog import read_catalog\n"
            f"table = read_catalog('{PARQUET}')  # pyarrow; or with DuckDB:\n"
            "import duckdb\n"
            f"duckdb.sql(\"SELECT benchmark, model_id, metric_id, score_normalised FROM read_parquet('{PARQUET}/**/*.parquet', \"\n"
            "           \"hive_partitioning = true, hive_types = {'benchmark': 'VARCHAR'}) WHERE status = 'active'\")",
            "python",
        )
        + "\nColumns:\n\n"
        + table(["Column", "Type", "Meaning"], [[code(n), t, d] for n, t, d in COLUMNS])
    )
    return "\n".join(out)
