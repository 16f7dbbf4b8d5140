"""Rules of the console that need neither a database nor a running app: its key registry,
the limit screen's fields, the demo's mix of jobs."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from skconsole.core.errors import ConfigError
from skconsole.demo.scenario import (
    initial_jobs,
    trickle_jobs,
)
from skconsole.ops import LimitParams, Rate
from skconsole.read import TypeLimit
from skconsole.tui import actions
from skconsole.tui.app import ConsoleApp
from skconsole.tui.navigation import Navigator
from skconsole.tui.screens.limit_type import params_from


def test_registry_generates_bindings_for_every_action() -> None:
    keys = [b.key for b in actions.bindings()]
    assert len(keys) == len(set(keys)) == len(actions.ACTIONS)
    for spec in actions.ACTIONS:
        name = spec.action.split("(")[0]
        assert callable(getattr(ConsoleApp, f"action_{name}", None)), spec.id
        if spec.navigates:
            assert callable(getattr(Navigator, spec.id, None)), spec.id
        if spec.destructive:
            assert spec.needs_write


def test_check_action_finds_every_spec_from_the_action_textual_passes_it() -> None:
    """What hides or dims a key (``check_action``) gets Textual's parsed action: every
    spec's own action string, parsed, names that spec."""
    for spec in actions.ACTIONS:
        name, _, rest = spec.action.partition("(")
        parameters = (rest.rstrip(")").strip("'"),) if rest else ()
        assert actions.spec_for(name, parameters) is spec, spec.action


LIMITED = TypeLimit("t", 2, 10, 60.0, 0)


def test_an_emptied_field_clears_that_limit() -> None:
    assert params_from("", "10/min", LIMITED) == LimitParams(clear_concurrency=True)


def test_an_unchanged_field_is_left_alone() -> None:
    assert params_from("4", "10/min", LIMITED) == LimitParams(concurrency=4)


def test_a_new_rate_is_set() -> None:
    assert params_from("2", "5/s", LIMITED) == LimitParams(rate=Rate(5, 1.0))


@pytest.mark.parametrize(
    ("conc", "rate", "message"),
    [("2", "10/min", "nothing to change"), ("two", "", "whole number"), ("", "9/h", "--rate")],
)
def test_the_limit_screen_refuses_what_it_cannot_set(conc: str, rate: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        params_from(conc, rate, LIMITED)


def test_the_initial_mix_is_realistic() -> None:
    jobs = initial_jobs(random.Random(7))
    types = Counter(j.task_type for j in jobs)
    assert set(types) == {
        "demo.sleep",
        "demo.sleep_sync",
        "demo.flaky",
        "demo.fail",
        "demo.fatal",
        "demo.noop",
        "demo.order.validate",
    }
    assert 800 <= len(jobs) <= 1000
    assert len({j.priority for j in jobs}) >= 4
    assert sum(1 for j in jobs if j.delay > 0) >= 50  # delayed jobs: "scheduled"
    kinds = {j.payload["kind"] for j in jobs if j.task_type == "demo.fail"}
    assert kinds == {"timeout", "declined", "keyerror", "value"}  # distinct failure groups
    later = Counter(j.task_type for j in trickle_jobs(random.Random(1), 2000))
    assert later["demo.hang"] > 0 and later["demo.fail"] > 0 and later["demo.sleep"] > 500
