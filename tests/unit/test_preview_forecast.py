"""Which effect each action that moves jobs has on the flow, read from its preview
(skconsole.ops.forecast): the forecast every confirmation of requeue, bump, resume and
limit shows, and none for an action that moves no jobs."""

from __future__ import annotations

import pytest

from skconsole import ops
from skconsole.core.json_types import JsonObject
from skconsole.ops.forecast import effect, preview_forecast
from skconsole.read.flow import WINDOW_S, TypeFlow
from skconsole.read.forecast import Change

#: 1.5 successes a second, 30 jobs waiting (the workers are busy)
FLOW = TypeFlow("emails.send", WINDOW_S, 0, 450, 30, False, 20.0, None, False)


def preview(
    action: str,
    count: int,
    details: JsonObject | None = None,
    by_type: tuple[tuple[str, int], ...] = (),
) -> ops.Preview:
    return ops.Preview(action, ops.Selection(), count, (), None, details or {}, by_type)


def test_a_requeue_adds_its_jobs_to_each_types_backlog_with_its_spread() -> None:
    found = effect(preview("requeue", 30, {"spread_s": 600.0}, (("a", 20), ("b", 10))), {"a": 10.0})

    assert found is not None
    assert found.changes == (Change("a", added=20, rate_per_s=10.0), Change("b", added=10))
    assert (found.jobs, found.spread_s) == (30, 600.0)


def test_a_priority_bump_moves_its_jobs_ahead() -> None:
    found = effect(preview("bump", 40, {"by": 2, "to": None}, (("a", 40),)))

    assert found is not None and found.changes == (Change("a", ahead=40),)


def test_a_bump_to_run_now_makes_its_jobs_ready() -> None:
    found = effect(preview("bump", 40, {"by": None, "to": None, "now": True}, (("a", 40),)))

    assert found is not None and found.changes == (Change("a", added=40),)


def test_a_resume_frees_the_types_waiting_jobs() -> None:
    found = effect(preview("resume", 1, {"task_type": "a", "paused": True, "waiting": 400}))

    assert found is not None
    assert (found.jobs, found.changes) == (400, (Change("a", resumed=True),))


@pytest.mark.parametrize(("rate", "per_s"), [("10/s", 10.0), ("600/min", 10.0), ("5/90s", 5 / 90)])
def test_a_limit_caps_the_claim_rate_at_its_new_rate(rate: str, per_s: float) -> None:
    new: JsonObject = {"concurrency": None, "rate": rate}
    found = effect(preview("limit", 1, {"task_type": "a", "new": new, "running": 0}))

    assert found is not None
    assert found.changes == (Change("a", rate_per_s=pytest.approx(per_s)),)


def test_a_concurrency_below_the_jobs_running_scales_the_rate_down() -> None:
    new: JsonObject = {"concurrency": 4, "rate": None}
    found = effect(preview("limit", 1, {"task_type": "a", "new": new, "running": 8}))

    assert found is not None and found.changes == (Change("a", scale=0.5),)


def test_an_action_that_moves_no_jobs_has_no_forecast() -> None:
    assert preview_forecast(preview("cancel", 5, {}, (("emails.send", 5),)), [FLOW]) is None
    assert preview_forecast(preview("requeue", 0), [FLOW]) is None


def test_a_requeue_preview_forecasts_from_the_flow() -> None:
    found = preview_forecast(preview("requeue", 1284, {}, (("emails.send", 1284),)), [FLOW])

    assert found is not None
    assert found.text.startswith("1,284 jobs: the backlog clears in ~15 min")


def test_the_forecast_is_part_of_the_previews_json() -> None:
    p = preview("requeue", 1284, {}, (("emails.send", 1284),))
    found = preview_forecast(p, [FLOW])
    assert found is not None

    doc = ops.Preview(
        p.action, p.selection, p.count, (), None, {}, p.by_type, forecast=found
    ).as_dict()

    assert doc["forecast"] == found.as_dict()
    assert "forecast" not in p.as_dict()


def test_a_breaker_opening_takes_the_jobs_it_would_hold_out_of_the_backlog() -> None:
    opened = preview(
        "breaker", 1, {"task_type": "emails.send", "command": "open", "would_hold": 20}
    )

    found = effect(opened)
    assert found is not None
    assert (found.jobs, found.changes) == (20, (Change("emails.send", added=-20),))
    outlook = preview_forecast(opened, [FLOW])
    assert outlook is not None
    assert outlook.types[0].backlog == 10  # 30 waiting, 20 of them held back


def test_a_breaker_closing_gives_back_the_jobs_it_held() -> None:
    closed = preview("breaker", 1, {"task_type": "emails.send", "command": "close", "held": 400})

    found = effect(closed)
    assert found is not None
    assert (found.jobs, found.changes) == (400, (Change("emails.send", added=400),))


def test_adding_a_breaker_moves_no_job_and_has_no_forecast() -> None:
    added = preview("breaker", 1, {"task_type": "emails.send", "command": "add", "would_hold": 20})

    assert effect(added) is None
