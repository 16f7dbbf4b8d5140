"""Circuit breakers: what each watches, its state, the jobs it holds back and its canaries.

A breaker (sql/schema/150_skconsole_breakers.sql) watches one type's failures of one
signature and, open, holds back the jobs that would hit it; every face (``skconsole
breaker``, panels 1 and 3, ``check``, the exporter, ``why``) reads it from here so they
say the same thing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from skconsole.core.durations import format_age
from skconsole.core.json_types import JsonObject, attributes
from skconsole.core.payload_terms import PayloadTerm
from skconsole.core.states import BreakerState
from skconsole.read.failures import FailureGroup
from skconsole.read.query import Conn, fetch, iso


@dataclass(frozen=True)
class Breaker:
    """One breaker, as sk_breakers_t holds it, with what it holds back now."""

    breaker_id: int
    task_type: str
    #: the failure group's key it watches
    signature: str
    term_path: list[str] | None
    term_value: str | None
    #: it opens by itself at ``threshold`` failures in ``window_s`` (None: by hand only)
    threshold: int | None
    window_s: float | None
    cool_down_s: float
    canaries: int
    state: BreakerState
    state_at: datetime
    state_age_s: float
    #: open: seconds until it half-opens
    half_open_in_s: float | None
    opened_count: int
    #: half-open rounds so far (each let at most ``canaries`` jobs run)
    rounds: int
    reason: str | None
    created_at: datetime
    #: jobs parked (held back, not released as canaries)
    held: int
    #: this round's canaries released, and how many of them ended
    canaries_out: int
    canaries_ended: int
    term: PayloadTerm | None = field(init=False)

    def __post_init__(self) -> None:
        if not isinstance(self.state, BreakerState):
            object.__setattr__(self, "state", BreakerState(self.state))
        term = None
        if self.term_path is not None and self.term_value is not None:
            term = PayloadTerm(tuple(self.term_path), self.term_value)
        object.__setattr__(self, "term", term)

    @property
    def holds_back(self) -> str:
        """Which jobs it holds back, in words."""
        shared = f"with {self.term}" if self.term is not None else "all"
        return f"{self.task_type} jobs {shared}, and retries of its signature"

    @property
    def status_line(self) -> str:
        """Its state in one line: "open 2m 10s (half-open in 50s), 1,204 held"."""
        age = format_age(self.state_age_s)
        if self.state is BreakerState.OPEN:
            later = (
                f", half-open in {format_age(self.half_open_in_s)}"
                if self.half_open_in_s is not None and self.half_open_in_s > 0
                else ", half-open at the next tick"
            )
            return f"open {age}{later}, {self.held:,} held"
        if self.state is BreakerState.HALF_OPEN:
            return (
                f"half-open {age}: {self.canaries_ended} of {self.canaries_out} canaries ended,"
                f" {self.held:,} held"
            )
        armed = (
            f"armed: opens at {self.threshold} failures in {format_age(self.window_s or 0)}"
            if self.threshold is not None
            else "closed (opened by hand)"
        )
        return armed

    def as_dict(self) -> JsonObject:
        return {
            **attributes(
                self,
                "breaker_id task_type signature threshold window_s cool_down_s canaries"
                " opened_count rounds reason held canaries_out canaries_ended state_age_s half_open_in_s",
            ),
            "term": self.term.as_json() if self.term is not None else None,
            "state": self.state.word,
            "state_at": iso(self.state_at),
            "created_at": iso(self.created_at),
        }


def breakers(conn: Conn, task_type: str | None = None) -> list[Breaker]:
    """Every breaker (of ``task_type`` when given), those holding jobs back first."""
    return fetch(conn, "breakers", Breaker, {"task_type": task_type})


def holding(breakers: Sequence[Breaker]) -> dict[str, Breaker]:
    """The breakers holding jobs back (open or half-open), by the signature they watch
    (the first, when several types' breakers watch one)."""
    out: dict[str, Breaker] = {}
    for b in breakers:
        if b.state.holds:
            out.setdefault(b.signature, b)
    return out


def with_breakers(
    groups: Sequence[FailureGroup], breakers: Sequence[Breaker]
) -> list[FailureGroup]:
    """``groups``, each marked with the state of a breaker holding back on its signature."""
    held = holding(breakers)
    return [
        replace(g, breaker=held[g.signature].state.word) if g.signature in held else g
        for g in groups
    ]
