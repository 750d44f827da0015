"""Near-miss matching of the identity registry: the normalised key of a spelling (case and
punctuation aside) and the keys one letter from it (one deleted, two swapped), the blocks
:meth:`eee.store.identity.model.Table.near` looks up instead of comparing every pair."""

from __future__ import annotations

import re
from collections.abc import Iterator

NEAR_MIN = 6  # keys shorter than this have no near misses (gpt-4o, qwen: too many neighbours)


_ASCII_KEY = re.compile(r"[^a-z0-9]+")


def key(name: str) -> str:
    """A name as the registry compares spellings: letters and digits only, case folded,
    accents dropped (``AlephAlpha``, ``aleph-alpha`` and ``Aleph_Alpha`` are one key)."""
    if name.isascii():
        return _ASCII_KEY.sub("", name.lower())
    import unicodedata

    return "".join(c for c in unicodedata.normalize("NFKD", name.casefold()) if c.isalnum())


def deletions(k: str) -> Iterator[str]:
    """``k`` with one letter (never a digit) left out: the blocks of the near-miss search."""
    for i, c in enumerate(k):
        if c.isalpha() and (i == 0 or k[i - 1] != c):  # a doubled letter gives one deletion
            yield k[:i] + k[i + 1 :]


def swaps(k: str) -> Iterator[str]:
    for i in range(len(k) - 1):
        a, b = k[i], k[i + 1]
        if a != b and a.isalpha() and b.isalpha():
            yield k[:i] + b + a + k[i + 2 :]
