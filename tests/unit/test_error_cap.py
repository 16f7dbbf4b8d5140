"""cap_error_text: the bound on a stored error text (pure, no database)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skconsole.core.signature import VIEW_HEAD, VIEW_TAIL, error_signature
from skconsole.core.stored_error import ERROR_TEXT_LIMIT, cap_error_text

MARKER = re.compile(r"\n  \u2026 \[([0-9,]+) characters omitted\] \u2026\n")
MB = 1024 * 1024


def split_capped(capped: str) -> tuple[str, int, str]:
    """(head, omitted count, tail) of a capped text; the marker must be there once."""
    found = list(MARKER.finditer(capped))
    assert len(found) >= 1, "no marker"
    # the text itself may hold something marker-like: the real one is the one whose
    # head and tail are the halves of what was kept, so take the last one whose
    # head is not shorter than its tail
    for m in reversed(found):
        head, tail = capped[: m.start()], capped[m.end() :]
        if len(head) - len(tail) in (0, 1):
            return head, int(m.group(1).replace(",", "")), tail
    raise AssertionError("no marker between two halves")


def assert_capped(text: str, limit: int) -> str:
    capped = cap_error_text(text, limit)
    assert len(capped) <= limit
    head, omitted, tail = split_capped(capped)
    assert text.startswith(head) and text.endswith(tail)
    assert len(head) + omitted + len(tail) == len(text), "the count is what was left out"
    return capped


# -- texts up to the limit ----------------------------------------------------------------
@pytest.mark.parametrize("text", ["", "boom", "x" * ERROR_TEXT_LIMIT, "é" * ERROR_TEXT_LIMIT])
def test_a_text_up_to_the_limit_is_unchanged(text: str) -> None:
    assert cap_error_text(text) == text


@settings(max_examples=300, deadline=None)
@given(st.text(), st.integers(min_value=0, max_value=200))
def test_never_longer_than_the_limit_and_unchanged_when_it_fits(text: str, limit: int) -> None:
    capped = cap_error_text(text, limit)
    assert len(capped) <= limit
    if len(text) <= limit:
        assert capped == text
    else:
        assert capped != text


# -- longer texts -------------------------------------------------------------------------
def test_one_character_over_the_limit_is_capped_with_head_tail_and_marker() -> None:
    text = "".join(chr(ord("a") + i % 26) for i in range(ERROR_TEXT_LIMIT + 1))
    capped = assert_capped(text, ERROR_TEXT_LIMIT)
    head, omitted, tail = split_capped(capped)
    assert omitted == len(text) - len(head) - len(tail) > 0
    assert len(capped) == ERROR_TEXT_LIMIT  # all the room is used


def test_the_marker_says_how_many_characters_were_left_out() -> None:
    text = "H" * 1000 + "M" * 1_234_567 + "T" * 1000
    capped = cap_error_text(text, 2000)
    head, omitted, tail = split_capped(capped)
    assert len(capped) == 2000
    assert omitted > 1_234_000 and f"[{omitted:,} characters omitted]" in capped
    assert set(head) == {"H"} and set(tail) == {"T"}
    assert omitted == len(text) - len(head) - len(tail)
    assert capped == head + f"\n  \u2026 [{omitted:,} characters omitted] \u2026\n" + tail


def test_a_python_traceback_keeps_its_header_and_its_exception_line() -> None:
    frames = '  File "/srv/app/tasks.py", line 41, in handle\n    return client.call(payload)\n'
    text = (
        "Traceback (most recent call last):\n"
        + frames * 20_000
        + "app.errors.UpstreamTimeout: timeout after 30s on host db-7"
    )
    capped = assert_capped(text, ERROR_TEXT_LIMIT)
    assert capped.startswith("Traceback (most recent call last):\n")
    assert capped.endswith("\napp.errors.UpstreamTimeout: timeout after 30s on host db-7")


def test_a_dotnet_text_keeps_its_type_and_message_line() -> None:
    text = (
        "System.TimeoutException: timed out\n"
        + "   at Acme.Sync.Run() in C:\\s.cs:line 4\n" * 50_000
    )
    capped = assert_capped(text, ERROR_TEXT_LIMIT)
    assert capped.startswith("System.TimeoutException: timed out\n")


def test_a_40_mb_message_is_capped() -> None:
    line = "row 123456 rejected: value 'abc' at /srv/data/part-7.csv\n"
    text = "ValueError: 700000 rows rejected\n" + line * (40 * MB // len(line)) + "end of report"
    capped = assert_capped(text, ERROR_TEXT_LIMIT)
    assert capped.startswith("ValueError: 700000 rows rejected\n")
    assert capped.endswith("\nend of report")
    assert error_signature(capped) == error_signature(text) == "ValueError: <n> rows rejected"


def test_a_40_mb_single_line_is_capped() -> None:
    text = "InvalidPayload: " + "0123456789abcdef" * (40 * MB // 16)
    capped = assert_capped(text, ERROR_TEXT_LIMIT)
    assert capped.startswith("InvalidPayload: 0123456789abcdef")
    assert error_signature(capped) == error_signature(text)


# -- small and odd limits -----------------------------------------------------------------
def test_when_even_the_marker_does_not_fit_only_the_head_is_kept() -> None:
    text = "x" * 1000
    assert cap_error_text(text, 0) == ""
    assert cap_error_text(text, 10) == "x" * 10
    assert cap_error_text("abc", 0) == ""


def test_a_negative_limit_is_refused() -> None:
    with pytest.raises(ValueError):
        cap_error_text("boom", -1)


@settings(max_examples=300, deadline=None)
@given(
    st.text(st.characters(codec="utf-8"), min_size=1, max_size=40),
    st.integers(min_value=1, max_value=5000),
    st.integers(min_value=40, max_value=3000),
)
def test_capped_texts_have_head_marker_and_tail(piece: str, times: int, limit: int) -> None:
    text = piece * times
    if len(text) > limit:
        assert len(assert_capped(text, limit)) == limit
    else:
        assert cap_error_text(text, limit) == text


# -- what the signature sees of a capped text ----------------------------------------------
_PIECES = st.sampled_from(
    [
        "Traceback (most recent call last):\n",
        '  File "/a.py", line 7, in f\n    g()\n',
        "ValueError: bad 'x' 42\n",
        "app.E: boom at /srv/x.py\n",
        "   at Acme.Run() in C:\\s.cs:line 4\n",
        "x",
        "\n",
        " ",
        "\u2026",
    ]
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(_PIECES, max_size=30).map("".join),
    _PIECES,
    st.integers(min_value=0, max_value=80_000),
    st.lists(_PIECES, max_size=30).map("".join),
    st.integers(min_value=2 * (VIEW_TAIL + 1) + 60, max_value=70_000),
)
def test_a_capped_text_signs_like_the_whole_text(
    head: str, filler: str, size: int, tail: str, limit: int
) -> None:
    """As long as the cap keeps at least the signature's view (its head and its
    tail plus one character), storing a capped text changes no group."""
    body = (filler * (size // len(filler) + 1))[:size]
    text = head + body + tail
    capped = cap_error_text(text, limit)
    assert len(capped) <= limit
    assert error_signature(capped) == error_signature(text)


def test_the_default_limit_keeps_the_signature_view() -> None:
    room = ERROR_TEXT_LIMIT - len(f"\n  \u2026 [{10**12:,} characters omitted] \u2026\n")
    assert room // 2 >= max(VIEW_HEAD, VIEW_TAIL + 1)
