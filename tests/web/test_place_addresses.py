"""``/job/<id>``, ``/group/<group id>`` and ``/search?q=<line>`` serve the console page
behind the token, and the console of that page's websocket is started with ``--open``
and the place as one shell-quoted argument; a bad place is refused with 400 and starts
no console, on the page and on the websocket alike.

No database: the console command here only writes down the arguments it was given.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

pytest.importorskip("textual_serve", reason="the web extra is not installed")

from aiohttp import CookieJar, WSServerHandshakeError
from aiohttp.test_utils import TestClient, TestServer

from skconsole.web.server import ConsoleServer
from skconsole.web.token import Token
from tests.support.waiting import until_async

TOKEN = Token.generate()
JOB = "0f3c7a1e-5b2d-4c8e-9a10-1234567890ab"
Client = TestClient


@pytest.fixture
def given(tmp_path: Path) -> Path:
    """The file a started console writes its arguments into."""
    return tmp_path / "console-arguments.json"


@pytest.fixture
async def client(given: Path) -> AsyncIterator[Client]:
    script = f"import json, sys; open({str(given)!r}, 'w').write(json.dumps(sys.argv[1:]))"
    command = f"exec {shlex.quote(sys.executable)} -c {shlex.quote(script)}"
    server = ConsoleServer(command, TOKEN, host="127.0.0.1", port=0, max_sessions=8)
    async with TestClient(TestServer(server.make_app()), cookie_jar=CookieJar(unsafe=True)) as c:
        response = await c.get(f"/?token={TOKEN.value}")
        assert response.status == 200
        yield c
        await until_async(lambda: server.open_sessions == 0)


def _ws(kind: str, value: str) -> str:
    return f"/ws/{kind}/{value.encode('utf-8').hex()}"


@pytest.mark.parametrize(
    "path",
    [
        "/job/not-a-uuid",
        f"/job/{JOB}%3Bid",
        "/group/%24(id)",
        "/group/0123456789abcdef",
        "/search?q=type%3Dx%1B%5D52%3Bc%3BaGk%3D%07",
        "/search?q=rm%20-rf",
        "/search?q=" + "type%3D" + "a" * 600,
        "/search",
    ],
)
async def test_a_page_of_a_bad_place_is_refused_with_400_and_one_line(
    client: Client, path: str
) -> None:
    response = await client.get(path)
    text = await response.text()

    assert response.status == 400
    assert text.startswith("skconsole serve: ")
    assert text.count("\n") == 1
    assert "\x1b" not in text


@pytest.mark.parametrize(
    "path",
    [
        _ws("job", "1; touch /tmp/pwned"),
        _ws("group", "$(id)"),
        _ws("search", "error=x\x1b[2J"),
        _ws("shell", "ls"),
        "/ws/job/zz",
        "/ws/search/ff",  # not UTF-8
    ],
)
async def test_a_websocket_of_a_bad_place_is_refused_with_400_and_starts_no_console(
    client: Client, given: Path, path: str
) -> None:
    with pytest.raises(WSServerHandshakeError) as refused:
        await client.ws_connect(path)

    assert refused.value.status == 400
    assert not given.exists()


async def test_a_place_page_needs_the_token_too(given: Path) -> None:
    server = ConsoleServer("true", TOKEN, host="127.0.0.1", port=0, max_sessions=8)
    async with TestClient(TestServer(server.make_app())) as c:
        response = await c.get(f"/job/{JOB}")

    assert response.status == 401


@pytest.mark.parametrize(
    ("path", "websocket"),
    [
        (f"/job/{JOB.upper()}", _ws("job", JOB)),
        ("/group/0123456789ab", _ws("group", "0123456789ab")),
        ("/search?q=type%3Dx%20status%3D4", _ws("search", "type=x status=4")),
    ],
)
async def test_a_place_page_points_its_websocket_at_that_place(
    client: Client, path: str, websocket: str
) -> None:
    response = await client.get(path)
    page = await response.text()

    assert response.status == 200
    assert (
        f'data-session-websocket-url="ws://{client.server.host}:{client.server.port}{websocket}"'
        in page
    )


async def test_the_console_of_a_place_gets_it_as_one_argument_of_open(
    client: Client, given: Path, tmp_path: Path
) -> None:
    """A search line with shell syntax in its values reaches the console whole: no shell
    ever reads it."""
    marker = tmp_path / "pwned"
    line = f"error='$(touch {marker})' type=\"a;b\""

    socket = await client.ws_connect(_ws("search", line))
    try:
        await until_async(given.exists)
    finally:
        await socket.close()

    await until_async(lambda: given.read_text() != "")
    assert json.loads(given.read_text()) == ["--open", f"search:{line}"]
    assert not marker.exists()
