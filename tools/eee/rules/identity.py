"""The identity registry's rules: a record's ids against the registry (``identity``), and the
registry's own files (``identity-registry``).

- ``identity`` (a warning): a record whose developer, model, benchmark or metric id is not
  canonical but is an alias of one (unless the record was already under the alias when it
  became one: :func:`eee.store.identity.settled`), or matches one by case, punctuation or a
  near miss. The message names the canonical id; the hint says how to write it, and the exact
  command that settles the spelling for good (``eee identity alias ... --commit``, or
  ``eee identity canonical`` for a spelling that is another thing).
- ``identity-registry`` (an error): a file of ``governance/identity/`` that is not plain
  YAML, breaks the pinned schema, contradicts itself (an alias of two ids, an alias that is
  also a canonical id), is not one of the registry's files, or names a ``settled_at`` commit
  that is not in the store's history.

The registry is read from the tree being checked (:func:`eee.store.identity.read`), so the
gate judges a commit by the registry it will hold, and the audit each commit by its own.
"""

from __future__ import annotations

from typing import Any

from eee.reporting.findings import ERROR, WARNING, FileResult, Finding
from eee.reporting.shown import command
from eee.store import identity
from eee.store.identity import ALIAS, BENCHMARK, CASE, DEVELOPER, METRIC, MODEL, NEAR, PUNCTUATION, Registry
from eee.store.paths import StorePath
from eee.store.tree import SYMLINK, Tree

_HOW = {CASE: "by letter case", PUNCTUATION: "but for punctuation", NEAR: "but for one letter (a near miss)"}
_WRITE = {
    DEVELOPER: "write model_info.id as {canonical}/<model> (the record's folders follow it)",
    MODEL: "write model_info.id as {canonical}",
    BENCHMARK: "place the record under data/{canonical}/",
    METRIC: "write metric_id {canonical}",
}


def record_findings(
    doc: dict[str, Any], file: str, where: StorePath, tree: Tree, reg: Registry | None = None
) -> list[Finding]:
    """The ``identity`` warnings of one record (at ``where`` in ``tree``)."""
    reg = identity.read(tree) if reg is None else reg
    if reg is identity.EMPTY or not any(t.entries or t.aliases for t in reg.tables.values()):
        return []
    out: list[Finding] = []
    for kind, value, pointer in identity.record_spellings(doc, where.benchmark):
        found = reg[kind].match(value)
        if found is None or found.how == identity.CANONICAL:
            continue
        if found.how == ALIAS and found.alias is not None and identity.settled(tree, found.alias, where.rel):
            continue
        out.append(_finding(kind, value, found, file, pointer, tree))
    return out


def _finding(kind: str, value: str, found: identity.Match, file: str, pointer: str, tree: Tree) -> Finding:
    canonical = found.canonical
    registry_file = identity.FILES[kind]
    if found.how == ALIAS:
        alias = found.alias
        since = ""
        if alias is not None and alias.settled_at:
            since = f"; only the records under it at {alias.settled_at[:10]} are settled"
            if identity.commit_known(tree, alias.settled_at) is False:
                since = f"; the commit it was made at ({alias.settled_at[:10]}) is not in this clone: fetch the whole history"
        message = f"{kind} {value!r} is an alias of {canonical!r} in the identity registry ({registry_file}){since}"
        settle = command("identity", "alias", value, "--to", canonical, "--kind", kind, "--commit")
        hint = (
            f"{_WRITE[kind].format(canonical=canonical)}; or, once it is committed as it is, a maintainer settles the "
            f"spelling (the records now under it): `{settle}`"
        )
    else:
        shown = f"the registry's {found.spelled!r}" + (
            f" (an alias of {canonical!r})" if found.spelled != canonical else ""
        )
        message = f"{kind} {value!r} is not a canonical id: it is {shown} {_HOW[found.how]}"
        alias_it = command("identity", "alias", value, "--to", canonical, "--kind", kind, "--commit")
        distinct = command("identity", "canonical", value, "--kind", kind, "--commit")
        hint = (
            f"{_WRITE[kind].format(canonical=canonical)}; or a maintainer settles the spelling: the same {kind} "
            f"(`{alias_it}`) or another one (`{distinct}`)"
        )
    return Finding(file, pointer, message, hint, severity=WARNING, check="identity")


# --- the registry's files ------------------------------------------------------------------


def check_files(tree: Tree, rels: list[str]) -> list[FileResult]:
    """The registry's files among ``rels`` of ``tree``: each one's problems (as the registry
    reads them), a file that is not the registry's, a ``settled_at`` outside history."""
    reg = identity.read(tree)
    results: dict[str, FileResult] = {}
    for rel in rels:
        file = tree.display(rel)
        result = results.setdefault(file, FileResult(file, "identity"))
        if rel not in identity.KIND_OF_FILE:
            what = "a symbolic link" if tree.mode(rel) == SYMLINK else "not a file of the identity registry"
            names = ", ".join(f.rsplit("/", 1)[-1] for f in identity.FILES.values())
            result.findings.append(
                Finding(
                    file,
                    "$",
                    f"{rel} is {what}",
                    f"{identity.IDENTITY_DIR}/ holds {names} only: move it out",
                    check="identity-registry",
                )
            )
    for problem in reg.problems:
        result = results.get(problem.file)
        if result is not None:
            result.findings.append(
                Finding(
                    problem.file,
                    problem.pointer,
                    problem.message,
                    problem.hint,
                    line=problem.line,
                    severity=ERROR,
                    check="identity-registry",
                )
            )
    _settled_in_history(tree, reg, results)
    return list(results.values())


def _base(tree: Tree) -> str | None:
    """The commit a tree's history ends at: a commit's own id, else HEAD."""
    from eee.store.tree import GitTree, Overlay

    while isinstance(tree, Overlay):
        tree = tree.base
    commit = getattr(tree, "commit", None) if isinstance(tree, GitTree) else None
    return commit if commit and commit != "HEAD" else "HEAD"


def _settled_in_history(tree: Tree, reg: Registry, results: dict[str, FileResult]) -> None:
    """Each ``settled_at`` must be a commit of the store's history (an ancestor of the
    commit checked, or of HEAD): records are settled by what git holds, never by a claim."""
    repo = identity.repo_of(tree)
    if repo is None:
        return
    from eee.git.cli import has_commit, is_ancestor, is_shallow, resolve

    base = _base(tree)
    if base is None or not has_commit(base, repo):
        base = None
    bases = [base] if base is not None else []
    if base == "HEAD":  # the commit being made: during a merge, its other parents' history is its own too
        bases += [m for m in [resolve("MERGE_HEAD", repo)] if m]
    verdicts: dict[str, tuple[str, bool] | None] = {}  # commit -> (problem, whether a shallow clone may hide it)
    shallow: bool | None = None
    for kind, table in reg.tables.items():
        rel = identity.FILES[kind]
        file = tree.display(rel)
        result = results.get(file)
        if result is None:
            continue
        for alias in table.aliases.values():
            commit = alias.settled_at
            if commit is None:
                continue
            if commit not in verdicts:
                if identity.commit_known(tree, commit) is False:
                    shallow = is_shallow(repo) if shallow is None else shallow
                    verdicts[commit] = (
                        ("cannot be checked: the clone is shallow", True)
                        if shallow
                        else ("is not a commit of this repository", False)
                    )
                elif not any(is_ancestor(commit, b, repo) for b in bases):
                    verdicts[commit] = ("is not in the history of the commit checked", False)
                else:
                    verdicts[commit] = None
            verdict = verdicts[commit]
            if verdict:
                from eee.store.jsonpath import format_path

                problem, cut = verdict
                path = ("entries", alias.canonical, "aliases", alias.position, "settled_at")
                result.findings.append(
                    Finding(
                        file,
                        format_path(list(path)),
                        f"settled_at {commit[:12]} of alias {alias.name!r} {problem}",
                        "fetch the whole history (`git fetch --unshallow`): the commit may lie before the cut-off"
                        if cut
                        else "settled_at is the commit the alias was made at; let "
                        f"`{command('identity', 'alias', alias.name, '--to', alias.canonical, '--kind', kind)}` write it",
                        line=_line(tree, rel, path),
                        severity=WARNING if cut else ERROR,
                        check="identity-registry",
                    )
                )


def _line(tree: Tree, rel: str, path: tuple[Any, ...]) -> int | None:
    from eee.store.limits import IDENTITY_MAX_BYTES
    from eee.store.safeyaml import lines
    from eee.store.tree import Unreadable

    try:
        at = lines(tree.read(rel, IDENTITY_MAX_BYTES).decode("utf-8", "replace"))
    except Unreadable:
        return None
    return next((at[path[:n]] for n in range(len(path), 0, -1) if path[:n] in at), None)
