"""The signature of long and huge error texts reads a bounded part of them (pure, no database).

AROUND_BOUNDS (texts near the view's and the naming line's bounds) is also used by
tests/db/test_failures.py to check that SQL agrees with Python there.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skconsole.core.signature import (
    LINE_LIMIT,
    MAX_LENGTH,
    VIEW_HEAD,
    VIEW_TAIL,
    VIEW_WHOLE,
    error_signature,
    final_exception_line,
    signature_view,
)

MB = 1024 * 1024
HEADER = "Traceback (most recent call last):\n"
FRAME = '  File "/srv/app/tasks.py", line 41, in handle\n    return client.call(payload)\n'
DOTNET_FRAME = "   at Acme.Orders.Sync.Run(Guid orderId) in C:\\src\\Acme\\Sync.cs:line 42\n"


def python_traceback(size: int, last: str = "app.errors.UpstreamTimeout: timeout after 30s") -> str:
    return HEADER + FRAME * (size // len(FRAME)) + last + "\n"


# -- texts near the bounds (PostgreSQL-safe: no NUL, no lone surrogates) ------------------
_PIECES = st.sampled_from(
    [
        "Traceback (most recent call last):",
        "Traceback (most recent call last):\n",
        "\n",
        "\n  File",
        "    g()",
        "Error: ",
        "app.E: ",
        "KeyError: '",
        "E: '",
        "'",
        '"',
        "`",
        "x",
        " ",
        "\t",
        "\r",
        "\x0b",
        "\x0c",
        "\u2026",
        "\u00e9",
        "\U0001f600",
        "0x",
        "3f2a9c1b7d4e",
        "550e8400-e29b-41d4-a716-446655440000",
        "https://h.example/",
        "/srv/a",
        "C:\\x",
        "12",
        "<",
        ">",
        "   at A.B()",
    ]
)
_SMALL = st.lists(_PIECES, max_size=16).map("".join)
_FILLERS = st.sampled_from(
    [
        "x",
        "ab ",
        "\n",
        " ",
        "12 ",
        "'q' ",
        "\u00e9\U0001f600",
        "/srv/a/b ",
        DOTNET_FRAME,
        FRAME,
        "\n\n  \t",
        HEADER,
        "E: boom\n",
    ]
)


@st.composite
def around_bounds(draw: st.DrawFn) -> str:
    """A text whose length, or whose naming line's length, is near a bound, with
    something interesting (a header, a quote, an exception line...) at its ends
    and sometimes right at one of the cuts."""
    target = draw(st.sampled_from([LINE_LIMIT, VIEW_WHOLE, VIEW_WHOLE + 2, 40_000]))
    target += draw(st.integers(min_value=-6, max_value=6))
    head, tail, filler = draw(_SMALL), draw(_SMALL), draw(_FILLERS)
    n = max(0, target - len(head) - len(tail))
    text = head + (filler * (n // len(filler) + 1))[:n] + tail
    for _ in range(draw(st.integers(min_value=0, max_value=2))):
        piece = draw(_SMALL)
        cut = draw(
            st.sampled_from(
                [VIEW_HEAD, len(text) - VIEW_TAIL, len(text) - VIEW_TAIL - 1, LINE_LIMIT]
            )
        )
        at = min(max(cut + draw(st.integers(min_value=-len(piece) - 2, max_value=2)), 0), len(text))
        text = text[:at] + piece + text[at + len(piece) :]
    return text


AROUND_BOUNDS = around_bounds()


# -- the view -----------------------------------------------------------------------------
def test_a_text_up_to_the_bound_is_read_whole() -> None:
    for text in ("", "boom", "x" * VIEW_WHOLE, python_traceback(VIEW_WHOLE - 100)):
        assert len(text) <= VIEW_WHOLE
        assert signature_view(text) == text


def test_a_longer_text_is_read_as_its_head_and_tail() -> None:
    text = "h" * VIEW_HEAD + "m" * 1000 + "\n" + "t" * (VIEW_TAIL - 1) + "!"
    assert signature_view(text) == "h" * VIEW_HEAD + "\n" + "t" * (VIEW_TAIL - 1) + "!"


def test_a_tail_cut_mid_line_is_indented_by_one_space() -> None:
    text = "h" * VIEW_HEAD + "m" * 1000 + "t" * VIEW_TAIL
    assert signature_view(text) == "h" * VIEW_HEAD + "\n " + "t" * VIEW_TAIL
    # one character over the bound: that character is all that is left out
    text = "a" * (VIEW_WHOLE + 1)
    assert signature_view(text) == "a" * VIEW_HEAD + "\n " + "a" * VIEW_TAIL


@settings(max_examples=300, deadline=None)
@given(AROUND_BOUNDS)
def test_the_view_is_bounded(text: str) -> None:
    view = signature_view(text)
    if len(text) <= VIEW_WHOLE:
        assert view == text
    else:
        assert view.startswith(text[:VIEW_HEAD]) and view.endswith(text[-VIEW_TAIL:])
        assert len(view) in (VIEW_HEAD + 1 + VIEW_TAIL, VIEW_HEAD + 2 + VIEW_TAIL)


# -- the naming line ----------------------------------------------------------------------
def test_a_naming_line_up_to_the_bound_is_kept_whole() -> None:
    line = "E: " + "x" * (LINE_LIMIT - 3)
    assert final_exception_line(line + "\n  at frame") == line


def test_a_longer_naming_line_is_cut_and_stripped() -> None:
    line = "E: " + "x" * (LINE_LIMIT - 5) + "   tail that goes"
    assert final_exception_line(line) == "E: " + "x" * (LINE_LIMIT - 5)


@settings(max_examples=300, deadline=None)
@given(AROUND_BOUNDS)
def test_the_naming_line_is_bounded_and_stripped(text: str) -> None:
    line = final_exception_line(text)
    assert len(line) <= LINE_LIMIT
    assert line == line.strip(" \t\r\n\f\v")


# -- properties hold near the bounds ------------------------------------------------------
@settings(max_examples=300, deadline=None)
@given(AROUND_BOUNDS)
def test_near_the_bounds_the_signature_is_one_bounded_idempotent_line(text: str) -> None:
    sig = error_signature(text)
    assert sig and "\n" not in sig and len(sig) <= MAX_LENGTH
    assert error_signature(text) == sig
    assert error_signature(sig) == sig


# -- ordinary big texts are untouched ------------------------------------------------------
def test_a_30_kb_chained_traceback_is_signed_as_before() -> None:
    first = python_traceback(15_000, "ConnectionRefusedError: [Errno 111] Connection refused")
    second = python_traceback(15_000, "app.errors.RetryLater: cache-3 unavailable")
    text = (
        first + "\nDuring handling of the above exception, another exception occurred:\n\n" + second
    )
    assert len(text) <= VIEW_WHOLE
    assert error_signature(text) == "app.errors.RetryLater: cache-<n> unavailable"


# -- huge texts still name the exception ---------------------------------------------------
def test_a_1_mb_python_traceback_is_signed_by_its_final_line_wherever_the_cut_falls() -> None:
    """Trailing blanks shift the cut through two frame lines: mid-line (also right
    before a non-blank character, where an unindented fragment would otherwise
    pass for the exception line) and exactly at a line start."""
    base = python_traceback(MB).rstrip("\n")
    seams: set[str] = set()
    for shift in range(len(FRAME) + 1):
        text = base + " " * shift
        seams.add("line start" if text[-VIEW_TAIL - 1] == "\n" else "mid-line")
        assert final_exception_line(text) == "app.errors.UpstreamTimeout: timeout after 30s"
        assert error_signature(text) == "app.errors.UpstreamTimeout: timeout after <n>s"
    assert seams == {"line start", "mid-line"}


def test_a_dotnet_text_with_1_mb_of_frames_is_signed_by_its_first_line() -> None:
    text = (
        "System.TimeoutException: The operation has timed out after 00:00:30.\n"
        + DOTNET_FRAME * (MB // len(DOTNET_FRAME))
    )
    assert len(text) > MB
    assert error_signature(text) == (
        "System.TimeoutException: The operation has timed out after <n>:<n>:<n>."
    )


def test_a_huge_chained_traceback_is_signed_by_its_last_exception() -> None:
    first = python_traceback(MB, "ConnectionRefusedError: [Errno 111] Connection refused")
    second = python_traceback(2_000, "app.errors.RetryLater: cache-3 unavailable")
    text = (
        first + "\nDuring handling of the above exception, another exception occurred:\n\n" + second
    )
    assert error_signature(text) == "app.errors.RetryLater: cache-<n> unavailable"


def test_a_huge_exception_message_is_signed_by_its_type_and_start() -> None:
    text = python_traceback(2_000, "ValueError: cannot store payload " + "{'id': 1} " * MB)
    sig = error_signature(text)
    assert sig.startswith("ValueError: cannot store payload {<str>: <n>}")
    assert len(sig) == MAX_LENGTH


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("InvalidPayload: " + "0123456789abcdef" * (40 * MB // 16), id="40 MB line"),
        pytest.param(
            "ValueError: rows rejected\n"
            + "row 12 at /srv/part-7.csv rejected\n" * (40 * MB // 35),
            id="40 MB message",
        ),
        pytest.param(python_traceback(40 * MB), id="40 MB traceback"),
    ],
)
def test_a_40_mb_error_is_signed(text: str) -> None:
    assert len(text) >= 40 * MB
    sig = error_signature(text)
    assert sig == error_signature(text.encode())
    assert error_signature(sig) == sig and len(sig) <= MAX_LENGTH
    assert sig.split(":")[0] in ("InvalidPayload", "ValueError", "app.errors.UpstreamTimeout")
    assert len(final_exception_line(text)) <= LINE_LIMIT
