"""A circuit breaker under three worker processes: half-open lets at most its canaries
run, however many workers claim, while the healthy jobs of the same type all finish and
the held ones stop burning attempts. Every job is accounted for."""

from __future__ import annotations

import signal
import subprocess
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg

from skconsole import ops, read
from skconsole.core.actor import Actor
from skconsole.core.payload_terms import PayloadTerm
from skconsole.ops import BreakerCommand, BreakerParams, Selection
from skconsole.producer import Job, Producer
from tests.support.tasks_breaker import SIGNATURE, runs
from tests.support.tasks_faults import OutputDrain
from tests.support.waiting import wait_until

Conn = psycopg.Connection[Any]
TYPE = "partner.call"
HELD, HEALTHY = 150, 300
CANARIES = 3
ROUNDS = 4


def test_half_open_lets_at_most_its_canaries_run_across_three_workers(
    dsn: str, conn: Conn, start_worker: Callable[..., subprocess.Popen[str]], log_dir: Path
) -> None:
    ops.BREAKER.execute(
        conn,
        Selection(task_type=TYPE),
        BreakerParams(
            BreakerCommand.OPEN,
            signature=SIGNATURE,
            term=PayloadTerm(("partner",), "acme"),
            cool_down_s=0.5,
            canaries=CANARIES,
        ),
        actor=Actor("oncall", "laptop"),
    )
    with Producer(dsn) as p:
        p.post_many([Job(TYPE, {"partner": "acme", "i": i}) for i in range(HELD)])
        p.post_many([Job(TYPE, {"partner": "zeta", "i": i}) for i in range(HEALTHY)])
    env = {"SKTEST_LOG_DIR": str(log_dir), "SKTEST_FAILING_PARTNERS": "acme"}
    workers = [
        start_worker("--tasks", "tests.support.tasks_breaker", "--concurrency", "8", env=env)
        for _ in range(3)
    ]
    drains = [OutputDrain(w) for w in workers]

    def rounds() -> int:
        (b,) = read.breakers(conn)
        return b.rounds

    # every canary of a round fails with the signature, so each round reopens it
    wait_until(lambda: rounds() >= ROUNDS, timeout=120)
    for w in workers:
        w.send_signal(signal.SIGTERM)
    for w in workers:
        w.wait(30)
    for d in drains:
        d.join()

    (b,) = read.breakers(conn)
    ran = Counter(partner for _, partner in runs(log_dir))
    assert ran["zeta"] == HEALTHY  # the healthy jobs of the type all ran, once each
    # the held jobs ran only as canaries: at most CANARIES a round, in all
    assert ran["acme"] <= CANARIES * b.rounds
    assert ran["acme"] >= CANARIES * (b.rounds - 1)  # every finished round used them all
    by_status = dict(
        conn.execute(
            "SELECT task_payload::jsonb ->> 'partner', count(*) FROM sk_task_results_t"
            " WHERE task_type = %s GROUP BY 1",
            (TYPE,),
        ).fetchall()
    )
    assert by_status == {"acme": HELD, "zeta": HEALTHY}  # every job accounted for
    queued = conn.execute(
        "SELECT count(*) FROM sk_tasks_queue_t q JOIN sk_task_results_t r USING (task_id)"
        " WHERE r.task_payload::jsonb ->> 'partner' = 'acme' AND r.task_status IN (1, 4)"
    ).fetchone()
    assert queued == (HELD,)  # none lost, none given up: still waiting for the partner
