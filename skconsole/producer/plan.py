"""How a post is written: which jobs go by COPY, which by statement.

A post of one job without a key is two plain inserts (post_new_job.sql, one
round trip). Keyed jobs need the conflict rules of post_jobs.sql (skip while
waiting, re-run when finished), so they always go by statement, BATCH_ROWS a
statement. Many jobs without keys cannot conflict with anything (their ids
are new uuid4s) and go by binary COPY into both tables: no arrays to build
and unpack, no conflict checks, half the cost per row. Below COPY_MIN_ROWS
the five round trips of a COPY post (clock, two COPYs, NOTIFY, COMMIT) cost
more than they save, and the statement is used.

Jobs posted ``after=`` others go by a statement of their own (post_after.sql):
it writes each one's edges and decides, from its parents' result rows, whether
it runs at once, waits, or is cancelled already; it is never keyed, so it needs
none of post_jobs.sql's conflict rules, and the other paths stay as they were.

A post made inside an active trace (producer/trace_context.py) carries its
trace context: post_jobs.sql and post_after.sql take it as one parameter, a
COPY writes it as one more column (copy_results_traced.sql), and
post_new_job.sql (a lone job) takes it as one parameter. A post outside a trace
sends one NULL parameter per statement; its COPY has no such column
(copy_results.sql).

The sync and async producers share this module and differ only in how they
await their round trips.
"""

from __future__ import annotations

import datetime as dt
import itertools
import uuid
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

from skconsole.core.errors import InvalidJobError
from skconsole.producer.job import Job, PostCounts

#: Jobs per post_jobs.sql statement.
BATCH_ROWS = 5_000
#: The fewest jobs without keys worth a COPY (see the module docstring and
#: ``python -m skconsole.bench.bulk_posting --sizes``).
COPY_MIN_ROWS = 200
#: Jobs per transaction of a streamed post.
STREAM_CHUNK = 50_000

#: The binary COPY types of copy_results.sql's and copy_queue.sql's columns.
RESULT_TYPES = (
    "uuid",
    "varchar",
    "varchar",
    "text",
    "int4",
    "int4",
    "int4",
    "bool",
    "int8",
    "timestamptz",
)
QUEUE_TYPES = ("uuid", "varchar", "varchar", "text", "int4", "timestamptz", "timestamptz")
#: copy_results_traced.sql's: the trace context last
RESULT_TYPES_TRACED = (*RESULT_TYPES, "text")


class LoneParams(TypedDict):
    """post_new_job.sql's parameters: one job without a key, and the trace context of a
    post made inside a trace (None outside one)."""

    id: uuid.UUID
    type: str
    source: str
    payload: str | None
    priority: int
    delay_ms: float
    run_at: dt.datetime | None
    trace: str | None


class JobColumns(TypedDict):
    """The jobs post_jobs.sql and post_after.sql write, one array per column."""

    ids: list[uuid.UUID]
    types: list[str]
    sources: list[str]
    payloads: list[str | None]
    priorities: list[int]
    delays_ms: list[float]
    run_ats: list[dt.datetime | None]
    #: the trace context of the post (None outside a trace)
    trace: str | None


class BatchParams(JobColumns):
    """post_jobs.sql's parameters: up to BATCH_ROWS jobs."""

    keyed: list[bool]


class AfterParams(JobColumns):
    """post_after.sql's parameters: jobs that wait for others, and their edges."""

    runs: list[bool]
    edge_jobs: list[uuid.UUID]
    edge_ids: list[uuid.UUID]


@dataclass(frozen=True)
class PostAnswer:
    """What post_new_job.sql and post_jobs.sql return: jobs queued, the NOTIFY's
    result (nothing to read), and keyed jobs marked for a re-run."""

    posted: int
    notified: object
    rerun_requested: int


@dataclass
class Plan:
    """The writes of one post: a lone job, COPY rows, statements, or a mix; then
    the jobs that wait for others (``after``: written last, so a job may wait for
    one posted earlier in the same post)."""

    lone: LoneParams | None
    copied: Sequence[Job]
    statements: list[BatchParams]
    after: list[AfterParams] = field(default_factory=list)
    #: the ids ``after`` names that this post does not write itself (checked first)
    after_parents: list[uuid.UUID] = field(default_factory=list)
    #: the trace context the post is made under (``copied`` goes by copy_results_traced.sql)
    trace: str | None = None

    @property
    def one_round_trip(self) -> bool:
        """Whether the post is one statement, needing no transaction of its own."""
        writes = (self.lone is not None) + bool(self.copied) + len(self.statements)
        return writes + len(self.after) == 1 and not self.copied


def plan(jobs: Sequence[Job], default_source: str, trace: str | None = None) -> Plan:
    """Split a post into its writes (see the module docstring); ``trace``: the
    trace context it is made under."""
    if any(j.after for j in jobs):
        return _with_after(jobs, default_source, trace)
    return _plain(jobs, default_source, trace)


def _with_after(jobs: Sequence[Job], default_source: str, trace: str | None) -> Plan:
    waiting = [j for j in jobs if j.after]
    rest = [j for j in jobs if not j.after]
    writes = _plain(rest, default_source, trace) if rest else Plan(None, (), [], trace=trace)
    ours = {j.task_id for j in jobs}
    named = dict.fromkeys(a for j in waiting for a in j.after)
    writes.after_parents = [a for a in named if isinstance(a, uuid.UUID) and a not in ours]
    for start in range(0, len(waiting), BATCH_ROWS):
        chunk = waiting[start : start + BATCH_ROWS]
        edges = [(j.task_id, a) for j in chunk for a in j.after if isinstance(a, uuid.UUID)]
        writes.after.append(
            {
                **_columns(chunk, default_source, trace),
                "runs": [j.after_failure == "run" for j in chunk],
                "edge_jobs": [job for job, _ in edges],
                "edge_ids": [parent for _, parent in edges],
            }
        )
    return writes


def _plain(jobs: Sequence[Job], default_source: str, trace: str | None) -> Plan:
    """The writes of jobs that wait for nothing."""
    if len(jobs) == 1 and jobs[0].key is None:
        return Plan(_lone(jobs[0], default_source, trace), (), [], trace=trace)
    keyless = [j for j in jobs if j.key is None]
    if len(keyless) < COPY_MIN_ROWS:
        return Plan(None, (), statements(jobs, default_source, trace), trace=trace)
    if len(keyless) == len(jobs):
        return Plan(None, jobs, [], trace=trace)
    keyed = statements([j for j in jobs if j.key is not None], default_source, trace)
    return Plan(None, keyless, keyed, trace=trace)


def _lone(job: Job, default_source: str, trace: str | None) -> LoneParams:
    """The parameters of post_new_job.sql."""
    return {
        "id": job.task_id,
        "type": job.task_type,
        "source": job.source or default_source,
        "payload": job.payload_json,
        "priority": job.priority,
        "delay_ms": job.delay * 1000.0,
        "run_at": job.run_at,
        "trace": trace,
    }


def statements(
    jobs: Sequence[Job], default_source: str, trace: str | None = None
) -> list[BatchParams]:
    """The parameters of post_jobs.sql, BATCH_ROWS jobs a statement."""
    ids = [j.task_id for j in jobs if j.key is not None]
    if len(set(ids)) != len(ids):
        raise InvalidJobError("the same job key appears twice in one post")
    batches: list[BatchParams] = []
    for start in range(0, len(jobs), BATCH_ROWS):
        chunk = jobs[start : start + BATCH_ROWS]
        batches.append(
            {
                **_columns(chunk, default_source, trace),
                "keyed": [j.key is not None for j in chunk],
            }
        )
    return batches


def _columns(chunk: Sequence[Job], default_source: str, trace: str | None) -> JobColumns:
    """The columns of ``chunk`` both post_jobs.sql and post_after.sql take."""
    return {
        "ids": [j.task_id for j in chunk],
        "types": [j.task_type for j in chunk],
        "sources": [j.source or default_source for j in chunk],
        "payloads": [j.payload_json for j in chunk],
        "priorities": [j.priority for j in chunk],
        "delays_ms": [j.delay * 1000.0 for j in chunk],
        "run_ats": [j.run_at for j in chunk],
        "trace": trace,
    }


def result_rows(
    jobs: Iterable[Job], default_source: str, now: dt.datetime, trace: str | None = None
) -> Iterator[tuple[Any, ...]]:
    """copy_results.sql's rows: Unprocessed, no errors, posted at the server's ``now``;
    with a ``trace``, copy_results_traced.sql's (the same, then the trace context)."""
    if trace is None:
        for j in jobs:
            yield (*_posted_as(j, default_source), 1, j.priority, 0, False, 0, now)
    else:
        for j in jobs:
            yield (*_posted_as(j, default_source), 1, j.priority, 0, False, 0, now, trace)


def queue_rows(
    jobs: Iterable[Job], default_source: str, now: dt.datetime
) -> Iterator[tuple[Any, ...]]:
    """copy_queue.sql's rows: runnable at ``run_at``, or ``now`` plus each job's delay
    by the server's clock."""
    for j in jobs:
        due = j.run_at or (now + dt.timedelta(seconds=j.delay) if j.delay else now)
        yield (*_posted_as(j, default_source), j.priority, now, due)


def _posted_as(j: Job, default_source: str) -> tuple[uuid.UUID, str, str, str | None]:
    """The columns both tables start with: the job's id, type, source and payload."""
    return (j.task_id, j.task_type, j.source or default_source, j.payload_json)


def counts(answer: PostAnswer | None, jobs: int) -> PostCounts:
    """The counts a post_new_job.sql or post_jobs.sql statement returned."""
    if answer is None:
        return PostCounts(jobs)
    return PostCounts(jobs, int(answer.posted), int(answer.rerun_requested))


def chunks(jobs: Iterable[Job], size: int) -> Iterator[list[Job]]:
    """``jobs`` in lists of ``size``, read as they are needed."""
    if size < 1:
        raise ValueError("chunk size must be at least 1")
    it = iter(jobs)
    while chunk := list(itertools.islice(it, size)):
        yield chunk
