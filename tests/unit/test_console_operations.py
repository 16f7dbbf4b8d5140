"""The console's write keys are data: each names its ops spec and how the selection becomes
its target, and every spec's wording fills in for any target (no database, no app)."""

from __future__ import annotations

import string

from skconsole import ops
from skconsole.tui import actions
from skconsole.tui.model import ActionRequest, OutcomeInfo, PreviewInfo, Target, TargetKind
from skconsole.tui.sentences import nothing_text, outcome_text, question

FIELDS = {"verb", "Verb", "Done", "target", "Target", "phrase", "done_phrase"}


def _names(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def test_every_write_key_runs_an_operation_and_every_operation_a_write_key() -> None:
    for spec in actions.ACTIONS:
        assert (spec.op is not None) == (spec.needs_write and not spec.needs_engine), spec.id
        if spec.op is not None:
            assert spec.action == f"operate({spec.id!r})"
            assert actions.spec_for("operate", (spec.id,)) is spec


def test_every_spec_s_wording_uses_only_the_fields_the_console_fills_in() -> None:
    for action in ops.ACTIONS:
        w = action.wording
        assert _names(w.question) <= FIELDS | {"scope"}, action.name
        assert _names(w.outcome) <= FIELDS | {"changed", "summary", "tally"}, action.name
        assert _names(w.nothing) <= FIELDS, action.name
        if w.left_alone is not None:
            assert _names(w.left_alone) <= FIELDS | {"changed", "summary", "tally"}


def test_the_scope_comes_from_the_target_s_kind_not_its_label() -> None:
    params = ops.RequeueParams()
    for kind, label, scope in (
        (TargetKind.JOB, "job 1a2b3c4d (t, Fatal)", "job 1a2b3c4d (t, Fatal)"),
        (TargetKind.GROUP, "group `E`", "3 jobs in group `E`"),
        (TargetKind.TYPE_JOBS, "failed jobs of type `t`", "3 failed jobs of type `t`"),
        (TargetKind.SHOWN, "jobs shown in group `E`", "jobs shown in group `E`"),
    ):
        request = ActionRequest(ops.REQUEUE, Target(label, kind), params)
        assert question(PreviewInfo(request, 3, ())) == f"Requeue {scope}, error counts kept?"
    request = ActionRequest(ops.REQUEUE, Target("group `E`", TargetKind.GROUP), params)
    assert outcome_text(OutcomeInfo(request, 3, 1, 2)) == (
        "Requeued 1; 2 had changed state meanwhile and were left alone."
    )
    assert nothing_text(request) == "Nothing to requeue for group `E`: nothing there qualifies now."


def test_a_requeue_s_question_says_what_becomes_of_attempts_and_the_spread() -> None:
    params = ops.RequeueParams(reset_errors=True, spread_s=600.0)
    request = ActionRequest(ops.REQUEUE, Target("group `E`", TargetKind.GROUP), params)

    assert question(PreviewInfo(request, 50, ())) == (
        "Requeue 50 jobs in group `E`, error counts reset to 0, due over the next 10m?"
    )
