"""``eee pipeline``: the main job. Sets up what is missing, runs ``dvc repro`` in the
store, says where the results are.

Stages (dvc.yaml): manifest -> build/manifest/store.json (always run; the others depend
on it); validate -> report and metrics; catalog -> Parquet (partitioned by benchmark);
stats -> fill rates; analysis -> IRT and comparison pages; site -> the MkDocs build. DVC
redoes only what changed since the last run. ``eee pipeline`` adds only what ``dvc repro``
cannot do itself: initialise DVC and the local remote when they are missing, fetch the
sidecars DVC keeps (each one that cannot be fetched named, with the remote), and print one summary (DVC's own output, with its hints about ``git add
dvc.lock`` and ``dvc push``, is shown only when a stage fails), which ends with the
validation's findings grouped by rule (the first few of each, then the counts), read from
the validate stage's report.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from eee.catalog.table import CATALOG_DIR
from eee.commands import EXIT_ERRORS, EXIT_OK, EXIT_WARNINGS, Parser, add_store
from eee.reporting.findings import ERROR, Finding

OUTPUTS = {
    "validation report": "build/validate/report.json",
    "validation metrics": "build/validate/metrics.json",
    "catalogue (Parquet)": CATALOG_DIR,
    "field fill rates": "build/stats/fill_rates.json",
    "analysis pages": "build/analysis/pages",
    "site": "build/site/index.html",
}

_RUNNING = re.compile(r"^Running stage '([^']+)'")
ALWAYS = "manifest"  # the stage DVC runs every time (always_changed)
SHOWN_PER_RULE = 3  # findings shown of each rule at the end of the summary (the report has them all)


def _say(message: str) -> None:
    print(f"[pipeline] {message}", file=sys.stderr, flush=True)


def _dvc(root: Path, *args: str, quiet: bool = False) -> subprocess.CompletedProcess[str]:
    from eee.write.samples import dvc

    return dvc(*args, cwd=root, capture=quiet)


def local_remote(root: Path) -> Path | None:
    """The folder of the default remote when it is a local path (created if missing)."""
    config = root / ".dvc" / "config"
    if not config.exists():
        return None
    text = config.read_text()
    default = re.search(r"^\s*remote\s*=\s*(\S+)", text, re.M)
    if not default:
        return None
    section = re.search(rf"\['remote \"{re.escape(default.group(1))}\"'\]\s*\n\s*url\s*=\s*(\S+)", text)
    if not section or "://" in section.group(1):
        return None
    return (root / ".dvc" / section.group(1)).resolve()


def setup(root: Path) -> None:
    if not (root / ".dvc").is_dir():
        _say("initialising DVC")
        _dvc(root, "init", "--quiet", quiet=True)
        _dvc(root, "config", "core.analytics", "false", quiet=True)
    remote = local_remote(root)
    if remote is not None and not remote.exists():
        remote.mkdir(parents=True)
        _say(f"created the local DVC remote {remote}")
    for folder in ("data", "governance/events", "docs"):
        (root / folder).mkdir(parents=True, exist_ok=True)


def pull(root: Path) -> list[str]:
    """Fetch the sidecars DVC keeps (``eee samples pull``: the sidecars in git are there with
    the checkout); each one that cannot be fetched is said, with where it was looked for and
    how to get it. Returns those lines."""
    from eee.reporting.findings import Refused
    from eee.write.samples import move

    _say("fetching the sidecars DVC keeps (eee samples pull)")
    try:
        done = move("pull", [], root)
    except Refused as exc:
        lines = [f"the sidecars in DVC could not be fetched: {f.message}" for f in exc.findings]
    else:
        lines = []
        for f in done.failed:
            shown = f.file
            try:
                shown = Path(f.file).resolve().relative_to(root.resolve()).as_posix()
            except ValueError:
                pass
            lines.append(f"not fetched: {shown}: {f.message}" + (f" ({f.hint})" if f.hint else ""))
    for line in lines:
        _say(line)
    if lines:
        _say("validating without the sidecars not fetched (their records say where they are: the pointers beside them)")
    return lines


HEARTBEAT = 10.0  # seconds: a stage that says nothing for this long is said to be still running
_ENDS = re.compile(r"^(Updating lock file|Stage '[^']+' didn't change|Use `dvc push`)")


def sidecars_missing(root: Path) -> int:
    """How many sidecars DVC keeps are not in the work tree (their pointer without its file
    beside it): only then is there anything to fetch (the fetch reads every pointer, seconds
    at 10,000 sidecars). One walk of data/, names only."""
    import os

    from eee.store.paths import POINTER_SUFFIX

    missing = 0
    for _dirpath, _dirs, names in os.walk(root / "data"):
        present = set(names)
        missing += sum(1 for n in names if n.endswith(POINTER_SUFFIX) and n[: -len(".dvc")] not in present)
    return missing


def repro(root: Path, force: bool = False) -> tuple[int, list[str], str, dict[str, float]]:
    """``dvc repro`` with its output captured; returns (exit code, stages run, DVC's output,
    seconds each stage took).

    Run through :mod:`eee.dvc.repro`: DVC's own command, whose stage index does not parse
    every sidecar pointer under data/ (no stage depends on them). Progress on stderr: each
    stage that starts, the progress lines the stages print (``EEE_PROGRESS_LINES``: see
    :mod:`eee.reporting.progress`), and a line every :data:`HEARTBEAT` seconds a stage is
    otherwise silent. ``force``: every stage runs (``dvc repro --force``)."""
    import os
    import queue
    import threading
    import time

    from eee.reporting.progress import ENV, PREFIX

    env = dict(os.environ, DVC_NO_ANALYTICS="1", PYTHONUNBUFFERED="1")  # each stage announced as it starts
    env[ENV] = "1"  # the stages' long phases print progress lines, shown below as they come
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")  # stages say `python`
    proc = subprocess.Popen(
        [sys.executable, "-m", "eee.dvc.repro", *(["--force"] if force else [])],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    lines_in: queue.Queue[str | None] = queue.Queue()

    def read(stream: Any) -> None:
        for line in stream:
            lines_in.put(line)
        lines_in.put(None)

    threading.Thread(target=read, args=(proc.stdout,), daemon=True).start()
    ran: list[str] = []
    lines: list[str] = []
    took: dict[str, float] = {}
    current: str | None = None
    started = said = time.monotonic()

    def close(now: float) -> None:
        nonlocal current
        if current is not None:
            took[current] = now - started
            current = None

    while True:
        try:
            line = lines_in.get(timeout=1.0)
        except queue.Empty:
            now = time.monotonic()
            if current is not None and current != ALWAYS and now - said >= HEARTBEAT:
                _say(f"  {current}: still running ({now - started:.0f} s)")
                said = now
            continue
        now = time.monotonic()
        if line is None:
            close(now)
            break
        if line.startswith(PREFIX):
            _say(f"  {current or 'dvc'}: {line[len(PREFIX) :].rstrip()}")
            said = now
            continue
        lines.append(line)
        m = _RUNNING.match(line)
        if m:
            close(now)
            current, started, said = m.group(1), now, now
            ran.append(current)
            if current != ALWAYS:
                _say(f"stage {current}")
        elif _ENDS.match(line):
            close(now)
    return proc.wait(), ran, "".join(lines), took


def _outs(root: Path) -> list[str]:
    """What the stages of dvc.yaml write (their ``outs`` and ``metrics``), as declared."""
    import yaml

    try:
        doc = yaml.safe_load((root / "dvc.yaml").read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError):
        return []
    found: list[str] = []
    for stage in (doc.get("stages") or {}).values():
        for key in ("outs", "metrics"):
            for out in (stage or {}).get(key) or []:
                found.extend(out if isinstance(out, dict) else [out])
    return [str(out) for out in found]


def clean(root: Path) -> list[str]:
    """``--force``: remove what the stages wrote, and the caches that let them redo only
    what changed (kept beside their outputs under build/), so every stage builds from the
    store alone. Only paths under build/ are removed. Returns them."""
    import shutil

    build = (root / "build").resolve()
    removed: list[str] = []
    for rel in _outs(root):
        path = (root / rel).resolve()
        if build not in path.parents:
            continue
        folder = path if path.is_dir() else path.parent
        target = folder if folder != build else path  # a stage's folder with its caches, or a file of build/
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        elif target.exists() or target.is_symlink():
            target.unlink()
        else:
            continue
        removed.append(target.relative_to(root.resolve()).as_posix())
    for cache in build.glob(".*-state.json"):  # the site build's record of what it built
        cache.unlink()
        removed.append(cache.relative_to(root.resolve()).as_posix())
    return removed


def main(argv: list[str]) -> int:
    p = Parser(
        "eee pipeline",
        "Run the datastore pipeline (dvc.yaml) on a store: `dvc repro`, after initialising DVC and the local "
        "remote when missing and fetching the sidecars. The summary goes to stdout, progress to stderr. "
        "Exit 0: every output written and the store clean; 2: warnings only; 1: validation errors, a stage "
        "that failed or an output missing.",
    )
    add_store(p)
    p.add_argument("--no-pull", action="store_true", help="do not fetch sidecars from the DVC remote first")
    p.add_argument(
        "--force",
        action="store_true",
        help="run every stage from scratch: remove the stages' outputs and caches under build/, then "
        "`dvc repro --force`",
    )
    args = p.parse_args(argv)
    root = args.store
    if not (root / "dvc.yaml").is_file():
        print(f"eee pipeline: {root} has no dvc.yaml: not a store with the pipeline", file=sys.stderr)
        print("    hint: run it inside the datastore's checkout, or pass --store DIR", file=sys.stderr)
        return EXIT_ERRORS
    setup(root)
    if not args.no_pull and sidecars_missing(root):
        pull(root)
    if args.force:
        removed = clean(root)
        _say(f"--force: removed {', '.join(removed) if removed else 'nothing (no outputs yet)'}")
    _say(f"dvc repro in {root}")
    code, ran, output, took = repro(root, force=args.force)
    if code != 0:
        sys.stderr.write(output)
        _say(f"dvc repro failed (exit {code})")
        return EXIT_ERRORS
    rerun = [stage for stage in ran if stage != ALWAYS]
    print(f"[pipeline] stages run: {', '.join(rerun) if rerun else 'none (everything up to date)'}")
    if took:
        timings = ", ".join(f"{stage} {seconds:.1f} s" for stage, seconds in took.items())
        print(f"[pipeline] took {sum(took.values()):.1f} s: {timings}")
    metrics = root / OUTPUTS["validation metrics"]
    errors = warnings = 0
    problems: list[str] = []
    try:
        m = json.loads(metrics.read_text())
        errors, warnings = int(m.get("errors", 0)), int(m.get("warnings", 0))
    except (OSError, ValueError, TypeError, AttributeError) as exc:
        m = None
        problems.append(f"the validation metrics {metrics} cannot be read ({exc}): the store's state is unknown")
    if m is not None:
        print(
            f"[pipeline] {_counted(m.get('records', 0), 'record')}, {_counted(m.get('sidecars', 0), 'sidecar')}, "
            f"{_counted(m.get('events', 0), 'event')}: {_counted(errors, 'error')}, {_counted(warnings, 'warning')}; "
            f"by schema version {m.get('records_by_schema_version')}"
        )
    for label, rel in OUTPUTS.items():
        path = root / rel
        print(f"  {label:<22} {path}{'' if path.exists() else '  (missing)'}")
        if not path.exists():
            problems.append(f"the {label} is missing ({path}) although every stage ran")
    if errors or warnings:
        for line in by_rule(root / OUTPUTS["validation report"], errors):
            print(line)
    for problem in problems:
        print(f"[pipeline] {problem}", file=sys.stderr)
    if problems:
        print(f"    hint: run `{_force_command()}` to build every stage again", file=sys.stderr)
        return EXIT_ERRORS
    if errors:
        print(f"[pipeline] the store has validation errors: see {root / OUTPUTS['validation report']}", file=sys.stderr)
        return EXIT_ERRORS
    return EXIT_WARNINGS if warnings else EXIT_OK


def _force_command() -> str:
    from eee.reporting.shown import command

    return command("pipeline", "--force")


def report_findings(report: Path) -> list[Finding]:
    """The findings of a validation report (``eee validate --out``). Only its "findings" list
    is parsed: the report writes it last, after the "files" list of every file checked
    (:func:`eee.reporting.reporters.write_json`), at the top level's indent, which no string
    value can hold (a newline in one is escaped)."""
    import orjson

    data = report.read_bytes()
    at = data.rfind(b'\n  "findings": [')
    try:
        doc = orjson.loads(b"{" + data[at + 1 :]) if at >= 0 else orjson.loads(data)
    except orjson.JSONDecodeError:
        doc = orjson.loads(data)  # not the layout written here: the whole report (or its own error)
    fields = ("file", "pointer", "message", "hint", "line", "severity", "check")
    return [Finding(**{k: f.get(k) for k in fields if k in f}) for f in doc.get("findings") or []]


def _counted(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def by_rule(report: Path, errors: int = 0, shown: int = SHOWN_PER_RULE) -> list[str]:
    """The closing lines of the summary: the findings grouped by rule (``Finding.check``),
    rules with errors first, then by count; the first ``shown`` of each and how many more,
    then one line of the counts by rule. ``errors``: the run's count of errors, which
    includes those past the per-file cap (counted, not listed in the report)."""
    from eee.reporting.reporters import text_lines

    if not report.is_file():
        return [f"[pipeline] no validation report at {report}: the findings cannot be shown"]
    try:
        findings = report_findings(report)
    except (OSError, ValueError, TypeError) as exc:
        return [f"[pipeline] the validation report {report} cannot be read ({exc}): the findings cannot be shown"]
    groups: dict[str, list[Finding]] = {}
    for f in findings:
        groups.setdefault(str(f.check), []).append(f)

    def tally(items: list[Finding]) -> tuple[int, int]:
        errors = sum(1 for f in items if f.severity == ERROR)
        return errors, len(items) - errors

    def counts(items: list[Finding]) -> str:
        errors, warnings = tally(items)
        return ", ".join(
            [*([_counted(errors, "error")] if errors else []), *([_counted(warnings, "warning")] if warnings else [])]
        )

    order = sorted(groups, key=lambda rule: (-tally(groups[rule])[0], -len(groups[rule]), rule))
    lines = [f"[pipeline] findings by rule ({_counted(len(findings), 'finding')}; all of them in {report}):"]
    for rule in order:
        items = groups[rule]
        lines.append(f"  [{rule}] {counts(items)}")
        for f in items[:shown]:
            lines.extend("    " + line for line in text_lines(f))
        if len(items) > shown:
            lines.append(f"    ... {len(items) - shown} more [{rule}]")
    lines.append("[pipeline] by rule: " + "; ".join(f"{rule} {counts(groups[rule])}" for rule in order))
    beyond = errors - sum(tally(items)[0] for items in groups.values())
    if beyond > 0:
        lines.append(f"[pipeline] and {_counted(beyond, 'more error')} past the per-file cap (counted, not listed)")
    return lines
