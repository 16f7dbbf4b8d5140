"""What a browser session was sent, as text: the websocket's frames without their
escape sequences.

The page draws the console on a canvas (xterm.js), so its words are in no DOM
node a browser test or the screenshot could wait for. The frames that carry
them are: textual's output, UTF-8 with cursor moves and colours between the
words. Each line of a frame arrives in one piece, so a panel's title or a
table's cell can be found in the text that is left.
"""

from __future__ import annotations

import codecs
import re

#: CSI (colours, cursor moves, modes), OSC/DCS/APC/PM strings, and two-byte escapes
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b[\]P_^X].*?(?:\x07|\x1b\\)"
    r"|\x1b(?![\[\]P_^X])[ -/]*[0-~]",
    re.DOTALL,
)


class TerminalText:
    """The text of every frame fed so far (``feed`` each binary frame, in order)."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._raw = ""
        self.text = ""

    def feed(self, payload: bytes | str) -> None:
        if isinstance(payload, str):  # a JSON message of textual-serve's (pong, ...)
            return
        self._raw += self._decoder.decode(payload)
        # an escape cut by the frame's end waits for the rest
        cut = self._raw.rfind("\x1b")
        if cut < 0 or _ESCAPES.match(self._raw, cut):
            done, self._raw = self._raw, ""
        else:
            done, self._raw = self._raw[:cut], self._raw[cut:]
        self.text += _ESCAPES.sub("", done)

    def mark(self) -> int:
        """Where the text ends now: :meth:`since` reads what came after."""
        return len(self.text)

    def since(self, mark: int) -> str:
        return self.text[mark:]
