"""An incident bundle (read.incident) written and read back: the same incident, and a file
that is none refused in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skconsole.core.errors import ConfigError
from skconsole.read.incident import VERSION, load
from skconsole.tui.showcase.fixed_incident import fixed_incident


def written(tmp_path: Path, document: object) -> Path:
    path = tmp_path / "incident.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def test_a_bundle_round_trips_through_its_file(tmp_path: Path) -> None:
    bundle = fixed_incident()

    again = load(written(tmp_path, bundle.as_dict()))

    assert again == bundle


def test_a_foreign_json_file_is_refused_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not an skconsole incident bundle") as e:
        load(written(tmp_path, {"name": "package.json"}))
    assert "\n" not in str(e.value)


def test_a_file_that_is_no_json_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "incident.json"
    path.write_text("<html>", encoding="utf-8")

    with pytest.raises(ConfigError, match="is no JSON"):
        load(path)


def test_a_bundle_of_a_newer_version_is_refused(tmp_path: Path) -> None:
    document = {**fixed_incident().as_dict(), "version": VERSION + 1}

    with pytest.raises(ConfigError, match=f"version {VERSION + 1}"):
        load(written(tmp_path, document))


def test_a_bundle_with_a_field_of_the_wrong_type_names_it(tmp_path: Path) -> None:
    document = fixed_incident().as_dict()
    document["since"] = 1234

    with pytest.raises(ConfigError, match="'since' is not text"):
        load(written(tmp_path, document))


def test_a_missing_file_is_refused_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read the bundle"):
        load(tmp_path / "nowhere.json")
