"""The connection ``options``: the user's (DSN, else PGOPTIONS) merged with skconsole's,
and the same options read back as settings for a pooler that refuses them. Pure."""

from __future__ import annotations

import pytest

from skconsole.db.connect import (
    DEFAULT_OPTIONS,
    READ_ONLY_OPTION,
    Database,
    merge_options,
    option_settings,
    split_options,
    user_options,
)

NO_ENV: dict[str, str] = {}


# -- where the user's options come from -----------------------------------------------------
def test_the_options_parameter_of_a_uri_dsn_is_the_users() -> None:
    dsn = "postgresql://u@h/db?options=-csearch_path%3Dother"

    assert user_options(dsn, NO_ENV) == "-csearch_path=other"


def test_the_options_parameter_of_a_key_value_dsn_is_the_users() -> None:
    dsn = r"host=h dbname=db options='-c search_path=a,\\ b'"

    assert user_options(dsn, NO_ENV) == r"-c search_path=a,\ b"


def test_pgoptions_is_the_users_when_the_dsn_has_no_options() -> None:
    env = {"PGOPTIONS": "-c search_path=other"}

    assert user_options("postgresql://u@h/db", env) == "-c search_path=other"


def test_pgoptions_is_the_users_when_the_dsn_is_empty() -> None:
    assert user_options("", {"PGOPTIONS": "-c work_mem=64MB"}) == "-c work_mem=64MB"


def test_the_dsns_options_beat_pgoptions_as_in_libpq() -> None:
    env = {"PGOPTIONS": "-c search_path=from_env"}

    assert user_options("postgresql://u@h/db?options=-csearch_path%3Ddsn", env) == (
        "-csearch_path=dsn"
    )


def test_without_dsn_options_or_pgoptions_the_user_gives_none() -> None:
    assert user_options("postgresql://u@h/db", NO_ENV) == ""


def test_an_unparseable_dsn_gives_no_user_options_and_leaves_the_error_to_connecting() -> None:
    assert user_options("postgresql://[::1", NO_ENV) == ""


# -- the merge ----------------------------------------------------------------------------
def test_without_user_options_the_merge_is_our_defaults() -> None:
    assert merge_options("", read_only=False) == DEFAULT_OPTIONS


def test_the_users_options_come_after_our_defaults_so_they_can_override_them() -> None:
    merged = merge_options("-c statement_timeout=5000", read_only=False)

    assert merged == f"{DEFAULT_OPTIONS} -c statement_timeout=5000"
    assert option_settings(merged)["statement_timeout"] == "5000"


def test_the_read_only_guard_comes_last_so_the_user_cannot_override_it() -> None:
    merged = merge_options("-c default_transaction_read_only=off", read_only=True)

    assert merged.endswith(READ_ONLY_OPTION)
    assert option_settings(merged)["default_transaction_read_only"] == "on"


def test_the_read_only_guard_is_absent_in_write_mode() -> None:
    assert "default_transaction_read_only" not in merge_options("", read_only=False)


def test_escaped_spaces_in_the_users_options_survive_the_merge() -> None:
    merged = merge_options(r"-c search_path=a,\ b", read_only=True)

    assert merged == rf"{DEFAULT_OPTIONS} -c search_path=a,\ b {READ_ONLY_OPTION}"
    assert option_settings(merged)["search_path"] == "a, b"


def test_whitespace_only_user_options_add_nothing() -> None:
    assert merge_options("  \t", read_only=False) == DEFAULT_OPTIONS


def test_a_database_merges_the_options_of_its_dsn(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PGOPTIONS", raising=False)
    db = Database("postgresql://u@h/db?options=-csearch_path%3Dother", read_only=True)

    assert db.options() == f"{DEFAULT_OPTIONS} -csearch_path=other {READ_ONLY_OPTION}"


def test_options_passed_to_connect_go_after_the_users_and_before_the_guard(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PGOPTIONS", "-c work_mem=8MB")
    db = Database("", read_only=True)

    assert db.options("-c lock_timeout=1s") == (
        f"{DEFAULT_OPTIONS} -c work_mem=8MB -c lock_timeout=1s {READ_ONLY_OPTION}"
    )


# -- reading options as PostgreSQL does (for a pooler that refuses them) -----------------------
def test_options_split_at_unescaped_whitespace_like_postgresql() -> None:
    assert split_options("  -c a=1\t-c  b=x\\ y\\\\z  ") == ["-c", "a=1", "-c", "b=x y\\z"]


def test_a_trailing_lone_backslash_is_dropped_like_postgresql() -> None:
    assert split_options("-c a=b\\") == ["-c", "a=b"]


def test_settings_come_from_every_spelling_of_a_setting() -> None:
    settings = option_settings("-c a=1 -cb=2 --c-d=3 -c E=4")

    assert settings == {"a": "1", "b": "2", "c_d": "3", "e": "4"}


def test_the_last_value_of_a_setting_wins() -> None:
    assert option_settings("-c jit=off -c JIT=on") == {"jit": "on"}


def test_a_value_may_contain_equals_signs_and_be_empty() -> None:
    assert option_settings("-c x.y=a=b -c x.z=") == {"x.y": "a=b", "x.z": ""}


@pytest.mark.parametrize("options", ["-B 100", "-c", "-c novalue", "--", "-c =1"])
def test_anything_but_a_name_value_setting_cannot_be_read_as_a_setting(options: str) -> None:
    with pytest.raises(ValueError):
        option_settings(options)


def test_shown_dsn_masks_a_password_and_keeps_the_rest_usable() -> None:
    from psycopg import conninfo

    from skconsole.db.connect import shown_dsn

    shown = shown_dsn("postgresql://ops:s3cret@db.example:6432/queue?sslmode=require")

    assert "s3cret" not in shown
    assert conninfo.conninfo_to_dict(shown) == {
        "user": "ops",
        "password": "****",
        "host": "db.example",
        "port": "6432",
        "dbname": "queue",
        "sslmode": "require",
    }
    assert shown_dsn("user=postgres dbname=skconsole_demo host=/tmp/d") == (
        "user=postgres dbname=skconsole_demo host=/tmp/d"
    )
