"""The entry point loads only what it runs: every command is where the registry says,
--version and the root's options need no database driver, completion is on."""

from __future__ import annotations

import os
import subprocess
import sys

from skconsole.cli.app import app, command_name
from skconsole.cli.commands import MODULES, load_all
from skconsole.core.version import SCHEMA_VERSION, __version__
from tests.support.cli import run_in_process


def test_the_registry_names_the_module_of_every_command_and_group() -> None:
    load_all()
    registered = {
        (c.name or c.callback.__name__.replace("_", "-")): c.callback.__module__
        for c in app.registered_commands
        if c.callback is not None
    }
    for group in app.registered_groups:
        modules = {
            c.callback.__module__ for c in group.typer_instance.registered_commands if c.callback
        }
        registered[str(group.name)] = modules.pop() if modules else "skconsole.cli.app"
    assert {name: f"skconsole.cli.{m}" for name, m in MODULES.items()} == registered


def test_the_command_is_found_past_the_roots_options() -> None:
    assert command_name(["--dsn", "x", "--refresh", "5s", "worker", "--tasks", "m"]) == "worker"
    assert command_name(["--read-only", "--refresh", "2s"]) is None
    assert command_name(["--", "worker"]) is None


def test_version_says_the_package_and_the_schema_version() -> None:
    done = run_in_process(["--version"])
    assert done.returncode == 0
    assert done.stdout.strip() == f"skconsole {__version__} (schema version {SCHEMA_VERSION})"


def test_the_entry_point_and_the_public_api_import_no_database_driver() -> None:
    """`skconsole --version`, a command's --help and `import skconsole` stay fast."""
    probe = (
        "import sys, skconsole, skconsole.cli.app, skconsole.views, skconsole.db;"
        " print(sorted(m for m in ('psycopg', 'textual', 'skconsole.read') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


def test_shell_completion_completes_commands_and_their_options() -> None:
    def complete(words: str, cword: int) -> str:
        env = {**os.environ, "_SKCONSOLE_COMPLETE": "complete_bash", "COMP_WORDS": words,
               "COMP_CWORD": str(cword)}  # fmt: skip
        done = subprocess.run(
            [sys.executable, "-m", "skconsole"], capture_output=True, text=True, env=env,
            timeout=60,
        )  # fmt: skip
        return done.stdout

    assert complete("skconsole wor", 1).split() == ["worker"]
    assert "--concurrency" in complete("skconsole worker --con", 2).split()
