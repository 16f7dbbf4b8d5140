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
  starts nothing until another session ends;
- a place can be linked to (:mod:`skconsole.core.places`): ``/job/<id>``,
  ``/group/<group id>`` and ``/search?q=<line>`` serve the same page, whose websocket
  (``/ws/<kind>/<the value in hex>``) starts a console that opens that place
  (``--open``). The place is checked on the page and again on the websocket (a bad
  one: 400, no console), and shell-quoted onto the console's command line, which
  textual-serve runs through a shell.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import shlex
import signal
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import jinja2
import textual_serve
from aiohttp import web
from textual_serve.app_service import AppService
from textual_serve.server import Server
from yarl import URL

from skconsole.core.errors import ConfigError, SkconsoleError
from skconsole.core.places import Place, PlaceKind, place
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
                web.get("/job/{value}", self._place_page),
                web.get("/group/{value}", self._place_page),
                web.get("/search", self._place_page),
                web.get("/ws", self._websocket),
                web.get("/ws/{kind}/{hex}", self._websocket),
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
        websocket = request.path == "/ws" or request.path.startswith("/ws/")
        if websocket and not _same_origin(request):
            return _refuse(request, 403, "websocket opened by a page of another origin")
        return await handler(request)

    # -- the page and the sessions ----------------------------------------------------
    async def _index(self, request: web.Request, at: Place | None = None) -> web.Response:
        """The console page; ``at``: the place its console opens."""
        nonce = secrets.token_urlsafe(16)
        request[_NONCE] = nonce  # the Content-Security-Policy allows this script only
        scheme = "wss" if request.secure else "ws"
        font_size = _int(request.query.get("fontsize"), 16, low=8, high=40)
        page = self._pages.get_template("console.html").render(
            title=self.title,
            static="/static/",
            websocket_url=f"{scheme}://{request.host}{_websocket_path(at)}",
            font_size=font_size,
            nonce=nonce,
        )
        return web.Response(
            text=page, content_type="text/html", headers={"Cache-Control": "no-store"}
        )

    async def _place_page(self, request: web.Request) -> web.Response:
        """``/job/<id>``, ``/group/<id>``, ``/search?q=<line>``: the console page, whose
        console opens that place; a bad place is refused (400) with what is wrong."""
        kind = request.path.split("/")[1]
        value = request.match_info.get("value") or request.query.get("q", "")
        try:
            at = place(kind, value)
        except ConfigError as exc:
            return _bad_place(request, exc)
        return await self._index(request, at)

    async def _websocket(self, request: web.Request) -> web.StreamResponse:
        try:
            at = _place_of_websocket(request)
        except ConfigError as exc:
            return _bad_place(request, exc)
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
        log.info(
            "session from %s: starting a console%s",
            request.remote,
            "" if at is None else f" on {at.kind.value}",
        )
        try:
            return await self._run_console(request, self.command_for(at))
        finally:
            self._sessions.discard(task)
            log.info("session from %s ended", request.remote)

    def command_for(self, at: Place | None) -> str:
        """The shell command of a session's console: the server's, with ``--open`` for
        ``at``, shell-quoted (textual-serve runs it through a shell)."""
        if at is None:
            return self.command
        return f"{self.command} {shlex.join(at.argv())}"

    async def _run_console(self, request: web.Request, command: str) -> web.WebSocketResponse:
        """textual-serve's ``handle_websocket`` with a command of the session's own."""
        websocket = web.WebSocketResponse(heartbeat=15)
        width = _int(request.query.get("width"), 80, low=1, high=1000)
        height = _int(request.query.get("height"), 24, low=1, high=1000)
        service: AppService | None = None

        async def close() -> None:
            await websocket.close()

        try:
            await websocket.prepare(request)
            service = AppService(
                command,
                write_bytes=websocket.send_bytes,
                write_str=websocket.send_str,
                close=close,
                download_manager=self.download_manager,
                debug=self.debug,
            )
            await service.start(width, height)
            try:
                await self._process_messages(websocket, service)
            finally:
                await service.stop()
        except asyncio.CancelledError:
            await websocket.close()
        except Exception:
            log.exception("session from %s failed", request.remote)
        finally:
            if service is not None:
                await service.stop()
        return websocket

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


def _bad_place(request: web.Request, exc: ConfigError) -> web.Response:
    log.warning("refused %s %s from %s: a bad place", request.method, request.path, request.remote)
    return web.Response(status=400, text=f"skconsole serve: {exc}\n")


def _websocket_path(at: Place | None) -> str:
    """The websocket of a page: ``/ws``, or ``/ws/<kind>/<value as UTF-8 in hex>`` (the
    page's script appends its own query to the address, so the place is in the path)."""
    if at is None:
        return "/ws"
    return f"/ws/{at.kind.value}/{at.value.encode('utf-8').hex()}"


def _place_of_websocket(request: web.Request) -> Place | None:
    """The place a websocket's console opens (checked again: the address can be typed)."""
    kind = request.match_info.get("kind")
    if kind is None:
        return None
    if kind not in {k.value for k in PlaceKind}:
        raise ConfigError("unknown place")
    try:
        value = bytes.fromhex(request.match_info["hex"]).decode("utf-8")
    except ValueError:  # not hex, or not UTF-8
        raise ConfigError("the place is not hex-encoded UTF-8") from None
    return place(kind, value)


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
