"""The breaker dialog's fields (key Z) parse as the command line's options do: a field
that does not parse is one line on the dialog, never a traceback."""

from __future__ import annotations

import pytest

from skconsole.core.errors import ConfigError
from skconsole.ops import BreakerCommand
from skconsole.tui.screens.breaker_dialog import answer_from

SIG = "UpstreamTimeout: timeout after <n>s"


def test_the_fields_give_the_type_and_the_breaker_to_open() -> None:
    got = answer_from(SIG, " payments.charge ", "payload.partner=acme", "open", "2m", "5")

    assert got.task_type == "payments.charge"
    p = got.params
    assert (p.command, p.signature, str(p.term), p.cool_down_s, p.canaries) == (
        BreakerCommand.OPEN,
        SIG,
        "payload.partner=acme",
        120.0,
        5,
    )


def test_an_empty_term_holds_back_the_whole_type_and_close_closes() -> None:
    got = answer_from(SIG, "t", "  ", "CLOSE", "60s", "3")

    assert got.params.term is None
    assert got.params.command is BreakerCommand.CLOSE


@pytest.mark.parametrize(
    ("fields", "said"),
    [
        (("", "", "open", "60s", "3"), "a breaker holds back one task type"),
        (("t", "", "shut", "60s", "3"), "open or close?"),
        (("t", "", "open", "60s", "three"), "canaries: a number of jobs"),
        (("t", "", "open", "60s", "0"), "--canaries must be 1 to 1,000"),
        (("t", "", "open", "soon", "3"), "invalid duration"),
        (("t", "partner=acme", "open", "60s", "3"), "invalid payload path"),
    ],
)
def test_a_field_that_does_not_parse_says_why_in_one_line(
    fields: tuple[str, str, str, str, str], said: str
) -> None:
    with pytest.raises(ConfigError) as raised:
        answer_from(SIG, *fields)

    assert said in str(raised.value)
    assert "\n" not in str(raised.value)
