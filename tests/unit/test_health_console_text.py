"""What the console says of queue health and its two server actions (no database): the
health tab's note, the session list's roles, and the confirmation and outcome of a
vacuum and a session cancel."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from skconsole import ops
from skconsole.read.health import Horizon
from skconsole.tui.confirmations import target_lines
from skconsole.tui.model import (
    ActionRequest,
    OutcomeInfo,
    PreviewInfo,
    QueueHealth,
    Snapshot,
    Target,
    TargetKind,
)
from skconsole.tui.sentences import outcome_text, question
from skconsole.tui.showcase.fixed_data import BLOCKER_PID, HOLDER_PID, fixed_health
from skconsole.tui.widgets.health_panel import HealthPanel, horizon_text, session_rows

STARTED = datetime(2026, 1, 1, 8, 0, tzinfo=UTC)


def _note(health: QueueHealth | None) -> str | None:
    return HealthPanel().tab_note(Snapshot(taken_at=0.0, health=health))


def test_the_tab_warns_of_a_long_held_horizon_then_of_any_advice() -> None:
    h = fixed_health()
    assert _note(None) is None  # not read yet: the plain label stays
    assert _note(QueueHealth(h, 0.0)) == "⚠ 2h"
    young = replace(h, horizon=replace(h.horizon, age_s=12.0))
    assert _note(QueueHealth(young, 0.0)) == f"⚠ {len(h.advice)}"
    calm = replace(young, advice=[])
    assert _note(QueueHealth(calm, 0.0)) == ""  # all well: the plain label again


def test_sessions_say_who_holds_the_horizon_and_whom_they_block() -> None:
    rows = {r.session.pid: r for r in session_rows(fixed_health())}
    assert rows[HOLDER_PID].holds_horizon and not rows[HOLDER_PID].blocks
    assert rows[BLOCKER_PID].blocks == (3311,) and not rows[BLOCKER_PID].holds_horizon
    assert "held 2h 03m by pid 4242, psql" in horizon_text(fixed_health())
    free = replace(fixed_health(), horizon=Horizon(None, None, None, [], [], []))
    assert horizon_text(free).startswith("xmin horizon: not held back")


def _preview(
    action: ops.OperatorAction, label: str, kind: TargetKind, params: ops.Params
) -> PreviewInfo:
    return PreviewInfo(ActionRequest(action, Target(label, kind), params), 1, ())


def test_a_vacuum_is_confirmed_and_reported_by_its_table() -> None:
    preview = _preview(
        ops.VACUUM, "sk_tasks_queue_t", TargetKind.TABLE, ops.VacuumParams("sk_tasks_queue_t")
    )
    assert question(preview).startswith("Vacuum sk_tasks_queue_t? VACUUM reads")
    lines = target_lines(
        TargetKind.TABLE,
        {"table": "sk_tasks_queue_t", "live_rows": 10, "dead_rows": 1_200, "table_bytes": 8192}
        | {"last_vacuumed": None, "vacuum_running": False, "may_vacuum": False},
    )
    assert lines[0] == "table sk_tasks_queue_t: 10 live rows, 1,200 dead, 8.0 kB"
    assert lines[1] == "last vacuumed never"
    assert "may not vacuum" in lines[-1]
    done = OutcomeInfo(preview.request, 1, 1, 0)
    assert outcome_text(done) == "Vacuumed sk_tasks_queue_t."


def test_a_session_cancel_shows_the_session_and_says_when_it_was_left_alone() -> None:
    params = ops.CancelSessionParams(4242, STARTED)
    preview = _preview(
        ops.CANCEL_SESSION, "pid 4242 (psql, user alice)", TargetKind.SESSION, params
    )
    assert question(preview).startswith("Cancel session pid 4242 (psql, user alice)? Its")
    lines = target_lines(
        TargetKind.SESSION,
        {"pid": 4242, "user": "alice", "application": "psql", "client": None}
        | {"state": "idle in transaction", "xact_age_s": 7380.0, "horizon_age": 12_000}
        | {"query": "SELECT 1", "blocks": [77], "holds_horizon": True},
    )
    assert lines[0] == "pid 4242 · user alice · application psql · client -"
    assert lines[1] == (
        "state idle in transaction · transaction open 2h 03m · 12,000 transactions back"
        " · blocks pid 77; holds the xmin horizon"
    )
    assert lines[2] == "query: SELECT 1"
    assert "ignores a cancel" in lines[3]
    done = OutcomeInfo(preview.request, 1, 1, 0)
    assert outcome_text(done) == "Cancelled the statement of pid 4242 (psql, user alice)."
    left = OutcomeInfo(preview.request, 1, 0, 0)
    assert outcome_text(left).startswith("Left alone: pid 4242 (psql, user alice) changed")
