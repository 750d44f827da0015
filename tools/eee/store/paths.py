"""Path rules of the store: layout, uuids, portable names, canonical folders.

Pure functions over strings; nothing here touches the file system except
:func:`find_store_root`.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache

DATA_DIR = "data"
RECORD_SUFFIX = ".json"
SIDECAR_SUFFIX = "_samples.jsonl"
POINTER_SUFFIX = ".dvc"
EVENTS_DIR = "governance/events"
EVENT_SUFFIX = ".yaml"  # one file per event: governance/events/<id>.yaml
IMPORTS_DIR = "governance/imports"
MANIFEST_SUFFIX = ".yaml"  # one manifest per import: governance/imports/<id>.yaml
EXPERIMENTS_DIR = "governance/experiments"
CARD_SUFFIX = ".yaml"  # one experiment card per file: governance/experiments/<id>.yaml

# The kinds of file of a store (:func:`file_kind`).
RECORD, SIDECAR, DVC_POINTER, EVENT, OTHER = "record", "sidecar", "dvc-pointer", "event", "other"

UUID4_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
_UUID_ANY_RE = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")

_FORBIDDEN_CHARS = set('<>:"\\|?*')
_WINDOWS_RESERVED = {"CON", "PRN", "AUX", "NUL"} | {f"COM{i}" for i in range(1, 10)} | {f"LPT{i}" for i in range(1, 10)}
_UNPORTABLE_RE = re.compile(r'[<>:"\\|?*\x00-\x1f\x7f/]')
_BAD_RE = re.compile(r'[<>:"\\|?*\x00-\x1f\x7f]')  # what component_problem names, found at C speed


def new_uuid() -> str:
    """A fresh lowercase canonical UUID v4."""
    import uuid  # lazy: uuid imports platform (~10 ms); only a new record needs it

    return str(uuid.uuid4())


def uuid_problem(text: str) -> str | None:
    """Why ``text`` is not a lowercase canonical UUID v4, or None when it is."""
    if UUID4_RE.match(text):
        return None
    if _UUID_ANY_RE.match(text):
        if text != text.lower():
            return f"uuid {text!r} has uppercase letters; use {text.lower()!r}"
        return f"{text!r} is a UUID but not version 4 (the 13th digit must be 4 and the 17th one of 8, 9, a, b)"
    return f"{text!r} is not a canonical UUID v4 (xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx, lowercase hex)"


# Characters that do not show, or reorder what is shown, besides Unicode's format (Cf),
# control, surrogate, private-use and unassigned categories: Unicode's default-ignorable
# code points (fillers, variation selectors, tag characters, ...).
_INVISIBLE_RANGES = (
    (0x00AD, 0x00AD),  # soft hyphen
    (0x034F, 0x034F),  # combining grapheme joiner
    (0x061C, 0x061C),  # Arabic letter mark
    (0x115F, 0x1160),  # Hangul fillers
    (0x17B4, 0x17B5),  # Khmer inherent vowels
    (0x180B, 0x180F),  # Mongolian variation selectors and vowel separator
    (0x200B, 0x200F),  # zero-width space/joiners, left-to-right and right-to-left marks
    (0x202A, 0x202E),  # bidirectional embeddings and overrides
    (0x2060, 0x206F),  # word joiner, invisible operators, bidirectional isolates (U+2066..U+2069)
    (0x2800, 0x2800),  # braille blank
    (0x3164, 0x3164),  # Hangul filler
    (0xFE00, 0xFE0F),  # variation selectors
    (0xFEFF, 0xFEFF),  # zero-width no-break space (byte order mark)
    (0xFFA0, 0xFFA0),  # halfwidth Hangul filler
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),  # shorthand format controls
    (0x1D173, 0x1D17A),  # musical format controls
    (0xE0000, 0xE0FFF),  # tags and variation selectors supplement
)
_REFUSED_CATEGORIES = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"}


def _invisible(c: str) -> bool:
    if c == " ":
        return False  # an ordinary space inside a name is portable (a trailing one is not)
    import unicodedata

    if unicodedata.category(c) in _REFUSED_CATEGORIES:
        return True
    code = ord(c)
    return any(lo <= code <= hi for lo, hi in _INVISIBLE_RANGES)


def char_name(c: str) -> str:
    """``U+202E RIGHT-TO-LEFT OVERRIDE``: a character as a hint names it."""
    import unicodedata

    code = ord(c)
    if 0xD800 <= code <= 0xDFFF:
        return f"U+{code:04X} (a lone surrogate: the name is not valid UTF-8)"
    name = unicodedata.name(c, "") or {0x7F: "DELETE"}.get(code, "")
    if not name and code < 32:
        name = "control character"
    return f"U+{code:04X} {name}".rstrip()


def _unshowable(c: str) -> bool:
    return c < " " or c == "\x7f" or (not c.isascii() and _invisible(c))


def name_problem(name: str) -> str | None:
    """Why a name read from elsewhere (a source tree, a journal) cannot be used nor shown as
    it is, or None: a byte that is not UTF-8 (read as a lone surrogate), a control,
    invisible or bidirectional character. The name is shown :func:`escaped`."""
    if name.isascii() and name.isprintable():
        return None
    bad = sorted({c for c in name if _unshowable(c)})
    if not bad:
        return None
    named = ", ".join(char_name(c) for c in bad[:3]) + (", ..." if len(bad) > 3 else "")
    return f"the name {escaped(name)} holds {named}"


def escaped(name: str, quote: bool = True) -> str:
    """``name`` with every character :func:`name_problem` names escaped (``\\x01``,
    ``\\u202e``; a byte that is not UTF-8 as ``\\xff``); with ``quote``, in double quotes,
    a backslash and a quote escaped too (so that the escapes read back unambiguously)."""
    out = []
    for c in name:
        code = ord(c)
        if quote and c in '\\"':
            out.append("\\" + c)
        elif 0xDC80 <= code <= 0xDCFF:  # a byte read with surrogateescape
            out.append(f"\\x{code - 0xDC00:02x}")
        elif _unshowable(c):
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
        else:
            out.append(c)
    return '"' + "".join(out) + '"' if quote else "".join(out)


def name_key(name: str) -> str:
    """What a file system that ignores case and Unicode normalisation (macOS, Windows) sees:
    two names with the same key are one folder there."""
    import unicodedata

    return unicodedata.normalize("NFC", unicodedata.normalize("NFD", name).casefold())


def _is_dotgit(part: str) -> bool:
    """``.git`` as some file system would read it: any case, trailing dots or spaces
    (Windows), ignorable characters (macOS), the 8.3 short name ``git~1``."""
    bare = "".join(c for c in part if not _invisible(c)) if not part.isascii() else part
    bare = bare.rstrip(". ").casefold()
    return bare in (".git", "git~1")


def tree_path_problem(path: str) -> str | None:
    """Why a path read from a git tree cannot name a file of the store, or None.

    git trees can be crafted (``git mktree``, ``git hash-object -w``) to hold entries that
    no checkout would write: ``..``, ``.``, ``.git``, empty or absolute components. The
    audit reports such a path as a finding and never uses it as a file name."""
    if not path:
        return "an empty path"
    if path.startswith("/"):
        return f"{path!r} is an absolute path"
    if "\\" in path:
        return f"{path!r} contains a backslash, a path separator on Windows"
    for part in path.split("/"):
        if part == "":
            return f"{path!r} has an empty component"
        if part in (".", ".."):
            return f"{path!r} has a {part!r} component"
        if _is_dotgit(part):
            return f"{path!r} has a {part!r} component (git's own folder)"
    return None


def clash_text(name: str, other: str) -> str:
    """How two names with the same :func:`name_key` differ, for a message."""
    import unicodedata

    if unicodedata.normalize("NFC", name) == unicodedata.normalize("NFC", other):
        return "is another Unicode spelling (NFC/NFD) of"
    return "differs only in letter case from"


@lru_cache(maxsize=65536)
def component_problem(name: str) -> str | None:
    """Why one path component is not portable across file systems, or None.

    Besides the characters Windows forbids: a name must be NFC (macOS stores NFD, so two
    spellings of one name would be one folder there, two in git), and must not hold
    invisible or bidirectional control characters (a name that looks like another)."""
    if name in ("", ".", ".."):
        return f"path component {name!r} is not allowed"
    bad = (
        sorted({c for c in name if c in _FORBIDDEN_CHARS or ord(c) < 32 or ord(c) == 127})
        if _BAD_RE.search(name)
        else []
    )
    if bad:
        shown = ", ".join(repr(c) for c in bad)
        return f"path component {name!r} contains characters that are not portable ({shown})"
    if not name.isascii():
        hidden = sorted({c for c in name if _invisible(c)})
        if hidden:
            shown = ", ".join(char_name(c) for c in hidden)
            return (
                f"path component {name!r} contains invisible or bidirectional control characters ({shown}); "
                "the name would look like another"
            )
        import unicodedata

        if not unicodedata.is_normalized("NFC", name):
            nfc = unicodedata.normalize("NFC", name)
            return (
                f"path component {name!a} is not in Unicode NFC form (it is spelled with combining characters; "
                f"write it as {nfc!a}): macOS takes the two spellings for one name, git for two"
            )
    if name[-1] in ". ":
        return f"path component {name!r} ends with a dot or a space, which Windows drops"
    stem = name.split(".", 1)[0].upper()
    if stem in _WINDOWS_RESERVED:
        return f"path component {name!r} is a reserved device name on Windows ({stem})"
    return None


# A name portable_component leaves as it is: ASCII letters, digits, '_', '-' and '.', not
# ending in '.', not a Windows device name, not "data" (one match instead of the steps).
_PORTABLE = re.compile(
    r"(?!(?i:con|prn|aux|nul|com[1-9]|lpt[1-9])(?:\.|\Z))(?!(?i:data)\Z)[A-Za-z0-9_.\-]*[A-Za-z0-9_\-]"
)


def portable_component(name: str) -> str:
    """Turn free text (a model id part) into a portable folder name."""
    if _PORTABLE.fullmatch(name):
        return name
    import unicodedata

    out = unicodedata.normalize("NFC", name.strip())
    if not out.isascii():
        out = "".join("-" if _invisible(c) else c for c in out)
    out = _UNPORTABLE_RE.sub("-", out)
    out = out.rstrip(". ") or "unknown"
    if out.split(".", 1)[0].upper() in _WINDOWS_RESERVED:
        out = "_" + out
    if out in (".", ".."):
        out = out.replace(".", "_")
    if out.casefold() == DATA_DIR:
        out += "_"  # reserved: see layout_problems
    return out


def canonical_folders(model_id: str) -> tuple[str, str] | None:
    """The ``<developer>/<model>`` folders for a ``model_info.id``.

    The developer is the text before the first ``/``; the model is the rest, any further
    ``/`` replaced by ``_`` (``openai/azure/gpt-4o`` -> ``openai``, ``azure_gpt-4o``), and
    characters that are not portable replaced by ``-`` (``qwen2.5:0.5b`` -> ``qwen2.5-0.5b``).
    None when the id has no developer part.
    """
    if "/" not in model_id:
        return None
    developer, model = model_id.split("/", 1)
    if not developer.strip() or not model.strip():
        return None
    return portable_component(developer), portable_component(model.replace("/", "_"))


def canonical_record_path(benchmark: str, model_id: str, record_uuid: str) -> str:
    folders = canonical_folders(model_id)
    if folders is None:
        raise ValueError(f"model_info.id {model_id!r} is not of the form developer/model")
    return f"{DATA_DIR}/{portable_component(benchmark)}/{folders[0]}/{folders[1]}/{record_uuid}{RECORD_SUFFIX}"


def sidecar_path_for(record_path: str) -> str:
    """``.../<uuid>.json`` -> ``.../<uuid>_samples.jsonl`` (any separator)."""
    return record_path[: -len(RECORD_SUFFIX)] + SIDECAR_SUFFIX


def record_path_for_sidecar(sidecar_path: str) -> str:
    """``.../<uuid>_samples.jsonl`` -> ``.../<uuid>.json`` (any separator)."""
    return sidecar_path[: -len(SIDECAR_SUFFIX)] + RECORD_SUFFIX


class StorePath:
    """A file's place in the store, parsed from its path relative to the store root.

    ``rel`` is POSIX and relative to the store root (``data/b/d/m/<uuid>.json``); ``kind``
    is record, sidecar, pointer or other.
    """

    __slots__ = ("benchmark", "developer", "kind", "model", "rel", "uuid")

    def __init__(
        self,
        rel: str,
        kind: str,
        benchmark: str | None = None,
        developer: str | None = None,
        model: str | None = None,
        uuid: str | None = None,
    ) -> None:
        self.rel = rel
        self.kind = kind
        self.benchmark = benchmark
        self.developer = developer
        self.model = model
        self.uuid = uuid


_STEM = {RECORD: RECORD_SUFFIX, SIDECAR: SIDECAR_SUFFIX, DVC_POINTER: SIDECAR_SUFFIX + POINTER_SUFFIX}


def file_kind(rel: str) -> str:
    """The one answer to "what is this file?" for a store-relative (or absolute) path:
    a governance event (``.yaml`` under ``governance/events/``), a DVC pointer of a
    sidecar, a sidecar, a record, or other."""
    if rel.endswith(EVENT_SUFFIX) and (rel.startswith(EVENTS_DIR + "/") or "/" + EVENTS_DIR + "/" in rel):
        return EVENT
    if rel.endswith(SIDECAR_SUFFIX + POINTER_SUFFIX):
        return DVC_POINTER
    if rel.endswith(SIDECAR_SUFFIX):
        return SIDECAR
    if rel.endswith(RECORD_SUFFIX):
        return RECORD
    return OTHER


def classify(rel: str) -> StorePath:
    parts = rel.split("/")
    name = parts[-1]
    kind = file_kind(name)
    if kind not in _STEM:
        return StorePath(rel, OTHER)
    stem = name[: -len(_STEM[kind])]
    if len(parts) == 5 and parts[0] == DATA_DIR:
        return StorePath(rel, kind, parts[1], parts[2], parts[3], stem)
    return StorePath(rel, kind, uuid=stem)


# A path none of the rules below can find fault with, as nearly every path of a store is:
# data/, three ASCII folders of letters, digits, '_', '-' and '.' (not ending in '.', not a
# Windows device name, not "data"), a lowercase uuid4 and a store suffix. One match at C
# speed instead of the walk over the components.
_FOLDER = r"(?!(?i:con|prn|aux|nul|com[1-9]|lpt[1-9])[./])(?!(?i:data)/)[A-Za-z0-9_.\-]*[A-Za-z0-9_\-]/"
_PLAIN = re.compile(
    rf"{DATA_DIR}/(?:{_FOLDER}){{3}}[0-9a-f]{{8}}-[0-9a-f]{{4}}-4[0-9a-f]{{3}}-[89ab][0-9a-f]{{3}}-[0-9a-f]{{12}}"
    r"(?:\.json|_samples\.jsonl(?:\.dvc)?)"
)


def layout_problems(rel: str, sp: StorePath | None = None) -> list[tuple[str, str]]:
    """Problems with a data file's path: a list of (message, hint)."""
    if _PLAIN.fullmatch(rel):
        return []
    out: list[tuple[str, str]] = []
    parts = rel.split("/")
    sp = sp or classify(rel)
    if parts[0] != DATA_DIR:
        return [(f"{rel} is not under {DATA_DIR}/", "records live at data/<benchmark>/<developer>/<model>/<uuid>.json")]
    for i, comp in enumerate(parts[1:], start=1):
        problem = component_problem(comp)
        if problem:
            out.append((problem, "rename it using letters, digits, '-', '_' and '.' only"))
        elif i < len(parts) - 1 and comp.casefold() == DATA_DIR:
            what = {1: "benchmark", 2: "developer", 3: "model"}.get(i, "folder")
            out.append(
                (
                    f"a {what} folder named {comp!r} is reserved: {DATA_DIR!r} names the store's record folder, "
                    "and a second one below it makes the store root ambiguous",
                    f"rename the folder (for example {comp + '_'!r}); converters write {DATA_DIR + '_'!r} "
                    "for a benchmark, developer or model called data",
                )
            )
    if sp.kind == "other":
        if parts[-1] != ".gitignore":
            out.append(
                (
                    f"unexpected file {parts[-1]!r} in the data folder",
                    "data/ holds only <uuid>.json records, <uuid>_samples.jsonl sidecars and their .dvc pointers",
                )
            )
        return out
    if len(parts) != 5:
        what = {RECORD: "<uuid>.json", SIDECAR: "<uuid>_samples.jsonl", DVC_POINTER: "<uuid>_samples.jsonl.dvc"}[
            sp.kind
        ]
        out.append(
            (
                f"wrong depth: {len(parts) - 1} levels under data/, expected 4 (data/<benchmark>/<developer>/<model>/{what})",
                "move the file to data/<benchmark>/<developer>/<model>/ with <developer>/<model> taken from model_info.id",
            )
        )
    problem = None if UUID4_RE.match(sp.uuid or "") else uuid_problem(sp.uuid or "")
    if problem:
        hint = "name the file after a fresh lowercase uuid4 (python -c 'import uuid; print(uuid.uuid4())')"
        if sp.uuid and sp.uuid.lower() != sp.uuid and UUID4_RE.match(sp.uuid.lower()):
            hint = f"rename it to {sp.uuid.lower()}{parts[-1][len(sp.uuid) :]}"
        out.append((f"file name: {problem}", hint))
    return out


@lru_cache(maxsize=4096)
def _is_git_root(directory: str) -> bool:
    return os.path.exists(os.path.join(directory, ".git"))


def find_store_root(path: str | os.PathLike[str]) -> str | None:
    """The store root a data file belongs to: the folder holding its ``data/``.

    The same answer inside and outside a git checkout (a store copied out of git validates
    the same): among the ancestors named ``data``, the one whose file sits at the record
    depth (``data/<benchmark>/<developer>/<model>/<file>``) wins; ``data`` is reserved as a
    benchmark, developer or model name, so there is at most one. A file at another depth
    belongs to the nearest git work tree whose ``data/`` holds it, else to the innermost
    ``data`` folder.
    """
    parts = os.path.abspath(path).split(os.sep)
    candidates = [i for i in range(1, len(parts) - 1) if parts[i] == DATA_DIR]
    if not candidates:
        return None
    for i in candidates:
        if len(parts) - i == 5:
            return os.sep.join(parts[:i]) or os.sep
    for i in reversed(candidates):
        ancestor = os.sep.join(parts[:i]) or os.sep
        if _is_git_root(ancestor):
            return ancestor
    return os.sep.join(parts[: candidates[-1]]) or os.sep
