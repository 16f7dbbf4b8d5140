"""Middleware: functions around every handler call (docs/howto/middleware.md).

Three shapes, told apart when registered (``TaskRegistry.middleware``):

* ``def mw(payload, ctx, call_next)``: wraps sync handlers, on the handler's
  thread; ``call_next()`` runs the rest of the chain and returns its result.
* ``async def mw(payload, ctx, call_next)``: wraps async handlers, on the
  engine's loop; ``await call_next()``.
* a generator ``def mw(payload, ctx): ... yield ...``: wraps both. The yield
  runs the rest of the chain (``result = yield`` sees its result; the
  handler's exception is raised at the yield); returning before the yield
  answers for the handler, with the value returned.

A sync ``call_next`` one cannot wrap an async handler (it would block the
loop), nor an async one a sync handler (which has a thread, not the loop):
the registry refuses such a pair when the second of them is registered.
The first registered is the outermost. Whatever a middleware raises fails
the attempt as a handler's exception does (execution.py), and the engine's
timeout and its cancellations reach it as they reach a handler.

With no middleware the engine calls the handler as before: no :class:`Chain`,
no closure, nothing per job.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from skconsole.core.errors import ConfigError
from skconsole.producer.trace_context import current_trace

Middleware = Callable[..., Any]
SyncLayer = Callable[[Any, Any, Callable[[], Any]], Any]
AsyncLayer = Callable[[Any, Any, Callable[[], Awaitable[Any]]], Awaitable[Any]]
Kind = Literal["sync", "async", "both"]
#: the attribute that marks the tracing middleware (worker/tracing.py), so the
#: registry's own is not doubled by the automatic one
TRACING_MARK = "skconsole_tracing"


class MiddlewareError(RuntimeError):
    """A middleware broke the protocol (called ``call_next`` twice, yielded twice):
    the attempt fails with this error."""


@dataclass(frozen=True)
class Layer:
    """One registered middleware and the handlers it can wrap."""

    fn: Middleware
    kind: Kind
    name: str
    #: skconsole's tracing middleware (worker/tracing.py)
    tracing: bool = False

    @classmethod
    def of(cls, fn: Middleware) -> Layer:
        """``fn`` as a layer, or a ConfigError saying what shape it should have."""
        if not callable(fn):
            raise ConfigError(f"middleware must be a function, got {type(fn).__name__}")
        name = getattr(fn, "__qualname__", None) or type(fn).__qualname__
        code = fn if inspect.isfunction(fn) or inspect.ismethod(fn) else type(fn).__call__
        if inspect.isasyncgenfunction(code):
            raise ConfigError(
                f"middleware {name} is an async generator, which cannot give back a result:"
                f" write it as async def {name}(payload, ctx, call_next)"
                " or as a plain generator (docs/howto/middleware.md)"
            )
        kind: Kind
        if inspect.isgeneratorfunction(code):
            kind, shape = "both", "(payload, ctx)"
        else:
            kind = "async" if inspect.iscoroutinefunction(code) else "sync"
            shape = "(payload, ctx, call_next)"
        try:
            inspect.signature(fn).bind(*range(shape.count(",") + 1))
        except TypeError:
            raise ConfigError(f"middleware {name} must take {shape}") from None
        except ValueError:
            pass  # no signature to read (a builtin): it is called as it is
        return cls(fn, kind, name, bool(getattr(fn, TRACING_MARK, False)))

    def conflict(self, task: str, is_async: bool) -> str | None:
        """Why this middleware cannot wrap the handler of ``task``, or None."""
        if self.kind == "sync" and is_async:
            why = (
                f"middleware {self.name} calls call_next() synchronously, so it cannot wrap"
                f" the async handler of {task!r} (it would block the event loop)"
            )
        elif self.kind == "async" and not is_async:
            why = (
                f"middleware {self.name} is async, so it cannot wrap the sync handler of"
                f" {task!r} (which runs on a thread of its own, not on the event loop)"
            )
        else:
            return None
        return (
            f"{why}: write it as a generator, def {self.name}(payload, ctx): ... yield ...,"
            " which wraps sync and async handlers alike (docs/howto/middleware.md)"
        )


def sync_layers(layers: Sequence[Layer]) -> tuple[SyncLayer, ...]:
    """The layers around sync handlers, outermost first."""
    return tuple(
        _sync_generator(layer) if layer.kind == "both" else layer.fn
        for layer in layers
        if layer.kind != "async"
    )


def async_layers(layers: Sequence[Layer]) -> tuple[AsyncLayer, ...]:
    """The layers around async handlers, outermost first."""
    return tuple(
        _async_generator(layer) if layer.kind == "both" else layer.fn
        for layer in layers
        if layer.kind != "sync"
    )


class Chain:
    """One attempt's call of its handler through the middleware (made only when
    there is some). For a pipeline stage it keeps the trace context current when
    the handler returned, inside every middleware (the run's span, when traced):
    the next stage is posted under it."""

    __slots__ = ("args", "capture", "ctx", "handler", "layers", "stage_trace")

    def __init__(
        self,
        layers: tuple[Any, ...],
        handler: Callable[..., Any],
        args: tuple[Any, ...],
        ctx: Any,
        capture: bool,
    ) -> None:
        self.layers = layers
        self.handler = handler
        self.args = args
        self.ctx = ctx
        self.capture = capture
        self.stage_trace: str | None = None

    def run_sync(self) -> Any:
        return self._sync_from(0)

    def _sync_from(self, i: int) -> Any:
        if i == len(self.layers):
            result = self.handler(*self.args)
            if self.capture:
                self.stage_trace = current_trace()
            return result
        called = False

        def call_next() -> Any:
            nonlocal called
            if called:
                raise MiddlewareError(
                    f"middleware {_name(self.layers[i])} called call_next() twice"
                )
            called = True
            return self._sync_from(i + 1)

        return self.layers[i](self.args[0], self.ctx, call_next)

    async def run_async(self) -> Any:
        return await self._async_from(0)

    async def _async_from(self, i: int) -> Any:
        if i == len(self.layers):
            result = await self.handler(*self.args)
            if self.capture:
                self.stage_trace = current_trace()
            return result
        called = False

        async def call_next() -> Any:
            nonlocal called
            if called:
                raise MiddlewareError(
                    f"middleware {_name(self.layers[i])} called call_next() twice"
                )
            called = True
            return await self._async_from(i + 1)

        return await self.layers[i](self.args[0], self.ctx, call_next)


def _name(fn: Any) -> str:
    return str(getattr(fn, "__qualname__", None) or type(fn).__qualname__)


def _sync_generator(layer: Layer) -> SyncLayer:
    """A generator middleware as a sync ``(payload, ctx, call_next)`` one."""

    def run(payload: Any, ctx: Any, call_next: Callable[[], Any]) -> Any:
        gen: Generator[Any, Any, Any] = layer.fn(payload, ctx)
        if (answer := _until_yield(gen)) is not _GO_ON:
            return answer
        try:
            result = call_next()
        except BaseException as exc:
            return _after_raise(gen, layer, exc)
        return _after_return(gen, layer, result)

    run.__qualname__ = layer.name
    return run


def _async_generator(layer: Layer) -> AsyncLayer:
    """A generator middleware as an async ``(payload, ctx, call_next)`` one: its code
    runs on the loop, around the handler's awaits."""

    async def run(payload: Any, ctx: Any, call_next: Callable[[], Awaitable[Any]]) -> Any:
        gen: Generator[Any, Any, Any] = layer.fn(payload, ctx)
        if (answer := _until_yield(gen)) is not _GO_ON:
            return answer
        try:
            result = await call_next()
        except BaseException as exc:
            return _after_raise(gen, layer, exc)
        return _after_return(gen, layer, result)

    run.__qualname__ = layer.name
    return run


#: a generator middleware reached its yield: the handler is to be called
_GO_ON = object()


def _until_yield(gen: Generator[Any, Any, Any]) -> Any:
    """Run the middleware up to its yield: _GO_ON, or what it answered for the handler."""
    try:
        next(gen)
    except StopIteration as answered:
        return answered.value
    return _GO_ON


def _after_raise(gen: Generator[Any, Any, Any], layer: Layer, exc: BaseException) -> Any:
    """The handler raised: at the yield too; an answer there replaces the exception."""
    try:
        gen.throw(exc)
    except StopIteration as answered:
        return answered.value  # it caught the exception and answered
    return _yielded_twice(gen, layer)


def _after_return(gen: Generator[Any, Any, Any], layer: Layer, result: Any) -> Any:
    """The handler returned: the middleware sees the result (``result = yield``)."""
    try:
        gen.send(result)
    except StopIteration:
        return result
    return _yielded_twice(gen, layer)


def _yielded_twice(gen: Generator[Any, Any, Any], layer: Layer) -> Any:
    gen.close()
    raise MiddlewareError(f"middleware {layer.name} yielded more than once")
