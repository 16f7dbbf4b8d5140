"""Requeue in canary waves: the plan's vocabulary and its rules, with no database.

A waves requeue (``skconsole requeue --waves 1%,10%,50%,100% --gate 95%``) freezes its
selection's job ids in the order a requeue takes them and cuts them in waves: wave k
takes the jobs up to its share (``cuts``: increasing fractions ending at 1). The first
wave is requeued at once; the next only once every job of the one before has finished
(:data:`SETTLED`: neither running nor waiting to run, so neither a job retrying after
an error) and at least ``gate`` of those that finished succeeded. Otherwise the plan
stops and says why (:func:`verdict`). The plan is stored (``sk_wave_plans_t``), so any
process carries it on (:mod:`skconsole.db.waves`).
"""

from __future__ import annotations

import enum
import itertools
import math
import re
from dataclasses import dataclass

from skconsole.core.errors import ConfigError
from skconsole.core.status import FINAL, JobStatus

#: the waves a requeue takes when asked for waves without saying which
DEFAULT_WAVES: tuple[float, ...] = (0.01, 0.10, 0.50, 1.0)
#: the share of a wave's finished jobs that must succeed for the next to go
DEFAULT_GATE = 0.95
#: the most waves a plan may have
MAX_WAVES = 20
#: A job of a wave has finished: it will not run again by itself (succeeded, failed past
#: its attempts, failed for good, or cancelled); a job retrying after an error has not.
SETTLED: tuple[JobStatus, ...] = (*FINAL, JobStatus.FAULTED)
#: a job left alone by its wave because it is already waiting or running
QUEUED: tuple[JobStatus, ...] = (JobStatus.UNPROCESSED, JobStatus.PROCESSING)

_PERCENT = re.compile(r"\s*(\d+(?:\.\d+)?)\s*%\s*")


class PlanState(enum.Enum):
    """Where a plan is: requeuing a wave, waiting for one, or over (three ways)."""

    RUNNING = "running"  # the current wave is being requeued, a batch at a time
    WAITING = "waiting-for-wave"  # the current wave is requeued: waiting for its jobs
    STOPPED = "stopped-gate-failed"  # a wave's jobs did not succeed enough: over
    CANCELLED = "cancelled"  # an operator cancelled it: over
    DONE = "done"  # the last wave is requeued: over

    @property
    def is_open(self) -> bool:
        """A process may still advance it."""
        return self in OPEN

    @classmethod
    def of(cls, value: str) -> PlanState:
        return cls(value)


#: the states a process advances
OPEN: tuple[PlanState, ...] = (PlanState.RUNNING, PlanState.WAITING)


def percent(fraction: float) -> str:
    """ "1%", "12.5%", "0.5%"."""
    return f"{fraction * 100:.2f}".rstrip("0").rstrip(".") + "%"


def _percentage(text: str, option: str, example: str) -> float:
    match = _PERCENT.fullmatch(text)
    if match is None:
        raise ConfigError(
            f"{option} takes percentages such as {example}: {text.strip()!r} is not one"
        )
    return float(match.group(1)) / 100


def parse_waves(text: str, option: str = "--waves") -> tuple[float, ...]:
    """``1%,10%,50%,100%`` as the fractions (checked: :func:`check_waves`)."""
    example = "1%,10%,50%,100%"
    if not text.strip():
        raise ConfigError(f"{option} takes percentages such as {example}: it is empty")
    return check_waves(tuple(_percentage(p, option, example) for p in text.split(",")), option)


def check_waves(cuts: tuple[float, ...], option: str = "--waves") -> tuple[float, ...]:
    """Refuse cut points that do not rise strictly from above 0% to end at 100%."""
    shown = ",".join(percent(c) for c in cuts)
    if not cuts or len(cuts) > MAX_WAVES:
        raise ConfigError(f"{option} takes 1 to {MAX_WAVES} waves, not {len(cuts)}")
    if any(not math.isfinite(c) or c <= 0 or c > 1 for c in cuts):
        raise ConfigError(f"{option} {shown}: each wave is a share above 0% and at most 100%")
    if any(b <= a for a, b in itertools.pairwise(cuts)):
        raise ConfigError(
            f"{option} {shown}: each wave must take more than the one before"
            " (the shares are cumulative, e.g. 1%,10%,50%,100%)"
        )
    if cuts[-1] != 1:
        raise ConfigError(f"{option} {shown}: the last wave must be 100% (every job)")
    return cuts


def parse_gate(text: str, option: str = "--gate") -> float:
    """``95%`` as 0.95 (checked: :func:`check_gate`)."""
    return check_gate(_percentage(text, option, "95%"), option)


def check_gate(gate: float, option: str = "--gate") -> float:
    if not math.isfinite(gate) or gate < 0 or gate > 1:
        raise ConfigError(f"{option} {percent(gate)}: the gate is a share from 0% to 100%")
    return gate


def wave_ends(cuts: tuple[float, ...], jobs: int) -> tuple[int, ...]:
    """Where each wave ends among ``jobs`` ids (cumulative; a wave takes at least one
    job; a wave that would take none, of a small selection, is dropped)."""
    ends: list[int] = []
    for cut in cuts:
        end = min(jobs, max(math.ceil(jobs * cut - 1e-9), 1))
        if not ends or end > ends[-1]:
            ends.append(end)
    return tuple(ends)


def wave_sizes(ends: tuple[int, ...]) -> tuple[int, ...]:
    """How many jobs each wave takes."""
    return tuple(e - s for s, e in zip((0, *ends), ends, strict=False))


@dataclass(frozen=True)
class WaveTally:
    """What the jobs a wave requeued have come to, as read now."""

    requeued: int
    finished: int  # settled, with a result row
    succeeded: int
    gone: int  # their result rows are gone (purged): neither counted nor waited for
    top_signature: str | None  # the failure signature most of its failed jobs share

    @property
    def failed(self) -> int:
        return self.finished - self.succeeded

    @property
    def decided(self) -> bool:
        """Every job it requeued has finished (or is gone)."""
        return self.finished + self.gone >= self.requeued

    @property
    def rate(self) -> float | None:
        """Succeeded / finished (None: none finished)."""
        return self.succeeded / self.finished if self.finished else None

    def progress(self) -> str:
        """ "40 of 90 finished, 39 succeeded"."""
        gone = f", {self.gone:,} gone (purged)" if self.gone else ""
        return (
            f"{self.finished:,} of {self.requeued:,} finished, {self.succeeded:,} succeeded{gone}"
        )


def rate_text(rate: float) -> str:
    """A success rate never rounded up to the gate: 94.97% is "94.9%"."""
    return percent(math.floor(rate * 1000 + 1e-9) / 1000)


@dataclass(frozen=True)
class Verdict:
    """Whether the next wave may go, and why, in one line."""

    passed: bool
    reason: str


def verdict(wave: int, gate: float, tally: WaveTally) -> Verdict:
    """The gate on a decided wave: "wave 2: 81% succeeded (gate 95%): 19 of 100 failed,
    e.g. KeyError: ..."; a wave none of whose jobs finished gives no evidence: it stops."""
    head = f"wave {wave}"
    rate = tally.rate
    if rate is None:
        return Verdict(
            False,
            f"{head}: no job it requeued finished to judge by ({tally.requeued:,} requeued,"
            f" {tally.gone:,} gone)",
        )
    said = f"{head}: {rate_text(rate)} succeeded (gate {percent(gate)})"
    if rate >= gate:
        return Verdict(True, f"{said}: {tally.succeeded:,} of {tally.finished:,}")
    example = f", e.g. {tally.top_signature}" if tally.top_signature else ""
    return Verdict(False, f"{said}: {tally.failed:,} of {tally.finished:,} failed{example}")


def state_after_batch(wave: int, waves: int, taken: int, wave_end: int) -> PlanState:
    """A plan's state once ``taken`` of its ids are taken: the wave goes on, waits for its
    jobs, or (the last wave) the plan is done."""
    if taken < wave_end:
        return PlanState.RUNNING
    return PlanState.DONE if wave >= waves else PlanState.WAITING
