"""What ``ctx.progress`` accepts (no database): a fraction from 0 to 1 or None, a
message capped at 200 characters; and how the faces word it."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest

from skconsole.core.errors import InvalidJobError
from skconsole.read.inflight import Progress
from skconsole.views.inflight import progress_text
from skconsole.worker.progress import MAX_MESSAGE, ProgressBoard, ProgressSink
from skconsole.worker.registry import JobContext


def context(board: ProgressBoard, claim_id: int = 1) -> JobContext:
    task_id = uuid.uuid4()
    return JobContext(
        task_id=task_id,
        task_type="t",
        source="s",
        priority=0,
        attempt=1,
        error_count=0,
        posted_at=datetime.now(UTC),
        progress_sink=ProgressSink(board, task_id, claim_id),
    )


@pytest.mark.parametrize("bad", [-0.01, 1.01, float("nan"), float("inf"), True, "0.5"])
def test_a_fraction_outside_0_to_1_or_not_a_number_is_refused(bad: object) -> None:
    board = ProgressBoard()
    board.begin(1)
    with pytest.raises(InvalidJobError):
        context(board).progress(bad)  # type: ignore[arg-type]
    assert board.take() == []


def test_only_the_latest_report_of_an_attempt_is_kept_for_the_next_write() -> None:
    board = ProgressBoard()
    board.begin(1)
    ctx = context(board)
    for i in range(100):
        ctx.progress(i / 100, f"step {i}")
    taken = board.take()
    assert [(e.fraction, e.message) for e in taken] == [(0.99, "step 99")]
    assert board.take() == []


def test_a_long_message_is_capped_and_a_nul_dropped() -> None:
    board = ProgressBoard()
    board.begin(1)
    context(board).progress(None, "a\x00" + "x" * 1000)
    (entry,) = board.take()
    assert entry.fraction is None
    assert entry.message is not None and len(entry.message) == MAX_MESSAGE
    assert entry.message.startswith("ax") and entry.message.endswith("…")


def test_what_an_attempt_reports_after_it_ended_is_dropped() -> None:
    board = ProgressBoard()
    board.begin(1)
    ctx = context(board)
    ctx.progress(0.1, "running")
    board.end(1)
    ctx.progress(0.9, "too late")
    assert board.take() == []


def test_progress_reads_as_a_whole_percentage_then_the_message() -> None:
    at = datetime.now(UTC)
    assert progress_text(Progress(0.999, "copying", at)) == "99% copying"
    assert progress_text(Progress(None, "copying", at)) == "copying"
    assert progress_text(Progress(1.0, None, at)) == "100%"
    assert progress_text(None) == "-"
