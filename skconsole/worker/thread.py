"""The worker engine on a thread of its own, for the console's ``--tasks`` and ``demo``.

The engine is asyncio code; the console's UI loop must never wait on it. So
each start runs a fresh :class:`~skconsole.worker.engine.Engine` on a new
event loop in a daemon thread, and stop asks it, thread-safely, to stop
claiming and let its running jobs finish within the grace period (the rest
are handed back to the queue). No UI imports here: the console only reads
``state``, ``running_count`` and ``processed``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from dataclasses import KW_ONLY, dataclass, field, replace

from skconsole.db.connect import Database
from skconsole.worker.engine import Engine, WorkerConfig
from skconsole.worker.registry import TaskRegistry

log = logging.getLogger("skconsole.worker")


@dataclass(eq=False)
class EngineThread:
    """Start, stop and observe one embedded engine; restartable.

    ``gate``: the first start waits (state "starting") until it is set, or
    ``gate_timeout``; the demo uses it to let a simulated crash happen first."""

    db: Database
    registry: TaskRegistry
    config: WorkerConfig
    _: KW_ONLY
    gate: threading.Event | None = None
    gate_timeout: float = 60.0
    error: str | None = field(default=None, init=False)
    _engine: Engine | None = field(default=None, init=False)
    _loop: asyncio.AbstractEventLoop | None = field(default=None, init=False)
    _thread: threading.Thread | None = field(default=None, init=False)
    _processed_before: int = field(default=0, init=False)  # by engines of earlier starts
    _stop_requested: threading.Event = field(default_factory=threading.Event, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)

    # -- observing -------------------------------------------------------------------
    @property
    def state(self) -> str:
        """stopped, starting, running, stopping, or failed (see ``error``)."""
        thread, engine = self._thread, self._engine
        if thread is None or not thread.is_alive():
            return "failed" if self.error else "stopped"
        if engine is None:
            return "starting"
        return engine.state

    @property
    def running_count(self) -> int:
        engine = self._engine
        return engine.running_count if engine is not None and self.is_alive else 0

    @property
    def processed(self) -> int:
        engine = self._engine
        return self._processed_before + (engine.processed if engine is not None else 0)

    @property
    def concurrency(self) -> int:
        return self.config.concurrency

    @property
    def is_alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    # -- controlling -----------------------------------------------------------------
    def start(self) -> None:
        """Start a new engine unless one is running (non-blocking)."""
        with self._lock:
            if self.is_alive:
                return
            if self._engine is not None:
                self._processed_before += self._engine.processed
            self._engine = None
            self.error = None
            self._stop_requested.clear()
            self._thread = threading.Thread(
                target=self._main, name="skconsole-embedded-engine", daemon=True
            )
            self._thread.start()

    def stop(self) -> None:
        """Ask the engine to stop (non-blocking); running jobs get the grace period, and
        sync handlers still running after it are waited for. Asked again: stop now."""
        now = self._stop_requested.is_set()
        self._stop_requested.set()
        loop, engine = self._loop, self._engine
        if loop is not None and engine is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: stopped
                loop.call_soon_threadsafe(lambda: engine.stop(now=now))

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the engine thread to end; True if it has."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
        return not self.is_alive

    def close(self, timeout: float | None = None) -> bool:
        """Stop and wait: running jobs finish within the grace period, then results are written."""
        self.stop()
        wait = timeout if timeout is not None else self.config.grace_period + 15.0
        return self.join(wait)

    # -- the thread ----------------------------------------------------------------------
    def _main(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._run())
        except Exception as exc:
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            self.error = first
            log.error("embedded engine stopped: %s", first)
        finally:
            self._loop = None
            loop.close()

    async def _run(self) -> None:
        gate = self.gate
        if gate is not None and not gate.is_set():
            await asyncio.get_running_loop().run_in_executor(None, gate.wait, self.gate_timeout)
            if self._stop_requested.is_set():
                return
        engine = Engine(self.db, self.registry, replace(self.config))
        self._engine = engine
        if self._stop_requested.is_set():  # stop() came while the thread was starting
            engine.stop()
        await engine.run()
