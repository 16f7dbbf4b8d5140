"""A worker's code version: --app-version, else SKCONSOLE_APP_VERSION, else the
installed distribution of the tasks module's top package, else none."""

from __future__ import annotations

from importlib import metadata

import pytest

from skconsole.core.errors import ConfigError
from skconsole.worker.app_version import resolve_app_version


def test_the_option_wins_over_the_environment() -> None:
    got = resolve_app_version("skconsole.demo", "2.0.1", {"SKCONSOLE_APP_VERSION": "1.0"})
    assert (got.value, got.source) == ("2.0.1", "option")


def test_the_environment_wins_over_the_distribution() -> None:
    got = resolve_app_version("skconsole.demo", None, {"SKCONSOLE_APP_VERSION": "v1.8.3"})
    assert (got.value, got.source) == ("v1.8.3", "environment")


def test_else_the_distribution_that_installs_the_tasks_package() -> None:
    got = resolve_app_version("psycopg.rows:tasks", None, {})
    assert (got.value, got.source) == (metadata.version("psycopg"), "distribution psycopg")


def test_else_none() -> None:
    got = resolve_app_version("tests.support.tasks_retry", None, {})
    assert (got.value, got.source) == (None, "none")


def test_a_version_with_control_characters_is_refused() -> None:
    with pytest.raises(ConfigError):
        resolve_app_version("x", "1.0\x1b[31m", {})


def test_a_distribution_named_as_the_package_is_read_alone_not_every_installed_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Reading every installed distribution's files costs ~0.1 s at each worker start."""

    def every_distribution() -> None:
        raise AssertionError("every installed distribution was read")

    monkeypatch.setattr(metadata, "packages_distributions", every_distribution)
    got = resolve_app_version("psycopg.rows:tasks", None, {})
    assert (got.value, got.source) == (metadata.version("psycopg"), "distribution psycopg")


def test_a_package_named_unlike_its_distribution_is_found_by_reading_them_all() -> None:
    """markdown-it-py installs markdown_it (rich needs it)."""
    got = resolve_app_version("markdown_it", None, {})
    assert (got.value, got.source) == (
        metadata.version("markdown-it-py"),
        "distribution markdown-it-py",
    )
