"""Panel 3: failed jobs grouped by normalized error signature; Enter drills in.

The groups are read on a slower cadence than the rest (see ``FAILURES_EVERY_S``
in :mod:`skconsole.tui.app`), so the title says how old they are; the largest
:data:`~skconsole.tui.refresh.FAILURE_GROUPS_SHOWN` are read, and the title says when
there were more.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from skconsole.read import FailureGroup
from skconsole.tui.formatting import fmt_age_s, shorten_signature
from skconsole.tui.model import Snapshot
from skconsole.tui.opening import Opening, OpenKind
from skconsole.tui.refresh import FAILURE_GROUPS_SHOWN
from skconsole.tui.widgets.panel import Panel, console_columns
from skconsole.views.failures import GROUP_COLUMNS, NEW_MARK

#: the marks before a signature (new; a breaker's state), kept whole when it is shortened
_MARKS = re.compile(rf"^(?:{re.escape(NEW_MARK)})?(?:BREAKER [A-Z-]+ · )?")


def fit_signature(text: str, width: int) -> str:
    """A group's signature shortened to ``width`` (its module path first), the mark of a
    new group kept whole in front of it."""
    marks = _MARKS.match(text)
    lead = marks.group(0) if marks is not None else ""
    return lead + shorten_signature(text[len(lead) :], width - len(lead))


class FailuresPanel(Panel):
    scope = "failures"
    title = "Failure groups"
    short_title = "Failures"
    COLUMNS = console_columns(GROUP_COLUMNS, fit={"signature": fit_signature})
    opens = "the group's jobs"

    def items(self, snapshot: Snapshot) -> Sequence[FailureGroup]:
        return snapshot.failures

    def row_key(self, item: FailureGroup) -> str:
        return item.signature

    def opening(self, key: str, snapshot: Snapshot) -> Opening | None:
        return Opening(OpenKind.GROUP, key)

    def tab_note(self, snapshot: Snapshot) -> str | None:
        return f"{len(snapshot.failures):,}" if self.has_data(snapshot) else None

    def alarm(self, snapshot: Snapshot) -> bool:
        return bool(snapshot.failures)

    def has_data(self, snapshot: Snapshot) -> bool:
        return snapshot.failures_at is not None

    def summarize(self, snapshot: Snapshot) -> str:
        age = snapshot.failures_age_s
        if age is None:
            return "reading…"
        n, jobs = len(snapshot.failures), f"{snapshot.failed_jobs:,} jobs"
        if n >= FAILURE_GROUPS_SHOWN:  # the read stopped there: the jobs are those shown's
            groups, jobs = f"the largest {n:,} groups (more not shown)", f"{jobs} in them"
        else:
            groups = f"{n:,} groups"
        return f"{groups} · {jobs} · as of {fmt_age_s(age)} ago"

    def group(self, key: str | None, snapshot: Snapshot | None) -> FailureGroup | None:
        """The group of the row ``key`` (its signature) in ``snapshot``."""
        if key is None or snapshot is None:
            return None
        return next((g for g in snapshot.failures if g.signature == key), None)
