"""The store's settings: one small YAML file, ``governance/settings.yaml``, read from a tree.

A setting governs what the store accepts (how large a sidecar git keeps, whether every
commit must be signed, which branches are protected), so changing one is a maintainer
action, and every check reads the settings **of the commit before** the one it judges
(the parent commit, or the old head of a pushed ref): nobody changes a rule and takes
advantage of the change in one commit. A store without the file has the defaults.

The file is input written by someone else: plain YAML (:mod:`eee.store.safeyaml`), size
capped, every key known and typed; anything else is a :class:`SettingsProblem` that names
the key and the fix, and the defaults are never silently taken in its place.

``protected_paths`` lists the files and folders that change what the tools run or check
(``mkdocs.yml``, whose ``hooks:`` run Python when the site is built; ``dvc.yaml``; the hook
configuration; ``pyproject.toml``; ``tools/``; ``schemas/``; ``.github/``; ``.ci/``;
``.dvc/``): in a store with roles only a maintainer's signed commit changes them
(:mod:`eee.rules.authority`), and since this file is itself protected, so is the list.
``dvc_remote`` names the DVC remote that holds the store's sidecar objects (empty: DVC's
``core.remote``), the one the pre-push hook and the server gate ask.
"""

from __future__ import annotations

import os
import re
from typing import Any, NamedTuple

from eee.store.limits import EVENT_MAX_BYTES
from eee.store.tree import Tree, Unreadable

SETTINGS_PATH = "governance/settings.yaml"
_URL = re.compile(r"^https?://[^\s/?#]+(?:/[^\s?#]*)?$")  # an address without query or fragment

# what the tools run or check, changed only by a maintainer where the store has roles (the default
# of ``protected_paths``; the store's settings may name more)
PROTECTED_PATHS = (
    "mkdocs.yml",
    "dvc.yaml",
    ".pre-commit-config.yaml",
    "pyproject.toml",
    "tools/",
    "schemas/",
    ".github/",
    ".ci/",
    ".dvc/",
)


class Setting(NamedTuple):
    key: str
    kind: type
    default: Any
    description: str


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "sidecar_git_max_bytes",
        int,
        1024 * 1024,
        "sidecars up to this many bytes are committed to git as plain files; larger ones are tracked by DVC",
    ),
    Setting(
        "require_signed_commits",
        bool,
        False,
        "every commit must be signed by a key of the maintainers file (governance commits always must, where roles exist)",
    ),
    Setting(
        "protected_branches",
        list,
        ["main"],
        "branches the server gate never lets be deleted or rewritten (no force push), whose old head stays on "
        "the new head's first-parent chain",
    ),
    Setting(
        "protected_paths",
        list,
        list(PROTECTED_PATHS),
        "files and folders (ending in /) that change what the tools run or check: where the store has roles, "
        "only a maintainer's signed commit changes them",
    ),
    Setting(
        "dvc_remote",
        str,
        "",
        "the DVC remote that holds the sidecars' objects (a remote of DVC's config; empty: its core.remote): "
        "the pre-push hook and the server gate refuse a pointer whose object is not there",
    ),
    Setting(
        "site_url",
        str,
        None,
        "the http(s) address the store's site is published at: exports link each result to its record's page "
        "there, and the site's own links use it; unset, nothing links to a site (never a placeholder)",
    ),
)
BY_KEY = {s.key: s for s in SETTINGS}


class Settings(NamedTuple):
    sidecar_git_max_bytes: int = 1024 * 1024
    require_signed_commits: bool = False
    protected_branches: tuple[str, ...] = ("main",)
    protected_paths: tuple[str, ...] = PROTECTED_PATHS
    dvc_remote: str = ""
    site_url: str | None = None


DEFAULTS = Settings()


class SettingsProblem(ValueError):
    """The settings file cannot be used: ``pointer`` names the key, ``hint`` the fix."""

    def __init__(self, message: str, pointer: str = "$", hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.pointer = pointer
        self.hint = hint


def parse(text: str) -> Settings:
    """The settings a file's text declares (keys left out keep their defaults)."""
    from eee.store.safeyaml import YAMLRefused, load

    try:
        doc = load(text)
    except YAMLRefused as exc:
        raise SettingsProblem(f"not plain YAML: {exc}", hint="write plain YAML: keys and values only") from None
    if doc is None:
        return DEFAULTS
    if not isinstance(doc, dict):
        raise SettingsProblem("the settings are a mapping of setting: value", hint=_known())
    values: dict[str, Any] = {}
    for key, value in doc.items():
        setting = BY_KEY.get(key) if isinstance(key, str) else None
        if setting is None:
            import difflib  # lazy: only for a misspelt key (the hooks import this module)

            close = difflib.get_close_matches(str(key), BY_KEY, n=1)
            hint = f"did you mean {close[0]!r}?" if close else _known()
            raise SettingsProblem(f"unknown setting {key!r}", f"$.{key}", hint)
        values[key] = _typed(setting, value)
    return DEFAULTS._replace(**values)


def _typed(setting: Setting, value: Any) -> Any:
    where = f"$.{setting.key}"
    if setting.kind is bool:
        if not isinstance(value, bool):
            raise SettingsProblem(f"{setting.key} is true or false, not {value!r}", where)
        return value
    if setting.kind is int:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise SettingsProblem(f"{setting.key} is a whole number of bytes (0 or more), not {value!r}", where)
        return value
    if setting.kind is str:
        if setting.key == "site_url":
            if value is None:
                return None  # written out as unset
            if not isinstance(value, str) or not _URL.match(value):
                raise SettingsProblem(
                    f"{setting.key} is an http(s) address (https://example.org/store/), not {value!r}", where
                )
            return value if value.endswith("/") else value + "/"
        if not isinstance(value, str) or len(value) > 200 or any(c in value for c in "\0\n\r"):
            raise SettingsProblem(f"{setting.key} is one name (a line of text), not {value!r}", where)
        return value
    if setting.key == "protected_paths":
        if not isinstance(value, list) or not all(isinstance(v, str) and _repository_path(v) for v in value):
            raise SettingsProblem(
                f"{setting.key} is a list of repository paths (a folder ends in /), not {value!r}",
                where,
                "write paths from the store's top, e.g. [mkdocs.yml, tools/]; no leading /, no . or .. parts",
            )
        return tuple(value)
    if not isinstance(value, list) or not all(isinstance(v, str) and v and "\0" not in v for v in value):
        raise SettingsProblem(f"{setting.key} is a list of branch names, not {value!r}", where)
    return tuple(value)


def _repository_path(path: str) -> bool:
    """A path a protected-paths entry may be: relative, no empty, ``.`` or ``..`` part (a
    folder ends in ``/``), no control character."""
    parts = path[:-1].split("/") if path.endswith("/") else path.split("/")
    return (
        0 < len(path) <= 400
        and not path.startswith("/")
        and all(p and p not in (".", "..") for p in parts)
        and not any(ord(c) < 32 for c in path)
    )


def is_protected(path: str, protected: tuple[str, ...] | list[str]) -> bool:
    """Whether ``path`` is one of ``protected`` (a file) or under one of them (a folder, ending in /)."""
    return any(path == p or (p.endswith("/") and path.startswith(p)) for p in protected)


def _known() -> str:
    return "known settings: " + ", ".join(s.key for s in SETTINGS)


def git_keeps(size: int, settings: Settings = DEFAULTS) -> bool:
    """The one placement rule of sidecars: one of ``size`` bytes is committed to git as a
    plain file (up to ``sidecar_git_max_bytes``), a larger one is tracked by DVC. The tools
    place by it (:mod:`eee.write.samples`, with HEAD's settings), the gate and the audit judge
    by it (with the settings of the commit before the one judged)."""
    return size <= settings.sidecar_git_max_bytes


def of_commit(repo: str | os.PathLike[str], rev: str | None) -> Settings:
    """The settings of commit ``rev`` of the repository at ``repo`` (the defaults when
    ``rev`` is None, a repository without commits, or a commit without the file);
    :class:`SettingsProblem` when the file is there but cannot be used."""
    if rev is None:
        return DEFAULTS
    from eee.git.cli import resolve
    from eee.store.tree import GitTree

    commit = resolve(f"{rev}^{{commit}}", repo)
    if commit is None:
        return DEFAULTS
    with GitTree(repo, commit) as tree:
        return read(tree)


def read(tree: Tree) -> Settings:
    """The settings of a :class:`eee.store.tree.Tree` (the defaults where it has no file);
    :class:`SettingsProblem` when the file is there but cannot be used."""
    if not tree.exists(SETTINGS_PATH):
        return DEFAULTS
    try:
        raw = tree.read(SETTINGS_PATH, EVENT_MAX_BYTES)
    except Unreadable as exc:
        raise SettingsProblem(exc.finding.message, hint=exc.finding.hint) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise SettingsProblem("not UTF-8 text", hint="save the file as UTF-8") from None
    return parse(text)
