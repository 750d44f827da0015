"""Changes of the identity registry (``eee identity alias`` and ``eee identity canonical``),
written through the one commit stack (:mod:`eee.write.commit`).

- :func:`alias`: ``OLD`` becomes an alias of ``NEW``. The alias names the commit it is made
  at (HEAD, ``settled_at``): the records already under ``OLD`` there are settled, a record
  added under it later is warned. Making an existing alias again moves that commit to HEAD
  (settling what was added since). When ``OLD`` was a canonical id itself, its aliases (and
  Hub mapping) move to ``NEW``: a rename is an alias, never a move, and records keep their paths.
- :func:`canonical`: ``NAME`` is a canonical id of its own (a spelling that looks like
  another id but is another thing: the near miss is settled).

The file is edited in YAML's round-trip form (comments and order kept), every name written
in quotes; the result is checked as the hooks will check it (:func:`eee.store.identity.parse`)
before anything is written. Changing the registry is a maintainer's act: the commit goes
through the hooks like every governance commit (signed where the store's roles ask for it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eee.reporting.findings import Finding, Refused, refusal
from eee.store import identity
from eee.store.identity import FILES, KINDS

HEADER = {
    kind: (
        f'# The identity registry: {kind}s (see governance/README.md, "The identity registry").\n'
        "# Changing this file is a maintainer's act; `eee identity alias` writes aliases.\n"
    )
    for kind in KINDS
}


@dataclass
class Change:
    """What a registry change did: the file, its new bytes, the commit (when made), words for the user."""

    kind: str
    rel: str
    data: bytes
    said: list[str] = field(default_factory=list)
    commit: str | None = None
    settled_at: str | None = None


def _yaml() -> Any:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.width = 4096  # never wrap a line (a wrapped one keeps a trailing space)
    yaml.preserve_quotes = True
    return yaml


def _quoted(text: str) -> Any:
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString

    return DoubleQuotedScalarString(text)


def _read(root: Path, kind: str) -> tuple[str, Any]:
    """The registry file of ``kind`` in the work tree (its text, and its round-trip form),
    refused unless it is a registry file the hooks would accept."""
    from eee.store.limits import IDENTITY_MAX_BYTES, Unreadable, read_regular

    rel = FILES[kind]
    path = root / rel
    if not path.exists() and not path.is_symlink():
        text = HEADER[kind] + f"kind: {kind}\nentries: {{}}\n"
    else:
        try:
            data = read_regular(path, IDENTITY_MAX_BYTES, "identity registry file")
        except (Unreadable, OSError) as exc:
            raise refusal(f"{rel}: {exc}", "fix the file first") from None
        reg = identity.parse({rel: data})
        if reg.problems:
            raise Refused(
                [
                    Finding(p.file, p.pointer, p.message, p.hint, line=p.line, check="identity-registry")
                    for p in reg.problems
                ]
            )
        text = data.decode("utf-8")
    doc = _yaml().load(text)
    if doc.get("entries") is None:
        from ruamel.yaml.comments import CommentedMap

        doc["entries"] = CommentedMap()
    doc["entries"].fa.set_block_style()
    return text, doc


def _dump(doc: Any) -> bytes:
    import io

    out = io.StringIO()
    _yaml().dump(doc, out)
    return out.getvalue().encode("utf-8")


def _entry(doc: Any, name: str) -> Any:
    from ruamel.yaml.comments import CommentedMap

    entries = doc["entries"]
    if name not in entries or entries[name] is None:
        entries[_quoted(name)] = CommentedMap()
    entry = entries[name]
    entry.fa.set_block_style()
    return entry


def _alias_item(name: str, settled_at: str | None, why: str | None = None) -> Any:
    from ruamel.yaml.comments import CommentedMap

    if settled_at is None and why is None:
        return _quoted(name)
    item = CommentedMap()
    item["name"] = _quoted(name)
    if settled_at is not None:
        item["settled_at"] = _quoted(settled_at)
    if why is not None:
        item["why"] = why
    return item


def _names(entry: Any) -> list[str]:
    return [a if isinstance(a, str) else a.get("name") for a in entry.get("aliases") or []]


def head(root: Path) -> str | None:
    from eee.git.cli import resolve

    return resolve("HEAD^{commit}", root)


def alias(root: Path, old: str, new: str, kind: str, why: str | None = None) -> Change:
    """The registry change that makes ``old`` an alias of ``new`` (see the module
    docstring); Refused when the registry says otherwise (``new`` is itself an alias,
    ``old`` an alias of another id)."""
    if old == new:
        raise refusal(f"{old!r} is {new!r}: an alias is another spelling", check="refused")
    rel = FILES[kind]
    _text, doc = _read(root, kind)
    reg = identity.parse({rel: _dump(doc)})
    table = reg[kind]
    if new in table.aliases:
        target = table.aliases[new].canonical
        raise refusal(
            f"{new!r} is itself an alias of {target!r} in {rel}",
            f"make {old!r} an alias of the canonical id: eee identity alias {old} --to {target} --kind {kind}",
            check="refused",
        )
    if old in table.aliases and table.aliases[old].canonical != new:
        raise refusal(
            f"{old!r} is already an alias of {table.aliases[old].canonical!r} in {rel}",
            "an alias stands for one canonical id: edit the file if it should stand for another (a maintainer's act)",
            check="refused",
        )
    settled_at = head(root)
    change = Change(kind, rel, b"", settled_at=settled_at)
    entries = doc["entries"]
    target = _entry(doc, new)
    aliases = target.get("aliases")
    if aliases is None:
        from ruamel.yaml.comments import CommentedSeq

        aliases = target["aliases"] = CommentedSeq()
    if old in table.aliases:  # made again: the commit it settles moves to HEAD
        at = _names(target).index(old)
        item = aliases[at]
        keep = item.get("why") if not isinstance(item, str) else None
        aliases[at] = _alias_item(old, settled_at, why or keep)
        change.said.append(
            f"{kind} {old!r} was an alias of {new!r}; it now settles the records under it at "
            f"{(settled_at or 'no commit')[:10]}"
        )
    else:
        if old in entries:  # a canonical id becomes an alias: its aliases and Hub mapping move over
            moved = entries[old] or {}
            for item in moved.get("aliases") or []:
                aliases.append(item)
            if moved.get("hub") is not None:
                if target.get("hub") is not None:
                    raise refusal(
                        f"{old!r} and {new!r} both map to the Hub in {rel}",
                        "keep one mapping (edit the file) and make the alias again",
                        check="refused",
                    )
                target["hub"] = moved["hub"]
            del entries[old]
            change.said.append(f"{kind} {old!r} was a canonical id: its aliases are {new!r}'s now")
        aliases.append(_alias_item(old, settled_at, why))
        change.said.append(
            f"{kind} {old!r} is an alias of {new!r}"
            + (f": the records under it at {settled_at[:10]} are settled" if settled_at else "")
        )
    return _checked(change, doc)


def canonical(root: Path, name: str, kind: str, why: str | None = None) -> Change:
    """The registry change that declares ``name`` a canonical id of its own."""
    rel = FILES[kind]
    _text, doc = _read(root, kind)
    reg = identity.parse({rel: _dump(doc)})
    if name in reg[kind].aliases:
        raise refusal(
            f"{name!r} is an alias of {reg[kind].aliases[name].canonical!r} in {rel}",
            "edit the file to take it out of the aliases first (a maintainer's act)",
            check="refused",
        )
    change = Change(kind, rel, b"")
    if name in reg[kind].entries:
        change.said.append(f"{kind} {name!r} is a canonical id already")
        change.data = _dump(doc)
        return change
    entry = _entry(doc, name)
    if why:
        entry["why"] = why
    change.said.append(f"{kind} {name!r} is a canonical id of its own")
    return _checked(change, doc)


def _checked(change: Change, doc: Any) -> Change:
    data = _dump(doc)
    reg = identity.parse({change.rel: data})
    if reg.problems:  # cannot happen for a file that was accepted: say so rather than write it
        raise Refused(
            [
                Finding(p.file, p.pointer, p.message, p.hint, line=p.line, check="identity-registry")
                for p in reg.problems
            ]
        )
    change.data = data
    return change


def write(root: Path, change: Change, commit: bool) -> Change:
    """Write the change's file through the commit stack (staged), and commit it through
    the hooks when ``commit``. A change of the registry is a maintainer's act where the store
    has roles: the commit's requirement is checked before anything is written."""
    from eee.rules.authority import Act
    from eee.write.commit import transaction
    from eee.write.signing import refusal_of, requirement

    if commit:
        problem = refusal_of(requirement(root, [Act("identity", change.rel)]), root)
        if problem is not None:
            raise Refused(problem)
    with transaction(root) as tx:
        tx.replace([(change.rel, change.data)])
        if commit:
            change.commit = tx.commit(
                [f"identity: {change.said[-1]}", *change.said[:-1]],
                refused_hint="nothing was written; fix what the hooks report",
            )
    return change
