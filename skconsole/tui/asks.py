"""Dialogs that ask for an operator action's parameters before its preview: an edit's
payload and priority, a type's limits or retention, a purge's age, a requeue's attempts
and spread (:attr:`Operation.ask`)."""

from __future__ import annotations

from dataclasses import replace

from skconsole import ops
from skconsole.ops.requeue import Attempts
from skconsole.tui.action_runner import REPEAT_GUARD_S
from skconsole.tui.formatting import fmt_seconds
from skconsole.tui.model import ActionRequest, Target, TargetKind
from skconsole.tui.operation import Here, Pick, Question
from skconsole.tui.screens.breaker_dialog import BreakerAnswer, BreakerScreen
from skconsole.tui.screens.edit_job import EditJobScreen
from skconsole.tui.screens.job_detail import JobDetailScreen
from skconsole.tui.screens.limit_type import LimitTypeScreen
from skconsole.tui.screens.purge_age import PurgeAgeScreen
from skconsole.tui.screens.requeue_jobs import RequeueJobsScreen
from skconsole.tui.screens.retention_type import RetentionTypeScreen
from skconsole.tui.targets import selected_type

#: the edit action's key (tui/actions.py takes it from here): pressed again as the
#: editor opens, it is dropped rather than typed into the payload
EDIT_KEY = "E"


def edit(here: Here, pick: Pick) -> Question[ops.EditParams]:
    """The job's new payload and priority (its resolver checked it may be edited)."""
    screen = here.screen
    assert isinstance(screen, JobDetailScreen) and screen.detail is not None

    def answer(params: ops.EditParams | None) -> Pick | None:
        return None if params is None else replace(pick, params=params)

    # E pressed twice, or held, types nothing into the payload
    opener = EditJobScreen(screen.detail, guard_s=REPEAT_GUARD_S, opener=EDIT_KEY)
    return Question(opener, answer)


def limit(here: Here, pick: Pick) -> Question[ops.LimitParams]:
    """The selected type's limits, starting from those it has."""
    row = selected_type(here.screen, here.snapshot)
    assert row is not None and pick.target.task_type == row.task_type

    def answer(params: ops.LimitParams | None) -> Pick | None:
        return None if params is None else replace(pick, params=params)

    return Question(LimitTypeScreen(row.task_type, row.limit), answer)


def retention(here: Here, pick: Pick) -> Question[ops.RetentionParams]:
    """How long the selected type's finished results are kept (the preview shows the
    policy it has)."""
    assert pick.target.task_type is not None

    def answer(params: ops.RetentionParams | None) -> Pick | None:
        return None if params is None else replace(pick, params=params)

    return Question(RetentionTypeScreen(pick.target.task_type), answer)


def purge_age(_here: Here, _pick: Pick) -> Question[float]:
    """How old the finished results to delete must be."""

    def answer(seconds: float | None) -> Pick | None:
        if seconds is None:
            return None
        label = f"finished results older than {fmt_seconds(seconds)}"
        target = Target(label, TargetKind.RESULTS, older_than_s=seconds)
        return Pick(target, ops.PurgeParams())

    return Question(PurgeAgeScreen(), answer)


def requeue(here: Here, pick: Pick) -> Question[ops.RequeueParams]:
    """Whether to reset the jobs' error counts and over how long to spread them, stating
    what becomes of their attempts (read with the requeue's own preview, off the UI
    thread)."""
    source, request = here.source, ActionRequest(ops.REQUEUE, pick.target, ops.RequeueParams())

    def attempts() -> Attempts | None:
        return Attempts.from_json(source.preview(request).details.get("attempts"))

    def answer(params: ops.RequeueParams | None) -> Pick | None:
        return None if params is None else replace(pick, params=params)

    return Question(RequeueJobsScreen(pick.target.label, attempts), answer)


def breaker(here: Here, pick: Pick) -> Question[BreakerAnswer]:
    """The breaker to open or close on the selected group's signature: its type (the
    group's first, to start with), the payload term its jobs share, its cool-down."""
    assert isinstance(pick.params, ops.BreakerParams) and pick.params.signature is not None
    signature = pick.params.signature

    def answer(got: BreakerAnswer | None) -> Pick | None:
        if got is None:
            return None
        target = Target(f"the type `{got.task_type}`", TargetKind.TYPE, task_type=got.task_type)
        return replace(pick, target=target, params=got.params)

    return Question(BreakerScreen(signature, pick.target.task_type or ""), answer)
