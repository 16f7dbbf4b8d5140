"""What a failure group's jobs share, as the console's factors screen lists them.

One row per factor (:mod:`skconsole.read.factors`: the rule, the samples): the field
and its value, how many of the group's sampled jobs hold it and what share, the same
of the other jobs of its types, and the search that selects by it (a payload factor
only, with the group's type when it has one): Enter on the row opens that search.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from skconsole.read.factors import Factor
from skconsole.views.table import Cell, Column, figure_column

#: what the search column shows for a factor no search selects by (a worker's host)
NO_SEARCH = "no search selects by it"


def search_terms(factor: Factor, task_types: Sequence[str]) -> str | None:
    """The search line that selects by ``factor`` (with the group's type when it has only
    one); None for a factor that is not a payload field."""
    if not factor.is_payload:
        return None
    terms = [shlex.quote(f"{factor.field}={factor.value}")]
    if len(task_types) == 1:
        terms.append("type=" + shlex.quote(task_types[0]))
    return " ".join(terms)


@dataclass(frozen=True, slots=True)
class FactorRow:
    """One factor of a group, with the search that selects by it."""

    factor: Factor
    search: str | None

    @property
    def key(self) -> str:
        return f"{self.factor.field}={self.factor.value}"


def factor_rows(factors: Sequence[Factor], task_types: Sequence[str]) -> list[FactorRow]:
    return [FactorRow(f, search_terms(f, task_types)) for f in factors]


def _share(held: int, share: float) -> str:
    """ "36 · 90%": the sampled jobs that hold it, and their share of the sample."""
    return f"{held:,} · {share:.0%}"


def _search(row: FactorRow, _now: float) -> Cell:
    return row.search if row.search is not None else (NO_SEARCH, "muted")


COLUMNS: tuple[Column[FactorRow], ...] = (
    Column("field", "field", 14, cell=lambda r, _: r.factor.field),
    Column("value", "value", 10, cell=lambda r, _: r.factor.value),
    figure_column(
        "group", 12, lambda r, _: _share(r.factor.failing, r.factor.share_failing), label="in group"
    ),
    figure_column(
        "others",
        12,
        lambda r, _: _share(r.factor.others, r.factor.share_others),
        label="in others",
        priority=1,
    ),
    Column("search", "search (⏎ opens it)", 16, flex=True, cell=_search, min_width=16),
)
