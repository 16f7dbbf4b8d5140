"""The console in a browser tab, as a picture: ``python -m skconsole.web.screenshot [PNG]``.

Serves a fixed-data scene (``python -m skconsole.tui.showcase.live main``: the
data and frozen clock of the other screenshots) through the same server and
token check as ``skconsole serve``, opens it in Chromium driven by Playwright,
waits until the console has drawn its last row, and saves the tab as PNG
(default: ``screenshots/browser.png``). Chromium is the system's
(``/usr/bin/chromium``, or ``$CHROMIUM``): Playwright's own download is not needed.
Needs the ``dev`` extra (Playwright) besides ``web``.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import sys
from pathlib import Path

from playwright.async_api import ViewportSize, WebSocket, async_playwright

from skconsole.web.server import ConsoleServer, listening
from skconsole.web.terminal_text import TerminalText
from skconsole.web.token import Token

DEFAULT_PATH = Path("screenshots") / "browser.png"
SCENE = "read-only"  # what `skconsole serve` shows unless --allow-writes
#: words of the scene's last rows: once they arrived the screen is whole
LAST_WORDS = ("Failure groups", "palette")
VIEWPORT: ViewportSize = {"width": 1280, "height": 800}
TIMEOUT_MS = 60_000


def chromium() -> str:
    return os.environ.get("CHROMIUM", "/usr/bin/chromium")


async def capture(path: Path) -> Path:
    command = "exec " + shlex.join([sys.executable, "-m", "skconsole.tui.showcase.live", SCENE])
    token = Token.generate()
    server = ConsoleServer(command, token, host="127.0.0.1", port=0, max_sessions=1)
    screen = TerminalText()
    async with listening(server) as (host, port), async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=chromium())
        try:
            page = await browser.new_page(viewport=VIEWPORT)
            # every frame, from the first: the listener is on before any frame is seen
            page.on("websocket", lambda socket: socket.on("framereceived", screen.feed))
            async with page.expect_websocket() as opened:
                await page.goto(f"http://{host}:{port}/?token={token.value}")
            socket = await opened.value
            await _arrived(socket, screen, LAST_WORDS[0])
            # as a person's click would: the footer lists the keys while the console has focus
            await page.focus(".xterm-helper-textarea")
            for words in LAST_WORDS:
                await _arrived(socket, screen, words)
            # xterm.js draws what it was sent on the next animation frames
            await page.evaluate(
                "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"
            )
            path.parent.mkdir(parents=True, exist_ok=True)
            await page.screenshot(path=str(path))
        finally:
            await browser.close()
    return path


async def _arrived(socket: WebSocket, screen: TerminalText, words: str) -> None:
    """Until ``words`` arrived in a frame (at once if they have)."""

    def there(_: object) -> bool:
        return words in screen.text

    if not there(None):
        await socket.wait_for_event("framereceived", predicate=there, timeout=TIMEOUT_MS)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    path = Path(args[0]) if args else DEFAULT_PATH
    if not Path(chromium()).exists():
        print(f"no Chromium at {chromium()} (apt-get install chromium, or set CHROMIUM)")
        return 2
    print(asyncio.run(capture(path)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
