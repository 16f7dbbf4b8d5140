"""Every request to ``skconsole serve`` shows its token, or it is refused (401 without
one, 403 with a wrong one) and no console starts; with the token the page loads, and
all it loads comes from the server itself.

No database: the server's console command here only leaves a mark that it ran.
"""

from __future__ import annotations

import asyncio
import re
import shlex
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from html.parser import HTMLParser
from pathlib import Path

import pytest

pytest.importorskip("textual_serve", reason="the web extra is not installed")

from aiohttp import CookieJar, WSServerHandshakeError
from aiohttp.test_utils import TestClient, TestServer

from skconsole.web.server import ConsoleServer
from skconsole.web.token import Token
from tests.support.waiting import until_async

TOKEN = Token.generate()
Client = TestClient  # of this module's server: aiohttp.test_utils.TestClient[Request, Application]


@pytest.fixture
def started(tmp_path: Path) -> Path:
    """The file the console command creates when a console is started."""
    return tmp_path / "console-started"


@pytest.fixture
async def client(started: Path) -> AsyncIterator[Client]:
    command = f"touch {shlex.quote(str(started))}"
    async with _client(
        ConsoleServer(command, TOKEN, host="127.0.0.1", port=0, max_sessions=8)
    ) as c:
        yield c


@asynccontextmanager
async def _client(server: ConsoleServer) -> AsyncIterator[Client]:
    """A client of ``server``; at the end it waits until every console it started has
    quit, so none outlives the test's event loop."""
    # an IP address's cookies: aiohttp's jar keeps them only when told to, browsers always do
    async with TestClient(TestServer(server.make_app()), cookie_jar=CookieJar(unsafe=True)) as c:
        yield c
        await until_async(lambda: server.open_sessions == 0)


async def _log_in(client: Client) -> None:
    response = await client.get(f"/?token={TOKEN.value}")
    assert response.status == 200


async def test_the_page_without_a_token_is_refused_with_401(client: Client) -> None:
    response = await client.get("/")

    assert response.status == 401


async def test_the_page_with_a_wrong_token_is_refused_with_403_and_no_cookie(
    client: Client,
) -> None:
    response = await client.get("/?token=" + "x" * 43, allow_redirects=False)

    assert response.status == 403
    assert "Set-Cookie" not in response.headers


@pytest.mark.parametrize(
    "path", ["/static/js/textual.js", "/static/css/xterm.css", "/download/abc", "/favicon.ico"]
)
async def test_the_assets_and_downloads_need_the_token_too(
    client: Client,
    path: str,
) -> None:
    response = await client.get(path)

    assert response.status == 401


@pytest.mark.parametrize(
    ("cookie", "query", "status"),
    [(None, "", 401), ("x" * 43, "", 401), (None, "?token=" + "x" * 43, 403)],
    ids=["no-token", "a-wrong-cookie", "a-wrong-token"],
)
async def test_a_websocket_without_the_token_is_refused_and_starts_no_console(
    client: Client,
    started: Path,
    cookie: str | None,
    query: str,
    status: int,
) -> None:
    if cookie is not None:
        client.session.cookie_jar.update_cookies({TOKEN.cookie_name: cookie})

    with pytest.raises(WSServerHandshakeError) as refused:
        await client.ws_connect("/ws" + query)

    assert refused.value.status == status
    # the handler that starts a console runs only after the check: refused, it never ran
    assert not started.exists()


async def test_a_websocket_opened_by_a_page_of_another_site_is_refused(
    client: Client,
    started: Path,
) -> None:
    await _log_in(client)

    with pytest.raises(WSServerHandshakeError) as refused:
        await client.ws_connect("/ws", headers={"Origin": "http://attacker.example"})

    assert refused.value.status == 403
    assert not started.exists()


async def test_with_the_token_a_websocket_starts_a_console(
    client: Client,
    started: Path,
) -> None:
    await _log_in(client)

    socket = await client.ws_connect("/ws")
    try:
        await until_async(started.exists)
    finally:
        await socket.close()


async def test_the_token_becomes_a_cookie_and_leaves_the_address(
    client: Client,
) -> None:
    response = await client.get(f"/?token={TOKEN.value}&fontsize=20", allow_redirects=False)

    assert response.status == 303
    assert response.headers["Location"] == "/?fontsize=20"
    cookie = response.cookies[TOKEN.cookie_name]
    assert cookie.value == TOKEN.value
    assert cookie["httponly"] is True
    assert cookie["samesite"] == "Lax"


@pytest.mark.parametrize("path", ["//evil.example/", "/\\evil.example/", "///evil.example/x"])
async def test_the_redirect_out_of_the_token_stays_on_this_server(
    client: Client, path: str
) -> None:
    """A path that a browser reads as another host (//host, /\\host) is not followed there.
    Sent as raw HTTP: a client library would take the path for a host itself."""
    reader, writer = await asyncio.open_connection(client.host, client.port)
    writer.write(
        f"GET {path}?token={TOKEN.value} HTTP/1.1\r\nHost: {client.host}\r\n"
        "Connection: close\r\n\r\n".encode()
    )
    head = (await reader.read()).decode(errors="replace").split("\r\n\r\n")[0].splitlines()
    writer.close()

    assert head[0].split()[1] == "303", head
    location = next(h.split(":", 1)[1].strip() for h in head if h.lower().startswith("location:"))
    assert location.startswith("/") and not location.startswith(("//", "/\\")), location


async def test_with_the_token_the_page_loads_and_points_its_websocket_at_this_server(
    client: Client,
) -> None:
    response = await client.get(f"/?token={TOKEN.value}")
    page = await response.text()

    assert response.status == 200
    host = f"{client.server.host}:{client.server.port}"
    assert f'data-session-websocket-url="ws://{host}/ws"' in page


class _Assets(HTMLParser):
    """Every address a page loads: src and href attributes, and url(...) in its styles."""

    def __init__(self) -> None:
        super().__init__()
        self.addresses: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.addresses += [v for k, v in attrs if k in ("src", "href") and v]

    def handle_data(self, data: str) -> None:
        self.addresses += re.findall(r"url\(\"?([^\")]+)\"?\)", data)


async def test_the_page_loads_only_this_servers_own_assets(
    client: Client,
) -> None:
    response = await client.get(f"/?token={TOKEN.value}")
    parser = _Assets()
    parser.feed(await response.text())

    assert len(parser.addresses) >= 4  # stylesheet, script, font, background
    assert all(a.startswith("/static/") for a in parser.addresses), parser.addresses
    for address in parser.addresses:  # all in the installed textual-serve package
        assert (await client.get(address)).status == 200, address
    assert "default-src 'self'" in response.headers["Content-Security-Policy"]


#: a console that stays until the server tells it to quit (textual-serve's "quit" meta)
_STAYS = shlex.join(
    [
        sys.executable,
        "-c",
        "import sys\nseen = b''\nwhile b'quit' not in seen:\n"
        "    chunk = sys.stdin.buffer.read1(4096)\n    if not chunk: break\n    seen += chunk",
    ]
)


async def test_a_session_past_max_sessions_is_refused_until_another_ends() -> None:
    server = ConsoleServer(_STAYS, TOKEN, host="127.0.0.1", port=0, max_sessions=2)
    async with _client(server) as client:
        await _log_in(client)
        first = await client.ws_connect("/ws")
        second = await client.ws_connect("/ws")
        await until_async(lambda: server.open_sessions == 2)

        with pytest.raises(WSServerHandshakeError) as refused:
            await client.ws_connect("/ws")
        assert refused.value.status == 503

        await first.close()
        await until_async(lambda: server.open_sessions == 1)
        third = await client.ws_connect("/ws")
        await until_async(lambda: server.open_sessions == 2)
        await second.close()
        await third.close()
