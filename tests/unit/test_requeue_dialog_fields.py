"""What the requeue dialog's fields ask for: the reset as ticked, the spread parsed as
the command line parses ``--spread``, and a bad spread refused with its reason."""

from __future__ import annotations

import pytest

from skconsole.core.errors import ConfigError
from skconsole.ops import RequeueParams
from skconsole.tui.screens.requeue_jobs import params_from


def test_an_empty_spread_makes_every_job_due_at_once() -> None:
    assert params_from(False, "  ") == RequeueParams(reset_errors=False, spread_s=None)


def test_the_spread_is_a_duration_and_the_reset_as_ticked() -> None:
    assert params_from(True, "10m") == RequeueParams(reset_errors=True, spread_s=600.0)


@pytest.mark.parametrize(
    ("text", "reason"), [("soon", "invalid duration"), ("8d", "between 0s and 7d")]
)
def test_a_bad_spread_is_refused_with_its_reason(text: str, reason: str) -> None:
    with pytest.raises(ConfigError, match=reason):
        params_from(False, text)


def test_waves_and_their_gate_are_read_as_the_command_line_reads_them() -> None:
    assert params_from(False, "", "1%,10%,100%", "90%") == RequeueParams(
        waves=(0.01, 0.1, 1.0), gate=0.9
    )


def test_without_waves_the_gate_field_asks_for_nothing() -> None:
    assert params_from(False, "", " ", "95%") == RequeueParams()


@pytest.mark.parametrize(
    ("waves", "gate", "reason"),
    [
        ("10%,5%", "95%", "each wave must take more than the one before"),
        ("abc", "95%", "waves takes percentages"),
        ("10%,100%", "150%", "the gate is a share from 0% to 100%"),
    ],
)
def test_bad_waves_or_gate_are_refused_with_their_reason(
    waves: str, gate: str, reason: str
) -> None:
    with pytest.raises(ConfigError, match=reason):
        params_from(False, "", waves, gate)
