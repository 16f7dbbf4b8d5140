"""A TCP proxy in front of the test server that the test can freeze.

Frozen, it stops forwarding in both directions but closes nothing: both ends
see silence, no RST, exactly as behind a network partition that drops packets
(the worker's kernel even acknowledges what it sends, so only the client's own
timeouts notice). New connections are accepted but not forwarded until it is
thawed. Down (:meth:`down`), it does not listen at all: a connection attempt is
refused, as by a host whose server is not running; :meth:`up` listens again on
the same port. It runs an asyncio loop on a daemon thread of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from pathlib import Path

from psycopg import conninfo


class FreezableProxy:
    def __init__(self, server_dsn: str) -> None:
        params = conninfo.conninfo_to_dict(server_dsn)
        host = str(params.get("host") or "localhost")
        port = int(params.get("port") or 5432)
        self._unix: str | None = None
        self._tcp: tuple[str, int] | None = None
        if host.startswith("/"):
            self._unix = str(Path(host) / f".s.PGSQL.{port}")
        else:
            self._tcp = (host, port)
        self._params = params
        self._loop = asyncio.new_event_loop()
        self._thawed = asyncio.Event()
        self._server: asyncio.AbstractServer | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self.port = 0
        #: connections accepted so far (forwarded or not)
        self.accepted = 0
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    def start(self) -> FreezableProxy:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(10)
        return self

    @property
    def dsn(self) -> str:
        params = {**self._params, "host": "127.0.0.1", "port": str(self.port)}
        return conninfo.make_conninfo(**params)  # type: ignore[arg-type]

    def freeze(self) -> None:
        self._loop.call_soon_threadsafe(self._thawed.clear)

    def thaw(self) -> None:
        self._loop.call_soon_threadsafe(self._thawed.set)

    def down(self) -> None:
        """Stop listening: new connection attempts are refused."""

        async def stop_listening() -> None:
            if self._server is not None:
                self._server.close()
                await self._server.wait_closed()
                self._server = None

        asyncio.run_coroutine_threadsafe(stop_listening(), self._loop).result(10)

    def up(self) -> None:
        """Listen again, on the same port."""
        asyncio.run_coroutine_threadsafe(self._listen(self.port), self._loop).result(10)

    def close(self) -> None:
        async def stop() -> None:
            if self._server is not None:
                self._server.close()
            for w in list(self._writers):
                w.close()
            # every connection's task ends here, none is left pending (or never started)
            # on a stopped loop for the garbage collector to report in a later test
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(stop(), self._loop).result(5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        if not self._thread.is_alive():
            self._loop.close()

    async def _start(self) -> None:
        self._thawed.set()
        await self._listen(0)

    async def _listen(self, port: int) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        self.accepted += 1
        try:
            await self._thawed.wait()
            if self._unix is not None:
                up_reader, up_writer = await asyncio.open_unix_connection(self._unix)
            else:
                assert self._tcp is not None
                up_reader, up_writer = await asyncio.open_connection(*self._tcp)
        except (OSError, asyncio.CancelledError):
            writer.close()
            self._writers.discard(writer)
            return
        self._writers.add(up_writer)
        # cancelled by close(): the connection just ends (a cancelled handler task would
        # be reported by asyncio's stream callback, which asks it for its exception)
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.gather(
                self._pump(reader, up_writer), self._pump(up_reader, writer), return_exceptions=True
            )

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                data = await reader.read(65536)
                if not data:
                    break
                await self._thawed.wait()  # frozen: hold it, and read nothing more
                writer.write(data)
                await writer.drain()
        except (OSError, asyncio.CancelledError):
            pass
        finally:
            self._writers.discard(writer)
            with contextlib.suppress(Exception):
                writer.close()
