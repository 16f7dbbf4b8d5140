"""textual-serve's web server, behind the token of :mod:`skconsole.web.token`.

textual-serve (Textualize's) starts one process of a command per browser
websocket and relays its screen and keys. It has no access control of its own,
so :class:`ConsoleServer` keeps its handlers (the websocket and downloads) and
builds the application around them itself:

- every request (the page, its assets, the websocket, a download) shows the
  token before any handler runs: ``?token=`` once, which is answered with a
  cookie (HttpOnly, SameSite=Lax) and a redirect to the same address without
  it, then that cookie. Without it: 401; with a wrong one: 403; no console
  process is started. Tokens are compared in constant time;
- the websocket must also come from a page of this server (its Origin), so a
  page of another site cannot drive a console even with the cookie sent along;
- the page is ours (``templates/console.html``): textual-serve's loads its font
  from Google; this one loads its script, stylesheet and font from textual-serve's
  installed ``static`` folder, through this server, and its Content-Security-Policy
  lets the browser load nothing from anywhere else, nor frame the page;
- no access log: the first request's line holds the token. Refusals are logged
  without their query;
- at most ``max_sessions`` consoles at once: each is a process with database
  connections of its own, so a tab opened past the limit is refused (503) and
  starts nothing until another session ends.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import signal
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import jinja2
import textual_serve
from aiohttp import web
from textual_serve.server import Server
from yarl import URL

from skconsole.core.errors import SkconsoleError
from skconsole.web.token import Token

log = logging.getLogger("skconsole.serve")

#: our page
TEMPLATES = Path(__file__).parent / "templates"
#: textual-serve's script, stylesheet, font and background, as it installs them
STATIC = Path(textual_serve.__file__).parent / "static"
#: the query parameter that carries the token on the first request
TOKEN_PARAM = "token"
#: how long stopping waits for the consoles of open sessions to quit
SESSION_STOP_S = 10.0

#: the nonce of the page's own script, for its Content-Security-Policy
_NONCE = web.RequestKey("nonce", str)
_REFUSED = (
    "skconsole serve: this address needs its token; open the URL `skconsole serve`"
    " printed when it started (.../?token=...)\n"
)
_Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class ConsoleServer(Server):
    """One console process per browser session, for whoever shows ``token``."""

    def __init__(
        self,
        command: str,
        token: Token,
        *,
        host: str,
        port: int,
        max_sessions: int,
        title: str = "skconsole",
    ) -> None:
        super().__init__(
            command,
            host=host,
            port=port,
            title=title,
            statics_path=STATIC,
            templates_path=TEMPLATES,
        )
        self.token = token
        self.max_sessions = max_sessions
        self._pages = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True)
        #: the handlers of open websockets: each one's console quits when it ends
        self._sessions: set[asyncio.Task[object]] = set()

    @property
    def open_sessions(self) -> int:
        """Browser sessions whose console runs now."""
        return len(self._sessions)

    def make_app(self) -> web.Application:
        """The aiohttp application: textual-serve's routes, each behind the token."""
        app = web.Application(middlewares=[self._guard])
        app.add_routes(
            [
                web.get("/", self._index),
                web.get("/ws", self._websocket),
                web.get("/download/{key}", self.handle_download),
                web.get("/favicon.ico", _no_icon),
                web.static("/static", STATIC),
            ]
        )
        app.on_response_prepare.append(_security_headers)
        app.on_shutdown.append(self._end_sessions)
        return app

    # -- the token --------------------------------------------------------------------
    @web.middleware
    async def _guard(self, request: web.Request, handler: _Handler) -> web.StreamResponse:
        given = request.query.get(TOKEN_PARAM)
        if given is not None:
            if not self.token.matches(given):
                return _refuse(request, 403, "wrong token")
            # into a cookie, and out of the address bar (history, screenshots, Referer)
            response = web.Response(status=303, headers={"Location": _same_site(request)})
            response.set_cookie(
                self.token.cookie_name,
                self.token.value,
                path="/",
                httponly=True,
                samesite="Lax",
                secure=request.secure,
            )
            return response
        cookie = request.cookies.get(self.token.cookie_name)
        if not self.token.matches(cookie):
            return _refuse(request, 401, "no token" if cookie is None else "wrong cookie")
        if request.path == "/ws" and not _same_origin(request):
            return _refuse(request, 403, "websocket opened by a page of another origin")
        return await handler(request)

    # -- the page and the sessions ----------------------------------------------------
    async def _index(self, request: web.Request) -> web.Response:
        nonce = secrets.token_urlsafe(16)
        request[_NONCE] = nonce  # the Content-Security-Policy allows this script only
        scheme = "wss" if request.secure else "ws"
        font_size = _int(request.query.get("fontsize"), 16, low=8, high=40)
        page = self._pages.get_template("console.html").render(
            title=self.title,
            static="/static/",
            websocket_url=f"{scheme}://{request.host}/ws",
            font_size=font_size,
            nonce=nonce,
        )
        return web.Response(
            text=page, content_type="text/html", headers={"Cache-Control": "no-store"}
        )

    async def _websocket(self, request: web.Request) -> web.StreamResponse:
        if self.open_sessions >= self.max_sessions:
            log.warning(
                "session from %s refused: %d open, the most allowed (--max-sessions)",
                request.remote,
                self.open_sessions,
            )
            return web.Response(
                status=503,
                text=f"skconsole serve: {self.open_sessions} consoles are open, the most it"
                " starts (--max-sessions); close a tab, then reload this one\n",
            )
        task = asyncio.current_task()
        assert task is not None
        self._sessions.add(task)  # no await since the count: two tabs cannot both pass
        log.info("session from %s: starting a console", request.remote)
        try:
            return await self.handle_websocket(request)
        finally:
            self._sessions.discard(task)
            log.info("session from %s ended", request.remote)

    async def _end_sessions(self, app: web.Application) -> None:
        """On the way out: every open session's console is told to quit (textual-serve's
        handler does that when cancelled), for at most SESSION_STOP_S."""
        sessions = list(self._sessions)
        for task in sessions:
            task.cancel()
        if sessions:
            await asyncio.wait(sessions, timeout=SESSION_STOP_S)


# -- running ----------------------------------------------------------------------------
@asynccontextmanager
async def listening(server: ConsoleServer) -> AsyncIterator[tuple[str, int]]:
    """The server listening; yields the address it bound (``port`` 0: any free port)."""
    runner = web.AppRunner(server.make_app(), access_log=None, shutdown_timeout=SESSION_STOP_S)
    await runner.setup()
    try:
        site = web.TCPSite(runner, server.host, server.port)
        try:
            await site.start()
        except OSError as exc:
            reason = exc.strerror or str(exc)
            raise SkconsoleError(
                f"cannot listen on {server.host}:{server.port}: {reason}"
            ) from None
        host, port = runner.addresses[0][:2]
        yield str(host), int(port)
    finally:
        await runner.cleanup()


async def serve_until_stopped(server: ConsoleServer, started: Callable[[str, int], None]) -> None:
    """Serve until SIGINT or SIGTERM; ``started`` hears the address once it listens."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    async with listening(server) as (host, port):
        started(host, port)
        await stop.wait()


# -- helpers ----------------------------------------------------------------------------
async def _no_icon(request: web.Request) -> web.Response:
    return web.Response(status=204)


def _refuse(request: web.Request, status: int, why: str) -> web.Response:
    log.warning("refused %s %s from %s: %s", request.method, request.path, request.remote, why)
    return web.Response(status=status, text=_REFUSED)


def _same_origin(request: web.Request) -> bool:
    """No Origin (not a browser) or this server's own host and port."""
    origin = request.headers.get("Origin")
    if origin is None:
        return True
    try:
        return URL(origin).raw_authority == request.host
    except ValueError:
        return False


def _int(text: str | None, default: int, *, low: int, high: int) -> int:
    try:
        value = int(text) if text is not None else default
    except ValueError:
        return default
    return max(low, min(high, value))


async def _security_headers(request: web.Request, response: web.StreamResponse) -> None:
    """What the browser may do with every response: load from this server only, run
    only the page's own script, never frame the page, never send a Referer."""
    nonce = request.get(_NONCE)
    script = f"'self' 'nonce-{nonce}'" if nonce else "'self'"
    response.headers.setdefault(
        "Content-Security-Policy",
        f"default-src 'self'; script-src {script}; style-src 'self' 'unsafe-inline';"
        " img-src 'self' data:; font-src 'self'; connect-src 'self';"
        " base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    )
    response.headers.setdefault("X-Frame-Options", "DENY")
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    response.headers.setdefault("Referrer-Policy", "no-referrer")


def _same_site(request: web.Request) -> str:
    """The address asked for, without the token, as a path on this server: never
    ``//host/`` or ``/\\host/``, which a browser would follow to another site."""
    target = request.rel_url.without_query_params(TOKEN_PARAM)
    location = "/" + target.raw_path.lstrip("/\\")
    return location + (f"?{target.raw_query_string}" if target.raw_query_string else "")
