"""Limits per key without a database: the parameters, their words, and the console's fields."""

from __future__ import annotations

import pytest

from skconsole.core.errors import ConfigError
from skconsole.ops import LimitParams, Rate
from skconsole.ops.limit import Limits, describe
from skconsole.read import TypeLimit
from skconsole.tui.screens.limit_type import params_from

NONE = Limits(None, None, None)
KEYED = Limits(20, None, None, ["customer"], 1, None, None)
KEYED_TYPE = TypeLimit("t", None, None, None, 0, ["customer"], 1, None, None, 2)


def test_a_per_key_concurrency_keeps_the_type_wide_one() -> None:
    new = LimitParams(concurrency=1, per=("customer",)).apply(Limits(20, None, None))

    assert new == KEYED


def test_clearing_the_last_per_key_limit_forgets_the_key_path() -> None:
    new = LimitParams(clear_concurrency=True, clear_rate=True, per=("customer",)).apply(KEYED)

    assert new == Limits(20, None, None)


def test_a_second_key_path_is_refused() -> None:
    with pytest.raises(ConfigError, match="one key path"):
        LimitParams(concurrency=2, per=("tenant",)).apply(KEYED)


def test_a_per_key_rate_is_stored_per_key() -> None:
    new = LimitParams(rate=Rate(5, 1.0), per=("customer",)).apply(NONE)

    assert (new.key_path, new.key_rate_count, new.key_rate_seconds) == (["customer"], 5, 1.0)


def test_the_limits_in_words_name_the_key_path() -> None:
    shown = LimitParams(concurrency=1, per=("customer",)).shown(KEYED)

    assert describe(shown) == "concurrency 20, concurrency 1 per payload.customer"


def test_a_type_without_a_key_path_shows_no_per_key_fields() -> None:
    assert set(LimitParams(concurrency=1).shown(Limits(2, None, None))) == {"concurrency", "rate"}


def test_the_phrase_says_per_which_path() -> None:
    assert LimitParams(concurrency=1, per=("customer",)).phrase() == (
        " to concurrency 1 per payload.customer"
    )
    assert LimitParams(clear_concurrency=True, clear_rate=True, per=("c",)).phrase() == (
        ": clear its per-key concurrency and rate limits"
    )


def test_a_hostile_key_path_is_shown_printable() -> None:
    shown = {"per": "payload.a\x1b[2J", "concurrency_per_key": 1}

    assert "\x1b" not in describe(shown)


def test_the_read_model_words_the_per_key_limit_and_its_keys_at_limit() -> None:
    assert KEYED_TYPE.summary() == "1 per payload.customer (2 keys at limit)"
    assert KEYED_TYPE.as_dict()["keys_at_limit"] == 2


def test_the_dialogs_path_field_makes_the_fields_per_key() -> None:
    assert params_from("1", "", None, "payload.customer") == LimitParams(
        concurrency=1, per=("customer",)
    )


def test_the_dialog_clears_the_per_key_limits_when_both_fields_are_emptied() -> None:
    assert params_from("", "", KEYED_TYPE, "payload.customer") == LimitParams(
        clear_concurrency=True, per=("customer",)
    )


def test_the_dialog_refuses_a_path_without_payload() -> None:
    with pytest.raises(ConfigError, match="payload path"):
        params_from("1", "", None, "customer")
