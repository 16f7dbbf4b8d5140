"""What a failure group's jobs share: ``skconsole status failures --group G --common``.

Why: "it fails for customers in eu" or "only on host w-3" is the first thing an
on-call person wants to know of a failure group, and the last thing a list of
errors shows. This compares the group's jobs with the other jobs of the same
types, on bounded samples (the latest :data:`SAMPLE` of each), over every
scalar payload field at the top level and one level down, and the host of
the worker that ran the last attempt (while its registration is kept).
(The worker's code version joins the factors once attempts record it.)

The rule: a factor is a (field, value) held by at least :data:`MIN_SUPPORT`
of the group's sampled jobs and by at least :data:`MIN_SHARE` of them; its
strength is ``share_failing - share_others`` (the shares of each sample that
hold it), and only factors at least :data:`MIN_STRENGTH` strong are kept,
strongest first (ties: the larger share of the group, then by name), at most
:data:`MAX_FACTORS`. A field every job holds with the same value has strength
0 and is never a factor.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from skconsole.core.json_types import JsonObject
from skconsole.read.query import Conn, fetch

SAMPLE = 2_000
MIN_SUPPORT = 3
MIN_SHARE = 0.2
MIN_STRENGTH = 0.2
MAX_FACTORS = 10
#: How long the comparison may run before the server cancels it.
FACTORS_TIMEOUT_MS = 10_000


@dataclass(frozen=True, slots=True)
class Factor:
    """One field's value over-represented in the group."""

    field: str  # "payload.region", "payload.customer.tier", "host"
    value: str
    failing: int  # the group's sampled jobs that hold it
    others: int  # the other sampled jobs that hold it
    share_failing: float
    share_others: float

    @property
    def strength(self) -> float:
        return self.share_failing - self.share_others

    @property
    def is_payload(self) -> bool:
        """Whether ``--where FIELD=VALUE`` selects by it."""
        return self.field.startswith("payload.")

    def as_dict(self) -> JsonObject:
        return {
            "field": self.field,
            "value": self.value,
            "share_failing": round(self.share_failing, 4),
            "share_others": round(self.share_others, 4),
        }


@dataclass(frozen=True, slots=True)
class CommonFactors:
    """The factors of one group, strongest first, and the samples they come from."""

    signature: str
    failing_sampled: int
    others_sampled: int
    factors: tuple[Factor, ...]

    def as_dict(self) -> JsonObject:
        return {
            "signature": self.signature,
            "failing_sampled": self.failing_sampled,
            "others_sampled": self.others_sampled,
            "factors": [f.as_dict() for f in self.factors],
        }


@dataclass(frozen=True, slots=True)
class _Count:
    field: str
    value: str
    failing: int
    others: int
    failing_total: int
    others_total: int


def rank(counts: list[_Count]) -> list[Factor]:
    """The rule of the module's docstring, over the counts the query gives."""
    factors: list[Factor] = []
    for c in counts:
        share_failing = c.failing / c.failing_total if c.failing_total else 0.0
        share_others = c.others / c.others_total if c.others_total else 0.0
        f = Factor(c.field, c.value, c.failing, c.others, share_failing, share_others)
        if c.failing >= MIN_SUPPORT and share_failing >= MIN_SHARE and f.strength >= MIN_STRENGTH:
            factors.append(f)
    factors.sort(key=lambda f: (-round(f.strength, 9), -f.share_failing, f.field, f.value))
    return factors[:MAX_FACTORS]


def common_factors(conn: Conn, signature: str, *, sample: int = SAMPLE) -> CommonFactors:
    """The factors of the failure group ``signature`` (its key: see read.failures)."""
    params: dict[str, Any] = {"signature": signature, "sample": sample, "min_support": MIN_SUPPORT}
    with conn.transaction():
        conn.execute("SELECT set_config('statement_timeout', %s, true)", (str(FACTORS_TIMEOUT_MS),))
        counts = fetch(conn, "common_factors", _Count, params)
        failing_total = counts[0].failing_total if counts else 0
        others_total = counts[0].others_total if counts else 0
        if not counts:  # no value reached support: still say how big the samples were
            failing_total, others_total = _totals(conn, params)
    return CommonFactors(signature, failing_total, others_total, tuple(rank(counts)))


def _totals(conn: Conn, params: dict[str, Any]) -> tuple[int, int]:
    rows = fetch(conn, "common_factors", _Count, {**params, "min_support": 0})
    return (rows[0].failing_total, rows[0].others_total) if rows else (0, 0)
