"""What the console needs of an embedded engine, and how the status line says its state."""

from __future__ import annotations

from typing import Protocol

from skconsole.tui.formatting import fmt_int


class EngineControl(Protocol):
    """What the console needs of an embedded engine (skconsole.worker.thread.EngineThread)."""

    @property
    def state(self) -> str: ...

    @property
    def running_count(self) -> int: ...

    @property
    def processed(self) -> int: ...

    @property
    def concurrency(self) -> int: ...

    @property
    def error(self) -> str | None:
        """Why it failed (state "failed"), else None."""
        ...

    def start(self) -> None: ...

    def stop(self) -> None: ...


def engine_text(engine: EngineControl, *, done: bool = True) -> str:
    """The engine on the status line: "running 3/8 · 1,204 done", or why it failed;
    without ``done`` (a narrow terminal), "running 3/8"."""
    if engine.state == "failed" and engine.error:
        return f"failed: {engine.error}"
    running = f"{engine.state} {engine.running_count}/{engine.concurrency}"
    return f"{running} · {fmt_int(engine.processed)} done" if done else running


def toggle(engine: EngineControl) -> str:
    """Start or stop the engine; what to tell the operator."""
    if engine.state in ("running", "starting"):
        engine.stop()
        return "Stopping the embedded engine: running jobs may finish first."
    if engine.state == "stopping":
        return "The embedded engine is already stopping."
    engine.start()
    return "Starting the embedded engine."
