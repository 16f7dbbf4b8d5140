"""Task handlers by type, with the retry policy each type runs under."""

from __future__ import annotations

import importlib
import inspect
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from types import SimpleNamespace
from typing import Any, Literal, TypeVar
from uuid import UUID

from skconsole.core.errors import ConfigError, InvalidJobError
from skconsole.core.schedule import Schedule
from skconsole.core.stored_error import exception_type_name
from skconsole.producer.job import Job
from skconsole.producer.trace_context import OTEL_TRACE, current_trace
from skconsole.worker.middleware import Layer, Middleware
from skconsole.worker.progress import checked_fraction, checked_message

Handler = Callable[..., Any]
M = TypeVar("M", bound=Middleware)
_DEFAULT: Any = object()  # "use the registry's default" (None means "no timeout")


BackoffFn = Callable[[int], float]
ExceptionClasses = tuple[type[BaseException], ...]
#: the longest any retry waits, whatever ``max_backoff`` or a ``backoff`` callable say
MAX_RETRY_DELAY = 36_500 * 86_400.0


class BackoffError(Exception):
    """A ``backoff=`` callable raised, or returned something other than a number of
    seconds >= 0: the job is parked as 5 Faulted with this as its error."""


def _exception_classes(name: str, value: Any) -> ExceptionClasses | None:
    if value is None:
        return None
    items = tuple(value) if isinstance(value, tuple | list | set | frozenset) else (value,)
    for item in items:
        if not (isinstance(item, type) and issubclass(item, BaseException)):
            raise ConfigError(f"{name} takes exception classes, got {item!r}")
    return items


def _is_seconds(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, int | float)


@dataclass(frozen=True)
class TaskOptions:
    """How a type is retried and when a run counts as hung.

    max_attempts counts every attempt, the first included: a job that fails
    recoverably that many times is parked as 5 Faulted. ``backoff`` is a
    number of seconds: the n-th retry waits ``backoff * 2**(n-1)``; or a
    callable ``backoff(n) -> seconds`` (``n``: the failed attempts so far, 1
    before the first retry). Either way a retry waits at most ``max_backoff``.
    A callable that raises or returns no number >= 0 parks the job as
    5 Faulted with a ``skconsole.BackoffError`` (see :meth:`retry_delay`).

    ``retry_on``: only these exception classes (and their subclasses) are
    retried, any other is 6 Fatal at once. ``fatal_on``: these are 6 Fatal at
    once, others follow the policy. A class both name is fatal (``fatal_on``
    wins). :class:`~skconsole.core.errors.FatalTaskError` is always fatal and
    ``Snooze`` always a snooze. The engine's timeout is retried (whatever
    ``retry_on`` says) unless ``fatal_on`` names ``TimeoutError`` itself.
    """

    max_attempts: int = 5
    backoff: float | BackoffFn = 1.0
    max_backoff: float = 300.0
    timeout: float | None = 300.0
    retry_on: ExceptionClasses | None = None
    fatal_on: ExceptionClasses = ()

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ConfigError("max_attempts must be at least 1")
        if _is_seconds(self.backoff):
            if not (0 <= self.backoff <= MAX_RETRY_DELAY):  # type: ignore[operator]
                raise ConfigError(f"backoff must be a number of seconds >= 0, got {self.backoff!r}")
        elif not callable(self.backoff):
            raise ConfigError(
                f"backoff must be a number of seconds or a callable (attempt) -> seconds,"
                f" got {self.backoff!r}"
            )
        if not (_is_seconds(self.max_backoff) and 0 <= self.max_backoff <= MAX_RETRY_DELAY):
            raise ConfigError(
                f"max_backoff must be a number of seconds >= 0, got {self.max_backoff!r}"
            )
        if self.timeout is not None and self.timeout <= 0:
            raise ConfigError("timeout must be positive (or None for no timeout)")
        retry_on = _exception_classes("retry_on", self.retry_on)
        if retry_on == ():
            raise ConfigError("retry_on is empty: nothing would be retried (use max_attempts=1)")
        object.__setattr__(self, "retry_on", retry_on)
        object.__setattr__(self, "fatal_on", _exception_classes("fatal_on", self.fatal_on) or ())

    def retry_delay(self, error_count: int) -> float:
        """Seconds before the retry that follows the ``error_count``-th failure.

        Raises :class:`BackoffError` when a ``backoff`` callable raises or returns
        anything but a number of seconds >= 0 (NaN, a negative number, a bool,
        None): a bug in the policy, which the caller must not turn into a
        retry storm (0 s) nor a job lost.
        """
        if _is_seconds(self.backoff):
            seconds = float(self.backoff) * 2 ** max(error_count - 1, 0)  # type: ignore[arg-type]
        else:
            fn: BackoffFn = self.backoff  # type: ignore[assignment]
            try:
                value: Any = fn(error_count)
            except BaseException as exc:
                raise BackoffError(
                    f"backoff({error_count}) raised {exception_type_name(exc)}: {_safe_str(exc)}"
                ) from exc
            if not (_is_seconds(value) and value >= 0):  # NaN >= 0 is False
                raise BackoffError(
                    f"backoff({error_count}) returned {_safe_repr(value)}:"
                    " not a number of seconds >= 0"
                )
            seconds = float(value)
        return float(min(self.max_backoff, seconds))

    def why_fatal(self, kind: type[BaseException]) -> str | None:
        """Why an exception of class ``kind`` is 6 Fatal by this policy, or None if
        it follows the policy (retried up to ``max_attempts``)."""
        if self.fatal_on and issubclass(kind, self.fatal_on):
            return f"{kind.__name__} is in fatal_on={_names(self.fatal_on)}"
        if self.retry_on is not None and not issubclass(kind, self.retry_on):
            return f"{kind.__name__} is not in retry_on={_names(self.retry_on)}"
        return None

    def why_timeout_fatal(self) -> str | None:
        """Why the engine's timeout is 6 Fatal by this policy (``fatal_on`` names
        ``TimeoutError`` itself), or None: a timeout is retried."""
        if TimeoutError in self.fatal_on:
            return f"a timeout is fatal: TimeoutError is in fatal_on={_names(self.fatal_on)}"
        return None


def _names(classes: ExceptionClasses) -> str:
    return "(" + ", ".join(c.__name__ for c in classes) + ("," if len(classes) == 1 else "") + ")"


def _safe_str(exc: BaseException) -> str:
    try:
        return str(exc)
    except BaseException:
        return "<the exception could not be formatted>"


def _safe_repr(value: Any) -> str:
    try:
        return repr(value)[:200]
    except BaseException:
        return f"<a {type(value).__name__}>"


StopReason = Literal["timeout", "shutdown", "fence", "cancel"]
#: most jobs one job may post with ctx.post: they are written in the statement
#: that records its success, which must stay small (post more with a Producer)
MAX_POSTS_PER_JOB = 1000


class JobStopped(Exception):
    """Raised by :meth:`JobContext.check_stop` and :meth:`JobContext.sleep` once the
    engine has asked the job to stop. The engine records the attempt as its stop
    reason says (a timeout fails it; a shutdown or a lost lease hands it back; an
    operator's cancel ends it 7 Cancelled)."""


class JobCancelled(JobStopped):
    """Raised by :meth:`JobContext.raise_if_cancelled` once an operator cancelled
    the job (``skconsole cancel``): the attempt ends 7 Cancelled, not retried."""


_STOP_LOCK = threading.Lock()


class StopSignal:
    """The engine's request that a running job stop, readable from any thread.

    Async handlers are cancelled as well; a sync handler cannot be interrupted,
    so this flag is how it learns it should stop (see docs/explanation/safety-model.md).
    The event a thread may wait on is made only when one does: one per job
    would cost the drain a few per cent."""

    __slots__ = ("_event", "cancelled", "reason")

    def __init__(self) -> None:
        self.reason: StopReason | None = None
        #: an operator cancelled the job: kept apart from ``reason``, which the
        #: first request sets (a cancel after a timeout still ends the job 7)
        self.cancelled = False
        self._event: threading.Event | None = None

    def request(self, reason: StopReason) -> None:
        with _STOP_LOCK:
            if self.reason is None:
                self.reason = reason
            if reason == "cancel":
                self.cancelled = True
            if self._event is not None:
                self._event.set()

    def is_set(self) -> bool:
        return self.reason is not None

    def wait(self, timeout: float | None) -> bool:
        """Wait up to ``timeout`` seconds for a stop request; True once there is one."""
        with _STOP_LOCK:
            if self.reason is not None:
                return True
            if self._event is None:
                self._event = threading.Event()
            event = self._event
        return event.wait(timeout)


@dataclass(frozen=True)
class JobContext:
    """What a handler may want to know about the job it runs, and whether to stop.

    A long sync handler should call :meth:`check_stop` now and then (or wait
    with :meth:`sleep`): when its worker cannot renew its lease it asks its
    jobs to stop before any other worker may take them over, and only a
    handler that stops keeps the promise that a job never runs twice at once.

    Attributes:
        task_id: the job's id.
        task_type: its type.
        source: the process that posted it.
        priority: its priority (lower runs first).
        attempt: this attempt's number, the first is 1.
        error_count: the failed attempts before this one.
        posted_at: when it was posted (the server's time).
        fencing_token: this attempt's fencing token: no other attempt of any job has had
            it or ever will, and a later attempt's is greater, across failovers too
            (docs/explanation/safety-model.md). Pass it to a store that can refuse a
            write carrying a smaller token than one it has seen, and a late writer of
            an earlier attempt is refused there too.
        stop: the stop signal; once the engine sets it, its ``reason`` is ``timeout``,
            ``shutdown``, ``fence`` or ``cancel``.
    """

    task_id: UUID
    task_type: str
    source: str
    priority: int
    attempt: int
    error_count: int
    posted_at: datetime
    fencing_token: int = 0
    stop: StopSignal = field(default_factory=StopSignal, repr=False, compare=False)
    #: jobs posted with :meth:`post`, written only if this attempt succeeds
    posts: list[Job] = field(default_factory=list, repr=False, compare=False)
    #: where :meth:`progress` reports (the engine's board; None: kept nowhere)
    progress_sink: Callable[[float | None, str | None], None] | None = field(
        default=None, repr=False, compare=False
    )
    #: the W3C trace context the job was posted under (JSON text of the carrier,
    #: ``{"traceparent": ...}``), None outside a trace: docs/howto/tracing.md
    trace_context: str | None = field(default=None, repr=False, compare=False)

    @cached_property
    def state(self) -> SimpleNamespace:
        """A namespace of this attempt for middleware to fill and handlers to read
        (``ctx.state.user = ...``): made on first use, gone with the attempt."""
        return SimpleNamespace()

    @property
    def stop_requested(self) -> bool:
        """True once the engine asked this job to stop (timeout, shutdown, lost lease, cancel)."""
        return self.stop.is_set()

    @property
    def cancelled(self) -> bool:
        """True once an operator cancelled this job: stop, and it ends 7 Cancelled.

        An async handler is cancelled too (it sees ``CancelledError`` at its next
        await); a sync one cannot be interrupted and should look at this (or call
        :meth:`raise_if_cancelled`, :meth:`check_stop` or :meth:`sleep`) now and then.
        """
        return self.stop.cancelled

    def raise_if_cancelled(self) -> None:
        """Raise :class:`JobCancelled` if an operator cancelled this job."""
        if self.stop.cancelled:
            raise JobCancelled("an operator cancelled this job")

    def check_stop(self) -> None:
        """Raise :class:`JobStopped` if the engine asked this job to stop."""
        if self.stop.is_set():
            raise JobStopped(f"the engine asked this job to stop ({self.stop.reason})")

    def sleep(self, seconds: float) -> None:
        """Sleep (in a sync handler), waking early with :class:`JobStopped` on a stop request."""
        if self.stop.wait(seconds):
            self.check_stop()

    def progress(self, fraction: float | None, message: str | None = None) -> None:
        """Say how far this attempt has got: ``fraction`` from 0 to 1 (None: unknown)
        and a short message (at most 200 characters kept).

        Cheap enough to call in a loop, from a sync handler's thread or an async
        one: the engine keeps the latest value and writes it at most once a
        second (the in-flight panel, ``status inflight``, the job detail and the
        exporter show it while the attempt runs). A bad fraction raises
        :class:`~skconsole.core.errors.InvalidJobError`.
        """
        value = checked_fraction(fraction)
        text = checked_message(message)
        if self.progress_sink is not None:
            self.progress_sink(value, text)

    def post(
        self,
        task_type: str,
        payload: Any = None,
        *,
        priority: int = 0,
        delay: float = 0.0,
        run_at: datetime | None = None,
        after: Sequence[UUID | str] = (),
        after_failure: str = "cancel",
    ) -> UUID:
        """Queue a job to be posted if, and only if, this attempt succeeds.

        It is written in the transaction that records this job's success (so a
        failure, a retry, a snooze or a late finisher fenced off posts nothing,
        and a success never loses it), with this job as its parent. Checked
        now: a bad job raises :class:`~skconsole.core.errors.InvalidJobError` here.
        Keys are not taken: a child is always a new job. ``after``: it runs only
        once every one of those jobs has succeeded (this job counts as succeeded);
        ``after_failure`` as in :class:`~skconsole.producer.job.Job`. An id of
        ``after`` that is no job makes the child cancelled at once, saying so.
        It is posted under the trace context current here (the run's span, when
        the worker traces), else under this job's own: its run continues the trace.
        """
        if len(self.posts) >= MAX_POSTS_PER_JOB:
            raise InvalidJobError(
                f"a job may post at most {MAX_POSTS_PER_JOB} jobs with ctx.post;"
                " post more with a Producer"
            )
        job = Job(
            task_type,
            payload,
            priority=priority,
            delay=delay,
            run_at=run_at,
            after=after,
            after_failure=after_failure,
        )
        job.trace = current_trace() or self.trace_context
        self.posts.append(job)
        return job.task_id


@dataclass(frozen=True)
class Task:
    name: str
    handler: Handler
    options: TaskOptions
    is_async: bool
    wants_context: bool
    #: when the type runs by itself (periodic jobs), if it does
    schedule: Schedule | None = None
    #: the next stage: posted with the handler's return value as its payload
    then: str | None = None
    #: the name stage jobs carry, set by the first stage (default: the type up to its last dot)
    pipeline: str | None = None

    @property
    def pipeline_name(self) -> str:
        return self.pipeline or self.name.rpartition(".")[0] or self.name


def _wants_context(fn: Handler) -> bool:
    try:
        params = [
            p
            for p in inspect.signature(fn).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):
        return False
    return len(params) >= 2


class TaskRegistry:
    """Handlers by task type. A handler takes the decoded payload, and the
    :class:`JobContext` too if it declares a second parameter; it may be sync
    (run in a thread) or async (run on the engine's loop).

    ``skconsole worker --tasks MODULE`` (or ``MODULE:ATTRIBUTE``) runs the registry
    a module defines. What a handler's return or exception makes of its job:
    success is 3 Processed; :class:`~skconsole.FatalTaskError` (or a ``fatal_on``
    class) 6 Fatal at once; :class:`~skconsole.Snooze` hands it back for later; any
    other exception is retried with back-off, up to ``max_attempts``, then 5 Faulted.

    Args:
        defaults: the options of every type registered without its own
            (:class:`TaskOptions`: 5 attempts, 1 s back-off doubled, 300 s timeout).
        tracing: whether each attempt is an OpenTelemetry span
            (docs/howto/tracing.md). None: when the worker starts, if the application
            has imported OpenTelemetry and set a tracer provider; True: always (needs
            ``skconsole[otel]``); False: never.
    """

    def __init__(self, defaults: TaskOptions | None = None, *, tracing: bool | None = None) -> None:
        if tracing not in (None, True, False):
            raise ConfigError(f"tracing must be None, True or False, got {tracing!r}")
        self.defaults = defaults or TaskOptions()
        self.tracing = tracing
        self._tasks: dict[str, Task] = {}
        self._middleware: list[Layer] = []

    def middleware(self, fn: M) -> M:
        """Register ``fn`` around every handler call (a decorator); the first
        registered is the outermost. ``def fn(payload, ctx, call_next)`` wraps sync
        handlers, ``async def fn(payload, ctx, call_next)`` async ones, a generator
        ``def fn(payload, ctx): ... yield ...`` both (docs/howto/middleware.md).
        A shape that cannot wrap a registered handler is refused here."""
        layer = Layer.of(fn)
        for task in self._tasks.values():
            if (why := layer.conflict(task.name, task.is_async)) is not None:
                raise ConfigError(why)
        self._middleware.append(layer)
        return fn

    @property
    def middlewares(self) -> tuple[Layer, ...]:
        """The registered middleware, outermost first."""
        return tuple(self._middleware)

    def worker_middleware(self) -> tuple[Layer, ...]:
        """What a worker runs around its handlers, decided when it starts: the
        registered middleware and, when tracing is on (``tracing``), the tracing
        middleware outermost, unless it was registered by hand where it is."""
        layers = tuple(self._middleware)
        if self.tracing is False or any(layer.tracing for layer in layers):
            return layers
        if self.tracing is None and not _tracer_provider_configured():
            return layers
        try:
            from skconsole.worker.tracing import trace_jobs
        except ImportError as exc:
            raise ConfigError(
                f"tracing=True needs OpenTelemetry ({exc}): pip install 'skconsole[otel]'"
            ) from None
        return (Layer.of(trace_jobs()), *layers)

    def task(
        self,
        name: str,
        *,
        max_attempts: int | None = None,
        backoff: float | BackoffFn | None = None,
        max_backoff: float | None = None,
        timeout: float | None = _DEFAULT,
        retry_on: type[BaseException] | tuple[type[BaseException], ...] | None = None,
        fatal_on: type[BaseException] | tuple[type[BaseException], ...] | None = None,
        cron: str | None = None,
        every: str | float | None = None,
        timezone: str | None = None,
        payload: Any = None,
        missed: str = "once",
        then: str | None = None,
        pipeline: str | None = None,
    ) -> Callable[[Handler], Handler]:
        """Register a handler for ``name``: ``@tasks.task("emails.send", max_attempts=5)``.

        ``max_attempts``, ``backoff``, ``max_backoff``, ``timeout`` (seconds, or
        ``None`` for none), ``retry_on`` and ``fatal_on`` override the registry's
        defaults for this type (:class:`TaskOptions`). A bad option, schedule or
        name is refused at once with a one-line
        :class:`~skconsole.core.errors.ConfigError`, when the module is imported.

        ``cron=`` ("0 3 * * *", in ``timezone``) or ``every=`` ("30s") make the
        type periodic: the workers that run it post one job per tick, with
        ``payload``; ``missed`` ("once" or "skip") says what becomes of ticks
        missed while no worker ran it. ``then=`` names the next stage of a
        pipeline: when this handler succeeds, a job of that type is posted with
        its return value as payload, in the transaction that records the success.

        ``backoff=`` is seconds (doubled each retry) or a callable
        ``(attempt) -> seconds``; ``retry_on=`` / ``fatal_on=`` are exception
        classes: only ``retry_on`` ones are retried, ``fatal_on`` ones are
        6 Fatal at once (it wins over ``retry_on``). See :class:`TaskOptions`.
        """
        schedule = None
        if cron is not None or every is not None:
            schedule = Schedule.define(
                cron=cron,
                every=every,
                timezone=timezone,
                payload=payload,
                missed=missed,
            )
        elif timezone is not None or payload is not None:
            raise ConfigError(f"{name!r}: timezone= and payload= need cron= or every=")

        def decorate(fn: Handler) -> Handler:
            d = self.defaults
            options = TaskOptions(
                max_attempts=max_attempts if max_attempts is not None else d.max_attempts,
                backoff=backoff if backoff is not None else d.backoff,
                max_backoff=max_backoff if max_backoff is not None else d.max_backoff,
                timeout=d.timeout if timeout is _DEFAULT else timeout,
                retry_on=_exception_classes("retry_on", retry_on)
                if retry_on is not None
                else d.retry_on,
                fatal_on=_exception_classes("fatal_on", fatal_on) or ()
                if fatal_on is not None
                else d.fatal_on,
            )
            self.register(name, fn, options, schedule=schedule, then=then, pipeline=pipeline)
            return fn

        return decorate

    def register(
        self,
        name: str,
        fn: Handler,
        options: TaskOptions | None = None,
        *,
        schedule: Schedule | None = None,
        then: str | None = None,
        pipeline: str | None = None,
    ) -> None:
        """Register ``fn`` for ``name`` without a decorator (what :meth:`task` does)."""
        for what, value in (("task type", name), ("then=", then), ("pipeline=", pipeline)):
            if value is not None and (
                not isinstance(value, str) or not value.strip() or len(value) > 250
            ):
                raise ConfigError(f"invalid {what} name {value!r}")
        if name in self._tasks:
            raise ConfigError(f"task type {name!r} is registered twice")
        if then == name:
            raise ConfigError(f"{name!r} cannot be its own next stage")
        is_async = inspect.iscoroutinefunction(fn)
        for layer in self._middleware:
            if (why := layer.conflict(name, is_async)) is not None:
                raise ConfigError(why)
        self._tasks[name] = Task(
            name=name,
            handler=fn,
            options=options or self.defaults,
            is_async=is_async,
            wants_context=_wants_context(fn),
            schedule=schedule,
            then=then,
            pipeline=pipeline,
        )

    def get(self, name: str) -> Task | None:
        """The registered task ``name`` (handler and options), or None."""
        return self._tasks.get(name)

    def names(self) -> list[str]:
        """The registered task types, sorted."""
        return sorted(self._tasks)

    def schedules(self) -> dict[str, Schedule]:
        """The periodic types and their schedules."""
        return {n: t.schedule for n, t in sorted(self._tasks.items()) if t.schedule is not None}

    def subset(self, names: list[str]) -> TaskRegistry:
        """A registry of only these types (``worker --types``); an unknown one is a
        :class:`~skconsole.core.errors.ConfigError` naming the types there are."""
        unknown = sorted(set(names) - set(self._tasks))
        if unknown:
            raise ConfigError(
                f"unknown task type(s) {', '.join(unknown)}; this module registers: {', '.join(self.names())}"
            )
        out = TaskRegistry(self.defaults, tracing=self.tracing)
        out._tasks = {n: self._tasks[n] for n in names}
        out._middleware = list(self._middleware)
        return out

    def __len__(self) -> int:
        return len(self._tasks)


def _tracer_provider_configured() -> bool:
    """Whether the application set a tracer provider (until then OpenTelemetry's is
    a proxy, or a no-op one); asked only if it imported OpenTelemetry itself."""
    trace = sys.modules.get(OTEL_TRACE)
    if trace is None:
        return False
    try:
        provider = trace.get_tracer_provider()
        return not isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider)
    except Exception:
        return False


def load_registry(spec: str) -> TaskRegistry:
    """The registry named by ``module`` or ``module:attribute`` (for --tasks)."""
    module_name, _, attr = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(f"cannot import task module {module_name!r}: {exc}") from None
    except Exception as exc:  # the module itself is broken: say so in one line
        first = (str(exc).strip().splitlines() or [""])[0]
        raise ConfigError(
            f"cannot import task module {module_name!r}: {type(exc).__name__}: {first}"
        ) from None
    if attr:
        found = getattr(module, attr, None)
        if not isinstance(found, TaskRegistry):
            raise ConfigError(f"{spec!r} is not a TaskRegistry")
        return found
    registries = [v for v in vars(module).values() if isinstance(v, TaskRegistry)]
    if len(registries) != 1:
        raise ConfigError(
            f"module {module_name!r} must define exactly one TaskRegistry "
            f"(found {len(registries)}); name it as {module_name}:ATTRIBUTE"
        )
    return registries[0]
