"""The rules of `skconsole check` and its Nagios plugin output, on made-up read models."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest

from skconsole.check.verdict import (
    CHECKS,
    CheckResult,
    Finding,
    Level,
    Perf,
    QueueReports,
    Report,
    Thresholds,
    check_health,
    check_hung,
    check_slos,
    check_workers,
    evaluate,
    skipped,
    worst,
)
from skconsole.core.errors import SkconsoleError
from skconsole.core.states import InflightState, WorkerState
from skconsole.read import Inflight, InflightJob, WorkerInfo
from skconsole.read.flow import TypeFlow
from skconsole.read.health import Advice, Health, Horizon
from tests.support.cli import run_in_process
from tests.support.samples import PRIMARY_WITH_AN_ASYNC_STANDBY, schedule_info

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)

REPLICATION = PRIMARY_WITH_AN_ASYNC_STANDBY


def type_flow(
    task_type: str = "emails.send",
    *,
    ready: int = 0,
    oldest: float | None = None,
    slo: float | None = None,
    paused: bool = False,
) -> TypeFlow:
    return TypeFlow(task_type, 300.0, 0, 0, ready, False, oldest, slo, paused)


def hung_job(task_type: str = "emails.send", *, silent_s: float = 20.0) -> InflightJob:
    return InflightJob(
        task_id=uuid.uuid4(),
        task_type=task_type,
        attempt=1,
        error_count=0,
        started_at=NOW,
        running_s=silent_s + 5,
        worker_id=uuid.uuid4(),
        worker_host="w1",
        worker_pid=42,
        worker_connected=False,
        heartbeat_age_s=silent_s,
        timeout_s=None,
        state=InflightState.HUNG,
        note=None,
        hung_reason=f"worker gone (w1 pid 42): no heartbeat for {silent_s:g} s",
        reapable_in_s=0.0,
    )


def worker(
    state: WorkerState = WorkerState.ALIVE, *, in_flight: int = 0, types: tuple[str, ...] = ()
) -> WorkerInfo:
    return WorkerInfo(
        worker_id=uuid.uuid4(),
        process_id="p",
        host="w1",
        pid=42,
        concurrency=4,
        task_types=list(types),
        started_at=NOW,
        heartbeat_age_s=1.0 if state is WorkerState.ALIVE else 90.0,
        stopped=False,
        connected=state is WorkerState.ALIVE,
        in_flight=in_flight,
        state=state,
        note="",
        lease_s=30.0,
    )


def table_health(*advice: Advice) -> Health:
    return Health(
        NOW, [], Horizon(None, None, None, [], [], []), [], [], list(advice), {}, "me", REPLICATION
    )


NO_INFLIGHT = Inflight([], 0, 0)


# -- slo ---------------------------------------------------------------------------------
def test_an_slo_breach_is_critical_and_names_the_type_and_the_wait() -> None:
    result = check_slos([type_flow(ready=3, oldest=95.0, slo=30.0)])

    assert result.level is Level.CRITICAL
    assert result.summary == "1 SLO breached"
    assert result.findings[0].text == "emails.send: oldest ready 1m 35s > 30s"


def test_an_slo_within_20_percent_is_a_warning_that_says_so() -> None:
    result = check_slos([type_flow(ready=3, oldest=25.0, slo=30.0)])

    assert result.level is Level.WARNING
    assert "within 20% of its SLO 30s" in result.findings[0].text


def test_met_slos_and_types_without_one_are_ok() -> None:
    result = check_slos([type_flow(ready=3, oldest=5.0, slo=30.0), type_flow("other", ready=9)])

    assert (result.level, result.summary) == (Level.OK, "1 SLO met")
    assert check_slos([type_flow("other", ready=9, oldest=1e6)]).summary == "no SLO set"


def test_a_paused_types_breach_is_only_a_warning() -> None:
    result = check_slos([type_flow(ready=3, oldest=95.0, slo=30.0, paused=True)])

    assert result.level is Level.WARNING
    assert result.findings[0].text.endswith("(paused)")


# -- hung --------------------------------------------------------------------------------
def test_hung_jobs_warn_and_one_hung_too_long_is_critical() -> None:
    fresh = Inflight([hung_job()], 1, 1)
    stale = Inflight([hung_job(silent_s=900.0), hung_job()], 2, 2)

    assert check_hung(NO_INFLIGHT).level is Level.OK
    assert check_hung(fresh).level is Level.WARNING
    assert check_hung(fresh, Thresholds(hung_warn=2)).level is Level.OK
    result = check_hung(stale)
    assert result.level is Level.CRITICAL
    assert [f.level for f in result.findings] == [Level.CRITICAL, Level.WARNING]


# -- workers -----------------------------------------------------------------------------
def test_a_worker_past_its_lease_holding_jobs_is_critical() -> None:
    result = check_workers([worker(WorkerState.GONE, in_flight=2), worker(WorkerState.GONE)], [])

    assert result.level is Level.CRITICAL
    assert (
        result.findings[0].text == "worker w1 pid 42 gone (no heartbeat for 1m 30s) holding 2 jobs"
    )


def test_ready_jobs_no_alive_worker_runs_are_a_warning() -> None:
    flows = [
        type_flow(ready=5),
        type_flow("paused", ready=5, paused=True),
        type_flow("run", ready=1),
    ]

    result = check_workers(
        [worker(types=("run",)), worker(WorkerState.GONE, types=("emails.send",))], flows
    )

    assert result.level is Level.WARNING
    assert [f.subject for f in result.findings] == ["emails.send"]


# -- health ------------------------------------------------------------------------------
def test_health_advice_on_the_queues_state_warns_but_a_setting_does_not() -> None:
    held = Advice("horizon_session", "a transaction open for 10m 00s holds the xmin horizon")
    off = Advice("autovacuum_off", "autovacuum is off for the whole server")

    assert check_health(table_health(held, off)).findings == (
        Finding("health", Level.WARNING, "horizon_session", held.text),
    )
    assert check_health(table_health(off)).level is Level.OK


# -- the report ----------------------------------------------------------------------------
def test_the_summary_line_follows_the_plugin_convention() -> None:
    report = evaluate(
        [type_flow(ready=3, oldest=95.0, slo=30.0)],
        NO_INFLIGHT,
        [worker(types=("emails.send",))],
        table_health(),
    )

    assert report.exit_code == 2
    assert report.summary_line() == (
        "SKCONSOLE CRITICAL - 1 SLO breached (emails.send: oldest ready 1m 35s > 30s)"
        " | oldest_ready_emails.send=95s;24;30;0 hung_jobs=0;1;;0 alive_workers=1;;;0"
        " dead_workers=0;;1;0"
    )
    assert report.detail_lines() == ["CRITICAL slo: emails.send: oldest ready 1m 35s > 30s"]


def test_all_well_is_ok_with_each_checks_summary() -> None:
    report = evaluate([type_flow(slo=30.0)], NO_INFLIGHT, [worker()], table_health())

    assert report.exit_code == 0
    assert report.summary_line().startswith(
        "SKCONSOLE OK - 1 SLO met, no hung job, 1 worker alive, tables healthy, no schedule |"
    )


def test_the_worst_check_comes_first_and_long_lists_are_cut() -> None:
    findings = tuple(Finding("health", Level.WARNING, str(n), f"w{n}") for n in range(5))
    report = Report(
        (
            CheckResult("health", "5 health warnings", findings),
            CheckResult("slo", "1 SLO breached", (Finding("slo", Level.CRITICAL, "t", "t late"),)),
        )
    )

    assert report.summary_line() == (
        "SKCONSOLE CRITICAL - 1 SLO breached (t late), 5 health warnings (w0; w1; w2; 2 more)"
    )


def test_text_from_the_database_cannot_break_the_line_or_reach_the_terminal_raw() -> None:
    report = evaluate(
        [type_flow("a|b\x1b[31m\ny", ready=1, oldest=95.0, slo=30.0)],
        NO_INFLIGHT,
        [worker(types=("a|b\x1b[31m\ny",))],
        table_health(),
    )

    line = report.summary_line()
    assert line.count("|") == 1 and "\x1b" not in line and "\n" not in line
    assert "a\\x7cb\\x1b[31m\\ny" in line


def test_a_perf_label_is_quoted_when_it_must_be() -> None:
    assert Perf("hung_jobs", 2, warn=1).render() == "hung_jobs=2;1;;0"
    assert Perf("it's = odd", 1.5, "s", crit=3).render() == "'it''s _ odd'=1.5s;;3;0"


def test_a_skipped_check_is_left_out_with_its_perfdata() -> None:
    unserved = [type_flow(ready=5)]  # no registered worker runs it: a WARNING

    report = evaluate(unserved, NO_INFLIGHT, [], table_health(), skip=skipped(["workers"]))

    assert report.exit_code == 0
    assert [c.name for c in report.checks] == ["slo", "hung", "health", "schedules"]
    assert [p.label for p in report.perfdata] == ["hung_jobs"]


@pytest.mark.parametrize(
    ("names", "error"),
    [
        (
            ["worker"],
            "--skip: no check 'worker' (the checks: slo, hung, workers, health, schedules,"
            " replication, breakers)",
        ),
        (list(CHECKS), "--skip: every check is left out"),
    ],
)
def test_skip_refuses_an_unknown_check_and_leaving_every_check_out(
    names: list[str], error: str
) -> None:
    with pytest.raises(SkconsoleError) as raised:
        skipped(names)

    assert str(raised.value).startswith(error)


def test_unknown_is_one_line_with_exit_code_3() -> None:
    report = Report(error="cannot connect to PostgreSQL at db:5432: connection refused")

    assert report.exit_code == 3
    assert report.lines() == [
        "SKCONSOLE UNKNOWN - cannot connect to PostgreSQL at db:5432: connection refused"
    ]
    assert report.as_dict()["status_name"] == "UNKNOWN"


def test_a_schedule_no_running_worker_has_is_a_warning() -> None:
    from skconsole.check.verdict import check_schedules

    result = check_schedules(
        [
            schedule_info(task_type="reports.hourly", scheduled_by=0),
            schedule_info(task_type="kept", scheduled_by=2),
            schedule_info(task_type="old.version", scheduled_by=None),
            schedule_info(task_type="paused", scheduled_by=0, paused=True),
        ]
    )
    assert result.level is Level.WARNING
    assert [f.subject for f in result.findings] == ["reports.hourly"]
    assert "no running worker schedules it" in result.findings[0].text


# -- several queues ------------------------------------------------------------------------------
def _several() -> QueueReports:
    ok = evaluate([type_flow(slo=30.0)], NO_INFLIGHT, [worker()], table_health())
    late = evaluate(
        [type_flow(ready=3, oldest=95.0, slo=30.0)],
        NO_INFLIGHT,
        [worker(types=("emails.send",))],
        table_health(),
    )
    away = Report(error="cannot connect to PostgreSQL at search-db:5432: connection refused")
    return QueueReports((("emails", ok), ("search", away), ("billing", late)))


def test_several_queues_exit_with_the_worst_verdict_critical_over_unknown() -> None:
    assert _several().exit_code == 2
    assert worst([Level.OK, Level.UNKNOWN, Level.WARNING]) is Level.UNKNOWN
    assert worst([Level.UNKNOWN, Level.CRITICAL]) is Level.CRITICAL
    assert worst([]) is Level.OK


def test_several_queues_summary_names_each_verdict_worst_first_with_prefixed_perfdata() -> None:
    line = _several().summary_line()

    assert line.startswith("SKCONSOLE CRITICAL - billing CRITICAL, search UNKNOWN, emails OK | ")
    perf = line.partition(" | ")[2].split()
    assert perf[0] == "emails:oldest_ready_emails.send=0s;24;30;0"
    assert "billing:oldest_ready_emails.send=95s;24;30;0" in perf
    assert "search:" not in line  # no perfdata from a queue that could not be checked


def test_each_queues_lines_are_prefixed_with_its_name_and_carry_no_perfdata() -> None:
    lines = _several().lines()[1:]

    assert lines == [
        "emails: SKCONSOLE OK - 1 SLO met, no hung job, 1 worker alive, tables healthy, no schedule",
        "search: SKCONSOLE UNKNOWN - cannot connect to PostgreSQL at search-db:5432: connection refused",
        "billing: SKCONSOLE CRITICAL - 1 SLO breached (emails.send: oldest ready 1m 35s > 30s)",
        "billing: CRITICAL slo: emails.send: oldest ready 1m 35s > 30s",
    ]


def test_several_queues_json_is_a_list_keyed_by_queue_name() -> None:
    listed = _several().as_list()

    assert [(d["queue"], d["status_name"]) for d in listed] == [
        ("emails", "OK"),
        ("search", "UNKNOWN"),
        ("billing", "CRITICAL"),
    ]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["check", "--bogus"], "No such option: --bogus"),
        (["check", "--timeout", "0s"], "--timeout must be between 1s and 1h, got '0s'"),
        (["--queues", "/nonexistent/queues.toml", "check"], "cannot read the queues file"),
    ],
    ids=["unknown option", "bad value", "bad queues file"],
)
def test_checks_own_mistakes_are_unknown_never_critical(args: list[str], said: str) -> None:
    """Nagios and Icinga read exit 2 as CRITICAL and page someone: a usage or
    configuration error of check itself is 3 UNKNOWN, in the plugin's one line."""
    run = run_in_process(args)

    assert run.returncode == 3
    (line,) = run.stdout.strip().splitlines()
    assert line.startswith("SKCONSOLE UNKNOWN - ") and said in line, line
