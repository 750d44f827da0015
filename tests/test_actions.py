"""Each governance action is declared as one unit (issue 34, item 5): an action declared in
one place, :func:`eee.governance.declare`, is found in ``eee --help``, the governance card,
the audit's rules (the table of who may take which act it judges by) and the site's page
of the card; undeclared, it is gone from all four, and the card is the committed one again.

The event schema's ``action`` enum is a released schema and does not change with a
declaration: an event of a new action is written only once a new event schema version
names it (the last test holds that).
"""

from __future__ import annotations

import datetime as dt
import json

import pytest

import eee.governance as governance
from conftest import FIXED_UUID, PROJECT, git, make_store, place_record, record_of
from eee import cli
from eee.governance import card
from eee.governance.events import make_event
from eee.governance.lifecycle import LIFECYCLES, MACHINE, Step, card_table, step
from eee.rules.authority import Act, needing_a_role
from eee.rules.fold import fold
from eee.site import included
from eee.site.context import SiteContext
from eee.store.schemas import Registry

EMBARGO = governance.Action(
    "embargo", "embargo", "hold a record back until a date (governance event)",
    "Hold a record back until a date.", "Embargo", "1.3.0", "required",
    role=governance.ANYONE, what="embargo a record until a date (an event)",
    options=(governance.Option("--until", "until", "DATE", "the day the record is shown again", required=True),),
)  # fmt: skip
ROW = "| `embargo` | anyone | embargo a record until a date (an event) |"


def _card() -> str:
    return (PROJECT / card.CARD).read_text(encoding="utf-8")


def _site_card() -> str:
    ctx = SiteContext(root=PROJECT, registry=Registry.load(PROJECT / "schemas"))
    return included.page(ctx, card.CARD, set(included.sources(PROJECT)))


def _help(capsys: pytest.CaptureFixture[str]) -> str:
    assert cli.main(["--help"]) == 0
    return capsys.readouterr().out


def test_an_action_declared_in_one_place_is_found_in_help_the_card_the_audit_and_the_site(
    capsys: pytest.CaptureFixture[str],
) -> None:
    site_before = _site_card()
    assert card.render(_card()) == _card()  # the committed card is what the declarations render
    event = Act("embargo", "governance/events/x.yaml", "aaaaaaaa-0000-4000-8000-000000000001")
    with governance.declare(EMBARGO):
        # eee --help, and the command itself
        listed = _help(capsys)
        assert "  embargo " in listed and "hold a record back until a date (governance event)" in listed
        assert cli.main(["embargo", "--help"]) == 0
        page = capsys.readouterr().out
        assert "usage: eee embargo" in page and "--until DATE" in page and "the day the record is shown again" in page
        assert cli.main(["embargo", "aaaaaaaa", "--reason", "x", "--reference", "https://example.org/1"]) == 64
        assert "--until" in capsys.readouterr().err  # its declared option is required
        # the governance card: its table of authority, anyone's acts first
        rendered = card.render(_card())
        assert ROW in rendered.splitlines()
        rows = [line for line in rendered.splitlines() if line.startswith("| `")]
        assert rows[:3] == [
            "| `add` | anyone | add records and their sidecars (data/) |",
            "| `dispute` | anyone | raise a dispute (an event) |",
            ROW,
        ]
        assert rendered.replace(ROW + "\n", "") == _card()  # one row more, nothing else
        # the audit's rules: the table it judges commits by
        assert governance.AUTHORITY_BY_ACT["embargo"].role == governance.ANYONE
        assert governance.role_for("embargo") == governance.ANYONE and needing_a_role([event]) == []
        assert event.what() == "embargo a record until a date (an event)"
        # the site's page of the card
        site = _site_card()
        assert ROW in site.splitlines() and site.replace(ROW + "\n", "") == site_before
        with pytest.raises(ValueError, match="declared"), governance.declare(EMBARGO._replace(command="hold")):
            pass  # one declaration per name
    # undeclared: gone from all four
    assert "embargo" not in _help(capsys) and "embargo" not in cli.commands()
    assert card.render(_card()) == _card() and _site_card() == site_before
    assert "embargo" not in governance.AUTHORITY_BY_ACT and governance.role_for("embargo") == governance.MAINTAINER
    assert needing_a_role([event]) == [event] and event.what() == "change a governance event file"
    assert [a.name for a in governance.ACTIONS] == list(governance.ACTION_NAMES)
    assert "embargo" not in governance.BY_NAME and "embargo" not in governance.BY_COMMAND


def test_a_declaration_changes_no_released_event_schema() -> None:
    """The released event schemas' ``action`` enums are the actions of their versions: a new
    action needs a new event schema version before an event of it can be written."""
    with governance.declare(EMBARGO):
        for version in governance.EVENT_SCHEMA_VERSIONS:
            folder = PROJECT / "schemas" / "governance" / ("" if version == "1.0.0" else version)  # 1.0.0 at the top
            schema = json.loads((folder / "event.schema.json").read_text(encoding="utf-8"))
            enum = schema["properties"]["action"]["enum"]
            assert "embargo" not in enum and set(enum) == set(governance.ACTIONS_IN[version])


def test_the_fold_knows_a_declared_action_and_refuses_it_without_steps() -> None:
    """The fold reads the actions declared when it runs: an event of an undeclared action is
    unknown; a declared action that declares no step of the state machine is refused for
    that reason, never a crash (its steps and effects are not yet part of a declaration)."""
    record = "aaaaaaaa-0000-4000-8000-000000000001"
    me = {"name": "Maintainer", "email": "maintainer@example.org"}
    event = make_event("retract", record, "held back", me) | {"action": "embargo"}

    def problem() -> str:
        ((_, found),) = fold([event]).problems
        return str(found)

    assert "unknown action 'embargo'" in problem()
    with governance.declare(EMBARGO):
        assert "declares no step of the state machine for a record that is active" in problem()
        assert not step("active", (), "embargo").allowed
    assert "unknown action 'embargo'" in problem()


def test_an_action_declared_with_its_steps_is_folded_and_shown_in_the_card_s_state_machine() -> None:
    """Its rows of the state machine are part of the one declaration: the fold accepts and
    refuses its events as they say, the card's state machine shows its column; undeclared,
    the machine and the card are as committed."""
    record, other = "aaaaaaaa-0000-4000-8000-000000000001", "bbbbbbbb-0000-4000-8000-000000000002"
    me = {"name": "Maintainer", "email": "maintainer@example.org"}
    steps = {
        lifecycle: Step(False, None, "record {uuid} does not stand; there is nothing to hold back")
        for lifecycle in LIFECYCLES
    }
    steps["active"] = Step(True, None, "held back")
    machine, table = dict(MACHINE), card_table()
    t0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)  # events in order: the retraction first
    retract = make_event("retract", other, "faulty", me, now=t0)
    embargo = [
        make_event("retract", r, "held back", me, now=t0 + dt.timedelta(minutes=1)) | {"action": "embargo"}
        for r in (record, other)
    ]
    with governance.declare(EMBARGO, steps=steps):
        ledger = fold([retract, *embargo])
        assert [e["record"] for e in ledger.state(record).history] == [record]  # accepted, applied
        assert ledger.state(record).status == "active"  # the step changes no lifecycle
        ((refused, why),) = ledger.problems
        assert refused["record"] == other and f"record {other} does not stand" in str(why)
        shown = card_table()
        assert shown.startswith(table.split("\n\n[")[0]) and "| status | embargo |" in shown
        assert "| active | → active |" in shown and "| retracted | refused |" in shown
        assert "- embargo, retracted: record R does not stand; there is nothing to hold back." in shown
        with (
            pytest.raises(ValueError, match="lifecycles"),
            governance.declare(EMBARGO._replace(name="hold", command="hold"), steps={"active": steps["active"]}),
        ):
            pass
    assert machine == MACHINE and card_table() == table
    assert card.render(_card()) == _card()


def test_a_declared_action_s_command_is_refused_for_its_event_schema_and_writes_nothing(
    tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Run with its own options, a declared action's command ends in one refusal that names
    what is missing (an event schema version naming the action), never a traceback, and
    writes nothing: no event, no commit."""
    store = make_store(tmp_path, hooks=False)
    place_record(store, record_of("acme/widget-7b", 0.5))
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "a record")
    head = git(store, "rev-parse", "HEAD").stdout
    argv = ["embargo", FIXED_UUID[:8], "--until", "2027-01-01", "--reason", "held back", "--store", str(store)]
    with governance.declare(EMBARGO):
        code = cli.main([*argv, "--reference", "https://example.org/1", "--commit"])
    out, err = capsys.readouterr()
    assert code == 1, out + err
    assert "no event schema names the action embargo" in err and "release an event schema version" in err
    assert "Traceback" not in out + err
    assert not (store / "governance" / "events").exists() or not any((store / "governance" / "events").iterdir())
    assert git(store, "rev-parse", "HEAD").stdout == head
    assert git(store, "status", "--porcelain").stdout == ""
