"""The forecast in a preview: what follows from an action that moves jobs, at the flow read
beside it (:mod:`skconsole.read.forecast` is the model and its words).

:func:`effect` says what a preview's action does to the flow (one case per action that
moves jobs: requeue, bump, resume, limit); :func:`preview_forecast` turns a preview and
the flow into its forecast (an action with another effect, a breaker say, is one more
case of :func:`effect`); :func:`with_forecast` reads the flow on the preview's
connection, right after it, and attaches the forecast to the preview.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import skconsole.read.flow as flow_model
import skconsole.read.type_settings as type_settings
from skconsole.ops.common import Conn
from skconsole.ops.model import Preview, seconds_in
from skconsole.read.flow import WINDOW_S, TypeFlow
from skconsole.read.forecast import Change, Effect, Forecast, forecast

#: The actions whose preview carries a forecast: those that move jobs.
FORECAST_ACTIONS = ("requeue", "bump", "resume", "limit", "breaker")


def _rate_per_s(limits: object) -> float | None:
    """A claim rate limit as a limit's details show it ("10/s", "600/min"), per second."""
    if not isinstance(limits, Mapping):
        return None
    rate = limits.get("rate")
    if not isinstance(rate, str) or "/" not in rate:
        return None
    count, unit = rate.split("/", 1)
    seconds = {"s": 1.0, "min": 60.0}.get(unit)
    if seconds is None and unit.endswith("s"):
        try:
            seconds = float(unit[:-1])
        except ValueError:
            return None
    try:
        return int(count) / seconds if seconds else None
    except ValueError:
        return None


def _scale(new: object, details: Mapping[str, object]) -> float | None:
    """The share of the present completion rate a new concurrency limit leaves: ``limit /
    running`` when it is below the jobs running now (None: it holds back none of them)."""
    running = details.get("running")
    limit = new.get("concurrency") if isinstance(new, Mapping) else None
    if not isinstance(running, int) or not isinstance(limit, int) or running <= limit:
        return None
    return limit / running


def effect(preview: Preview, rates: Mapping[str, float] | None = None) -> Effect | None:
    """What ``preview``'s action does to the flow (None: an action that moves no jobs).
    ``rates``: each type's claim rate limit now, per second (a floor on its clear time)."""
    rates = rates or {}
    d = preview.details
    by_type = preview.by_type or (
        ((preview.selection.task_type, preview.count),) if preview.selection.task_type else ()
    )
    if preview.action == "requeue":
        changes = tuple(Change(t, added=n, rate_per_s=rates.get(t)) for t, n in by_type)
        return Effect(preview.count, changes, seconds_in(d, "spread_s"))
    if preview.action == "bump":
        if d.get("now") is True:  # due at once: at most that many more ready
            changes = tuple(Change(t, added=n, rate_per_s=rates.get(t)) for t, n in by_type)
        else:
            changes = tuple(Change(t, ahead=n, rate_per_s=rates.get(t)) for t, n in by_type)
        return Effect(preview.count, changes)
    task_type = d.get("task_type")
    if not isinstance(task_type, str):
        return None
    if preview.action == "resume":
        waiting = d.get("waiting")
        jobs = waiting if isinstance(waiting, int) else 0
        return Effect(jobs, (Change(task_type, resumed=True, rate_per_s=rates.get(task_type)),))
    if preview.action == "limit":
        new = d.get("new")
        return Effect(0, (Change(task_type, rate_per_s=_rate_per_s(new), scale=_scale(new, d)),))
    if preview.action == "breaker":
        # opening takes the jobs it would hold out of the backlog; closing gives back
        # those it holds
        command = d.get("command")
        held, would = d.get("held"), d.get("would_hold")
        if command == "open" and isinstance(would, int) and would > 0:
            return Effect(
                would, (Change(task_type, added=-would, rate_per_s=rates.get(task_type)),)
            )
        if command in ("close", "remove") and isinstance(held, int) and held > 0:
            return Effect(held, (Change(task_type, added=held, rate_per_s=rates.get(task_type)),))
    return None


def preview_forecast(
    preview: Preview,
    flows: Sequence[TypeFlow],
    rates: Mapping[str, float] | None = None,
    window_s: float = WINDOW_S,
) -> Forecast | None:
    """The forecast of ``preview``'s action at ``flows`` (the flow read model's rows, read
    with it); None for an action that moves no jobs or a preview that finds nothing."""
    if preview.count <= 0:
        return None
    found = effect(preview, rates)
    return forecast(found, flows, window_s) if found is not None else None


def claim_rates(conn: Conn) -> dict[str, float]:
    """Each type's claim rate limit now, per second (types without one are left out)."""
    return {
        t.task_type: t.rate_count / t.rate_seconds
        for t in type_settings.limits(conn)
        if t.rate_count is not None and t.rate_seconds
    }


def with_forecast(conn: Conn, preview: Preview, window_s: float = WINDOW_S) -> Preview:
    """``preview`` with its forecast, from the flow read now on its connection (an action
    that moves no jobs, or a preview that finds nothing, reads nothing)."""
    if preview.action not in FORECAST_ACTIONS or preview.count <= 0:
        return preview
    flows = flow_model.flow(conn, window_s)
    found = preview_forecast(preview, flows, claim_rates(conn), window_s)
    return replace(preview, forecast=found) if found is not None else preview
