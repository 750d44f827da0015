"""The injection corpus: hostile text for every field a page of the published site shows.

A record, an event, an import manifest or a sidecar is written by someone else; the site
must show what they wrote as text, never run it, never let it add an element, an
attribute or a link that leaves the http(s) web. Every payload here carries :data:`MARK`,
so whatever the corpus manages to inject is found by it: an element (``<x-eeepwn>``), a
class or id (attribute lists ``{: .eeepwn #eeepwn }``), an ``alert('eeepwn ...')`` dialog,
or a link whose target names it.

- :data:`TEXTS`: free text (names, reasons, ids): script tags, event-handler attributes,
  ``javascript:`` and ``data:`` links in Markdown and HTML, attribute lists, Jinja, HTML
  entities, Markdown block syntax after a line break, the site's own raw-block markers,
  tags that close the context they land in (``</title>``, ``</code>``, ``-->``).
- :data:`NAMES`: the same tricks within what a folder name may hold (no ``<>:"\\|?*``, no
  control characters): benchmark, developer and model folders.
- :data:`URLS`: for reference fields: ``javascript:``, ``data:``, ``vbscript:``, scheme
  case and whitespace tricks, and https URLs that try to break out of an attribute.

:func:`seed` writes a store that holds the corpus in every such field (records, events
valid and not, an import manifest, sidecars whose sample ids and model ids are hostile);
:func:`scan` is the oracle over a page's HTML (used on every page of the built site and,
with :func:`markdown_renderer` and :func:`render_page`, on every generated page rendered
as MkDocs renders it: ``tests/test_site_escaping.py`` and the fuzz, ``tests/fuzzing.py``).
"""

from __future__ import annotations

import datetime as dt
import html.parser
import json
import random
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MARK = "eeepwn"

TEXTS: list[str] = [
    '<script>alert("eeepwn script")</script><x-eeepwn></x-eeepwn>',
    "<img src=x onerror=alert('eeepwn-img') class=eeepwn>",
    '"><svg onload=alert("eeepwn svg") class=eeepwn><x-eeepwn>',
    "'><details open ontoggle=alert('eeepwn-details') class=eeepwn>x</details>",
    '[eeepwn md link](javascript:alert("eeepwn md link"))',
    "<javascript:alert('eeepwn-autolink')>",
    "![eeepwn md image](javascript:alert('eeepwn-md-image'))",
    "[eeepwn data link](data:text/html;base64,PHNjcmlwdD5hbGVydCgnZWVlcHduJyk8L3NjcmlwdD4=)",
    "<a href=\"javascript:alert('eeepwn-a')\" class=eeepwn>eeepwn a</a>",
    "eeepwn attr list{: onclick=\"alert('eeepwn-attr')\" .eeepwn #eeepwn-id }",
    "{: onmouseover=\"alert('eeepwn-attr2')\" .eeepwn }",
    "*eeepwn em*{ onclick=alert('eeepwn-em') .eeepwn }",
    '{{ "eeepwn jinja " ~ (7 * 7) }} {% if true %}eeepwn-jinja-block{% endif %} {# eeepwn #}',
    '&lt;script&gt;alert("eeepwn entity")&lt;/script&gt; &#60;x-eeepwn&#62; &amp;lt;b&amp;gt;',
    '</title><script>alert("eeepwn title")</script><x-eeepwn>',
    '</textarea></style></code></pre></table><script>alert("eeepwn close")</script>',
    '--><script>alert("eeepwn comment")</script><x-eeepwn><!--',
    '`` `</code><script>alert("eeepwn code")</script><x-eeepwn>` ``',
    '<div markdown="1">[eeepwn md in html](javascript:alert("eeepwn mdinhtml"))</div>',
    "eeepwn pipe | <b class=eeepwn>cell</b> | `x|y`",
    '\n<!-- eee:raw -->\n<script>alert("eeepwn raw")</script><x-eeepwn></x-eeepwn>\n<!-- /eee:raw -->\n',
    '\n\n[eeepwn-ref]: javascript:alert("eeepwn ref")\n\n[eeepwn-ref] and [eeepwn][eeepwn-ref]\n',
    '\n\n!!! danger "eeepwn admonition"\n    <script>alert("eeepwn admonition")</script><x-eeepwn>\n',
    "\n\n# eeepwn heading { onclick=alert('eeepwn-heading') .eeepwn }\n",
    "<style>/* eeepwn */ body { display: none }</style>",
    "<iframe srcdoc=\"<script>alert('eeepwn-iframe')</script>\" class=eeepwn></iframe>",
    "<form action=\"javascript:alert('eeepwn-form')\"><button class=eeepwn>eeepwn go</button></form>",
    "<base href=\"javascript:alert('eeepwn-base')//\">",
    '<meta http-equiv="refresh" content="0;url=javascript:alert(\'eeepwn-meta\')">',
    '<svg><script>alert("eeepwn svg script")</script></svg>',
    "<object data=\"javascript:alert('eeepwn-object')\" class=eeepwn></object>",
    "<<script>script>alert('eeepwn-nested')<</script>/script>",
    'javascript:alert("eeepwn bare")',
    "eeepwn\u2028line\u2029para\u202eright-to-left\u0085next",
    "<x-eeepwn onclick=alert('eeepwn-custom') tabindex=0>eeepwn custom</x-eeepwn>",
    "eeepwn **bold** _em_ ~~strike~~ ==mark== ^^ins^^ :smile: *[eeepwn]: abbr",
    "\n\n    <script>alert('eeepwn indented')</script>\n\n1. eeepwn\n- [ ] eeepwn task\n",
]

# folder names (benchmark, developer, model): what the store's path rules let through
NAMES: list[str] = [
    "eeepwn{ onclick=alert('eeepwn-folder') .eeepwn #eeepwn-folder }",
    "eeepwn &lt;script&gt;alert('eeepwn-entity-folder')&lt;&#47;script&gt; &#60;x-eeepwn&#62;",
    "eeepwn [link](javascript) {{ 7*7 }} {% raw %} `tick` 'quote' !x",
    "eeepwn &lt;&#47;title&gt;&lt;script&gt;alert('eeepwn-title-folder')&lt;&#47;script&gt;",
]

URLS: list[str] = [
    "javascript:alert('eeepwn-url')",
    "JaVaScRiPt:alert('eeepwn-url-case')",
    " javascript:alert('eeepwn-url-space')",
    "java\tscript:alert('eeepwn-url-tab')",
    "data:text/html,<script>alert('eeepwn-data-url')</script>",
    "vbscript:msgbox('eeepwn')",
    'https://example.org/eeepwn"><script>alert("eeepwn-url-quote")</script>',
    "https://example.org/eeepwn'onmouseover='alert(1)'",
    "https://example.org/eeepwn?a=<x-eeepwn>&b=1",
    "//evil.example/eeepwn",
]

# the text a reader must see, verbatim, where the corpus lands (no double escaping)
VISIBLE = '<script>alert("eeepwn visible")</script> & &amp; {: .x } [a](b) `c`'

ME = {"name": "Maintainer", "email": "m@example.org"}


def payload(i: int) -> str:
    return TEXTS[i % len(TEXTS)]


def name(i: int) -> str:
    return NAMES[i % len(NAMES)]


def url(i: int) -> str:
    return URLS[i % len(URLS)]


# --- a store that holds the corpus -----------------------------------------------------------


@dataclass
class Seeded:
    """What :func:`seed` wrote."""

    records: dict[str, str] = field(default_factory=dict)  # uuid -> record path
    benchmarks: list[str] = field(default_factory=list)
    hostile_benchmark: str = ""
    analysis_benchmark: str = ""
    visible_uuid: str = ""  # the record whose model name is VISIBLE


def _uuid(n: int) -> str:
    return f"{n:08x}-e5e5-4e5e-8e5e-{n:012x}"


def hostile_record(i: int, base: dict[str, Any]) -> dict[str, Any]:
    """``base`` (a valid 0.3.0 record) with corpus payloads, starting at ``i``, in every free-text
    field a page shows (model id and name, ids, source, library, evaluation and metric names)."""
    doc = json.loads(json.dumps(base))
    k = iter(range(i, i + 100))
    doc["evaluation_id"] = payload(next(k))
    doc["model_info"]["id"] = f"{name(i)}/{payload(next(k))}"
    doc["model_info"]["name"] = payload(next(k))
    doc["source_metadata"]["source_organization_name"] = payload(next(k))
    doc["source_metadata"]["source_name"] = payload(next(k))
    doc["eval_library"] = {"name": payload(next(k)), "version": payload(next(k))}
    for result in doc["evaluation_results"]:
        result["evaluation_name"] = payload(next(k))
        result["metric_config"]["metric_name"] = payload(next(k))
        result["metric_config"]["metric_unit"] = payload(next(k))
        result["metric_config"]["metric_id"] = payload(next(k))
    return doc


def _event_yaml(event: dict[str, Any]) -> str:
    """An event file as someone with commit access could write it (schema or not): JSON is YAML."""
    return json.dumps(event, ensure_ascii=False, indent=1) + "\n"


def _raw_event(root: Path, action: str, record: str, when: dt.datetime, n: int, **fields: Any) -> None:
    event_id = f"{when.strftime('%Y%m%dT%H%M%S.%fZ')}-{action}-{record[:8]}-{n:06x}"
    event = {
        "event_schema": "1.0.0",
        "id": event_id,
        "action": action,
        "record": record,
        "timestamp": when.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        **fields,
    }
    path = root / "governance" / "events" / f"{event_id}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_event_yaml(event), encoding="utf-8")


def seed(store: Path, base: dict[str, Any], with_analysis: bool = True) -> Seeded:
    """Write the corpus into ``store`` (a store made by ``conftest.make_pipeline_store``):
    records under hostile benchmark and model names, every kind of event with hostile
    reasons, actors, references, rules and paths (events the schema accepts, written by
    the tools, and events it refuses, written as files as a commit with ``--no-verify``
    would), an import manifest naming the records, and records with sidecars whose
    model ids, libraries and sample ids are hostile (for the analysis pages)."""
    from eee.governance.events import make_event, write
    from eee.store.paths import canonical_record_path, portable_component
    from eee.store.strictjson import canonical

    out = Seeded()
    placed: list[tuple[str, str]] = []
    n = 0
    for bench in ["wikitext", *NAMES]:
        for m in range(3):
            n += 1
            uuid = _uuid(n)
            doc = hostile_record(n * 7 + m, base)
            if n == 1:
                doc["model_info"]["name"] = VISIBLE
                out.visible_uuid = uuid
            rel = canonical_record_path(bench, doc["model_info"]["id"], uuid)
            path = store / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(canonical(doc))
            out.records[uuid] = rel
            placed.append((uuid, rel))
        out.benchmarks.append(portable_component(bench))  # the folder name: what the pages show
    out.hostile_benchmark = NAMES[0]
    uuids = [u for u, _ in placed]
    now = dt.datetime(2026, 6, 1, tzinfo=dt.UTC)

    def at(s: int) -> dt.datetime:
        return now + dt.timedelta(seconds=s)

    # events the tools write (the schema accepts them): free text everywhere it may be
    actor = {"name": payload(3), "email": "eeepwn@example.org"}
    https_ref = URLS[6]
    write(store, make_event("dispute", uuids[0], VISIBLE, actor, reference=URLS[8], now=at(0)))
    write(store, make_event("retract", uuids[1], payload(0), actor, now=at(1)))
    write(store, make_event("supersede", uuids[2], payload(1), actor, replacement=uuids[3], now=at(2)))
    write(store, make_event("dispute", uuids[3], payload(2), actor, reference=https_ref, now=at(3)))
    write(store, make_event("flag", uuids[4], payload(4), actor, rule="naming", path=payload(5), now=at(4)))
    write(store, make_event("duplicate", uuids[5], payload(6), actor, of=uuids[6], now=at(5)))
    write(store, make_event("dispute", uuids[7], payload(7), actor, reference=URLS[7], now=at(6)))
    write(store, make_event("resolve", uuids[7], payload(8), actor, outcome="upheld", now=at(7)))
    # events the schema refuses (committed with --no-verify): the site still reads them
    k = 8
    for j, u in enumerate(uuids[8:]):
        action = ("dispute", "retract", "flag", "resolve")[j % 4]
        k += 4
        _raw_event(
            store,
            action,
            u,
            at(10 + j),
            j,
            reason=payload(k),
            reference=url(j),
            actor={"name": payload(k + 1), "email": payload(k + 2)},
            rule=payload(k + 3),
            path=payload(k + 4),
            outcome=payload(k + 5),
            extra=payload(k + 6),
        )
    # an import manifest that names the records (its free text hostile)
    from eee.governance.manifests import dumps as manifest_dumps

    manifest_id = "20260601T000000.000000Z-import-e5e5e5"
    files = [
        {
            "source": f"data/{payload(i)}/{i}.json",
            "kind": "record",
            "outcome": ("imported", "relocated", "flagged")[i % 3],
            "store": rel,
            "reason": payload(i + 1),
        }
        for i, (_u, rel) in enumerate(placed)
    ]
    manifest = {
        "manifest_schema": "1.0.0",
        "id": manifest_id,
        "source": payload(20),
        "revision": payload(21),
        "time": "2026-06-01T00:00:00.000000Z",
        "tool": payload(22),
        "actor": {"name": payload(23), "email": "eeepwn@example.org"},
        "counts": {"imported": 0, "relocated": 0, "flagged": 0, "already_present": 0, "refused": 0, "total": 0},
        "files": files,
    }
    (store / "governance" / "imports").mkdir(parents=True, exist_ok=True)
    (store / "governance" / "imports" / f"{manifest_id}.yaml").write_text(manifest_dumps(manifest), encoding="utf-8")
    if with_analysis:
        out.analysis_benchmark = seed_analysis(store)
    return out


def seed_analysis(store: Path, benchmark: str = NAMES[0], models: int = 5, items: int = 40) -> str:
    """Records with sidecars under ``benchmark``: hostile model ids and libraries, sample ids
    from the corpus, two records of one model (a comparison), enough for a Rasch fit."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from analysis_store import record_doc, sidecar_bytes

    rng = random.Random(7)
    ids = [f"{payload(i)} #{i}" for i in range(items)]
    for m in range(models + 1):
        model_id = f"eeepwn-dev/{payload(m + 2)}" if m < models else f"eeepwn-dev/{payload(2)}"
        library = payload(m + 9)
        ability = (m % models) / models - 0.5
        scores = [
            1.0 if rng.random() < 1 / (1 + 2.718 ** (-(ability + (i % 7 - 3) / 3))) else 0.0 for i in range(items)
        ]
        uuid = _uuid(0xA000 + m)
        from eee.store.paths import canonical_record_path

        rel = canonical_record_path(benchmark, model_id, uuid)
        folder = (store / rel).parent
        folder.mkdir(parents=True, exist_ok=True)
        doc = record_doc(model_id, library, sum(scores) / items)
        sidecar = rel[: -len(".json")] + "_samples.jsonl"
        data = sidecar_bytes(model_id, scores, ids)
        (store / sidecar).write_bytes(data)
        doc["detailed_evaluation_results"]["file_path"] = sidecar
        doc["detailed_evaluation_results"]["total_rows"] = data.count(b"\n")
        import hashlib

        doc["detailed_evaluation_results"]["checksum"] = hashlib.sha256(data).hexdigest()
        (store / rel).write_text(json.dumps(doc, indent=2), encoding="utf-8")
    from eee.commands import analysis

    code = analysis.main(["--store", str(store)])
    assert code == 0, f"eee analysis exited {code}"
    return benchmark


# --- the oracle ------------------------------------------------------------------------------

URL_ATTRS = {"href", "src", "action", "formaction", "data", "xlink:href", "poster", "background", "cite", "srcdoc"}
SAFE_SCHEME = re.compile(r"^(https?:|mailto:|#|\.{0,2}/|[^:/?#]*(?:[/?#]|$))", re.I)


class _Scanner(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []
        self.stack: list[str] = []
        self._script: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        where = f"<{tag}>"
        if MARK in tag:
            self.problems.append(f"an element from the corpus: {where}")
        values = dict(attrs)
        for key, value in attrs:
            value = value or ""
            if key.startswith("on"):
                self.problems.append(f"an event-handler attribute {key}= on {where}")
            if key in ("class", "id", "name", "for", "style") and MARK in value:
                self.problems.append(f"an attribute from the corpus: {key}={value[:60]!r} on {where}")
            if key in URL_ATTRS:
                target = "".join(c for c in value if c > " " and c != "\x7f")  # as a browser reads it
                if not SAFE_SCHEME.match(target) or key == "srcdoc":
                    self.problems.append(f"a non-http(s) link {key}={value[:60]!r} on {where}")
        if tag == "script":
            kind = (values.get("type") or "").lower()
            if not values.get("src") and kind not in ("application/json", "application/ld+json"):
                self._script = []
        if tag in ("base", "iframe", "object", "embed", "frame", "frameset", "applet"):
            self.problems.append(f"a {where} element")
        if tag == "meta" and (values.get("http-equiv") or "").lower() == "refresh":
            self.problems.append("a <meta http-equiv=refresh>")
        if tag == "form" and MARK in json.dumps(attrs):
            self.problems.append("a form from the corpus")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script" and self._script is not None:
            body = "".join(self._script).strip()
            if body:
                self.problems.append(f"an inline script: {body[:80]!r}")
            self._script = None

    def handle_data(self, data: str) -> None:
        if self._script is not None:
            self._script.append(data)


def scan(page_html: str) -> list[str]:
    """What the corpus injected into ``page_html`` (empty when it is all text): elements and
    attributes that carry :data:`MARK`, event-handler attributes, links that are not http(s)
    (relative links and ``#`` fragments are fine), inline scripts, frames and the like."""
    scanner = _Scanner()
    scanner.feed(page_html)
    scanner.close()
    return scanner.problems


# --- Markdown as the site renders it ---------------------------------------------------------


def markdown_renderer(project: Path | None = None) -> Any:
    """A Python-Markdown instance with the extensions and settings of the project's
    ``mkdocs.yml`` (``markdown_extensions``), the way MkDocs renders a page (front matter
    is not part of the text: see :func:`render_page`)."""
    import markdown
    import yaml

    class _Loader(yaml.SafeLoader):
        pass

    _Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
    project = project or Path(__file__).resolve().parents[1]
    config = yaml.load((project / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_Loader)
    names: list[str] = []
    settings: dict[str, Any] = {}
    for item in config["markdown_extensions"]:
        if isinstance(item, dict):
            ((name, options),) = item.items()
            names.append(name)
            settings[name] = options or {}
        else:
            names.append(item)
    return markdown.Markdown(extensions=names, extension_configs=settings)


_FRONT = re.compile(r"\A---\n(.*?)\n---\n", re.S)


def render_page(md: Any, text: str) -> tuple[dict[str, Any], str]:
    """(front matter, HTML) of a generated page's Markdown."""
    import yaml

    meta: dict[str, Any] = {}
    m = _FRONT.match(text)
    if m:
        meta = yaml.safe_load(m.group(1)) or {}
        text = text[m.end() :]
    md.reset()
    return meta, md.convert(text)
