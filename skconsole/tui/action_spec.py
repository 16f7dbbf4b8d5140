"""What a console action is (:class:`ActionSpec`) and the scopes it may apply in.

Below the screens, so that a screen (the help, the overview) can read actions
without importing the registry (:mod:`skconsole.tui.actions`), which imports the
screens its dialogs open. Scopes name where an action applies: the focused
panel of the main screen, the failure-group drill-down (``jobs``), the job
detail (``job``), the overview of several queues (``queues``).
"""

from __future__ import annotations

from dataclasses import dataclass

from skconsole.tui.operation import Operation
from skconsole.tui.panels import PANEL_IDS, PANELS

TABLE_SCOPES = frozenset({*PANEL_IDS, "jobs"})
MAIN = frozenset(PANEL_IDS)
SELECTED = frozenset({"failures", "jobs", "job", "depth"})  # a selected job, group or task type
#: the overview of several queues (screens/overview.py): a scope only with several
QUEUES = "queues"
# where Enter opens a row
OPENS = frozenset({*(p.scope for p in PANELS if p.opens), "jobs", "factors", QUEUES})


@dataclass(frozen=True)
class ActionSpec:
    """One action: what runs, on which key, where, and how careful it must be."""

    id: str  # the App method is ``action_<id>`` (``action_operate``, ``action_navigate``)
    key: str  # Textual key name
    description: str  # footer text: short
    help: str  # help screen and command palette: one sentence
    scopes: frozenset[str] = frozenset()  # empty: everywhere
    destructive: bool = False  # opens a confirmation that defaults to No
    needs_write: bool = False  # hidden in read-only mode, dimmed while disconnected
    needs_engine: bool = False  # only with an embedded engine (--tasks, demo)
    needs_queues: bool = False  # only with several queues (--dsn repeated, --queues)
    needs_past: bool = False  # only at a past minute (--at, --bundle)
    footer: bool = True
    priority: bool = False  # wins over the focused table's own keys (enter)
    home: str | None = None  # panel the command palette focuses first, when out of scope
    key_display: str | None = None
    op: Operation | None = None  # a write key's operator action
    #: what it opens is the Navigator's to do (its method of the same name)
    navigates: bool = False

    @property
    def action(self) -> str:
        """The action string Textual runs: ``operate('<id>')`` for an operator action,
        ``navigate('<id>')`` for one the Navigator does, else ``<id>``."""
        if self.op is not None:
            return f"operate({self.id!r})"
        return f"navigate({self.id!r})" if self.navigates else self.id

    def allowed(
        self,
        engine: bool,
        read_only: bool,
        connected: bool,
        several: bool = False,
        past: bool = False,
    ) -> bool | None:
        """False: hidden (no engine, read-only, one queue, not in the past); None: dimmed
        (a write while offline)."""
        if self.needs_engine and not engine:
            return False
        if self.needs_past and not past:
            return False
        if self.needs_queues and not several:
            return False
        if self.needs_write:
            if read_only:
                return False
            if not connected:
                return None
        return True

    def applies(self, scope: str) -> bool:
        return not self.scopes or scope in self.scopes

    @property
    def shown_key(self) -> str:
        return self.key_display or self.key
