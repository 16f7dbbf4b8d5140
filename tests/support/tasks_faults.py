"""Task handlers for the fault-tolerance tests (``--tasks tests.support.tasks_faults``).

Every handler that *succeeds* appends one line ``<task_id>\\n`` to
``$SKTEST_LOG_DIR/<pid>.log`` (one file per process, flushed at once), so a
test can count how many times each job really completed, whatever the
database says. Handlers that fail never write a line; ``hang`` and ``stuck``
never write one either (their late return is discarded by the engine).

Types and what a test should expect of each:

=============  ======================================  =========================
type           behaviour                               final state
=============  ======================================  =========================
ok             returns at once                         3 Processed, 0 errors
slow           sleeps ``payload`` seconds (thread)     3 Processed, 0 errors
slow-async     awaits ``payload`` seconds              3 Processed, 0 errors
flaky-until    fails recoverably while                 3 Processed, n errors
               error_count < ``payload`` (n)
always-fail    always fails recoverably                5 Faulted, 3 errors
               (max_attempts 3, backoff 0.01 s)
fatal          raises FatalTaskError                   6 Fatal, 1 error
hang           awaits far past its 1 s timeout         5 Faulted, 2 errors
               (async, max_attempts 2)                 (TimeoutError)
hang-sync      sleeps ``payload`` s (default 30) in    5 Faulted, 2 errors
               its thread, timeout 1 s, 2 attempts
stuck          like hang-sync, but max_attempts 1      5 Faulted, 1 error
brief          sleeps 0.05 s, timeout 3 s, 1 attempt   3 Processed, 0 errors
=============  ======================================  =========================

Misbehaving handlers (each fails its own job and nothing else; ``max_attempts``
2 unless said): ``exit`` (sys.exit in a thread), ``exit-async`` (SystemExit
on the loop), ``interrupt`` (KeyboardInterrupt), ``base-exc`` (a custom
BaseException), ``bad-str`` (an exception whose ``__str__`` raises; 1
attempt), ``own-timeout`` (its own TimeoutError, no timeout set; 1 attempt),
``own-timeout-async`` (its own TimeoutError under a 60 s timeout; 1 attempt),
``cancel-self`` (raises CancelledError itself; 3 attempts), ``huge-error`` (a
40 MB message; 1 attempt), ``cooperative`` (a sync handler sleeping
``payload`` s with JobContext.sleep, so it stops when asked), ``overrun`` (a thread that sleeps ``payload`` s
past its 1 s timeout, ignoring JobContext.stop), ``versioned`` (payload
``{"v": n, "sleep": s, "fail": bool}``: sleeps, then fails recoverably if
asked), ``token-async`` (awaits ``payload`` s; its execution's note is its fencing
token). Every execution of ``overrun``, ``versioned``, ``slow``, ``slow-async`` and
``token-async`` is logged with its start and end (:func:`executions`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skconsole.core.errors import FatalTaskError
from skconsole.worker.registry import JobContext, TaskOptions, TaskRegistry
from tests.support.statuses import status_counts as status_counts

tasks = TaskRegistry(TaskOptions(max_attempts=5, backoff=0.01, max_backoff=0.1, timeout=120.0))

#: the short lease of the fault tests (--lease): the smallest the CLI takes, so a killed
#: worker's jobs are reaped 6 s (lease + 20%) after its last renewal
SHORT_LEASE = "5s"
REAP_AFTER_S = 6.0

ALWAYS_FAIL_ATTEMPTS = 3
HANG_ATTEMPTS = 2
FLAKY_ATTEMPTS = 10

_lock = threading.Lock()
#: per log kind ("log", "runs"): the process that opened it and the open file (a forked
#: worker process opens its own)
_logs: dict[str, tuple[int, Any]] = {}


def _append(kind: str, line: str) -> None:
    """Append ``line`` to this process's ``<pid>.<kind>`` file in $SKTEST_LOG_DIR and flush."""
    directory = os.environ.get("SKTEST_LOG_DIR")
    if not directory:
        return
    with _lock:
        pid = os.getpid()
        held = _logs.get(kind)
        if held is None or held[0] != pid:
            held = (pid, open(Path(directory) / f"{pid}.{kind}", "a", encoding="utf-8"))  # noqa: SIM115
            _logs[kind] = held
        held[1].write(line)
        held[1].flush()


def log_completion(task_id: object) -> None:
    """Append ``<task_id>\\n`` to this process's completion log and flush it."""
    _append("log", f"{task_id}\n")


def _log_run_line(line: str) -> None:
    _append("runs", line)


@contextlib.contextmanager
def execution(task_id: object, note: str = "") -> Iterator[None]:
    """Log this execution's start at once and its end however it ends (an exception,
    a cancellation), to this process's ``<pid>.runs`` file: a process killed
    mid-run leaves a start without an end."""
    pid = os.getpid()
    _log_run_line(f"S {task_id} {pid} {time.time():.6f} {note}\n")
    try:
        yield
    finally:
        _log_run_line(f"E {task_id} {pid} {time.time():.6f}\n")


class FlakyError(Exception):
    pass


class AlwaysFailError(Exception):
    pass


@tasks.task("ok")
def ok(payload: Any, ctx: JobContext) -> None:
    log_completion(ctx.task_id)


@tasks.task("slow")
def slow(payload: Any, ctx: JobContext) -> None:
    with execution(ctx.task_id):
        time.sleep(float(payload or 0))
    log_completion(ctx.task_id)


@tasks.task("slow-async")
async def slow_async(payload: Any, ctx: JobContext) -> None:
    with execution(ctx.task_id):
        await asyncio.sleep(float(payload or 0))
    log_completion(ctx.task_id)


@tasks.task("flaky-until", max_attempts=FLAKY_ATTEMPTS, backoff=0.01, max_backoff=0.05)
def flaky_until(payload: Any, ctx: JobContext) -> None:
    if ctx.error_count < int(payload):
        raise FlakyError(f"flaky: failure {ctx.error_count + 1} of {int(payload)}")
    log_completion(ctx.task_id)


@tasks.task("always-fail", max_attempts=ALWAYS_FAIL_ATTEMPTS, backoff=0.01, max_backoff=0.05)
def always_fail(payload: Any, ctx: JobContext) -> None:
    raise AlwaysFailError(f"always fails (attempt {ctx.attempt})")


@tasks.task("fatal")
def fatal(payload: Any, ctx: JobContext) -> None:
    raise FatalTaskError("fatal: this job can never succeed")


@tasks.task("hang", timeout=1.0, max_attempts=HANG_ATTEMPTS, backoff=0.01)
async def hang(payload: Any, ctx: JobContext) -> None:
    await asyncio.sleep(600)


@tasks.task("hang-sync", timeout=1.0, max_attempts=HANG_ATTEMPTS, backoff=0.01)
def hang_sync(payload: Any, ctx: JobContext) -> None:
    time.sleep(float(payload or 30))


@tasks.task("stuck", timeout=1.0, max_attempts=1)
def stuck(payload: Any, ctx: JobContext) -> None:
    time.sleep(float(payload or 30))


@tasks.task("brief", timeout=3.0, max_attempts=1)
def brief(payload: Any, ctx: JobContext) -> None:
    time.sleep(0.05)
    log_completion(ctx.task_id)


class CustomBaseError(BaseException):
    pass


class UnprintableError(Exception):
    def __str__(self) -> str:
        raise RuntimeError("this exception cannot be printed")


@tasks.task("exit", max_attempts=2, backoff=0.01)
def exit_(payload: Any, ctx: JobContext) -> None:
    sys.exit(3)


@tasks.task("exit-async", max_attempts=2, backoff=0.01)
async def exit_async(payload: Any, ctx: JobContext) -> None:
    raise SystemExit(4)


@tasks.task("interrupt", max_attempts=2, backoff=0.01)
def interrupt(payload: Any, ctx: JobContext) -> None:
    raise KeyboardInterrupt


@tasks.task("base-exc", max_attempts=2, backoff=0.01)
def base_exc(payload: Any, ctx: JobContext) -> None:
    raise CustomBaseError("not an Exception")


@tasks.task("bad-str", max_attempts=1)
def bad_str(payload: Any, ctx: JobContext) -> None:
    raise UnprintableError()


@tasks.task("own-timeout", max_attempts=1, timeout=None)
def own_timeout(payload: Any, ctx: JobContext) -> None:
    raise TimeoutError("upstream took too long")


@tasks.task("own-timeout-async", max_attempts=1, timeout=60)
async def own_timeout_async(payload: Any, ctx: JobContext) -> None:
    raise TimeoutError("upstream took too long")


@tasks.task("cancel-self", max_attempts=3, backoff=0.01)
async def cancel_self(payload: Any, ctx: JobContext) -> None:
    raise asyncio.CancelledError()


@tasks.task("huge-error", max_attempts=1)
def huge_error(payload: Any, ctx: JobContext) -> None:
    raise ValueError("x" * 40_000_000)


@tasks.task("overrun", timeout=1.0, max_attempts=2, backoff=0.01)
def overrun(payload: Any, ctx: JobContext) -> None:
    with execution(ctx.task_id):
        time.sleep(float(payload or 3))  # ignores ctx.stop: a thread cannot be stopped


@tasks.task("cooperative")
def cooperative(payload: Any, ctx: JobContext) -> None:
    """A long sync handler that stops when asked (JobContext.sleep raises JobStopped)."""
    with execution(ctx.task_id):
        ctx.sleep(float(payload or 0))
    log_completion(ctx.task_id)


@tasks.task("versioned", max_attempts=2, backoff=0.01)
async def versioned(payload: Any, ctx: JobContext) -> None:
    with execution(ctx.task_id, f"v{payload['v']}"):
        await asyncio.sleep(float(payload.get("sleep", 0)))
    if payload.get("fail"):
        raise FlakyError(f"version {payload['v']} fails")
    log_completion(ctx.task_id)


@tasks.task("token-async")
async def token_async(payload: Any, ctx: JobContext) -> None:
    """Awaits ``payload`` seconds; its execution is logged with its fencing token."""
    with execution(ctx.task_id, str(ctx.fencing_token)):
        await asyncio.sleep(float(payload or 0))
    log_completion(ctx.task_id)


# -- test-side helpers (used by the fault tests, never by the workers) -------------
# They live here because the fault tests may only add this module and their own
# test files; nothing below runs inside a worker.

COMPLETION_TYPES = ("ok", "slow", "slow-async", "flaky-until", "brief")


def completions(log_dir: Path | str) -> dict[str, int]:
    """How many times each task id completed successfully, over every process's log."""
    counts: dict[str, int] = {}
    for f in Path(log_dir).glob("*.log"):
        for line in f.read_text(encoding="utf-8").splitlines():
            if line.strip():
                counts[line.strip()] = counts.get(line.strip(), 0) + 1
    return counts


@dataclass(frozen=True)
class Execution:
    task_id: str
    started: float
    ended: float  # the process's death for a run cut short by SIGKILL (inf if unknown)
    pid: int
    note: str


def executions(
    log_dir: Path | str, deaths: dict[int, float] | None = None
) -> dict[str, list[Execution]]:
    """Every logged execution by task id, in start order, over every process's log.
    ``deaths``: when each killed process died, the end of its unfinished runs."""
    out: dict[str, list[Execution]] = {}
    for f in Path(log_dir).glob("*.runs"):
        open_runs: dict[str, list[tuple[float, str]]] = {}
        pid = int(f.stem)
        for line in f.read_text(encoding="utf-8").splitlines():
            parts = line.split(" ", 4)
            if len(parts) < 4:
                continue  # a line cut short by a SIGKILL
            kind, task_id, at = parts[0], parts[1], float(parts[3])
            if kind == "S":
                open_runs.setdefault(task_id, []).append((at, parts[4] if len(parts) > 4 else ""))
            elif open_runs.get(task_id):
                started, note = open_runs[task_id].pop(0)
                out.setdefault(task_id, []).append(Execution(task_id, started, at, pid, note))
        end = (deaths or {}).get(pid, float("inf"))
        for task_id, runs in open_runs.items():
            for started, note in runs:
                out.setdefault(task_id, []).append(Execution(task_id, started, end, pid, note))
    for runs in out.values():
        runs.sort(key=lambda r: r.started)
    return out


def overlaps(runs: list[Execution]) -> list[tuple[Execution, Execution]]:
    """Pairs of executions of one job that ran at the same time."""
    return [(a, b) for a, b in itertools.pairwise(runs) if b.started < a.ended]


def completions_by_pid(log_dir: Path | str) -> dict[int, dict[str, int]]:
    out: dict[int, dict[str, int]] = {}
    for f in Path(log_dir).glob("*.log"):
        per: dict[str, int] = {}
        for line in f.read_text(encoding="utf-8").splitlines():
            if line.strip():
                per[line.strip()] = per.get(line.strip(), 0) + 1
        out[int(f.stem)] = per
    return out


class OutputDrain:
    """Reads a worker's combined stdout/stderr in a thread, so a full pipe never blocks it."""

    def __init__(self, proc: Any) -> None:
        self.proc = proc
        self.lines: list[str] = []
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        stream = self.proc.stdout
        if stream is None:
            return
        for line in stream:
            self.lines.append(line.rstrip("\n"))

    def text(self) -> str:
        return "\n".join(self.lines)

    def tail(self, n: int = 60) -> str:
        return "\n".join(self.lines[-n:])

    def join(self, timeout: float = 5.0) -> None:
        self._thread.join(timeout)


def queue_count(conn: Any) -> int:
    return int(conn.execute("SELECT count(*) FROM sk_tasks_queue_t").fetchone()[0])


def all_final(conn: Any) -> bool:
    """No job waiting, running or backing off, and the queue is empty."""
    row = conn.execute(
        "SELECT (SELECT count(*) FROM sk_task_results_t WHERE task_status IN (1, 2, 4)),"
        " (SELECT count(*) FROM sk_tasks_queue_t)"
    ).fetchone()
    return row == (0, 0)


def worker_ids_for_pid(conn: Any, pid: int) -> list[Any]:
    rows = conn.execute(
        "SELECT worker_id FROM sk_workers_t WHERE worker_pid = %s", (pid,)
    ).fetchall()
    return [r[0] for r in rows]


def worker_states(conn: Any) -> dict[Any, str]:
    """worker id -> its state as sk_worker_liveness() judges it (alive, connection lost, ...)."""
    rows = conn.execute("SELECT worker_id, state FROM sk_worker_liveness()").fetchall()
    return {r[0]: r[1] for r in rows}


#: the server session holding a worker's liveness lock (two-key form, class sk_lock_class())
LOCK_HOLDER = (
    "SELECT l.pid FROM pg_locks l JOIN sk_workers_t w ON l.objid::bigint = w.worker_lock_key"
    " WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2"
    " AND l.classid = sk_lock_class()::oid AND w.worker_id = %s"
    " AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())"
)


def silence_at_reap(last_error: str) -> float:
    """How long the owner had been silent when its job was reaped, from the reap's
    error text ('... no heartbeat for 12 s'): the lease it was judged by had lapsed."""
    match = re.search(r"no heartbeat for ([0-9.]+) s", last_error)
    assert match is not None, last_error
    return float(match.group(1))


#: the default lease (WorkerConfig): a worker's jobs are reaped only after
#: LEASE + MARGIN seconds without a renewal
LEASE, MARGIN = 10.0, 2.0


def owned_in_flight(conn: Any, worker_id: Any) -> list[Any]:
    rows = conn.execute(
        "SELECT task_id FROM sk_task_results_t WHERE task_status = 2 AND sk_owner_worker_id = %s",
        (worker_id,),
    ).fetchall()
    return [r[0] for r in rows]


def child_pids(pid: int) -> list[int]:
    """Direct children of ``pid`` (Linux /proc)."""
    out: list[int] = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        # pid (comm) state ppid ...; comm may contain spaces, so split after the last ')'
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 1 and int(fields[1]) == pid:
            out.append(int(d.name))
    return out


def wait_exit(proc: Any, timeout: float) -> int | None:
    """The exit code, or None if the process is still running after ``timeout`` seconds."""
    try:
        return int(proc.wait(timeout))
    except Exception:  # subprocess.TimeoutExpired
        return None


def kill_group(proc: Any) -> float:
    """SIGKILL ``proc``'s process group and reap it; returns when it was killed (epoch s)."""
    os.killpg(proc.pid, signal.SIGKILL)
    killed_at = time.time()
    proc.wait(10)
    return killed_at


def stop_gracefully(proc: Any, timeout: float = 60) -> None:
    """SIGTERM ``proc``; it must exit 0 within ``timeout`` seconds (its output tail says why not)."""
    proc.send_signal(signal.SIGTERM)
    assert wait_exit(proc, timeout) == 0, proc.drain.tail()
