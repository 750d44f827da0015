"""Shared helpers: the reference material (skipped when absent) and temporary stores."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

PROJECT = Path(__file__).resolve().parents[1]
EXAMPLES = Path(__file__).resolve().parent / "examples"
REFERENCE = Path(os.environ.get("EEE_REFERENCE", PROJECT.parent / "shared" / "reference"))

FIXED_UUID = "8e6f3a4e-4b7a-4d3e-9c1a-2b3c4d5e6f70"


def reference(*parts: str) -> Path:
    """A path inside ../shared/reference; the test is skipped when it is absent."""
    path = REFERENCE.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"reference material not available: {path}")
    return path


def write_json(path: Path, doc: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load_example(*parts: str) -> dict[str, Any]:
    return json.loads(EXAMPLES.joinpath(*parts).read_text(encoding="utf-8"))
