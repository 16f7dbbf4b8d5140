"""What Enter and the reading keys open: the console's way from one screen to the next.

Enter asks the screen on top what its selected row stands for (an
:class:`~skconsole.tui.opening.Opening`: the panels and lists say it as data and never
import a screen) and this opens it: a job's detail, a failure group's jobs, a search, a
panel filtered, another queue's panels. The job detail's keys open what the job points
at (the job that posted it, the jobs it posted, why it waits); J opens a job by its id,
s the search, F what a failure group's jobs share (a screen of factors), m more of a
list that stopped at its limit. The App holds one
:class:`Navigator`: Enter is its ``open_selected``, and a key whose spec ``navigates``
runs ``navigate('<id>')``, its method of that name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass
from typing import Any

from textual.app import App

from skconsole.core.errors import ConfigError
from skconsole.core.places import Place, place
from skconsole.tui.actions import offer_with_key
from skconsole.tui.context import Console, Opens
from skconsole.tui.model import Snapshot
from skconsole.tui.opening import Opening, OpenKind, job
from skconsole.tui.reads import PrefixRead
from skconsole.tui.screens.charts import ChartsScreen
from skconsole.tui.screens.factors import FactorsScreen
from skconsole.tui.screens.group_jobs import GroupJobsScreen
from skconsole.tui.screens.job_detail import JobDetailScreen
from skconsole.tui.screens.jump_to_job import JumpToJobScreen
from skconsole.tui.screens.main import MainScreen
from skconsole.tui.screens.search import SearchScreen
from skconsole.tui.screens.why_job import WhyScreen


@dataclass(eq=False)
class Navigator:
    """Opens screens on the App's stack (Esc comes back from each).

    ``console`` is what the screens are given, ``main`` the main screen (where a panel
    is shown filtered), ``snapshot`` the data on screen (the workers a job's owner is
    named among, the failure groups), ``show_queue`` points the panels at another queue.
    """

    app: App[Any]
    console: Console
    main: MainScreen
    _: KW_ONLY
    snapshot: Callable[[], Snapshot | None]
    show_queue: Callable[[str], None]

    def open_selected(self) -> None:
        """Enter: what the selected row stands for (see each panel's ``opening``)."""
        screen = self.app.screen
        if isinstance(screen, Opens):
            self.open(screen.opening(self.snapshot()))

    def open(self, opening: Opening | None) -> bool:
        """Open a job, a failure group (by its signature or its short id), a search, a
        panel filtered or a queue; False: nothing (None, or a group not among the
        failure groups read)."""
        if opening is None:
            return False
        snapshot = self.snapshot()
        match opening.kind:
            case OpenKind.JOB:
                workers = snapshot.workers if snapshot is not None else ()
                self.app.push_screen(
                    JobDetailScreen(opening.value, self.console, opening.group, workers=workers)
                )
            case OpenKind.GROUP:
                groups = snapshot.failures if snapshot is not None else ()
                group = next((g for g in groups if opening.value in (g.signature, g.id)), None)
                if group is None:
                    return False
                self.app.push_screen(GroupJobsScreen(group, self.console))
            case OpenKind.SEARCH:
                self.app.push_screen(SearchScreen(self.console, opening.value))
            case OpenKind.FILTER:
                self.main.show_filtered(opening.panel, opening.value)
            case OpenKind.QUEUE:
                self.show_queue(opening.value)
        return True

    def place_shown(self) -> Place | None:
        """The place on screen one can link to: the job shown, the failure group whose
        jobs are listed, the search (None: the main screen, or a search not made)."""
        screen = self.app.screen
        try:
            if isinstance(screen, JobDetailScreen):
                return place("job", screen.task_id)
            if isinstance(screen, GroupJobsScreen):
                return place("group", screen.group.id)
            if isinstance(screen, SearchScreen) and screen.query_ is not None:
                return place("search", screen.line)
        except ConfigError:  # a search line too long for a link
            return None
        return None

    def search(self) -> None:
        """s: the search screen (payload.PATH=VALUE type=T ...)."""
        if not isinstance(self.app.screen, SearchScreen):
            self.app.push_screen(SearchScreen(self.console))

    def factor_search(self) -> None:
        """F, in a failure group: what its jobs share, on a screen of its own (read off the
        UI thread); Enter on a factor opens its search."""
        screen = self.app.screen
        if isinstance(screen, GroupJobsScreen):
            self.app.push_screen(FactorsScreen(screen.group, self.console))

    def charts(self) -> None:
        """h: the charts of the record, of the whole queue, or, from the depth panel, of
        the type selected there (t cycles the types)."""
        if isinstance(self.app.screen, ChartsScreen):
            return
        snapshot = self.snapshot()
        types = sorted({d.task_type for d in snapshot.depth}) if snapshot is not None else []
        on_depth = self.main.current_scope() == "depth"
        selected = self.main.panel("depth").table.selected_key if on_depth else None
        self.app.push_screen(ChartsScreen(self.console, types, selected))

    def _charts_shown(self) -> ChartsScreen | None:
        screen = self.app.screen
        return screen if isinstance(screen, ChartsScreen) else None

    def chart_type(self) -> None:
        """t, on the charts: the next type (the whole queue first)."""
        if (shown := self._charts_shown()) is not None:
            shown.next_type()

    def chart_wider(self) -> None:
        """→, on the charts: the next longer window."""
        if (shown := self._charts_shown()) is not None:
            shown.wider()

    def chart_narrower(self) -> None:
        """←, on the charts: the next shorter window."""
        if (shown := self._charts_shown()) is not None:
            shown.narrower()

    def more(self) -> None:
        """m, on a list that stopped at its limit (a group's jobs, a search): read more."""
        screen = self.app.screen
        if isinstance(screen, GroupJobsScreen | SearchScreen):
            screen.load_more()

    def jump_to_job(self) -> None:
        """J: ask for a job id or prefix (looked up off the UI thread), then open that job."""

        def opened(task_id: str | None) -> None:
            self.open(None if task_id is None else job(task_id))

        self.app.push_screen(
            JumpToJobScreen(lambda text: self.console.source.read(PrefixRead(text))), opened
        )

    # -- the job detail's keys ------------------------------------------------------------
    def _job_shown(self) -> JobDetailScreen | None:
        screen = self.app.screen
        return screen if isinstance(screen, JobDetailScreen) else None

    def why(self) -> None:
        """w: why the job shown, or a jobs list's selected job, waits (read in a worker
        thread by the dialog)."""
        shown = self._job_shown()
        screen = self.app.screen
        task_id = shown.task_id if shown is not None else None
        if task_id is None and isinstance(screen, (SearchScreen, GroupJobsScreen)):
            task_id = screen.selected_job()
        if task_id is not None:
            self.app.push_screen(WhyScreen(task_id, self.console, offer_with_key))

    def parent_of_shown(self) -> Opening | None:
        """The job that posted the one shown, when its row is still there."""
        shown = self._job_shown()
        parent = None if shown is None else shown.parent_id
        return None if parent is None else job(parent)

    def posted_by_shown(self) -> Opening | None:
        """The jobs the one shown posted: the one child, or a search for them all."""
        shown = self._job_shown()
        return None if shown is None else shown.posted_jobs()

    def parent(self) -> None:
        """u: open the job that posted the one shown."""
        self.open(self.parent_of_shown())

    def children(self) -> None:
        """d: open the jobs the one shown posted."""
        self.open(self.posted_by_shown())
