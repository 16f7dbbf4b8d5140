"""What the replication read model says of each mode and failover, what check makes of it,
and what the console's status line shows: on made-up readings, no database."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from skconsole.check.verdict import Level, check_replication
from skconsole.read.replication import LastFailover, Replication, ReplicationMode
from skconsole.tui.widgets.status_bar import StatusState, failover_text, fit_line, replication_text
from skconsole.worker.jobs import token_timeline
from tests.support.samples import PRIMARY_WITH_AN_ASYNC_STANDBY

AT = datetime(2026, 12, 3, 21, 13, 4, tzinfo=UTC)
ASYNC = replace(PRIMARY_WITH_AN_ASYNC_STANDBY, recorded_timeline=1)


def _after(age_s: float, held_for_s: float) -> Replication:
    """A failover to timeline 2, ``age_s`` ago, claims held ``held_for_s`` more."""
    last = LastFailover(2, 1, AT, AT, age_s=age_s, held_for_s=held_for_s)
    return replace(ASYNC, timeline=2, recorded_timeline=2, last_failover=last)


def test_each_mode_is_read_from_the_settings_and_the_senders() -> None:
    sync = replace(ASYNC, sync_names="*", sync_senders=1)
    assert ASYNC.mode is ReplicationMode.ASYNCHRONOUS
    assert sync.mode is ReplicationMode.SYNCHRONOUS
    assert replace(sync, synchronous_commit="local").mode is ReplicationMode.ASYNCHRONOUS
    assert replace(sync, sync_senders=0).mode is ReplicationMode.STALLED
    assert replace(sync, sync_senders=0, hidden_senders=1).mode is ReplicationMode.HIDDEN
    assert replace(ASYNC, senders=0).mode is ReplicationMode.NO_STANDBY
    assert replace(ASYNC, standby=True).mode is ReplicationMode.STANDBY


def test_asynchronous_replication_says_what_a_failover_can_lose() -> None:
    said = ASYNC.says()
    assert "can lose the posts acknowledged" in said
    assert "never two at once" in said
    assert "docs/howto/high-availability.md" in said


def test_synchronous_commit_local_is_asynchronous_and_says_why() -> None:
    said = replace(ASYNC, sync_names="*", synchronous_commit="local").says()
    assert "synchronous_commit = local: commits do not wait" in said


def test_a_missing_synchronous_standby_is_critical() -> None:
    stalled = replace(ASYNC, sync_names="FIRST 1 (s1)", sync_senders=0)
    result = check_replication(stalled)
    assert result.level is Level.CRITICAL
    assert "every commit (posts, claims, results) waits" in result.findings[0].text


def test_claims_held_after_a_failover_are_a_warning_that_says_when_and_where() -> None:
    result = check_replication(_after(3.0, 9.0))
    assert result.level is Level.WARNING
    assert result.summary == "claims held after a failover to timeline 2"
    assert "failover to timeline 2 (from 1) at 2026-12-03 21:13:04 UTC" in result.findings[0].text
    assert "claims held for 9.0s more" in result.findings[0].text


def test_a_failover_no_worker_has_reached_is_a_warning() -> None:
    result = check_replication(replace(ASYNC, timeline=3, recorded_timeline=2))
    assert result.level is Level.WARNING
    assert result.summary == "a failover to timeline 3 no worker has reached yet"


def test_a_failover_behind_the_queue_is_ok_and_named_for_a_day() -> None:
    recent = check_replication(_after(300.0, 0.0))
    old = check_replication(_after(90_000.0, 0.0))
    assert recent.level is Level.OK and "(a failover 5m 00s ago)" in recent.summary
    assert old.level is Level.OK and "failover" not in old.summary


def test_the_status_line_names_a_failover_while_it_matters() -> None:
    assert failover_text(ASYNC) is None
    held = failover_text(_after(3.0, 9.0))
    after = failover_text(_after(300.0, 0.0))
    unseen = failover_text(replace(ASYNC, timeline=3, recorded_timeline=2))
    assert held == "claims held 9s · failover to timeline 2"
    assert after == "failover 21:13 UTC → timeline 2"
    assert unseen == "failover to timeline 3, no worker there yet"


def test_on_a_standby_the_status_line_says_how_old_what_it_shows_may_be() -> None:
    standby = replace(ASYNC, standby=True, senders=0, lag_s=1.2, receiving=True)

    assert replication_text(standby) == "as of 1.2s ago on standby"
    assert replication_text(replace(standby, receiving=False, lag_s=200.0)) == (
        "standby not receiving from its primary: as of 3m 20s ago"
    )
    assert replication_text(replace(standby, lag_s=None)) == ("as of an unknown moment on standby")
    assert replication_text(ASYNC) is None


def test_a_console_reading_a_standby_alone_says_so_on_its_mode_badge() -> None:
    state = StatusState(
        server="db", connection="live", attempt=0, error=None, age_s=1.0, interval_s=2.0,
        paused=False, read_only=True, engine=None, engine_state=None, standby=True,
    )  # fmt: skip

    assert fit_line(state, 200).mode == " READ-ONLY · STANDBY "
    assert fit_line(replace(state, read_only=False), 200).mode == " WRITE "


def test_a_fencing_token_carries_its_timeline_above_the_sequence() -> None:
    assert token_timeline((2 << 44) + 12_345) == 2
    assert token_timeline(12_345) == 0  # handed out where the timeline was unknown
    assert (3 << 44) + 1 > (2 << 44) + (1 << 44) - 1  # a later timeline's tokens are greater
