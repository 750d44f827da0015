"""The browsable catalogue: a page per benchmark, a page per record, and an index.

The rows come from the pipeline's catalogue (``build/catalog/``, hive-partitioned, one row per
evaluation result, with the governance status of the one fold). When that file is absent
(someone runs ``mkdocs build`` by hand), the same table is built from the store with
:func:`eee.catalog.table.build`, and the index page says so.

Built to stay fast on a large store: rows are handled one benchmark at a time, a benchmark
with many results is split into pages of ``page_rows`` results, and every record has a page
of its own only while the store has at most ``record_pages`` records (MkDocs spends about
15 ms a page). Beyond that, records with a governance history (retracted, superseded,
disputed, ...) keep their own page and every other record is a section (anchor: its uuid)
of a shared page, one per first two hex digits of the uuid's sha256 (at most 256 pages), with its
facts, status and every result, its JSON linked in the repository: every record stays
reachable from the tables and found by search, and the pages say so with the counts. Big tables leave the search index once the
store has more than ``search_rows`` results. The results tables are written as HTML, which
Markdown passes through untouched: parsing them as Markdown tables was most of the build.
The words of every page are in ``templates/catalogue/``.

Everything a record, an event or an import manifest says is data: record pages and
sections are HTML between raw markers (:mod:`eee.site.mdraw`) with every value escaped
(:mod:`eee.site.mdtext`), an address from the data is a link only when it is http(s), only a
file named by a canonical uuid gets a page or a section. Results of one record that show the
same evaluation name and metric are told apart (:func:`tell_apart`); a record placed by an
import says so, from the import manifest (:func:`import_provenance`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eee.catalog.table import CATALOG_DIR, catalog_present, read_catalog
from eee.governance import STATUSES
from eee.governance.status import Ledger
from eee.rules.ledger import read_ledger
from eee.site.cataloguecache import PagesCache, digest
from eee.site.context import GeneratedPage, SiteContext, group_key, group_page
from eee.site.mdtext import number, slug, url
from eee.site.render import render
from eee.store.limits import MIB, RECORD_MAX_BYTES, read_regular
from eee.store.paths import UUID4_RE

PARQUET = CATALOG_DIR
LEADERBOARDS = "build/analysis/leaderboards"  # where the analysis stage writes each benchmark's leaderboards (JSON)
LEADERBOARD_MAX_BYTES = 64 * MIB
LEADERBOARD_ROWS = 500  # entries shown per leaderboard (the JSON has them all)
JSON_LIMIT = 300_000  # characters of a record's JSON shown on its page
MANIFEST_MAX_BYTES = 256 * MIB  # one import manifest read for the record pages (about 250 bytes a file)
_EVENT_ID = re.compile(r"^[0-9A-Za-z][0-9A-Za-z._-]*$")  # an event id that names its file (else shown as text)
NAV_BENCHMARKS = 40  # benchmarks listed in the navigation up to this many
STATUS_ORDER = ("active", *(s for s in STATUSES if s != "active"))  # eee.governance.STATUSES
WANTED = (
    "record_uuid",
    "record_path",
    "benchmark",
    "benchmark_canonical",
    "developer",
    "developer_canonical",
    "model",
    "model_id",
    "model_id_canonical",
    "model_name",
    "schema_version",
    "read_as",
    "evaluation_id",
    "source_name",
    "source_organization",
    "evaluator_relationship",
    "eval_library",
    "eval_library_version",
    "evaluation_result_id",
    "evaluation_name",
    "dataset_name",
    "metric_id",
    "metric_name",
    "metric_unit",
    "lower_is_better",
    "min_score",
    "max_score",
    "score",
    "standard_error",
    "ci_lower",
    "ci_upper",
    "num_samples",
    "has_samples",
    "protocol_id",
    "se",
    "ci_low",
    "ci_high",
    "ci_level",
    "uncertainty_source",
    "uncertainty_method",
    "n_items",
    "items_agree",
    "items_score",
    "items_note",
    "source_type",
    "status",
    "lifecycle",
    "stands_on",
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

    record_pages: int = 2000  # every record has its own page up to this many; beyond, shared pages
    highlight_records: int = 200
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
            models=len({_model_key(r) for r in rows}),
            statuses=Counter(st for _, st in {(r["record_uuid"], r.get("status") or "active") for r in rows}),
        )


def _model_key(row: dict[str, Any]) -> str:
    """A model as the index counts it: its canonical id (one model under two spellings is one)."""
    return row.get("model_id_canonical") or row.get("model_id") or f"{row['developer']}/{row['model']}"


def benchmark_of(row: dict[str, Any]) -> str:
    """The benchmark a row is listed under: its canonical id (the folders of its aliases share its page)."""
    return row.get("benchmark_canonical") or row["benchmark"]


def load_table(root: Path, ledger: Ledger) -> tuple[Any, str]:
    """The catalogue table and where it came from (built from the store and ``ledger``
    when the pipeline's Parquet file is absent)."""
    path = root / PARQUET
    if catalog_present(path):
        return read_catalog(path, columns=list(WANTED)), PARQUET
    from eee.catalog.table import build

    table, _skipped = build(root, ledger=ledger)
    return table, ""


def benchmark_page(name: str, n: int = 1) -> str:
    base = f"catalogue/benchmarks/{slug(name)}"
    return f"{base}/index.md" if n == 1 else f"{base}/page-{n}.md"


def _href(ctx: SiteContext, uuid: str | None, page: str) -> str | None:
    """The URL of a record's page from ``page`` (for HTML, which MkDocs does not rewrite)."""
    target = ctx.record_page(uuid)
    return ctx.href(target, page) if target else None


HEADERS = ("Model", "Evaluation", "Metric", "Score", "Source", "Status", "Record")


def model_label(row: dict[str, Any]) -> tuple[str, str]:
    """The model as the tables show it: its id, and its name when that says something else."""
    model_id = row.get("model_id") or f"{row['developer']}/{row['model']}"
    name = row.get("model_name") or ""
    same = name.casefold() in (model_id.casefold(), model_id.rsplit("/", 1)[-1].casefold())
    return model_id, "" if same else name


def interval(row: dict[str, Any]) -> str:
    """A score's interval in a few characters: ``[low, high]`` (with its level when not 95%),
    else ``± se``; empty when there is none."""
    low, high, level = row.get("ci_low"), row.get("ci_high"), row.get("ci_level")
    if low is not None and high is not None:
        said = f"[{number(low)}, {number(high)}]"
        return said if level in (None, 0.95) else f"{said} at {level:.0%}"
    if row.get("se") is not None:
        return f"± {number(row['se'])}"
    return ""


def uncertainty(row: dict[str, Any]) -> str:
    """The score's uncertainty with its source (:mod:`eee.catalog.uncertainty`): ``[low,
    high] (items)``, ``± se (record)``, or ``no interval`` when the source is none; for a
    result whose items do not give its score (``items_agree`` false), no interval and what
    the items give instead."""
    if row.get("items_agree") is False:
        items = row.get("items_score")
        return "no interval: its items give " + (number(items) if items is not None else "another score")
    said = interval(row)
    source = row.get("uncertainty_source")
    if said:
        return f"{said} ({source})" if source else said
    return "no interval" if source == "none" else ""


class _Rows:
    """Catalogue rows as the results table shows them; what belongs to a record (its links)
    is worked out once per record, not once per result."""

    def __init__(self, ctx: SiteContext, page: str) -> None:
        self.ctx, self.page = ctx, page
        self.records: dict[str, dict[str, Any]] = {}

    def href(self, uuid: str | None) -> str | None:
        target = self.ctx.record_page(uuid)
        return self.ctx.href(target, self.page) if target else None

    def record(self, r: dict[str, Any]) -> dict[str, Any]:
        uuid = r["record_uuid"]
        known = self.records.get(uuid)
        if known is None:
            model, name = model_label(r)
            known = self.records[uuid] = {
                "record_uuid": uuid,
                "record_href": self.href(uuid) or self.ctx.repo_link(r["record_path"]),
                "model": model,
                "model_name": name,
                "source": r.get("source_organization") or r.get("source_name") or "",
                "library": _library(r),
                "status": r.get("status") or "active",
                "status_class": _CLASS_BAD.sub("-", str(r.get("status") or "active")),
                "status_reason": r.get("status_reason"),
                "superseded_by": r.get("superseded_by"),
                "superseded_by_href": self.href(r.get("superseded_by")),
                "preceded_by": r.get("preceded_by"),
                "preceded_by_href": self.href(r.get("preceded_by")),
                "dispute_reference": r.get("dispute_reference"),
                "dispute_href": url(r.get("dispute_reference")),
            }
        return known

    def view(self, r: dict[str, Any]) -> dict[str, Any]:
        return {
            **self.record(r),
            "evaluation_name": r.get("evaluation_name") or "",
            "tell": r.get("tell") or "",
            "metric": _metric(r),
            "score": number(r.get("score")),
            "uncertainty": uncertainty(r),
        }


_CLASS_BAD = re.compile(r"[^a-z0-9_-]+")


def tell_apart(rows: list[dict[str, Any]]) -> None:
    """Give each row a ``tell``: what sets a result apart from the other results of its record
    that show the same evaluation name and metric (its ``evaluation_result_id``, else its
    dataset, else its place in the record); empty when nothing else looks the same."""
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[(r.get("record_uuid"), r.get("evaluation_name") or "", _metric(r))].append(r)
    for same in groups.values():
        if len(same) == 1:
            same[0]["tell"] = ""
            continue
        for key, say in (("evaluation_result_id", "{}"), ("dataset_name", "dataset {}")):
            values = [r.get(key) for r in same]
            if all(values) and len(set(values)) == len(values):
                for r, v in zip(same, values, strict=True):
                    r["tell"] = say.format(v)
                break
        else:
            for i, r in enumerate(same, start=1):
                r["tell"] = f"result {i} of {len(same)}" + (
                    f" ({r['evaluation_result_id']})" if r.get("evaluation_result_id") else ""
                )


def results_html(ctx: SiteContext, rows: list[dict[str, Any]], page: str) -> str:
    """The results table of a benchmark page, as HTML that Markdown passes through."""
    views = _Rows(ctx, page)
    return render("catalogue/results.html.j2", headers=HEADERS, rows=[views.view(r) for r in rows])


def _metric(row: dict[str, Any]) -> str:
    name = row.get("metric_name") or row.get("metric_id") or ""
    unit = row.get("metric_unit")
    out = f"{name} ({unit})" if unit and name else name
    return out + (" ↓" if row.get("lower_is_better") else "")


def _library(row: dict[str, Any]) -> str:
    lib, version = row.get("eval_library"), row.get("eval_library_version")
    return f"{lib} {version}" if lib and version and version != "unknown" else (lib or "")


def _benchmark_pages(
    ctx: SiteContext,
    s: Summary,
    rows: list[dict[str, Any]],
    opts: Options,
    searchable: bool,
    listed: bool,
    files: list[str],
    limited: bool = False,
) -> Iterator[GeneratedPage]:
    chunks = [rows[i : i + opts.page_rows] for i in range(0, len(rows), opts.page_rows)] or [[]]
    said = ", ".join(f"{s.statuses[st]} {st}" for st in STATUS_ORDER if s.statuses.get(st))
    for n, chunk in enumerate(chunks, start=1):
        page = benchmark_page(s.name, n)
        md = render(
            "catalogue/benchmark.md.j2",
            s=s,
            n=n,
            pages=len(chunks),
            page=page,
            page_of=lambda i: benchmark_page(s.name, i),
            said=said,
            searchable=searchable,
            files=files,
            limited=limited,
            results=results_html(ctx, chunk, page),
            leaderboards=leaderboards_html(ctx, s.name, page) if n == 1 else "",
            agreement=agreement_html(ctx, s.name, rows, page) if n == 1 else "",
        )
        yield GeneratedPage(page, md, in_nav=listed and n == 1)


def agreement_html(ctx: SiteContext, benchmark: str, rows: list[dict[str, Any]], page: str) -> str:
    """The benchmark page's sources checked against each other (:mod:`eee.catalog.agreement`,
    what ``eee agree`` reports), as HTML the Markdown passes through."""
    from eee.catalog.agreement import compare, source_text

    report = compare(rows, benchmark)
    views = _Rows(ctx, page)
    pairs = []
    for t in report["disagreeing"]:
        sides = []
        for side in (t["a"], t["b"]):
            sides.append(
                {
                    "uuid": str(side["record_uuid"] or ""),
                    "href": views.href(side["record_uuid"]),
                    "result": side["result"] or "",
                    "score": number(side["score"]),
                    "se": number(side["se"]),
                    "source": source_text(side),
                }
            )
        pairs.append(
            {
                "model": t["model_id"] or "",
                "metric": t["metric_id"] or "",
                "protocol": str(t["protocol_id"] or ""),
                "difference": number(t["difference"]),
                "z": number(t["z"]),
                "p": f"{t['p_holm']:.2g}",
                "sides": sides,
            }
        )
    return render("catalogue/agreement.html.j2", report=report, pairs=pairs)


def _leaderboards_digest(root: Path, benchmark: str) -> str:
    """The sha256 of a benchmark's leaderboards file ("" when there is none): part of its pages' key."""
    try:
        return hashlib.sha256((root / leaderboard_file(benchmark)).read_bytes()).hexdigest()
    except OSError:
        return ""


def leaderboard_file(benchmark: str) -> str:
    """Where the analysis stage writes a (canonical) benchmark's leaderboards, under the store."""
    from urllib.parse import quote

    return f"{LEADERBOARDS}/{quote(benchmark, safe='')}.json"


def load_leaderboards(root: Path, benchmark: str) -> dict[str, Any] | None:
    """A benchmark's leaderboards as the analysis stage wrote them (None when there are none,
    or the file cannot be read: the page says so). The file is data: bounded, parsed as JSON,
    its shape checked, every value escaped where the template writes it."""
    try:
        report = json.loads(read_regular(root / leaderboard_file(benchmark), LEADERBOARD_MAX_BYTES, "leaderboards"))
    except (OSError, ValueError):
        return None
    if not isinstance(report, dict) or not isinstance(report.get("leaderboards"), list):
        return None
    return report


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _board_view(ctx: SiteContext, board: dict[str, Any], page: str) -> dict[str, Any] | None:
    if not isinstance(board, dict) or not isinstance(board.get("entries"), list):
        return None
    entries = [e for e in board["entries"] if isinstance(e, dict)]
    alpaca = any(isinstance(e.get("alpaca_eval"), dict) for e in entries)
    rows = []
    for e in entries[:LEADERBOARD_ROWS]:
        uuid = e.get("record_uuid") if isinstance(e.get("record_uuid"), str) else ""
        a = e.get("alpaca_eval") if isinstance(e.get("alpaca_eval"), dict) else {}

        def num(x: Any) -> str:
            return number(x) if isinstance(x, int | float) and not isinstance(x, bool) else ""

        rows.append(
            {
                "range": _text(e.get("rank_text")),
                "model": _text(e.get("model_id")),
                "record_uuid": uuid,
                "record_href": ctx.href(ctx.record_page(uuid), page) if uuid and ctx.record_page(uuid) else None,
                "score": num(e.get("score")),
                "interval": interval(
                    {
                        k: e.get(k) if isinstance(e.get(k), int | float) else None
                        for k in ("ci_low", "ci_high", "ci_level", "se")
                    }
                ),
                "source": _text(e.get("uncertainty_source")),
                "method": _text(e.get("uncertainty_method")),
                "n_items": num(e.get("n_items")),
                "alpaca": [
                    num(a.get(k))
                    for k in (
                        "win_rate",
                        "standard_error",
                        "n_wins",
                        "n_wins_base",
                        "n_draws",
                        "n_total",
                        "discrete_win_rate",
                    )
                ],
            }
        )
    fields = board.get("protocol") if isinstance(board.get("protocol"), dict) else {}
    pairs = board.get("pairs") if isinstance(board.get("pairs"), dict) else {}
    return {
        "protocol_id": _text(board.get("protocol_id")),
        "metric": _text(board.get("metric")),
        "result": _text(board.get("result")),
        "fields": [(str(k), _text(v)) for k, v in fields.items() if v is not None],
        "method": _text(pairs.get("method")),
        "tested": num_text(pairs.get("tested")),
        "significant": num_text(pairs.get("significant")),
        "notes": [_text(n) for n in board.get("notes") or []],
        "rows": rows,
        "more": max(0, len(entries) - LEADERBOARD_ROWS),
        "alpaca": alpaca,
    }


def num_text(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else ""


def leaderboards_html(ctx: SiteContext, benchmark: str, page: str) -> str:
    """The benchmark page's leaderboards (one per protocol), as HTML the Markdown passes through."""
    report = load_leaderboards(ctx.root, benchmark)
    boards = [b for b in (_board_view(ctx, b, page) for b in (report or {}).get("leaderboards", [])) if b]
    return render("catalogue/leaderboards.html.j2", report=report is not None, boards=boards)


def _relations(row: dict[str, Any]) -> list[dict[str, Any]]:
    """The record's relations (DataCite names), from the catalogue's ``relations`` column:
    each with the related record and its page, or the outside source and identifier."""
    try:
        relations = json.loads(row.get("relations") or "[]")
    except ValueError:
        return []
    return [
        {
            "relation": rel.get("relation", ""),
            "record": rel.get("record"),
            "source": rel.get("source") or "",
            "identifier": rel.get("identifier") or "",
        }
        for rel in relations
        if isinstance(rel, dict)
    ]


def _record_json(root: Path, rel: str, highlight: bool) -> dict[str, Any]:
    """The record's JSON for its page, as HTML (``json_html``): pretty-printed the way the
    store writes records (orjson, two-space indent), cut at :data:`JSON_LIMIT` characters,
    syntax-highlighted by Pygments when ``highlight`` (the classes the theme colours) and
    escaped either way."""
    import orjson
    from markupsafe import escape

    try:  # a regular file within the record cap: a pipe or a link never hangs the site build
        data = read_regular(root / rel, RECORD_MAX_BYTES, "record")
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return {"unreadable": str(exc), "json_html": "", "truncated": False}
    try:
        text = orjson.dumps(orjson.loads(data), option=orjson.OPT_INDENT_2).decode("utf-8")
    except (orjson.JSONDecodeError, orjson.JSONEncodeError):  # shown as written (too deep to write back, ...)
        pass
    truncated = len(text) > JSON_LIMIT
    if truncated:
        text = text[:JSON_LIMIT] + "\n..."
    if highlight:
        from pygments import highlight as pygmentize
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import JsonLexer

        shown = pygmentize(text, JsonLexer(), HtmlFormatter(nowrap=True))
    else:
        shown = str(escape(text))
    return {"unreadable": "", "json_html": shown.rstrip("\n"), "truncated": truncated}


def _event_link(ctx: SiteContext, event_id: Any) -> str | None:
    """The event's file in the repository, when its id can name one."""
    if not isinstance(event_id, str) or not _EVENT_ID.match(event_id):
        return None
    return ctx.repo_link(f"governance/events/{event_id}.yaml")


def _signers(ctx: SiteContext, ledger: Ledger, uuids: list[str]) -> Callable[[dict[str, Any]], str | None]:
    """Who signed each event of the records ``uuids`` (:func:`eee.governance.signatures.commit_signers`)."""
    from eee.catalog.table import with_signers

    if uuids:
        with_signers(ctx.root, ledger)
    return ledger.signer


def record_page(
    ctx: SiteContext,
    uuid: str,
    rows: list[dict[str, Any]],
    state: Any,
    highlight: bool = True,
    quiet: bool = False,
    imports: list[dict[str, Any]] | None = None,
    signed_by: Callable[[dict[str, Any]], str | None] | None = None,
) -> GeneratedPage:
    """The page of one record: facts, status, results, history and the JSON (highlighted
    when ``highlight``; ``quiet``: only the title and facts go to the search index);
    ``imports``: what the import manifests say about the record (:func:`import_provenance`);
    ``signed_by(event)``: the principal whose signature the store's roles verify on the
    commit that added the event (None: unverified, shown so)."""
    page = f"catalogue/records/{uuid}.md"
    first = rows[0]
    results = _result_views(rows)
    model, model_name = model_label(first)

    def record_href(other: Any) -> str | None:
        target = ctx.record_page(other) if isinstance(other, str) else None
        return ctx.href(target, page) if target else None

    md = render(
        "catalogue/record.md.j2",
        uuid=uuid,
        page=page,
        first=first,
        state=state,
        repo=ctx.repo_link(first["record_path"]),
        record_href=record_href,
        event_link=lambda event_id: _event_link(ctx, event_id),
        signed_by=signed_by or (lambda _event: None),
        benchmark_href=ctx.href(benchmark_page(benchmark_of(first)), page),
        source=_source(first),
        library=_library(first),
        relations=_relations(first),
        model=model,
        model_name=model_name,
        results=results,
        uncertain=any(r["se"] or r["ci"] or r["n"] for r in results),
        known=STATUS_ORDER,
        quiet=quiet,
        json_limit=JSON_LIMIT,
        imports=[{**i, "manifest_href": ctx.repo_link(i["manifest_path"]) or ""} for i in imports or []],
        **_record_json(ctx.root, first["record_path"], highlight),
    )
    return GeneratedPage(page, md, in_nav=False)


def import_provenance(root: Path) -> dict[str, list[dict[str, Any]]]:
    """What the import manifests (``governance/imports/*.yaml``) say about each record they
    placed: store path -> [{outcome, source_path, source, revision, actor, time, reason,
    manifest, manifest_path}]. A manifest that cannot be read is left out (the validator
    reports it); every value is data, shown through the templates' ``html`` filter."""
    from eee.governance.manifests import loads
    from eee.store.paths import IMPORTS_DIR, MANIFEST_SUFFIX

    folder = root / IMPORTS_DIR
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    if not folder.is_dir() or folder.is_symlink():
        return out
    for path in sorted(folder.iterdir()):
        if not path.name.endswith(MANIFEST_SUFFIX):
            continue
        try:
            doc = loads(read_regular(path, MANIFEST_MAX_BYTES, "import manifest").decode("utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            continue
        files = doc.get("files")
        actor = doc.get("actor") if isinstance(doc.get("actor"), dict) else {}
        for item in files if isinstance(files, list) else []:
            if not isinstance(item, dict) or item.get("outcome") in ("refused", "already_present"):
                continue
            store = item.get("store")
            if not isinstance(store, str):
                continue
            out[store].append(
                {
                    "outcome": item.get("outcome") or "",
                    "source_path": item.get("source") or "",
                    "reason": item.get("reason") or "",
                    "source": doc.get("source") or "",
                    "revision": doc.get("revision") or "",
                    "time": doc.get("time") or "",
                    "actor": actor.get("name") or "",
                    "manifest": doc.get("id") or path.name,
                    "manifest_path": f"{IMPORTS_DIR}/{path.name}",
                }
            )
    return out


def _source(first: dict[str, Any]) -> list[str]:
    return [
        x
        for x in (first.get("source_organization"), first.get("source_name"), first.get("evaluator_relationship"))
        if x
    ]


def record_section(ctx: SiteContext, uuid: str, rows: list[dict[str, Any]]) -> str:
    """A record's section of its shared page (a large store): facts, status, every result."""
    first = rows[0]
    page = group_page(uuid)
    results = _result_views(rows)
    model, model_name = model_label(first)
    return render(
        "catalogue/record-section.md.j2",
        uuid=uuid,
        first=first,
        repo=ctx.repo_link(first["record_path"]),
        benchmark_href=ctx.href(benchmark_page(benchmark_of(first)), page),
        source=_source(first),
        library=_library(first),
        model=model,
        model_name=model_name,
        results=results,
        uncertain=any(r["se"] or r["ci"] or r["n"] for r in results),
    )


def group_pages(ctx: SiteContext, sections: dict[str, list[tuple[str, str]]], limit: int) -> list[GeneratedPage]:
    """The shared records pages: key (:func:`group_key`) -> [(uuid, section)], sections in uuid order."""
    out = []
    for prefix in sorted(sections):
        entries = sorted(sections[prefix])
        page = group_page(entries[0][0])
        md = render(
            "catalogue/records-group.md.j2", key=prefix, page=page, limit=limit, sections=[s for _, s in entries]
        )
        out.append(GeneratedPage(page, md, in_nav=False))
    return out


def _result_views(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "evaluation_name": r.get("evaluation_name") or "",
            "tell": r.get("tell") or "",
            "metric": _metric(r),
            "score": number(r.get("score")),
            "range": f"{number(r.get('min_score'))} … {number(r.get('max_score'))}"
            if r.get("min_score") is not None or r.get("max_score") is not None
            else "",
            "se": number(r.get("se")),
            "ci": interval({k: r.get(k) for k in ("ci_low", "ci_high", "ci_level")}),
            "source": " ".join(
                x
                for x in (
                    r.get("uncertainty_source") or "",
                    f"({r['uncertainty_method']})" if r.get("uncertainty_method") else "",
                    f"[items-agree] {r['items_note']}" if r.get("items_agree") is False and r.get("items_note") else "",
                )
                if x
            ),
            "protocol": r.get("protocol_id") or "",
            "n": f"{r['num_samples']:,}"
            if r.get("num_samples") is not None
            else (f"{r['n_items']:,} items" if r.get("n_items") is not None else ""),
        }
        for r in rows
    ]


def _size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 100_000 else f"{max(1, round(n / 1000))} kB"


def _published(ctx: SiteContext, parquet: list[str] | None) -> list[dict[str, str]]:
    """The catalogue files published with the site (site paths under catalogue/data/)."""
    out = []
    for site_path in parquet or []:
        rel = site_path.split("/", 2)[2]  # catalogue/data/<path under build/catalog>
        source = ctx.root / CATALOG_DIR / rel
        out.append({"path": site_path, "name": rel, "size": _size(source.stat().st_size) if source.exists() else ""})
    return out


def partitions(parquet: list[str] | None, benchmark: str) -> list[str]:
    """The published files of one benchmark's partition (hive layout: ``benchmark=<name>/``)."""
    from urllib.parse import quote

    keys = {f"benchmark={benchmark}", f"benchmark={quote(benchmark, safe='')}"}
    return [p for p in parquet or [] if keys & set(p.split("/")[:-1])]


@dataclass
class CatalogueResult:
    """The catalogue pages, the nav entries and what other generators need."""

    pages: list[GeneratedPage]
    nav: list[str]
    examples: dict[str, list[str]]  # schema version -> a few record uuids that have pages
    records_by_version: dict[str, int]
    not_in_nav: list[str]  # gitignore-style patterns of the pages reachable by links only
    kept: list[str] = field(default_factory=list)  # pages the last run wrote, left as they are (:mod:`cataloguecache`)


class _Source:
    """The catalogue rows: the pipeline's Parquet folder, read a benchmark at a time, or
    (without it) the table built from the store."""

    def __init__(self, root: Path, ledger: Ledger) -> None:
        path = root / PARQUET
        self.parquet: Path | None = path if catalog_present(path) else None
        self.table: Any = None
        self.origin = PARQUET
        if self.parquet is None:
            from eee.catalog.table import build

            self.table, _skipped = build(root, ledger=ledger)
            self.origin = ""

    def read(self, columns: list[str], folders: list[str] | None = None, uuids: list[str] | None = None) -> Any:
        """The rows of the benchmark ``folders`` (default: all), of the records ``uuids`` if
        given: ``columns`` of them."""
        import pyarrow.compute as pc

        if self.parquet is not None:
            table = self._files(columns, folders)
        else:
            table = self.table
            if folders is not None:
                table = table.filter(pc.is_in(table["benchmark"], value_set=_strings(folders)))
            table = table.select(columns)
        if uuids is not None:
            table = table.filter(pc.is_in(table["record_uuid"], value_set=_strings(uuids)))
        return table

    def _files(self, columns: list[str], folders: list[str] | None) -> Any:
        """The partitions' files read one by one with the Parquet reader alone (the dataset
        layer imports pandas, ~0.7 s at every run); read as a dataset when a file is not as
        this expects."""
        import urllib.parse

        import pyarrow as pa
        import pyarrow.parquet as pq

        assert self.parquet is not None
        wanted = None if folders is None else set(folders)
        own = [c for c in columns if c != "benchmark"]
        parts = []
        try:
            for entry in sorted(os.scandir(self.parquet), key=lambda e: e.name):
                if not entry.name.startswith("benchmark=") or not entry.is_dir(follow_symlinks=False):
                    continue
                folder = urllib.parse.unquote(entry.name.split("=", 1)[1])
                if wanted is not None and folder not in wanted:
                    continue
                for name in sorted(os.listdir(entry.path)):
                    if name.endswith(".parquet"):
                        part = pq.ParquetFile(os.path.join(entry.path, name)).read(columns=own)
                        if "benchmark" in columns:
                            part = part.append_column("benchmark", _strings([folder] * part.num_rows))
                        parts.append(part.select(columns))
            if parts:
                return pa.concat_tables(parts)
        except (OSError, KeyError, ValueError, pa.ArrowException):
            pass
        import pyarrow.compute as pc

        return read_catalog(
            self.parquet, columns=columns, filter=None if folders is None else pc.field("benchmark").isin(folders)
        )

    def rows(self, folders: list[str] | None = None, uuids: list[str] | None = None) -> list[dict[str, Any]]:
        """The rows of ``folders`` (or of the records ``uuids``), in the order the pages list them."""
        table = self.read(list(WANTED), folders, uuids)
        if not table.num_rows:
            return []
        return table.sort_by([(c, "ascending") for c in ("benchmark", "developer", "model", "record_path")]).to_pylist()


def _strings(values: list[str]) -> Any:
    """A pyarrow string array built from its buffers: building one from Python values
    imports pandas (pyarrow's check for pandas types), ~0.7 s at every run."""
    import array

    import pyarrow as pa

    data = [v.encode("utf-8") for v in values]
    offsets = array.array("i", [0])
    for d in data:
        offsets.append(offsets[-1] + len(d))
    return pa.StringArray.from_buffers(len(data), pa.py_buffer(offsets.tobytes()), pa.py_buffer(b"".join(data)))


def _by_record(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        out[r["record_uuid"]].append(r)
    return out


def _identity_digest(root: Path) -> str:
    """The identity registry's files (the catalogue's canonical columns come from it)."""
    import hashlib

    from eee.store.identity import IDENTITY_DIR

    h = hashlib.sha256()
    folder = root / IDENTITY_DIR
    for path in sorted(folder.glob("*")) if folder.is_dir() else []:
        if path.is_file() and not path.is_symlink():
            h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def _history_digest(ledger: Ledger, uuids: set[str]) -> str:
    """What the pages of the records with a governance history show of it: each record's
    state, and each event's commit and verified signer."""
    return digest(
        [
            [
                uuid,
                ledger.state(uuid).to_dict(),
                [[ledger.entry(e), ledger.signer(e)] for e in ledger.state(uuid).history],
            ]
            for uuid in sorted(uuids)
        ]
    )


def generate(
    ctx: SiteContext, opts: Options, parquet: list[str] | None = None, cache: PagesCache | None = None
) -> CatalogueResult:
    """Every catalogue page. Fills ``ctx.record_pages`` first, so links agree with pages.
    ``cache``: what the last run made each page from; a page whose inputs did not change is
    not rendered again but kept (:attr:`CatalogueResult.kept`)."""
    import pyarrow.compute as pc

    from eee.catalog.table import code_version

    cache = cache or PagesCache.off(ctx.root)
    ledger = read_ledger(ctx.root)
    source = _Source(ctx.root, ledger)
    index = source.read(["record_uuid", "benchmark", "benchmark_canonical"])
    uuid_column = index["record_uuid"].to_pylist()
    uuids = set(uuid_column)
    # a page or a section only for a file named by a canonical uuid (the validator reports
    # any other name); such a file's rows link to it in the repository
    named = {u for u in uuids if UUID4_RE.match(u)}
    with_history = {u for u, st in ledger.states.items() if st.history and u in named}
    own_all = len(named) <= opts.record_pages
    ctx.record_pages = set(named) if own_all else with_history
    ctx.grouped = named - ctx.record_pages  # listed on shared pages, one section each
    imports = import_provenance(ctx.root)
    searchable = index.num_rows <= opts.search_rows
    # one page per canonical benchmark: the folders of its aliases are listed with it
    folders_of: dict[str, set[str]] = defaultdict(set)
    if index.num_rows:
        listed_as = pc.coalesce(index["benchmark_canonical"], index["benchmark"]).to_pylist()
        for name, folder in zip(listed_as, index["benchmark"].to_pylist(), strict=True):
            folders_of[name].add(folder)
    del index, uuid_column
    listed = len(folders_of) <= NAV_BENCHMARKS
    limited = len(ctx.record_pages) < len(uuids)
    highlight = len(ctx.record_pages) <= opts.highlight_records
    signed_by = _signers(ctx, ledger, sorted(with_history))
    cache.start(
        ctx.root,
        dataclasses.asdict(opts),
        [searchable, listed, limited, highlight, own_all],
        _history_digest(ledger, with_history),
        [ctx.repo_url, ctx.branch, ctx.use_directory_urls, parquet or []],
        code_version(),
        _identity_digest(ctx.root),
        imports,
    )
    pages: list[GeneratedPage] = []
    kept: list[str] = []
    summaries: list[Summary] = []
    by_version: dict[str, set[str]] = defaultdict(set)
    own: dict[str, list[dict[str, Any]]] = {}  # record pages to render: uuid -> rows
    members: dict[str, dict[str, str]] = defaultdict(dict)  # shared page key -> {uuid: record key}
    sections: dict[str, str] = {}  # sections rendered now
    from eee.reporting.progress import lines, lines_wanted

    update = lines("catalogue pages, benchmarks") if lines_wanted() else None
    for done, name in enumerate(sorted(folders_of)):
        if update is not None:
            update(done, len(folders_of))
        folders = sorted(folders_of[name])
        files = [f for folder in folders for f in partitions(parquet, folder)]
        # the benchmark's leaderboards (the analysis stage's) are on its page: their bytes are in its key
        key = cache.group_key(folders, [*files, _leaderboards_digest(ctx.root, name)])
        old = cache.kept_group(name, key)
        if old is not None:
            s = Summary(**{**old["summary"], "statuses": Counter(old["summary"]["statuses"])})
            for version, us in old["versions"].items():
                by_version[version].update(us)
            kept.extend(old["pages"])
            kept.extend(f"catalogue/records/{uuid}.md" for uuid in old["own"])
            for uuid, record_key in old["sections"].items():
                members[group_key(uuid)][uuid] = record_key
            cache.groups[name] = old
            summaries.append(s)
            continue
        rows = source.rows(folders)
        tell_apart(rows)
        s = Summary.of(name, rows)
        made = list(_benchmark_pages(ctx, s, rows, opts, searchable, listed, files, limited))
        pages += made
        summaries.append(s)
        entry: dict[str, Any] = {
            "key": key,
            "summary": {**dataclasses.asdict(s), "statuses": dict(s.statuses)},
            "pages": [p.src_uri for p in made],
            "own": {},
            "sections": {},
        }
        versions: dict[str, set[str]] = defaultdict(set)
        for r in rows:
            versions[str(r.get("schema_version"))].add(r["record_uuid"])
        for uuid, record_rows in _by_record(rows).items():  # a record's rows all lie in its benchmark
            if uuid not in named:
                continue
            record_key = cache.record_key(uuid, record_rows[0]["record_path"], ledger.record_fields(uuid))
            if uuid in ctx.record_pages:
                entry["own"][uuid] = record_key
                page = f"catalogue/records/{uuid}.md"
                if cache.kept_record(name, "own", uuid) == record_key and (cache.out / page).is_file():
                    kept.append(page)
                else:
                    own[uuid] = record_rows
            else:
                entry["sections"][uuid] = record_key
                members[group_key(uuid)][uuid] = record_key
                if cache.kept_record(name, "sections", uuid) != record_key:
                    sections[uuid] = record_section(ctx, uuid, record_rows)
        for version, us in versions.items():
            by_version[version].update(us)
        entry["versions"] = {v: sorted(us) for v, us in versions.items()}
        cache.groups[name] = entry
    for uuid, rows in own.items():
        pages.append(
            record_page(
                ctx,
                uuid,
                rows,
                ledger.state(uuid),
                highlight,
                not searchable,
                imports.get(rows[0]["record_path"]),
                signed_by,
            )
        )
    if update is not None:
        update(len(folders_of), len(folders_of))
    pages += _shared_pages(ctx, cache, source, members, sections, opts.record_pages, kept)
    examples = {v: sorted(u for u in us if u in ctx.record_pages)[:3] for v, us in by_version.items()}
    pages.append(
        GeneratedPage(
            "catalogue/index.md",
            index_page(
                ctx,
                summaries,
                ledger,
                with_history,
                source.origin,
                len(uuids),
                opts,
                _published(ctx, parquet),
                len(members),
            ),
        )
    )
    nav = [s.page for s in summaries] if listed else []
    hidden = ["/catalogue/records/", "/catalogue/benchmarks/*/page-*.md" if listed else "/catalogue/benchmarks/"]
    return CatalogueResult(pages, nav, examples, {v: len(us) for v, us in by_version.items()}, hidden, kept)


def _shared_pages(
    ctx: SiteContext,
    cache: PagesCache,
    source: _Source,
    members: dict[str, dict[str, str]],
    fresh: dict[str, str],
    limit: int,
    kept: list[str],
) -> list[GeneratedPage]:
    """The shared records pages whose sections changed (the others are kept); a section
    neither rendered now nor kept from the last run is rendered from its rows."""

    stale: dict[str, dict[str, str | None]] = {}
    for key in sorted(members):
        now = digest(sorted(members[key].items()))
        cache.shared[key] = now
        page = f"catalogue/records/group-{key}.md"
        if cache.kept_shared(key, now) and (cache.out / page).is_file():
            kept.append(page)
            continue
        old = cache.old_sections(key)
        stale[key] = {uuid: fresh.get(uuid, old.get(uuid)) for uuid in members[key]}
    missing = [uuid for texts in stale.values() for uuid, text in texts.items() if text is None]
    if missing:
        for uuid, rows in _by_record(source.rows(uuids=missing)).items():
            tell_apart(rows)
            stale[group_key(uuid)][uuid] = record_section(ctx, uuid, rows)
    for key, texts in stale.items():
        cache.sections[key] = {uuid: text or "" for uuid, text in texts.items()}
    return group_pages(ctx, {key: sorted(texts.items()) for key, texts in stale.items()}, limit)  # type: ignore[misc]


def index_page(
    ctx: SiteContext,
    summaries: list[Summary],
    ledger: Ledger,
    with_history: set[str],
    origin: str,
    records: int,
    opts: Options,
    files: list[dict[str, str]] | None = None,
    shared_pages: int = 0,
) -> str:
    """The catalogue's front page: benchmarks, records with a history (``with_history``, the
    records in the store whose ledger state has events), how to load the data."""
    from eee.catalog.table import COLUMNS
    from eee.store.protocol import FIELDS

    statuses = list(STATUS_ORDER[1:])
    statuses += sorted({st for s in summaries for st in s.statuses if st not in STATUS_ORDER})
    return render(
        "catalogue/index.md.j2",
        page="catalogue/index.md",
        files=files,
        summaries=summaries,
        records=records,
        results=sum(s.results for s in summaries),
        origin=origin,
        parquet=PARQUET,
        with_pages=len(ctx.record_pages),
        grouped=len(ctx.grouped),
        shared_pages=shared_pages,
        group_example=group_page(min(ctx.grouped)) if ctx.grouped else "",
        opts=opts,
        statuses=statuses,
        history=[(uuid, ledger.state(uuid)) for uuid in sorted(with_history)],
        columns=COLUMNS,
        protocol_fields=FIELDS,
    )
