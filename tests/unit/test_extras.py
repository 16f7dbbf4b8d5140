"""A command whose extra is not installed says in one line what to install (exit 2).

The extras are absent here by pretending: each names a module that cannot be
found. tests/db/test_core_install.py checks the same on a real core install.
"""

from __future__ import annotations

import pytest

from skconsole.core import extras
from skconsole.core.errors import MissingExtraError
from skconsole.core.extras import EXTRA_MODULES, has_extra, require_extra
from tests.support.cli import run_in_process


@pytest.fixture
def nothing_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    for extra in EXTRA_MODULES:
        monkeypatch.setitem(extras.EXTRA_MODULES, extra, f"skconsole_test_absent_{extra}")


def test_an_installed_extra_is_found() -> None:
    assert has_extra("console")


@pytest.mark.usefixtures("nothing_extra")
def test_a_missing_extra_names_the_line_that_installs_it() -> None:
    with pytest.raises(MissingExtraError) as caught:
        require_extra("exporter", "skconsole exporter")

    assert str(caught.value) == (
        "skconsole exporter needs the exporter extra: pip install 'skconsole[exporter]'"
    )
    assert caught.value.exit_code == 2


@pytest.mark.usefixtures("nothing_extra")
@pytest.mark.parametrize(
    ("args", "extra"),
    [
        (["--dsn", "postgresql://nobody@127.0.0.1:1/x"], "console"),
        (["--dsn", "postgresql://nobody@127.0.0.1:1/x", "demo"], "console"),
        (["exporter"], "exporter"),
        (["db", "status"], "embedded"),
    ],
    ids=["console", "demo", "exporter", "embedded"],
)
def test_a_command_without_its_extra_exits_2_with_one_line(args: list[str], extra: str) -> None:
    run = run_in_process(args)

    assert run.returncode == 2
    assert len(run.stderr.strip().splitlines()) == 1
    assert run.stderr.strip().endswith(f"pip install 'skconsole[{extra}]'")


@pytest.mark.usefixtures("nothing_extra")
def test_the_demo_names_every_extra_it_misses_at_once() -> None:
    run = run_in_process(["demo"])

    assert run.returncode == 2
    assert run.stderr.strip().splitlines() == [
        "error: skconsole demo (on its own embedded server) needs the console and embedded"
        " extras: pip install 'skconsole[console,embedded]'"
    ]
