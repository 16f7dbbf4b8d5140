"""Task options: retry_on= / fatal_on= exception classes and a backoff= number or callable."""

from __future__ import annotations

import math
from typing import Any

import pytest

from skconsole.core.errors import ConfigError
from skconsole.worker.registry import BackoffError, TaskOptions, TaskRegistry


class Transient(Exception):
    pass


class Flaky(Transient):
    pass


class Broken(Exception):
    pass


def test_a_number_backoff_doubles_each_retry_up_to_max_backoff() -> None:
    options = TaskOptions(backoff=2.0, max_backoff=5.0)
    assert [options.retry_delay(n) for n in (1, 2, 3)] == [2.0, 4.0, 5.0]


def test_a_callable_backoff_is_called_with_the_failed_attempts_and_capped_by_max_backoff() -> None:
    options = TaskOptions(backoff=lambda n: 10.0 * n, max_backoff=25.0)
    assert [options.retry_delay(n) for n in (1, 2, 3)] == [10.0, 20.0, 25.0]


def test_a_callable_backoff_returning_infinity_waits_max_backoff() -> None:
    assert TaskOptions(backoff=lambda n: math.inf, max_backoff=60.0).retry_delay(1) == 60.0


@pytest.mark.parametrize("value", [-1, math.nan, "3", None, True])
def test_a_callable_backoff_returning_no_seconds_raises_backoff_error(value: Any) -> None:
    options = TaskOptions(backoff=lambda n: value)
    with pytest.raises(BackoffError, match="not a number of seconds >= 0"):
        options.retry_delay(1)


def test_a_callable_backoff_that_raises_raises_backoff_error_naming_its_exception() -> None:
    options = TaskOptions(backoff=lambda n: 1 / 0)
    with pytest.raises(BackoffError, match=r"backoff\(2\) raised ZeroDivisionError"):
        options.retry_delay(2)


@pytest.mark.parametrize("backoff", [-1.0, math.nan, math.inf, "1s", True])
def test_a_backoff_that_is_neither_seconds_nor_callable_is_refused(backoff: Any) -> None:
    with pytest.raises(ConfigError, match="backoff"):
        TaskOptions(backoff=backoff)


@pytest.mark.parametrize("max_backoff", [-1.0, math.nan, math.inf])
def test_a_max_backoff_that_is_not_seconds_is_refused(max_backoff: float) -> None:
    with pytest.raises(ConfigError, match="max_backoff"):
        TaskOptions(max_backoff=max_backoff)


@pytest.mark.parametrize("field", ["retry_on", "fatal_on"])
@pytest.mark.parametrize("value", [ValueError(), "ValueError", (ValueError, int), [object]])
def test_exception_options_take_exception_classes_only(field: str, value: Any) -> None:
    with pytest.raises(ConfigError, match=f"{field} takes exception classes"):
        TaskOptions(**{field: value})


def test_an_empty_retry_on_is_refused() -> None:
    with pytest.raises(ConfigError, match="retry_on is empty"):
        TaskOptions(retry_on=())


def test_a_single_class_or_a_list_is_kept_as_a_tuple() -> None:
    options = TaskOptions(retry_on=Transient, fatal_on=[Broken])  # type: ignore[arg-type]
    assert (options.retry_on, options.fatal_on) == ((Transient,), (Broken,))


def test_without_retry_on_or_fatal_on_every_exception_follows_the_policy() -> None:
    assert TaskOptions().why_fatal(Broken) is None


def test_retry_on_retries_its_classes_and_their_subclasses_only() -> None:
    options = TaskOptions(retry_on=(Transient,))
    assert options.why_fatal(Transient) is None
    assert options.why_fatal(Flaky) is None
    assert options.why_fatal(Broken) == "Broken is not in retry_on=(Transient,)"


def test_fatal_on_makes_its_classes_and_their_subclasses_fatal() -> None:
    options = TaskOptions(fatal_on=(Transient,))
    assert options.why_fatal(Flaky) == "Flaky is in fatal_on=(Transient,)"
    assert options.why_fatal(Broken) is None


def test_fatal_on_wins_for_a_class_both_name() -> None:
    options = TaskOptions(retry_on=(Transient,), fatal_on=(Flaky,))
    assert options.why_fatal(Flaky) == "Flaky is in fatal_on=(Flaky,)"
    assert options.why_fatal(Transient) is None


def test_a_timeout_is_fatal_only_when_fatal_on_names_timeout_error_itself() -> None:
    assert TaskOptions(retry_on=(Transient,)).why_timeout_fatal() is None
    assert TaskOptions(fatal_on=(OSError,)).why_timeout_fatal() is None
    assert TaskOptions(fatal_on=(TimeoutError,)).why_timeout_fatal() is not None


def test_the_task_decorator_passes_retry_options_and_falls_back_to_the_registry_defaults() -> None:
    registry = TaskRegistry(TaskOptions(fatal_on=(Broken,)))

    @registry.task("a", retry_on=Transient, backoff=lambda n: 1.0)
    def a(payload: Any) -> None: ...

    @registry.task("b", fatal_on=(Transient,))
    def b(payload: Any) -> None: ...

    task_a, task_b = registry.get("a"), registry.get("b")
    assert task_a is not None and task_b is not None
    assert (task_a.options.retry_on, task_a.options.fatal_on) == ((Transient,), (Broken,))
    assert callable(task_a.options.backoff)
    assert (task_b.options.retry_on, task_b.options.fatal_on) == (None, (Transient,))


def test_the_task_decorator_refuses_a_bad_retry_on_when_the_handler_is_registered() -> None:
    registry = TaskRegistry()
    with pytest.raises(ConfigError, match="retry_on takes exception classes"):

        @registry.task("a", retry_on="ValueError")  # type: ignore[arg-type]
        def a(payload: Any) -> None: ...
