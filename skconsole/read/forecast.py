"""A forecast of what follows from an operator's action at the present flow: when the
backlog clears, how long each type meets its wait SLO, the least time a rate limit or a
spread takes, and how far to trust the figures.

Pure arithmetic over the flow read model (:mod:`skconsole.read.flow`: the same rates as
``skconsole status flow``) and an :class:`Effect` (what the action does to the flow:
jobs made ready, jobs moved ahead, a type resumed, a claim rate capped). No database:
``skconsole.ops.forecast`` reads the flow beside the preview and says which effect each
action has; every face shows :attr:`Forecast.text`, worded here once.

The model, said plainly (docs/howto/on-call.md says it too):

- the backlog after the action (the type's ready jobs, plus those the action makes
  ready) clears at the present *net* rate: successful completions minus arrivals over
  the flow window (:func:`skconsole.read.flow.drain_seconds`). Arrivals as fast as
  completions or faster: it does not clear. No completion in the window: no forecast
  (nothing says how fast the type runs). Hardly a job waiting before the action
  (fewer than 10 s of the successes counted): the workers kept up with arrivals, so
  the successes counted are what arrived, not what the workers can do, and there is
  no clear time either. A type's claim rate limit (``limit --rate``,
  the new one for a limit) caps the completion rate, and a spread (``requeue
  --spread``) makes the last job due only at its end: both are floors;
- a type with a max wait (``slo set --max-wait``) meets it while every ready job starts
  within it. Jobs run oldest first at the present completion rate (new arrivals queue
  behind), so the last job of the backlog starts after ``backlog / completions``; the
  jobs waiting now are taken to be as old as the oldest (a bound, not an average).
  The first job to breach then does so ``max wait - oldest wait`` from now (one waiting
  now) or ``max wait`` from now (one the action makes ready);
- the error: the counts in the window are Poisson counts, so the net rate's relative
  error is ``sqrt(completions + arrivals) / (completions - arrivals)`` (one standard
  deviation): ±30 % at 11 completions a window, ±10 % at 100. It says nothing of a
  change in the load itself: a forecast holds while the flow stays as it was.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from skconsole.core.json_types import JsonObject, attributes
from skconsole.read.flow import TypeFlow

#: A forecast names at most this many types in its sentence (the rest are counted).
TYPES_SHOWN = 2
#: Above this relative error a figure is said to be a guess.
GUESS_ERROR = 1.0
#: The sentence when no type involved has a completion in the window.
NO_FORECAST = "no recent completions: no forecast"
#: A type whose ready jobs before the action would be gone in this many seconds at the
#: rate counted kept up with its arrivals (Clearing.KEPT_UP).
KEPT_UP_S = 10.0


class Clearing(enum.Enum):
    """What becomes of a type's backlog at the present rates."""

    EMPTY = "empty"  # no ready job after the action
    CLEARS = "clears"  # completions outpace arrivals: ``clear_s``
    GROWS = "grows"  # arrivals as fast as completions or faster
    #: hardly a job waited before the action: the workers kept up with arrivals, so the
    #: successes counted are what arrived, not what the workers can do: no clear time
    KEPT_UP = "kept up"
    UNKNOWN = "unknown"  # no completion in the window: no forecast


class SloOutlook(enum.Enum):
    """Where a type's wait SLO goes at the present rates."""

    NONE = "none"  # no max wait set
    WITHIN = "within"  # every ready job starts within it
    BREACHES = "breaches"  # the first breach comes after ``breach_s``
    BREACHED = "breached"  # a ready job has waited longer already


# -- figures people read -------------------------------------------------------------------
def about(seconds: float) -> str:
    """A forecast's duration, rounded as people say it: "~40 s", "~14 min", "~2.5 h",
    "~3 days" (under a second: "~1 s")."""
    if not math.isfinite(seconds):
        return "unknown"
    s = max(seconds, 0.0)
    if s < 60:
        return f"~{max(round(s / 5) * 5, 1) if s >= 10 else max(round(s), 1)} s"
    if s < 90 * 60:
        return f"~{max(round(s / 60), 1)} min"
    hours = s / 3600
    if hours < 48:
        return f"~{hours:.1f} h".replace(".0 h", " h") if hours < 10 else f"~{hours:.0f} h"
    return f"~{s / 86400:.0f} days"


def per_second_text(per_s: float) -> str:
    """A rate of jobs: "10/s", "2.1/s", "0.5/s", "12/min" (under 1/s: per minute)."""
    if per_s >= 10:
        return f"{per_s:,.0f}/s"
    if per_s >= 1:
        return f"{per_s:.1f}/s".replace(".0/s", "/s")
    per_min = per_s * 60
    return f"{per_min:.0f}/min" if per_min >= 10 else f"{per_min:.1f}/min"


def relative_error(completions: int, arrivals: int) -> float | None:
    """The relative error (one standard deviation) of a net rate counted as
    ``completions - arrivals`` jobs in a window, both Poisson counts; None when nothing
    completed or the net is not positive (no time to be wrong about)."""
    net = completions - arrivals
    if completions <= 0 or net <= 0:
        return None
    return math.sqrt(completions + arrivals) / net


def error_text(error: float | None) -> str:
    """ "±30 % at this volume" (to the nearest 5 %, at least 5 %); "±more than 100 %
    at this volume: a guess"; "" for None."""
    if error is None:
        return ""
    if error > GUESS_ERROR:
        return "±more than 100 % at this volume: a guess"
    pct = max(5, round(error * 100 / 5) * 5)
    return f"±{pct} % at this volume"


# -- what an action does ---------------------------------------------------------------------
@dataclass(frozen=True)
class Change:
    """What an action does to one task type's flow.

    ``added``: jobs it makes ready now (a requeue; a bump ``--now``: at most that many,
    some may be due already; a breaker closing: those it held), or takes out of the
    backlog (negative: a breaker opening); ``ahead``: jobs it moves to the front of the type's
    backlog (a bump of priority); ``resumed``: the type was paused and is no longer;
    ``rate_per_s``: the claim rate limit after the action (None: none); ``scale``: the
    share of the present completion rate left after it (a concurrency limit lowered
    below the jobs running now: ``limit / running``, jobs taking as long as they do)."""

    task_type: str
    added: int = 0
    ahead: int = 0
    resumed: bool = False
    rate_per_s: float | None = None
    scale: float | None = None


@dataclass(frozen=True)
class Effect:
    """What an action does to the flow: ``jobs`` it touches, a :class:`Change` per type,
    and the seconds a requeue spreads its jobs over (None: all due at once)."""

    jobs: int
    changes: tuple[Change, ...]
    spread_s: float | None = None


# -- the forecast ------------------------------------------------------------------------------
@dataclass(frozen=True)
class TypeForecast:
    """One type's outlook after the action (see the module's model)."""

    task_type: str
    added: int
    ahead: int
    #: ready jobs after the action
    backlog: int
    #: counted in the flow window
    completions: int
    arrivals: int
    window_s: float
    clearing: Clearing
    #: seconds until the backlog clears (CLEARS), floors included
    clear_s: float | None
    #: the least seconds a rate limit or a spread takes over the backlog (None: none)
    floor_s: float | None
    #: the claim rate limit that sets ``floor_s`` (per second; None: none, or the spread)
    rate_per_s: float | None
    #: seconds until the jobs moved ahead are done, if they run first (None: none moved)
    ahead_s: float | None
    #: the share of the present completion rate left after the action (None: all of it)
    scale: float | None
    slo_max_wait_s: float | None
    slo: SloOutlook
    #: seconds until the first breach (BREACHES); how long ago (BREACHED, positive)
    breach_s: float | None
    #: the relative error of ``clear_s`` (one standard deviation; None: no figure)
    error: float | None

    def as_dict(self) -> JsonObject:
        return {
            **attributes(
                self,
                "task_type added ahead backlog completions arrivals window_s",
            ),
            "clearing": self.clearing.value,
            **attributes(self, "clear_s floor_s rate_per_s ahead_s scale slo_max_wait_s"),
            "slo": self.slo.value,
            **attributes(self, "breach_s error"),
        }


@dataclass(frozen=True)
class Forecast:
    """What follows from an action at the present flow: one outlook per type it touches
    (most jobs first), and the spread's rate; :attr:`text` says it in one sentence."""

    jobs: int
    types: tuple[TypeForecast, ...]
    spread_s: float | None = None
    #: the jobs per second a spread makes due (None: no spread)
    spread_per_s: float | None = None

    @property
    def known(self) -> tuple[TypeForecast, ...]:
        """The types with a forecast (a completion in the window)."""
        return tuple(t for t in self.types if t.clearing is not Clearing.UNKNOWN)

    @property
    def error(self) -> float | None:
        """The largest relative error among the types with a clear time."""
        errors = [t.error for t in self.types if t.error is not None]
        return max(errors) if errors else None

    @property
    def text(self) -> str:
        return forecast_text(self)

    def as_dict(self) -> JsonObject:
        return {
            "jobs": self.jobs,
            "text": self.text,
            "spread_s": self.spread_s,
            "spread_per_s": self.spread_per_s,
            "error": self.error,
            "types": [t.as_dict() for t in self.types],
        }


def _slo(
    flow: TypeFlow, existing: int, backlog: int, completions_per_s: float
) -> tuple[SloOutlook, float | None]:
    """The wait SLO's outlook (see the module's model)."""
    max_wait = flow.slo_max_wait_s
    if max_wait is None:
        return SloOutlook.NONE, None
    oldest = flow.oldest_ready_s if existing > 0 else None
    if oldest is not None and oldest > max_wait:
        return SloOutlook.BREACHED, oldest - max_wait
    if backlog <= 0:
        return SloOutlook.WITHIN, None
    if completions_per_s <= 0:  # nothing runs: the oldest breaches as it ages
        return SloOutlook.BREACHES, max_wait - (oldest or 0.0)
    breaches: list[float] = []
    if oldest is not None and existing / completions_per_s > max_wait - oldest:
        breaches.append(max_wait - oldest)
    if backlog / completions_per_s > max_wait:
        breaches.append(max_wait)
    return (SloOutlook.BREACHES, min(breaches)) if breaches else (SloOutlook.WITHIN, None)


def type_forecast(flow: TypeFlow, change: Change, spread_s: float | None = None) -> TypeForecast:
    """One type's outlook after ``change`` at the rates of ``flow``."""
    window = flow.window_s
    existing = flow.ready
    # a breaker opening takes jobs out (added < 0): never fewer than none
    backlog = max(0, existing + change.added)
    completions_per_s = flow.completions / window if window > 0 else 0.0
    arrivals_per_s = flow.arrivals / window if window > 0 else 0.0
    if change.scale is not None:
        completions_per_s *= change.scale
    floors: list[float] = []
    rate = change.rate_per_s
    if rate is not None and backlog > 0:
        floors.append(backlog / rate)
        completions_per_s = min(completions_per_s, rate)
    if spread_s:
        floors.append(spread_s)
    floor_s = max(floors) if floors else None
    ahead_s = change.ahead / completions_per_s if change.ahead and completions_per_s > 0 else None
    net = completions_per_s - arrivals_per_s
    clearing: Clearing
    clear_s: float | None = None
    if flow.completions <= 0:
        clearing = Clearing.UNKNOWN
    elif backlog <= 0:
        clearing = Clearing.EMPTY
    elif existing <= max(1.0, flow.completions / window * KEPT_UP_S):
        clearing = Clearing.KEPT_UP
    elif net <= 0:
        clearing = Clearing.GROWS
    else:
        clearing = Clearing.CLEARS
        clear_s = max(backlog / net, floor_s or 0.0)
    slo, breach_s = _slo(flow, existing, backlog, completions_per_s)
    if clearing is Clearing.KEPT_UP and slo is not SloOutlook.BREACHED:
        slo, breach_s = SloOutlook.NONE, None  # how fast the backlog goes is not known
    if change.resumed and clearing is Clearing.UNKNOWN and slo is SloOutlook.BREACHES:
        # nothing completed while it was paused: how fast it runs once resumed is not
        # known, so neither is its breach
        slo, breach_s = SloOutlook.NONE, None
    return TypeForecast(
        task_type=flow.task_type,
        added=change.added,
        ahead=change.ahead,
        backlog=backlog,
        completions=flow.completions,
        arrivals=flow.arrivals,
        window_s=window,
        clearing=clearing,
        clear_s=clear_s,
        floor_s=floor_s,
        rate_per_s=rate if rate is not None and backlog > 0 else None,
        ahead_s=ahead_s,
        scale=change.scale,
        slo_max_wait_s=flow.slo_max_wait_s,
        slo=slo,
        breach_s=breach_s,
        error=relative_error(flow.completions, flow.arrivals) if clear_s is not None else None,
    )


def _quiet(task_type: str, window_s: float) -> TypeFlow:
    """A type the flow does not list: nothing ready, nothing counted."""
    return TypeFlow(task_type, window_s, 0, 0, 0, False, None, None, False)


def forecast(effect: Effect, flows: Iterable[TypeFlow], window_s: float) -> Forecast:
    """The outlook of each type ``effect`` changes, at the rates of ``flows`` (the flow
    read model's rows; a type it does not list has no completion, so no forecast)."""
    by_type: Mapping[str, TypeFlow] = {f.task_type: f for f in flows}
    changes = sorted(effect.changes, key=lambda c: (-(c.added + c.ahead), c.task_type))
    types = tuple(
        type_forecast(by_type.get(c.task_type) or _quiet(c.task_type, window_s), c, effect.spread_s)
        for c in changes
    )
    spread = effect.spread_s or None
    return Forecast(
        effect.jobs,
        types,
        spread,
        effect.jobs / spread if spread and effect.jobs else None,
    )


# -- the sentence ------------------------------------------------------------------------------
def _backlog_clause(t: TypeForecast, own: str) -> str:
    """ "the backlog clears in ~14 min at the present rate", "... does not clear: arrivals
    outpace completions", "... is empty"; ``own``: whose backlog ("the", "emails.send's")."""
    if t.clearing is Clearing.EMPTY:
        return f"{own} backlog is empty"
    if t.clearing is Clearing.GROWS:
        return f"{own} backlog does not clear: arrivals outpace completions"
    if t.clearing is Clearing.KEPT_UP:
        rate = per_second_text(t.completions / t.window_s)
        return (
            f"{t.task_type}'s workers kept up with its arrivals ({rate}):"
            " how fast they go with a backlog is not measured, no clear time"
        )
    if t.clearing is Clearing.UNKNOWN or t.clear_s is None:
        return f"{own} backlog: {NO_FORECAST}"
    band = error_text(t.error)
    if _capped(t) and t.rate_per_s is not None:
        rate = f"its rate limit of {per_second_text(t.rate_per_s)}"
    elif t.scale is not None:
        rate = f"{_share(t.scale)} of the present rate"
    else:
        rate = "the present rate"
    return f"{own} backlog clears in {about(t.clear_s)} at {rate}" + (f" ({band})" if band else "")


def _capped(t: TypeForecast) -> bool:
    """Whether the claim rate limit is below the rate of successes counted: the backlog
    clears at the limit."""
    counted = t.completions / t.window_s * (t.scale or 1.0) if t.window_s > 0 else 0.0
    return t.rate_per_s is not None and t.rate_per_s < counted


def _share(scale: float) -> str:
    """ "~50 %" (a share of the present rate, to the nearest 5 %, at least 5 %)."""
    return f"~{max(5, round(scale * 100 / 5) * 5)} %"


def _ahead_clause(t: TypeForecast, own: str) -> str:
    if t.ahead_s is None:
        return ""
    return f"if they run first, {own} {t.ahead:,} are done in {about(t.ahead_s)}"


def _slo_clause(t: TypeForecast) -> str:
    if t.slo is SloOutlook.BREACHED and t.breach_s is not None:
        return f"{t.task_type} is past its wait SLO already (by {about(t.breach_s)})"
    if t.slo is SloOutlook.BREACHES and t.breach_s is not None:
        return f"{t.task_type} meets its wait SLO for {about(t.breach_s)}"
    if t.slo is SloOutlook.WITHIN:
        return f"{t.task_type} stays within its wait SLO"
    return ""


def _floor_clause(t: TypeForecast) -> str:
    """What a claim rate limit takes at least (said while the backlog clears at all)."""
    if t.clearing is Clearing.GROWS or _capped(t):
        return ""
    if t.rate_per_s is not None and t.floor_s is not None:
        return (
            f"at {per_second_text(t.rate_per_s)} the backlog takes at least {about(t.floor_s)[1:]}"
        )
    return ""


def forecast_text(f: Forecast) -> str:
    """The forecast in one sentence: "1,284 jobs: the backlog clears in ~14 min at the
    present rate (±30 % at this volume); emails.send meets its wait SLO for ~6 min; at
    10/s the backlog takes at least 2 min"."""
    head = f"{f.jobs:,} job{'' if f.jobs == 1 else 's'}: " if f.jobs else ""
    if not f.known and not any(t.slo is SloOutlook.BREACHED for t in f.types):
        return head + NO_FORECAST
    shown = f.types[:TYPES_SHOWN]
    single = len(f.types) == 1
    clauses: list[str] = []
    for t in shown:
        own = "the" if single else f"{t.task_type}'s"
        clauses.append(_ahead_clause(t, own) if t.ahead_s is not None else _backlog_clause(t, own))
    clauses += [_slo_clause(t) for t in shown]
    clauses += [_floor_clause(t) for t in shown]
    if f.spread_s and f.spread_per_s:
        clauses.append(
            f"spread at {per_second_text(f.spread_per_s)}, the last is due in {about(f.spread_s)}"
        )
    hidden = len(f.types) - len(shown)
    if hidden:
        clauses.append(f"{hidden} more type{'' if hidden == 1 else 's'} not said")
    return head + "; ".join(c for c in clauses if c)
