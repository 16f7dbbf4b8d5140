"""A bulk post cut off in the middle of its COPY: no job half-posted, none lost silently.

The producer's server session is ended while the rows of its COPY are being
written; the post must fail, leave no row in either table, and the producer
must post again on a new connection.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from psycopg import pq

from skconsole.db.connect import Database
from skconsole.producer import COPY_MIN_ROWS, Job, Producer

#: the producer's session is ended on the server mid-post: the server is part of what this checks,
#: so .ci/run runs it against every server it tests
pytestmark = pytest.mark.server

Conn = psycopg.Connection[Any]


class KilledMidCopy(list[Job]):
    """Jobs whose iteration ends the producer's session once its COPY is under way."""

    def __init__(self, jobs: list[Job], producer: Producer, killer: Conn) -> None:
        super().__init__(jobs)
        self.producer, self.killer, self.killed = producer, killer, False

    def __iter__(self) -> Iterator[Job]:
        for i, job in enumerate(super().__iter__()):
            conn = self.producer._conn
            writing = conn is not None and conn.info.transaction_status != pq.TransactionStatus.IDLE
            if writing and not self.killed and i == len(self) // 2:
                self.killer.execute(
                    "SELECT pg_terminate_backend(%s)",
                    (conn.info.backend_pid,),  # type: ignore[union-attr]
                )
                self.killed = True
            yield job


def test_a_copy_post_whose_session_ends_mid_copy_posts_nothing(db: Database, conn: Conn) -> None:
    with Producer(db) as p:
        p.post("bulk.before")  # the producer's connection is open
        jobs = KilledMidCopy([Job("bulk.cut", i) for i in range(COPY_MIN_ROWS * 20)], p, conn)
        with pytest.raises(psycopg.OperationalError):
            p.post_many(jobs)
        assert jobs.killed
        assert conn.execute(
            "SELECT (SELECT count(*) FROM sk_tasks_queue_t WHERE task_type = 'bulk.cut'),"
            " (SELECT count(*) FROM sk_task_results_t WHERE task_type = 'bulk.cut')"
        ).fetchone() == (0, 0)
        p.post_many([Job("bulk.after", i) for i in range(COPY_MIN_ROWS)])  # a new connection
    assert conn.execute(
        "SELECT count(*) FROM sk_tasks_queue_t WHERE task_type = 'bulk.after'"
    ).fetchone() == (COPY_MIN_ROWS,)
