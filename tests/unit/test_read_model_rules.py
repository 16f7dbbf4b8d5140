"""Rules of the read models that need no database: defaults, and the arithmetic they do on
what they read."""

from __future__ import annotations

from skconsole.core.hung import HungPolicy
from skconsole.ops import Actor
from skconsole.read import Metric, MetricsSnapshot, metric_rates


def _snap(values: dict[str, int]) -> MetricsSnapshot:
    return MetricsSnapshot(tuple(Metric("c", k, v, 1, None) for k, v in values.items()))


def test_the_operators_max_attempts_default_is_the_engines() -> None:
    from skconsole.ops.reap import DEFAULT_MAX_ATTEMPTS
    from skconsole.worker.registry import TaskOptions

    assert TaskOptions().max_attempts == DEFAULT_MAX_ATTEMPTS


def test_a_worker_judges_no_unowned_job_unless_told() -> None:
    """A job with no owner recorded is a Stakhanovise.NET consumer's: the console and the
    operator judge it by how long it runs (an hour by default), a worker never by default."""
    from skconsole.worker.engine import WorkerConfig

    assert WorkerConfig().unowned_after is None
    assert HungPolicy().unowned_after_s == 3600.0


def test_metric_rates_divide_the_increase_by_the_elapsed_time() -> None:
    rates = metric_rates(_snap({"a": 10, "b": 5}), _snap({"a": 30, "b": 5}), 4.0)
    assert rates == {"a": 5.0, "b": 0.0}


def test_metric_rates_are_unknown_for_new_or_reset_metrics_or_no_time() -> None:
    before, after = _snap({"a": 10, "b": 5}), _snap({"a": 3, "b": 6, "c": 1})
    assert metric_rates(before, after, 1.0) == {"a": None, "b": 1.0, "c": None}
    assert metric_rates(before, after, 0.0) == {"a": None, "b": None, "c": None}


def test_the_actor_is_the_os_user_and_host() -> None:
    actor = Actor.current()
    assert actor.user and actor.host
