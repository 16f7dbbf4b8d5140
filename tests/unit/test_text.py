"""skconsole.core.text: control characters become visible escapes; all other text is left alone."""

from __future__ import annotations

import pytest

from skconsole.core.text import is_printable, is_valid_utf8, printable, quoted

C0 = [chr(c) for c in range(0x20)]
C1 = [chr(c) for c in range(0x80, 0xA0)]
BIDI = [
    "\u061c",
    "\u200e",
    "\u200f",
    *map(chr, range(0x202A, 0x202F)),
    *map(chr, range(0x2066, 0x206A)),
]
SEPARATORS = ["\u2028", "\u2029"]
SURROGATES = ["\ud800", "\udbff", "\udc80", "\udcff", "\udfff"]
UNSAFE = [*C0, "\x7f", *C1, *BIDI, *SEPARATORS, *SURROGATES]


def _raw(text: str) -> list[str]:
    return [ch for ch in text if ch in UNSAFE]


@pytest.mark.parametrize("ch", UNSAFE, ids=lambda ch: f"U+{ord(ch):04X}")
def test_every_control_character_becomes_a_visible_ascii_escape(ch: str) -> None:
    shown = printable(f"a{ch}b")

    assert _raw(shown) == []
    assert shown.isascii() and shown.isprintable()
    assert shown.startswith("a\\") and shown.endswith("b")


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("t.\x1b[31mevil", "t.\\x1b[31mevil"),
        ("\x1b]0;pwned\x07", "\\x1b]0;pwned\\x07"),
        ("\x9b31m", "\\x9b31m"),
        ("abc\u202etxt.exe", "abc\\u202etxt.exe"),
        ("bad \udcff byte", "bad \\udcff byte"),
        ("nul\x00 del\x7f", "nul\\x00 del\\x7f"),
        ("a\tb\nc\rd", "a\\tb\\nc\\rd"),
    ],
    ids=[
        "sgr",
        "osc-title",
        "8-bit-csi",
        "bidi-override",
        "lone-surrogate",
        "nul-del",
        "tab-lf-cr",
    ],
)
def test_escapes_read_as_python_writes_them(text: str, shown: str) -> None:
    assert printable(text) == shown


@pytest.mark.parametrize(
    "text",
    [
        "emails.send",
        "émails.envoi — naïve café, Straße, Ελληνικά, русский",
        "日本語のタスク 任务 작업",
        "emoji 🚀 and a family 👨\u200d👩\u200d👧 (zero-width joiners)",
        "combining e\u0301 and a non-breaking\u00a0space",
        "a[red]b[/red] and back\\slashes \\x1b written out",
        "",
    ],
    ids=["ascii", "accents", "cjk", "emoji-zwj", "combining-nbsp", "brackets-backslashes", "empty"],
)
def test_text_without_control_characters_is_returned_unchanged(text: str) -> None:
    assert printable(text) is text
    assert printable(text, keep_newlines=True) is text
    assert is_printable(text)


def test_newlines_and_tabs_are_kept_only_when_asked() -> None:
    trace = "Traceback (most recent call last):\n\tFile x\nValueError: \x1b[2J"

    assert printable(trace, keep_newlines=True) == (
        "Traceback (most recent call last):\n\tFile x\nValueError: \\x1b[2J"
    )
    assert "\n" not in printable(trace) and "\t" not in printable(trace)


def test_with_newlines_kept_crlf_becomes_a_newline_and_a_lone_cr_is_escaped() -> None:
    assert printable("one\r\ntwo\rthree", keep_newlines=True) == "one\ntwo\\rthree"
    assert printable("red\x1b\r\nnext", keep_newlines=True) == "red\\x1b\nnext"


def test_other_control_characters_are_escaped_even_with_newlines_kept() -> None:
    shown = printable("".join(UNSAFE), keep_newlines=True)

    assert [ch for ch in _raw(shown) if ch not in "\n\t"] == []


@pytest.mark.parametrize("keep_newlines", [False, True])
def test_printing_twice_changes_nothing_more(keep_newlines: bool) -> None:
    text = "a\x1b[31m\r\nb\x9b\u202e\udcff\tc " + "".join(UNSAFE)

    once = printable(text, keep_newlines=keep_newlines)

    assert printable(once, keep_newlines=keep_newlines) == once
    assert is_printable(once, keep_newlines=keep_newlines)
    assert not is_printable(text, keep_newlines=keep_newlines)


def test_a_large_text_is_kept_whole_or_escaped_at_every_control_character() -> None:
    clean = "RuntimeError: timeout calling https://api.example.com/v1 é 🚀\n" * 100_000
    dirty = clean.replace("timeout", "time\x1bout", 10_000)

    assert printable(clean) is not clean  # its newlines are escaped
    assert printable(clean, keep_newlines=True) is clean
    assert printable(dirty, keep_newlines=True).count("\\x1b") == 10_000


def test_text_with_a_lone_surrogate_is_not_valid_utf8() -> None:
    argv_bytes = b"t.\xff".decode("utf-8", errors="surrogateescape")

    assert not is_valid_utf8(argv_bytes)
    assert is_valid_utf8("émails 🚀") and is_valid_utf8("plain")


def test_quoted_shows_at_most_the_limit_escaped() -> None:
    assert quoted("a\x1bb") == "'a\\x1bb'"
    assert quoted("x" * 100, limit=10) == "'xxxxxxxxxx'…"
    assert is_printable(quoted("\u202e\udcff\x9b"))
