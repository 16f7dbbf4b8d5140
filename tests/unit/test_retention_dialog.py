"""The console's retention dialog (key T): what its fields mean, and how the
confirmation shows a type setting's change."""

from __future__ import annotations

import pytest

from skconsole.core.errors import ConfigError
from skconsole.ops import RetentionParams
from skconsole.tui.confirmations import setting_lines
from skconsole.tui.screens.retention_type import params_from


def test_a_duration_sets_the_types_retention() -> None:
    assert params_from("30d", "n") == RetentionParams(older_than_s=30 * 86400.0)


def test_yes_to_the_second_field_purges_faulted_results_too() -> None:
    assert params_from("12h", "y").include_faulted


def test_an_empty_duration_clears_the_types_retention() -> None:
    assert params_from("  ", "n") == RetentionParams(clear=True)


@pytest.mark.parametrize(("keep", "faulted"), [("soon", "n"), ("1d", "maybe"), ("-5m", "n")])
def test_text_that_says_neither_is_a_clear_error(keep: str, faulted: str) -> None:
    with pytest.raises(ConfigError):
        params_from(keep, faulted)


def test_the_confirmation_shows_the_setting_now_after_and_what_becomes_eligible() -> None:
    details: dict[str, object] = {
        "old": {"older_than_s": 3600.0, "include_faulted": False},
        "new": {"older_than_s": 86400.0, "include_faulted": True},
        "eligible": 1200,
    }
    assert setting_lines(details) == [
        "now:   keep finished results 1h",
        "after: keep finished results 1d, Faulted ones too",
        "1,200 finished result(s) would be eligible for purging now",
    ]


def test_a_setting_with_nothing_set_reads_none() -> None:
    details: dict[str, object] = {"old": {"older_than_s": None}, "new": {"older_than_s": 60.0}}
    assert setting_lines(details)[0] == "now:   none"
