"""An emulated Stakhanovise.NET application: a test double for the ``tests/interop`` tier.

skconsole shares its database layout with Stakhanovise.NET applications, so the
two must be able to run side by side on one database: either may set the
schema up first, a job posted by one may be run by the other, and each must
read what the other writes. No .NET runtime is needed to check that: this
module replays, from Python, the SQL Stakhanovise.NET sends and the rules it
applies around it (written from a description of its behaviour, not ported
from its source). What matters to skconsole is reproduced exactly:

- **setup**: the same scripts, each run as one transaction, with mapped names
  pasted into the text by plain string replacement of the default names, so
  derived names change too and PostgreSQL folds them to lower case;
- **post**: queue row + results upsert + ``NOTIFY`` in one transaction;
- **dequeue**: ``sk_try_dequeue_task`` then the results ``UPDATE ... RETURNING *``
  in one transaction, the returned row read *by column name*, its payload
  (Newtonsoft ``TypeNameHandling.Auto``) and its last error (a JSON
  ``QueuedTaskError``) deserialised strictly: anything Newtonsoft would throw
  on rolls the dequeue back and stops the consumer (:attr:`DotNetApp.crashed`);
- **results**: one unconditional ``UPDATE`` per job; the retry rules
  (FaultErrorThresholdCount 5); a retry re-posted under the same id;
- **metrics**: absolute values per process, with long.MinValue/MaxValue
  start values for the minima and maxima, and execution-time statistics.

What a .NET process holds while a job runs is exactly nothing: no lock, no
lease, no owner. A test helper (:class:`SimulatedCrash`) kills the "process"
mid-job, leaving the job in 2 Processing with no queue row, for ever.
"""

from __future__ import annotations

import contextlib
import json
import math
import threading
import time
import uuid
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
from psycopg import sql
from psycopg.rows import dict_row

#: .NET's long.MaxValue / long.MinValue: the start values of its minimum / maximum metrics
LONG_MAX = 9_223_372_036_854_775_807
LONG_MIN = -9_223_372_036_854_775_808

#: Stakhanovise.NET's FaultErrorThresholdCount default
FAULT_ERROR_THRESHOLD = 5

# Task statuses as Stakhanovise.NET numbers them.
UNPROCESSED, PROCESSING, PROCESSED, ERROR, FAULTED, FATAL, CANCELLED = 1, 2, 3, 4, 5, 6, 7


#: NetMapping's fields as appsettings keys (what a ``{"QueuedTaskMapping": {...}}`` holds)
SETTINGS_KEYS = {
    "queue_table": "QueueTableName",
    "results_table": "ResultsQueueTableName",
    "execution_time_stats_table": "ExecutionTimeStatsTableName",
    "dequeue_function": "DequeueFunctionName",
    "metrics_table": "MetricsTableName",
    "channel": "NewTaskNotificationChannelName",
}


# -- names ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class NetMapping:
    """``QueuedTaskMapping``: the names a .NET application gave its queue's objects.

    Fields are declared in the order Stakhanovise.NET substitutes them into its
    setup scripts (that order matters for plain string replacement).
    """

    queue_table: str = "sk_tasks_queue_t"
    results_table: str = "sk_task_results_t"
    execution_time_stats_table: str = "sk_task_execution_time_stats_t"
    dequeue_function: str = "sk_try_dequeue_task"
    metrics_table: str = "sk_metrics_t"
    channel: str = "sk_task_queue_item_added"

    @classmethod
    def from_settings(cls, settings: Mapping[str, str]) -> NetMapping:
        """From appsettings keys (``QueueTableName``, ...); missing keys keep the default."""
        ours = {v: k for k, v in SETTINGS_KEYS.items()}
        return cls(**{ours[k]: v for k, v in settings.items()})

    def settings(self) -> dict[str, str]:
        """This mapping as appsettings keys (what a ``--mapping`` file holds)."""
        return {key: getattr(self, name) for name, key in SETTINGS_KEYS.items()}

    def substitute(self, text: str) -> str:
        """``text`` written with the default names, as Stakhanovise.NET rewrites its
        setup scripts: plain string replacement, table names in their fixed order, so a
        name that contains a default name is rewritten too (pk_sk_tasks_queue_t ->
        pk_Billing_sk_tasks_queue_t). The channel is not in any script."""
        default = NetMapping()
        for name in (
            "queue_table",
            "results_table",
            "execution_time_stats_table",
            "dequeue_function",
            "metrics_table",
        ):
            text = text.replace(getattr(default, name), getattr(self, name))
        return text


def net_sql(text: str, **names: str) -> sql.Composed | sql.SQL:
    """SQL as Stakhanovise.NET builds it: names pasted into the text UNQUOTED.

    Deliberately unquoted (``sql.SQL``, not ``sql.Identifier``): .NET writes
    ``$"INSERT INTO {mapping.QueueTableName} ..."``, so PostgreSQL folds a
    name such as ``Billing_sk_tasks_queue_t`` to ``billing_sk_tasks_queue_t``,
    and that folding is the behaviour these tests check skconsole against.
    Test-only: the names are the test tier's own constants, never outside input.
    """
    template = sql.SQL(text)  # type: ignore[arg-type]
    if not names:
        return template
    return template.format(**{k: sql.SQL(v) for k, v in names.items()})  # type: ignore[arg-type]


#: The setup scripts, default names, ``public.`` hard-coded as in the .NET library;
#: each runs as one transaction (one multi-statement string, no parameters).
SETUP_SCRIPTS: tuple[str, ...] = (
    # 1. the lock handle sequence
    "CREATE SEQUENCE IF NOT EXISTS public.sk_tasks_queue_t_task_lock_handle_id_seq"
    " START WITH 1 INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 CACHE 1 NO CYCLE;",
    # 2. the queue
    "CREATE TABLE IF NOT EXISTS public.sk_tasks_queue_t(task_id uuid NOT NULL,"
    " task_lock_handle_id bigint"
    " DEFAULT nextval('public.sk_tasks_queue_t_task_lock_handle_id_seq'::regclass) NOT NULL,"
    " task_type character varying(250) NOT NULL, task_source character varying(250) NOT NULL,"
    " task_payload text, task_priority integer,"
    " task_posted_at_ts timestamp with time zone DEFAULT now() NOT NULL,"
    " task_locked_until_ts timestamp with time zone NOT NULL);"
    " ALTER TABLE sk_tasks_queue_t DROP CONSTRAINT IF EXISTS pk_sk_tasks_queue_t CASCADE;"
    " ALTER TABLE ONLY public.sk_tasks_queue_t ADD CONSTRAINT pk_sk_tasks_queue_t"
    " PRIMARY KEY (task_id);"
    " ALTER TABLE sk_tasks_queue_t DROP CONSTRAINT IF EXISTS"
    " unq_sk_tasks_queue_t_task_lock_handle_id CASCADE;"
    " ALTER TABLE ONLY public.sk_tasks_queue_t ADD CONSTRAINT"
    " unq_sk_tasks_queue_t_task_lock_handle_id UNIQUE (task_lock_handle_id);"
    " CREATE INDEX IF NOT EXISTS idx_sk_tasks_queue_t_filter_index ON public.sk_tasks_queue_t"
    " USING btree (task_type ASC, task_locked_until_ts ASC);"
    " CREATE INDEX IF NOT EXISTS idx_sk_tasks_queue_t_sort_index ON public.sk_tasks_queue_t"
    " USING btree (task_priority ASC, task_locked_until_ts ASC, task_lock_handle_id ASC);",
    # 3. the results
    "CREATE TABLE IF NOT EXISTS public.sk_task_results_t(task_id uuid NOT NULL,"
    " task_type character varying(250) NOT NULL, task_source character varying(250) NOT NULL,"
    " task_payload text, task_status integer NOT NULL, task_priority integer NOT NULL,"
    " task_last_error text, task_error_count integer DEFAULT 0 NOT NULL,"
    " task_last_error_is_recoverable boolean DEFAULT false NOT NULL,"
    " task_processing_time_milliseconds bigint DEFAULT 0 NOT NULL,"
    " task_posted_at_ts timestamp with time zone NOT NULL,"
    " task_first_processing_attempted_at_ts timestamp with time zone,"
    " task_last_processing_attempted_at_ts timestamp with time zone,"
    " task_processing_finalized_at_ts timestamp with time zone);"
    " ALTER TABLE sk_task_results_t DROP CONSTRAINT IF EXISTS pk_sk_task_results_t CASCADE;"
    " ALTER TABLE ONLY public.sk_task_results_t ADD CONSTRAINT pk_sk_task_results_t"
    " PRIMARY KEY (task_id);"
    " CREATE INDEX IF NOT EXISTS idx_sk_task_results_t_task_status ON public.sk_task_results_t"
    " USING btree (task_status ASC);"
    " CREATE INDEX IF NOT EXISTS idx_sk_task_results_t_task_type ON public.sk_task_results_t"
    " USING btree (task_type ASC);",
    # 4. the metrics
    "CREATE TABLE IF NOT EXISTS public.sk_metrics_t(metric_id character varying(250) NOT NULL,"
    " metric_owner_process_id character varying(250) NOT NULL,"
    " metric_category character varying(150) NOT NULL, metric_value bigint DEFAULT 0 NOT NULL,"
    " metric_last_updated timestamp with time zone DEFAULT now() NOT NULL);"
    " ALTER TABLE sk_metrics_t DROP CONSTRAINT IF EXISTS pk_sk_metrics_t CASCADE;"
    " ALTER TABLE ONLY public.sk_metrics_t ADD CONSTRAINT pk_sk_metrics_t"
    " PRIMARY KEY (metric_id, metric_owner_process_id);"
    " CREATE INDEX IF NOT EXISTS idx_sk_metrics_t_category ON public.sk_metrics_t"
    " USING btree (metric_category ASC);",
    # 5. the execution-time statistics
    "CREATE TABLE IF NOT EXISTS public.sk_task_execution_time_stats_t("
    "et_payload_type character varying(255) NOT NULL,"
    " et_owner_process_id character varying(255) NOT NULL, et_n_execution_cycles bigint NOT NULL,"
    " et_last_execution_time bigint NOT NULL, et_avg_execution_time bigint NOT NULL,"
    " et_fastest_execution_time bigint NOT NULL, et_longest_execution_time bigint NOT NULL,"
    " et_total_execution_time bigint NOT NULL);"
    " ALTER TABLE sk_task_execution_time_stats_t DROP CONSTRAINT IF EXISTS"
    " pk_sk_task_execution_time_stats_t CASCADE;"
    " ALTER TABLE ONLY public.sk_task_execution_time_stats_t ADD CONSTRAINT"
    " pk_sk_task_execution_time_stats_t PRIMARY KEY (et_payload_type, et_owner_process_id);",
    # 6. the dequeue function
    "CREATE OR REPLACE FUNCTION public.sk_try_dequeue_task(IN select_types character varying[],"
    " IN exclude_ids uuid[], IN ref_now timestamp with time zone)"
    " RETURNS TABLE (task_id uuid, task_lock_handle_id bigint, task_type character varying,"
    " task_source character varying, task_payload text, task_priority integer,"
    " task_posted_at_ts timestamp with time zone, task_locked_until_ts timestamp with time zone)"
    " LANGUAGE plpgsql AS $$ DECLARE n_select_types integer = CARDINALITY(select_types);"
    " BEGIN RETURN QUERY WITH sk_dequeued_task AS (DELETE FROM sk_tasks_queue_t td"
    " WHERE td.task_id = (SELECT t0.task_id FROM sk_tasks_queue_t t0"
    " WHERE (t0.task_type = ANY(select_types) OR n_select_types = 0)"
    " AND t0.task_locked_until_ts < ref_now AND t0.task_id <> ALL(exclude_ids)"
    " ORDER BY t0.task_priority ASC, t0.task_locked_until_ts ASC, t0.task_lock_handle_id ASC"
    " LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING *) SELECT sdt.* FROM sk_dequeued_task sdt;"
    " END; $$;",
)


# -- what Newtonsoft.Json accepts ----------------------------------------------------------
class NetDeserializationError(Exception):
    """What Newtonsoft.Json throws (JsonReaderException, JsonSerializationException):
    inside a dequeue it rolls the dequeue back and stops the consumer."""


@dataclass(frozen=True)
class QueuedTaskError:
    """Stakhanovise.NET's ``QueuedTaskError``, as stored (JSON) in ``task_last_error``."""

    type: str | None
    message: str | None
    stack_trace: str | None


def parse_queued_task_error(text: str | None) -> QueuedTaskError | None:
    """``task_last_error`` read as .NET reads it: null or "" is no error; anything
    else must be the JSON of an object whose ``Type``, ``Message`` and
    ``StackTrace`` (matched case-insensitively; others ignored) are strings or
    null. Plain text (a Python traceback, "skconsole.HungJob: ..."), or JSON that
    is not an object, raises :class:`NetDeserializationError`."""
    if text is None or text == "":
        return None
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise NetDeserializationError(
            f"Newtonsoft.Json.JsonReaderException: task_last_error is not JSON: {exc}"
        ) from None
    if not isinstance(value, dict):
        raise NetDeserializationError(
            "Newtonsoft.Json.JsonSerializationException: cannot deserialize the current JSON"
            f" {type(value).__name__} into type 'QueuedTaskError'"
        )
    fields: dict[str, str | None] = {"type": None, "message": None, "stacktrace": None}
    for key, item in value.items():
        name = key.lower()
        if name not in fields:
            continue
        if item is not None and not isinstance(item, str):
            raise NetDeserializationError(
                "Newtonsoft.Json.JsonReaderException: unexpected"
                f" {type(item).__name__} for QueuedTaskError.{key}"
            )
        fields[name] = item
    return QueuedTaskError(fields["type"], fields["message"], fields["stacktrace"])


@dataclass(frozen=True)
class NetPayload:
    """A deserialised payload: ``type_name`` and ``assembly`` from its ``$type``, or
    None for an untyped one (Newtonsoft then gives a JObject: just the fields)."""

    type_name: str | None
    assembly: str | None
    fields: dict[str, Any]


def dotnet_json(type_name: str, assembly: str, fields: Mapping[str, Any]) -> str:
    """A payload as Newtonsoft writes it with type information: ``$type`` first, compact."""
    body = {"$type": f"{type_name}, {assembly}", **fields}
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False)


def parse_payload(text: str | None, known_types: Callable[[str, str], bool]) -> NetPayload:
    """``task_payload`` read as Newtonsoft does with ``TypeNameHandling.Auto``: a ``$type``
    as the FIRST property names the .NET type, which must be known (else it throws);
    without one the object comes back untyped. Text that is not JSON throws."""
    try:
        value = json.loads(text) if text is not None else None
    except ValueError as exc:
        raise NetDeserializationError(
            f"Newtonsoft.Json.JsonReaderException: the payload is not JSON: {exc}"
        ) from None
    if not isinstance(value, dict):  # null, a scalar or an array: untyped, as it is
        return NetPayload(None, None, {"value": value})
    first = next(iter(value), None)
    if first != "$type":  # metadata is only read as the first property
        return NetPayload(None, None, dict(value))
    declared = value["$type"]
    type_name, _, assembly = str(declared).partition(",")
    type_name, assembly = type_name.strip(), assembly.strip()
    if not known_types(type_name, assembly):
        raise NetDeserializationError(
            "Newtonsoft.Json.JsonSerializationException: Error resolving type specified in"
            f" JSON '{declared}'. Path '$type'."
        )
    return NetPayload(type_name, assembly, {k: v for k, v in value.items() if k != "$type"})


# -- what executors raise ------------------------------------------------------------------
class NetException(Exception):
    """A .NET exception thrown by an executor: stored as ``QueuedTaskError`` JSON."""

    def __init__(
        self,
        type_name: str,
        message: str,
        *,
        recoverable: bool = True,
        stack_trace: str | None = None,
    ) -> None:
        super().__init__(f"{type_name}: {message}")
        self.type_name = type_name
        self.message = message
        self.recoverable = recoverable
        self.stack_trace = stack_trace or (
            "   at Billing.Tasks.TaskExecutor.ExecuteAsync(Object payload,"
            " ITaskExecutionContext context) in /src/Billing/Tasks/TaskExecutor.cs:line 42\n"
            "   at LVD.Stakhanovise.NET.Processor.StandardTaskWorker.ExecuteTaskAsync("
            "IQueuedTaskToken queuedTaskToken)"
        )

    def to_json(self) -> str:
        """As Newtonsoft writes a ``QueuedTaskError`` (compact, non-ASCII unescaped)."""
        return json.dumps(
            {"Type": self.type_name, "Message": self.message, "StackTrace": self.stack_trace},
            separators=(",", ":"),
            ensure_ascii=False,
        )


class NetCancelled(Exception):
    """The executor observed a cancellation: the job ends 7 Cancelled."""


class SimulatedCrash(BaseException):
    """Test helper: the .NET process dies mid-job. Nothing is written: the job stays
    in 2 Processing with no queue row, for ever, and the consumer stops."""


# -- what a consumer did ---------------------------------------------------------------------
@dataclass
class DequeuedTask:
    """What an executor gets: the deserialised payload and the result row it read."""

    task_id: uuid.UUID
    task_type: str
    payload: NetPayload
    error_count: int
    last_error: QueuedTaskError | None
    #: as stored, for a retry's re-post
    payload_text: str | None = None
    priority: int = 0
    #: the consumer's CancellationToken: set when it stops
    cancellation: threading.Event = field(default_factory=threading.Event)


@dataclass
class JobRun:
    """One execution, for exactly-once and overlap checks (``time.time()`` instants)."""

    task_id: uuid.UUID
    task_type: str
    payload: NetPayload
    consumer: str
    started: float
    ended: float | None = None
    #: processed, error, faulted, fatal, cancelled or crashed
    outcome: str = "running"
    error: NetException | None = None


Executor = Callable[[DequeuedTask], None]


# -- metrics -------------------------------------------------------------------------------------
#: metric id -> category, as Stakhanovise.NET names them ("task-worer" is its spelling)
METRICS: dict[str, str] = {
    "queue-consumer@dequeue-count": "task-queue-consumer",
    "queue-consumer@total-dequeue-duration": "task-queue-consumer",
    "queue-consumer@minimum-dequeue-duration": "task-queue-consumer",
    "queue-consumer@maximum-dequeue-duration": "task-queue-consumer",
    "result-queue@result-post-count": "task-result-queue",
    "result-queue@result-writes-count": "task-result-queue",
    "result-queue@minimum-result-write-duration": "task-result-queue",
    "result-queue@maximum-result-write-duration": "task-result-queue",
    "result-queue@total-result-write-duration": "task-result-queue",
    "worker@processed-payload-count": "task-worer",
    "worker@successful-processed-payload-count": "task-worer",
    "worker@failed-processed-payload-count": "task-worer",
    "worker@total-processing-time": "task-worer",
    "poller@dequeue-count": "task-poller",
    "listener@task-notification-count": "task-queue-notification-listener",
    "listener@reconnect-count": "task-queue-notification-listener",
}


def _start_value(metric_id: str) -> int:
    if "@minimum-" in metric_id:
        return LONG_MAX
    if "@maximum-" in metric_id:
        return LONG_MIN
    return 0


class NetMetrics:
    """One process's metric values (absolute), thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.values: dict[str, int] = {m: _start_value(m) for m in METRICS}

    def add(self, metric_id: str, n: int = 1) -> None:
        with self._lock:
            self.values[metric_id] += n

    def set(self, metric_id: str, value: int) -> None:
        with self._lock:
            self.values[metric_id] = value

    def duration(self, prefix: str, name: str, ms: int) -> None:
        """A duration: total, minimum and maximum of ``prefix@...-<name>``."""
        with self._lock:
            self.values[f"{prefix}@total-{name}"] += ms
            key = f"{prefix}@minimum-{name}"
            self.values[key] = min(self.values[key], ms)
            key = f"{prefix}@maximum-{name}"
            self.values[key] = max(self.values[key], ms)

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return dict(self.values)


def _ms_since(start: float) -> int:
    return math.ceil((time.monotonic() - start) * 1000)


def default_retry_delay(error_count: int) -> float:
    """Stakhanovise.NET's retry delay, in seconds: 10^(error_count + 1) ms."""
    return 10 ** (error_count + 1) / 1000


# -- the application -------------------------------------------------------------------------------
class DotNetApp:
    """One emulated Stakhanovise.NET process: producer, consumer, result writer, metrics.

    ``executors`` maps a task type (the payload's .NET type full name) to a
    callable; the consumer dequeues only those types. ``known_payload_types``
    names the ``"Type, Assembly"`` strings its deserialiser can resolve (default:
    the executors' types, in any assembly). ``retry_delay(error_count)`` gives
    a retry's delay in seconds (default: .NET's 10^(n+1) ms; tests shorten it).
    """

    def __init__(
        self,
        dsn: str,
        *,
        mapping: NetMapping | None = None,
        process_id: str | None = None,
        executors: Mapping[str, Executor] | None = None,
        known_payload_types: Collection[str] | None = None,
        retry_delay: Callable[[int], float] = default_retry_delay,
        poll_interval: float = 0.1,
        metrics_interval: float = 10.0,
        source: str = "Billing.Api",
        fault_error_threshold: int = FAULT_ERROR_THRESHOLD,
    ) -> None:
        self.dsn = dsn
        self.mapping = mapping or NetMapping()
        self.process_id = process_id or f"net-{uuid.uuid4().hex[:8]}"
        self.executors = dict(executors or {})
        self.known_payload_types = (
            {t.replace(" ", "") for t in known_payload_types}
            if known_payload_types is not None
            else None
        )
        self.retry_delay = retry_delay
        self.poll_interval = poll_interval
        self.metrics_interval = metrics_interval
        self.source = source
        self.fault_error_threshold = fault_error_threshold
        self.metrics = NetMetrics()
        #: every execution, in start order
        self.runs: list[JobRun] = []
        #: what stopped the consumer: an exception a real .NET consumer would die of
        #: (a payload or error it cannot deserialise), or a SimulatedCrash
        self.crashed: BaseException | None = None
        self._runs_lock = threading.Lock()
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._listening = threading.Event()
        self._threads: list[threading.Thread] = []
        self._polls = 0
        self._polls_lock = threading.Lock()

    # -- names -------------------------------------------------------------------------
    def _sql(self, text: str) -> sql.Composed | sql.SQL:
        m = self.mapping
        return net_sql(
            text,
            queue=m.queue_table,
            results=m.results_table,
            metrics=m.metrics_table,
            stats=m.execution_time_stats_table,
            dequeue=m.dequeue_function,
            channel=m.channel,
        )

    def _connect(self, *, autocommit: bool = False) -> psycopg.Connection[Any]:
        return psycopg.connect(
            self.dsn, autocommit=autocommit, application_name=f"dotnet:{self.process_id}"
        )

    # -- setup -------------------------------------------------------------------------
    def setup(self) -> None:
        """Run the setup scripts (as every .NET start does by default), each as one
        transaction: one multi-statement string without parameters, in autocommit."""
        with self._connect(autocommit=True) as conn:
            for script in SETUP_SCRIPTS:
                conn.execute(net_sql(self.mapping.substitute(script)))

    # -- producer -----------------------------------------------------------------------
    def post(
        self,
        type_full_name: str,
        assembly: str,
        fields: Mapping[str, Any],
        *,
        priority: int = 0,
    ) -> uuid.UUID:
        """Post a job whose payload is an instance of ``type_full_name``: one transaction."""
        task_id = uuid.uuid4()
        payload = dotnet_json(type_full_name, assembly, fields)
        with self._connect() as conn:
            self._enqueue(conn, task_id, type_full_name, payload, priority, UNPROCESSED, 0.0)
        return task_id

    def _enqueue(
        self,
        conn: psycopg.Connection[Any],
        task_id: uuid.UUID,
        task_type: str,
        payload: str | None,
        priority: int,
        status: int,
        delay_s: float,
    ) -> None:
        """The producer's transaction: queue row, results upsert, NOTIFY, commit. A new
        job is locked until a second ago (ready at once); a retry until its delay."""
        now = datetime.now(UTC)
        locked_until = now + timedelta(seconds=delay_s) if delay_s else now - timedelta(seconds=1)
        with conn.transaction():
            conn.execute(
                self._sql(
                    "INSERT INTO {queue} (task_id, task_payload, task_type, task_source,"
                    " task_priority, task_posted_at_ts, task_locked_until_ts)"
                    " VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING task_lock_handle_id"
                ),
                (task_id, payload, task_type, self.source, priority, now, locked_until),
            ).fetchone()
            conn.execute(
                self._sql(
                    "INSERT INTO {results} (task_id, task_type, task_source, task_payload,"
                    " task_status, task_priority, task_posted_at_ts)"
                    " VALUES (%s, %s, %s, %s, %s, %s, %s)"
                    " ON CONFLICT (task_id) DO UPDATE SET task_status = EXCLUDED.task_status,"
                    " task_priority = EXCLUDED.task_priority,"
                    " task_source = EXCLUDED.task_source,"
                    " task_posted_at_ts = EXCLUDED.task_posted_at_ts"
                ),
                (task_id, task_type, self.source, payload, status, priority, now),
            )
            conn.execute(self._sql("NOTIFY {channel}"))

    # -- consumer ------------------------------------------------------------------------
    def _known(self, type_name: str, assembly: str) -> bool:
        if self.known_payload_types is not None:
            return f"{type_name},{assembly}" in self.known_payload_types
        return type_name in self.executors

    def _dequeue(self) -> DequeuedTask | None:
        """One dequeue transaction on a new connection (ReadCommitted). Whatever
        throws rolls it back (the queue row comes back) and propagates."""
        started = time.monotonic()
        with self._connect() as conn:
            row = conn.execute(
                self._sql("SELECT tq.* FROM {dequeue}(%s::varchar[], '{{}}'::uuid[], %s) tq"),
                (list(self.executors), datetime.now(UTC)),
            ).fetchone()
            if row is None:
                conn.rollback()
                return None
            cur = conn.cursor(row_factory=dict_row)
            result = cur.execute(
                self._sql(
                    "UPDATE {results} SET task_status = 2,"
                    " task_first_processing_attempted_at_ts ="
                    " COALESCE(task_first_processing_attempted_at_ts, NOW()),"
                    " task_last_processing_attempted_at_ts = NOW()"
                    " WHERE task_id = %s RETURNING *"
                ),
                (row[0],),
            ).fetchone()
            if result is None:  # a queue row without a result row: .NET carries on
                conn.commit()
                return None
            task = DequeuedTask(
                task_id=result["task_id"],
                task_type=result["task_type"],
                payload=parse_payload(result["task_payload"], self._known),
                error_count=int(result["task_error_count"]),
                last_error=parse_queued_task_error(result["task_last_error"]),
                payload_text=result["task_payload"],
                priority=int(result["task_priority"]),
                cancellation=self._stop,
            )
            conn.commit()
        self.metrics.add("queue-consumer@dequeue-count")
        self.metrics.add("poller@dequeue-count")
        self.metrics.duration("queue-consumer", "dequeue-duration", _ms_since(started))
        return task

    def run_one(self) -> JobRun | None:
        """Dequeue one job and run it to its result (deterministic tests). Returns its
        run, or None when nothing is eligible. A deserialisation failure or a
        SimulatedCrash is recorded in :attr:`crashed` and raised."""
        try:
            task = self._dequeue()
        except Exception as exc:
            self.crashed = exc
            raise
        if task is None:
            return None
        run = JobRun(
            task.task_id, task.task_type, task.payload, self.process_id, started=time.time()
        )
        with self._runs_lock:
            self.runs.append(run)
        clock = time.monotonic()
        try:
            self.executors[task.task_type](task)
        except SimulatedCrash as crash:
            run.ended, run.outcome = time.time(), "crashed"
            self.crashed = crash
            self._stop.set()
            raise
        except NetCancelled:
            run.ended, run.outcome = time.time(), "cancelled"
            self._write_result(task, CANCELLED, None, task.error_count, False, _ms_since(clock))
            return run
        except NetException as exc:
            run.ended, run.error = time.time(), exc
            self._failed(task, run, exc, _ms_since(clock))
            return run
        run.ended, run.outcome = time.time(), "processed"
        elapsed = _ms_since(clock)
        self._write_result(task, PROCESSED, None, task.error_count, False, elapsed)
        self.metrics.add("worker@successful-processed-payload-count")
        self._account(task, elapsed)
        return run

    def _failed(self, task: DequeuedTask, run: JobRun, exc: NetException, elapsed: int) -> None:
        """The retry rules: a recoverable error counts; up to the threshold 4 Error,
        one past it 5 Faulted (still retried), beyond that 6 Fatal; a non-recoverable
        error is 6 Fatal at once. A job not Fatal is re-posted under its own id."""
        count = task.error_count + 1
        if not exc.recoverable or count > self.fault_error_threshold + 1:
            status = FATAL
        elif count > self.fault_error_threshold:
            status = FAULTED
        else:
            status = ERROR
        run.outcome = {ERROR: "error", FAULTED: "faulted", FATAL: "fatal"}[status]
        self._write_result(task, status, exc.to_json(), count, exc.recoverable, elapsed)
        self.metrics.add("worker@failed-processed-payload-count")
        self._account(task, elapsed)
        if status != FATAL:
            with self._connect() as conn:
                self._enqueue(
                    conn,
                    task.task_id,
                    task.task_type,
                    task.payload_text,
                    task.priority,
                    status,
                    self.retry_delay(count),
                )

    def _write_result(
        self,
        task: DequeuedTask,
        status: int,
        error: str | None,
        error_count: int,
        recoverable: bool,
        elapsed_ms: int,
    ) -> None:
        """The result queue's write: one UPDATE, no transaction, no status check."""
        self.metrics.add("result-queue@result-post-count")
        started = time.monotonic()
        with self._connect(autocommit=True) as conn:
            conn.execute(
                self._sql(
                    "UPDATE {results} SET task_status = %s, task_last_error = %s,"
                    " task_error_count = %s, task_last_error_is_recoverable = %s,"
                    " task_processing_time_milliseconds = %s,"
                    " task_processing_finalized_at_ts = %s WHERE task_id = %s"
                ),
                (
                    status,
                    error,
                    error_count,
                    recoverable,
                    elapsed_ms,
                    datetime.now(UTC),
                    task.task_id,
                ),
            )
        self.metrics.add("result-queue@result-writes-count")
        self.metrics.duration("result-queue", "result-write-duration", _ms_since(started))

    def _account(self, task: DequeuedTask, elapsed_ms: int) -> None:
        """Worker metrics and the execution-time statistics of the payload's type."""
        self.metrics.add("worker@processed-payload-count")
        self.metrics.add("worker@total-processing-time", elapsed_ms)
        with self._connect(autocommit=True) as conn:
            conn.execute(
                self._sql(
                    "INSERT INTO {stats} (et_payload_type, et_owner_process_id,"
                    " et_n_execution_cycles, et_last_execution_time, et_avg_execution_time,"
                    " et_fastest_execution_time, et_longest_execution_time,"
                    " et_total_execution_time) VALUES (%s, %s, 1, %s, %s, %s, %s, %s)"
                    " ON CONFLICT (et_payload_type, et_owner_process_id) DO UPDATE SET"
                    " et_last_execution_time = EXCLUDED.et_last_execution_time,"
                    " et_avg_execution_time = CEILING(({stats}.et_total_execution_time"
                    " + EXCLUDED.et_last_execution_time)::double precision"
                    " / ({stats}.et_n_execution_cycles + 1))::bigint,"
                    " et_fastest_execution_time = LEAST({stats}.et_fastest_execution_time,"
                    " EXCLUDED.et_last_execution_time),"
                    " et_longest_execution_time = GREATEST({stats}.et_longest_execution_time,"
                    " EXCLUDED.et_last_execution_time),"
                    " et_total_execution_time = {stats}.et_total_execution_time"
                    " + EXCLUDED.et_last_execution_time,"
                    " et_n_execution_cycles = {stats}.et_n_execution_cycles + 1"
                ),
                (task.task_type, self.process_id, *([elapsed_ms] * 5)),
            )

    # -- metrics -------------------------------------------------------------------------
    def flush_metrics(self) -> None:
        """Write every metric's absolute value (a .NET process does so every 10 s)."""
        rows = [
            (metric_id, self.process_id, METRICS[metric_id], value)
            for metric_id, value in self.metrics.snapshot().items()
        ]
        with self._connect() as conn, conn.cursor() as cur:
            cur.executemany(
                self._sql(
                    "INSERT INTO {metrics} (metric_id, metric_owner_process_id, metric_category,"
                    " metric_value, metric_last_updated) VALUES (%s, %s, %s, %s, NOW())"
                    " ON CONFLICT (metric_id, metric_owner_process_id) DO UPDATE SET"
                    " metric_category = EXCLUDED.metric_category,"
                    " metric_value = EXCLUDED.metric_value, metric_last_updated = NOW()"
                ),
                rows,
            )

    # -- the background consumer -----------------------------------------------------------
    @property
    def polling(self) -> bool:
        """The consumer runs: started, not stopped, not crashed."""
        return bool(self._threads) and not self._stop.is_set()

    @property
    def polls(self) -> int:
        """Dequeue attempts the background consumer has completed (it is alive while this grows)."""
        return self._polls

    def start(self, threads: int = 1) -> DotNetApp:
        """Start the listener (LISTEN on the channel), ``threads`` pollers (a dequeue on
        each notification, and every ``poll_interval`` anyway) and the metrics writer.
        Returns once the listener listens."""
        self._stop.clear()
        self._listening.clear()
        self._spawn("listener", self._listen)
        for n in range(threads):
            self._spawn(f"poller-{n}", self._poll)
        self._spawn("metrics", self._write_metrics)
        if not self._listening.wait(10):
            raise RuntimeError(f"{self.process_id}: the listener did not start")
        return self

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        self._wake.set()
        for t in self._threads:
            t.join(timeout)
        self._threads.clear()

    def __enter__(self) -> DotNetApp:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _spawn(self, name: str, target: Callable[[], None]) -> None:
        t = threading.Thread(target=target, name=f"{self.process_id}:{name}", daemon=True)
        self._threads.append(t)
        t.start()

    def _listen(self) -> None:
        while not self._stop.is_set():
            try:
                with self._connect(autocommit=True) as conn:
                    conn.execute(self._sql("LISTEN {channel}"))
                    self._listening.set()
                    while not self._stop.is_set():
                        for _ in conn.notifies(timeout=0.2):
                            self.metrics.add("listener@task-notification-count")
                            self._wake.set()
            except psycopg.OperationalError:
                self.metrics.add("listener@reconnect-count")
                self._stop.wait(0.2)

    def _poll(self) -> None:
        while not self._stop.is_set():
            try:
                ran = self.run_one()
            except BaseException as exc:  # what a .NET poller dies of: it stops
                if self.crashed is None:
                    self.crashed = exc
                self._stop.set()
                self._wake.set()
                return
            finally:
                with self._polls_lock:
                    self._polls += 1
            if ran is None:
                self._wake.wait(self.poll_interval)
                self._wake.clear()

    def _write_metrics(self) -> None:
        while not self._stop.wait(self.metrics_interval):
            with contextlib.suppress(psycopg.Error):
                self.flush_metrics()

    # -- what happened ---------------------------------------------------------------------
    def runs_of(self, task_id: uuid.UUID) -> list[JobRun]:
        with self._runs_lock:
            return [r for r in self.runs if r.task_id == task_id]

    def finished_runs(self) -> Iterator[JobRun]:
        with self._runs_lock:
            runs = list(self.runs)
        return (r for r in runs if r.ended is not None)


@dataclass
class Gate:
    """An executor that blocks until released: a job that runs "slowly", for as long
    as a test needs it running (records when it started)."""

    started: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)
    timeout: float = 60.0

    def __call__(self, task: DequeuedTask) -> None:
        self.started.set()
        deadline = time.monotonic() + self.timeout
        while not self.release.wait(0.05):
            if task.cancellation.is_set():
                raise NetCancelled()
            if time.monotonic() > deadline:
                raise NetException("System.TimeoutException", "the gate was never released")
