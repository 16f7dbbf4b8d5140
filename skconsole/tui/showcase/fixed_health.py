"""The queue tables' health in the fixed scene: a queue mostly dead because a report left
open for 2h holds the horizon, and a worker waiting on a row an operator's UPDATE holds."""

from __future__ import annotations

from skconsole import read
from skconsole.read import health
from skconsole.tui.showcase.frozen import FROZEN_AT, ago

HEALTH_SERVER = {
    "autovacuum": "on",
    "track_counts": "on",
    "autovacuum_naptime": "60",
    "autovacuum_vacuum_scale_factor": "0.2",
    "autovacuum_vacuum_threshold": "50",
    "autovacuum_analyze_scale_factor": "0.1",
    "autovacuum_analyze_threshold": "50",
    "autovacuum_vacuum_cost_delay": "2",
    "autovacuum_vacuum_cost_limit": "-1",
    "vacuum_cost_delay": "0",
    "vacuum_cost_limit": "200",
}
#: the forgotten report session holding the horizon, and the one blocking a worker
HOLDER_PID = 4242
BLOCKER_PID = 5120


def _table_health(
    name: str, live: int, dead: int, size: int, autovacuumed_s: float, running: str | None = None
) -> health.TableHealth:
    return health.TableHealth(
        table=name,
        live_rows=live,
        dead_rows=dead,
        table_bytes=size,
        index_bytes=size // 3,
        last_vacuum=None,
        last_autovacuum=ago(autovacuumed_s),
        last_analyze=None,
        last_autoanalyze=ago(autovacuumed_s),
        vacuum_running="autovacuum" if running else None,
        vacuum_phase=running,
        autovacuum=health.autovacuum_settings(HEALTH_SERVER, None),
    )


def _session(
    pid: int,
    who: tuple[str | None, str | None],
    state: str | None,
    xact_age_s: float | None,
    ages: tuple[int | None, int | None],
    query: str | None,
    visible: bool = True,
) -> health.Session:
    user, application = who
    return health.Session(
        pid=pid,
        user=user,
        application=application,
        client="10.4.2.17" if visible else None,
        state=state,
        backend_type="client backend" if visible else None,
        backend_start=ago(4 * 3600 + pid) if visible else None,
        xact_age_s=xact_age_s,
        xmin_age=ages[0],
        xid_age=ages[1],
        query=query,
        wait_event=None,
        visible=visible,
    )


#: an asynchronous standby, and no failover yet
REPLICATION = read.Replication(
    standby=False,
    timeline=1,
    senders=1,
    sync_senders=0,
    hidden_senders=0,
    sync_names="",
    synchronous_commit="on",
    last_failover=None,
)


def fixed_health() -> health.Health:
    """A queue mostly dead because a report left open for 2h holds the horizon, and a
    worker waiting on a row an operator's UPDATE holds."""
    tables = [
        _table_health("sk_tasks_queue_t", 48_210, 912_400, 318 * 2**20, 8040, "scanning heap"),
        _table_health("sk_task_results_t", 5_210_334, 41_120, 1_940 * 2**20, 3_130),
        _table_health("sk_metrics_t", 1_204, 310, 456 * 2**10, 611),
        _table_health("sk_task_execution_time_stats_t", 38, 12, 64 * 2**10, 611),
    ]
    holder = _session(
        HOLDER_PID,
        ("report_ro", "psql"),
        "idle in transaction",
        7_392.0,
        (1_843_211, None),
        "SELECT task_type, count(*) FROM sk_task_results_t WHERE task_status = 5 GROUP BY 1;",
    )
    blocker = _session(
        BLOCKER_PID,
        ("ops", "pgAdmin 4"),
        "active",
        48.0,
        (212, 212),
        "UPDATE sk_tasks_queue_t SET task_priority = 0 WHERE task_type = 'emails.send';",
    )
    hidden = _session(6001, ("etl", "airflow"), None, None, (1_020, None), None, visible=False)
    wait = health.LockWait(
        pid=3311,
        user="queue",
        application="skconsole-worker",
        query="UPDATE sk_tasks_queue_t SET task_locked_until = $1 WHERE task_id = ANY($2)",
        waited_s=41.0,
        lock_type="transactionid",
        mode="ShareLock",
        table="sk_tasks_queue_t",
        blocked_by=(BLOCKER_PID,),
    )
    horizon = health.Horizon(
        1_843_211, 7_392.0, holder.describe(), [holder, hidden, blocker], [], []
    )
    advice = health.advise(tables, horizon, [wait], [blocker], HEALTH_SERVER, FROZEN_AT)
    return health.Health(
        taken_at=FROZEN_AT,
        tables=tables,
        horizon=horizon,
        lock_waits=[wait],
        blockers=[blocker],
        advice=advice,
        settings=HEALTH_SERVER,
        role="ops",
        replication=REPLICATION,
        hidden=[
            "without pg_read_all_stats, other roles' sessions show only pid, user, application"
            " and transaction ages: their query, state, start times, client and waits are hidden",
            "1 session(s) listed here belong to other roles (details hidden)",
        ],
    )
