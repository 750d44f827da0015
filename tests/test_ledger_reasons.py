"""Reasons read back (issue 13 item 8): every reason the tools accept is written so that it
reads back to the same value; what is not printable text is refused with a clear message."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import FIXED_UUID, PROJECT, commit, git, load_example, make_store, place_record
from eee.governance.events import BadText, clean_reason, dumps, load, load_text, make_event, schema_errors, write

ME = {"name": "Maintainer", "email": "maintainer@example.org"}
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
ALL = st.characters(codec=None, categories=None, exclude_categories=())  # surrogates included


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])  # no wall-clock limit
@given(
    st.text(alphabet=ALL, max_size=80)
    | st.text(alphabet=st.sampled_from("a \n\r\t\u2028\x85é\u0301#:'\"-|>&*!%@`{}[]"), max_size=30)
)
def test_every_accepted_reason_reads_back(text: str) -> None:
    try:
        reason = clean_reason(text)
    except BadText as exc:
        assert str(exc).startswith("the reason ")
        return
    assert reason == unicodedata.normalize("NFC", reason) and reason == reason.strip()
    if not reason:
        return
    bound = {"record_path": f"data/b/d/m/{FIXED_UUID}.json", "sha256": "0" * 64}
    event = make_event("flag", FIXED_UUID, reason, ME, rule="score", path="$.x", now=T0, **bound)
    assert load_text(dumps(event)) == event
    assert schema_errors(event) == []


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])  # no wall-clock limit
@given(st.binary(max_size=40))
def test_bytes_are_utf8_or_refused(data: bytes) -> None:
    try:
        reason = clean_reason(data)
    except BadText as exc:
        assert "the reason" in str(exc)
        return
    assert reason == clean_reason(data.decode("utf-8"))


def test_written_events_read_back_from_disk(tmp_path: Path) -> None:
    for reason in [
        "two\nlines",
        "  trailing space \n next",
        "- a list?",
        "key: value",
        "'quoted'",
        "e\u0301",
        "# hash",
        "|",
    ]:
        event = make_event("retract", FIXED_UUID, clean_reason(reason), ME, now=T0)
        assert load(write(tmp_path, event)) == event


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("bell\x07", "control character U+0007"),
        ("del\x7f", "control character U+007F"),
        ("nel\x85", "control character U+0085"),
        ("ls\u2028", "U+2028"),
        ("ps\u2029", "U+2029"),
        ("bidi\u202e", "invisible control U+202E"),
        ("bom\ufeff", "U+FEFF"),
        ("lone\ud800", "not valid UTF-8"),
        (b"latin1 \xe9", "not valid UTF-8 text (byte 0xe9)"),
        ("tab\there", "U+0009"),
    ],
)
def test_refusals_name_the_character(text: str | bytes, message: str) -> None:
    with pytest.raises(BadText) as exc:
        clean_reason(text)
    assert message in str(exc.value)


def test_nfc_and_newlines_are_normalised() -> None:
    assert clean_reason("Cafe\u0301\r\nline\rthree  ") == "Caf\u00e9\nline\nthree"


@pytest.mark.slow
def test_tool_refuses_a_non_utf8_reason_and_the_ledger_stays_readable(tmp_path: Path) -> None:
    repo = make_store(tmp_path)
    place_record(repo, load_example("aggregate", "valid", "v0.3.0_perplexity_unbounded.json"))
    git(repo, "add", "-A")
    assert commit(repo, "a record").returncode == 0
    env = {**os.environ, "EEE_PYTHON": sys.executable}
    tool = str(PROJECT / "tools" / "retract")
    bad = subprocess.run(
        [sys.executable, tool, FIXED_UUID, "--reason", b"caf\xe9"], cwd=repo, capture_output=True, env=env
    )
    assert bad.returncode == 1 and b"not valid UTF-8 text (byte 0xe9)" in bad.stderr and b"Traceback" not in bad.stderr
    ok = subprocess.run(
        [sys.executable, tool, FIXED_UUID, "--reason", 'two\nlines: with "quotes" and caf\u00e9', "--commit"],
        cwd=repo,
        capture_output=True,
        env=env,
    )
    assert ok.returncode == 0, ok.stderr
    status = subprocess.run(
        [sys.executable, str(PROJECT / "tools" / "status"), FIXED_UUID[:8]],
        cwd=repo,
        capture_output=True,
        env=env,
        text=True,
    )
    assert status.returncode == 0 and 'two\n      lines: with "quotes" and caf\u00e9' in status.stdout
