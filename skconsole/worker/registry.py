"""Task handlers by type, with the retry policy each type runs under."""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from skconsole.errors import ConfigError

Handler = Callable[..., Any]
_DEFAULT: Any = object()  # "use the registry's default" (None means "no timeout")


@dataclass(frozen=True)
class TaskOptions:
    """How a type is retried and when a run counts as hung.

    max_attempts counts every attempt, the first included: a job that fails
    recoverably that many times is parked as 5 Faulted. The n-th retry waits
    ``backoff * 2**(n-1)`` seconds, at most ``max_backoff``.
    """

    max_attempts: int = 5
    backoff: float = 1.0
    max_backoff: float = 300.0
    timeout: float | None = 300.0

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ConfigError("max_attempts must be at least 1")
        if self.backoff < 0 or self.max_backoff < 0:
            raise ConfigError("backoff must not be negative")
        if self.timeout is not None and self.timeout <= 0:
            raise ConfigError("timeout must be positive (or None for no timeout)")

    def retry_delay(self, error_count: int) -> float:
        """Seconds before the retry that follows the ``error_count``-th failure."""
        return float(min(self.max_backoff, self.backoff * 2 ** max(error_count - 1, 0)))


@dataclass(frozen=True)
class JobContext:
    """What a handler may want to know about the job it runs."""

    task_id: UUID
    task_type: str
    source: str
    priority: int
    attempt: int
    error_count: int
    posted_at: datetime


@dataclass(frozen=True)
class Task:
    name: str
    handler: Handler
    options: TaskOptions
    is_async: bool
    wants_context: bool


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
    (run in a thread) or async (run on the engine's loop)."""

    def __init__(self, defaults: TaskOptions | None = None) -> None:
        self.defaults = defaults or TaskOptions()
        self._tasks: dict[str, Task] = {}

    def task(
        self,
        name: str,
        *,
        max_attempts: int | None = None,
        backoff: float | None = None,
        max_backoff: float | None = None,
        timeout: float | None = _DEFAULT,
    ) -> Callable[[Handler], Handler]:
        def decorate(fn: Handler) -> Handler:
            d = self.defaults
            options = TaskOptions(
                max_attempts=max_attempts if max_attempts is not None else d.max_attempts,
                backoff=backoff if backoff is not None else d.backoff,
                max_backoff=max_backoff if max_backoff is not None else d.max_backoff,
                timeout=d.timeout if timeout is _DEFAULT else timeout,
            )
            self.register(name, fn, options)
            return fn

        return decorate

    def register(self, name: str, fn: Handler, options: TaskOptions | None = None) -> None:
        if not name or len(name) > 250:
            raise ConfigError(f"invalid task type name {name!r}")
        if name in self._tasks:
            raise ConfigError(f"task type {name!r} is registered twice")
        self._tasks[name] = Task(
            name=name,
            handler=fn,
            options=options or self.defaults,
            is_async=inspect.iscoroutinefunction(fn),
            wants_context=_wants_context(fn),
        )

    def get(self, name: str) -> Task | None:
        return self._tasks.get(name)

    def names(self) -> list[str]:
        return sorted(self._tasks)

    def subset(self, names: list[str]) -> TaskRegistry:
        unknown = sorted(set(names) - set(self._tasks))
        if unknown:
            raise ConfigError(
                f"unknown task type(s) {', '.join(unknown)}; this module registers: {', '.join(self.names())}"
            )
        out = TaskRegistry(self.defaults)
        out._tasks = {n: self._tasks[n] for n in names}
        return out

    def __len__(self) -> int:
        return len(self._tasks)


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
