"""The health advice rules and the autovacuum settings in force, on made-up data (no database)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from skconsole.read.health import (
    Advice,
    AutovacuumSettings,
    Horizon,
    LockWait,
    PreparedXact,
    Session,
    SlotHold,
    TableHealth,
    Thresholds,
    advise,
    autovacuum_settings,
)

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
SERVER = {
    "autovacuum": "on",
    "track_counts": "on",
    "autovacuum_vacuum_scale_factor": "0.2",
    "autovacuum_vacuum_threshold": "50",
    "autovacuum_analyze_scale_factor": "0.1",
    "autovacuum_analyze_threshold": "50",
    "autovacuum_vacuum_cost_delay": "2",
    "autovacuum_vacuum_cost_limit": "-1",
    "vacuum_cost_delay": "0",
    "vacuum_cost_limit": "200",
}
AUTOVACUUM_ON = autovacuum_settings(SERVER, None)


def table(
    name: str = "sk_tasks_queue_t",
    live: int = 1_000,
    dead: int = 0,
    *,
    vacuumed: datetime | None = None,
    settings: AutovacuumSettings = AUTOVACUUM_ON,
) -> TableHealth:
    return TableHealth(
        name, live, dead, 8192 * 100, 8192 * 10, None, vacuumed, None, None, None, None, settings
    )


def session(
    pid: int = 4242,
    app: str | None = "psql",
    xact_age_s: float | None = 7380.0,
    xmin_age: int | None = 1_000,
    state: str | None = "idle in transaction",
) -> Session:
    return Session(
        pid, "alice", app, "10.0.0.1", state, "client backend", NOW, xact_age_s, xmin_age,
        None, "SELECT 1", None,
    )  # fmt: skip


def horizon(
    sessions: list[Session] | None = None,
    slots: list[SlotHold] | None = None,
    prepared: list[PreparedXact] | None = None,
) -> Horizon:
    return Horizon(None, None, None, sessions or [], slots or [], prepared or [])


def rules(advice: list[Advice]) -> list[str]:
    return [a.rule for a in advice]


def run(
    tables: list[TableHealth] | None = None,
    h: Horizon | None = None,
    waits: list[LockWait] | None = None,
    blockers: list[Session] | None = None,
    server: dict[str, str] | None = None,
) -> list[Advice]:
    return advise(
        tables if tables is not None else [table()],
        h or horizon(),
        waits or [],
        blockers or [],
        server or SERVER,
        NOW,
        Thresholds(),
    )


def test_nothing_wrong_nothing_said() -> None:
    assert run() == []


# -- the horizon ---------------------------------------------------------------------------
def test_a_long_open_transaction_holding_the_horizon_is_named_with_the_dead_rows_it_pins() -> None:
    advice = run([table(dead=1_234_567, live=10_000_000)], horizon([session()]))
    assert rules(advice) == ["horizon_session"]
    assert advice[0].text == (
        "a transaction open for 2h 03m (pid 4242, psql) (idle in transaction) holds the xmin"
        " horizon: 1,234,567 dead rows in sk_tasks_queue_t cannot be vacuumed;"
        " claims slow down until it ends"
    )


def test_a_young_transaction_or_one_without_a_snapshot_is_not_named() -> None:
    young = session(xact_age_s=10.0)
    no_snapshot = session(pid=7, xmin_age=None)
    assert run([table(dead=5)], horizon([young, no_snapshot])) == []


def test_an_old_prepared_transaction_is_named() -> None:
    p = PreparedXact("g1", "bob", NOW - timedelta(hours=1), 3600.0, 99)
    advice = run(h=horizon(prepared=[p]))
    assert rules(advice) == ["horizon_prepared"]
    assert "'g1'" in advice[0].text and "ROLLBACK PREPARED" in advice[0].text


def test_an_inactive_slot_holding_xmin_is_named_an_active_one_is_not() -> None:
    inactive = SlotHold("standby1", "physical", None, False, None, 5_000, None)
    active = SlotHold("standby2", "physical", None, True, 99, 10, None)
    advice = run(h=horizon(slots=[inactive, active]))
    assert rules(advice) == ["horizon_slot"]
    assert "standby1" in advice[0].text and "5,000 transactions back" in advice[0].text


# -- autovacuum ----------------------------------------------------------------------------
def test_autovacuum_off_for_the_server_is_said_once() -> None:
    off = {**SERVER, "autovacuum": "off"}
    advice = run([table(), table("sk_metrics_t")], server=off)
    assert rules(advice) == ["autovacuum_off"]
    assert "whole server (autovacuum = off)" in advice[0].text


def test_track_counts_off_counts_as_autovacuum_off() -> None:
    advice = run(server={**SERVER, "track_counts": "off"})
    assert "track_counts = off" in advice[0].text


def test_autovacuum_off_for_one_table_names_it() -> None:
    off = autovacuum_settings(SERVER, ["autovacuum_enabled=false"])
    advice = run([table(), table("sk_metrics_t", settings=off)])
    assert [a.text for a in advice] == [
        "autovacuum is off for sk_metrics_t (autovacuum_enabled = false):"
        " its dead rows stay until you run VACUUM"
    ]


def test_a_tables_own_settings_override_the_servers_and_minus_one_falls_back() -> None:
    s = autovacuum_settings(
        SERVER, ["autovacuum_vacuum_scale_factor=0.01", "autovacuum_vacuum_threshold=1000"]
    )
    assert (s.vacuum_scale_factor, s.vacuum_threshold, s.analyze_threshold) == (0.01, 1000, 50)
    assert s.from_table == ("autovacuum_vacuum_scale_factor", "autovacuum_vacuum_threshold")
    assert s.vacuum_cost_limit == 200  # autovacuum_vacuum_cost_limit -1: vacuum_cost_limit
    assert s.vacuum_cost_delay_ms == 2.0
    assert s.vacuum_after(100_000) == 2_000
    assert s.enabled


# -- dead rows -----------------------------------------------------------------------------
def test_a_mostly_dead_table_never_vacuumed() -> None:
    advice = run([table(live=1_222, dead=1_000)])
    assert [a.text for a in advice] == ["sk_tasks_queue_t: 45% dead rows, never vacuumed"]


def test_a_mostly_dead_table_says_when_it_was_last_vacuumed() -> None:
    advice = run([table(live=1_000, dead=1_000, vacuumed=NOW - timedelta(hours=3))])
    assert advice[0].text == "sk_tasks_queue_t: 50% dead rows, last vacuumed 3h 00m ago"


def test_few_dead_rows_or_a_small_share_say_nothing() -> None:
    assert run([table(live=10, dead=900), table(live=1_000_000, dead=50_000)]) == []


# -- lock waits ----------------------------------------------------------------------------
def test_a_long_lock_wait_names_who_blocks_it() -> None:
    wait = LockWait(
        77, "w", "worker", "UPDATE ...", 42.0, "transactionid", "ShareLock", "sk_tasks_queue_t",
        (4242, 9),
    )  # fmt: skip
    advice = run(waits=[wait], blockers=[session(xact_age_s=600.0)])
    assert [a.text for a in advice] == [
        "pid 77 (worker) has waited 42s for a ShareLock (transactionid) on sk_tasks_queue_t,"
        " blocked by pid 4242, psql, idle in transaction for 10m 00s; pid 9"
    ]


def test_a_short_lock_wait_says_nothing() -> None:
    wait = LockWait(77, None, None, None, 1.0, "tuple", "ExclusiveLock", "sk_tasks_queue_t", ())
    assert run(waits=[wait]) == []
