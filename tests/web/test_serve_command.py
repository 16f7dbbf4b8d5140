"""``skconsole serve``'s options, before any database: the token file is checked like a
secret file, each refusal is one line; the console each session starts is read-only
unless --allow-writes and acts as whoever holds the token, from the browser; without
the web extra the command says what to install."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from skconsole.cli.serve import browser_host, console_command, handed_over
from skconsole.core import actor
from skconsole.web.token import Token
from tests.support.cli import run_in_process

GOOD_TOKEN = "a-token-of-the-ops-team-0123456789"
ROOT = {"dsn": "postgresql://ops:secret@db/queue", "refresh": "2s", "setup": False}


def _token_file(tmp_path: Path, text: str, mode: int = 0o600) -> Path:
    path = tmp_path / "ops.token"
    path.write_text(text, encoding="utf-8")
    path.chmod(mode)
    return path


def _serve(*args: str) -> tuple[int, str]:
    done = run_in_process(["serve", *args])
    return done.returncode, done.stderr


def test_a_missing_token_file_is_refused_in_one_line(tmp_path: Path) -> None:
    code, err = _serve("--token-file", str(tmp_path / "nothing"))

    assert code == 2
    assert err.strip().endswith("no such file")
    assert len(err.strip().splitlines()) == 1


def test_an_empty_token_file_is_refused(tmp_path: Path) -> None:
    code, err = _serve("--token-file", str(_token_file(tmp_path, "\n")))

    assert code == 2
    assert "is empty" in err


def test_a_token_file_every_user_may_read_is_refused(tmp_path: Path) -> None:
    code, err = _serve("--token-file", str(_token_file(tmp_path, GOOD_TOKEN, mode=0o644)))

    assert code == 2
    assert "readable by every user (mode 644): chmod 600" in err


def test_a_token_file_others_may_write_is_refused(tmp_path: Path) -> None:
    code, err = _serve("--token-file", str(_token_file(tmp_path, GOOD_TOKEN, mode=0o622)))

    assert code == 2
    assert "writable by others (mode 622): chmod 600" in err


def test_a_short_token_is_refused(tmp_path: Path) -> None:
    code, err = _serve("--token-file", str(_token_file(tmp_path, "secret")))

    assert code == 2
    assert "at least 16 characters" in err


def test_a_token_file_names_its_token_by_the_files_name(tmp_path: Path) -> None:
    token = Token.read(_token_file(tmp_path, GOOD_TOKEN + "\n"))

    assert (token.value, token.name) == (GOOD_TOKEN, "ops.token")


def test_a_generated_token_is_named_serve_token_and_never_shown_by_repr() -> None:
    token = Token.generate()

    assert token.name == "serve-token"
    assert token.value not in repr(token)


def test_allow_writes_contradicts_read_only() -> None:
    code, err = _serve("--allow-writes", "--read-only")

    assert code == 2
    assert "--allow-writes contradicts --read-only" in err


@pytest.mark.parametrize("value", ["0", "101"])
def test_max_sessions_out_of_range_is_refused_in_one_line(value: str) -> None:
    code, err = _serve("--max-sessions", value)

    assert code == 2
    assert f"--max-sessions must be between 1 and 100, got {value}" in err


def test_without_the_web_extra_serve_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "textual_serve", None)  # as if not installed
    monkeypatch.delitem(sys.modules, "skconsole.web.server", raising=False)

    code, err = _serve()

    assert code == 2
    assert err.strip() == "error: skconsole serve needs the web extra: pip install 'skconsole[web]'"


def test_the_consoles_are_read_only_unless_writes_are_allowed() -> None:
    read_only = console_command(ROOT, read_only=True, user="u", host="h")
    writing = console_command(ROOT, read_only=False, user="u", host="h")

    assert "--read-only" in read_only.argv
    assert "--read-only" not in writing.argv


def test_the_console_acts_as_the_tokens_holder_from_the_browser() -> None:
    command = console_command(ROOT, read_only=False, user="alice", host=browser_host())

    assert command.env[actor.USER_ENV] == "alice"
    assert command.env[actor.HOST_ENV].startswith("browser via ")


def test_the_dsn_reaches_the_console_in_its_environment_never_its_arguments() -> None:
    """Every user of the machine can read a process's arguments (ps)."""
    command = console_command(ROOT, read_only=True, user="u", host="h")

    assert command.env["SKCONSOLE_DSN"] == ROOT["dsn"]
    assert "secret" not in command.shell()


def test_the_dsn_given_once_reaches_the_console_as_it_was_typed() -> None:
    """--dsn repeats (several queues): the root command holds a list, serve one DSN."""
    command = console_command({**ROOT, "dsn": [ROOT["dsn"]]}, read_only=True, user="u", host="h")

    assert command.env["SKCONSOLE_DSN"] == ROOT["dsn"]


def test_the_connection_options_reach_the_console(tmp_path: Path) -> None:
    root = {**ROOT, "setup": True, "refresh": "5s", "schema": "queue", "mapping": Path("m.json")}

    command = console_command(root, read_only=True, user="u", host="h")

    assert command.argv[-4:] == ("--refresh", "5s", "--setup", "--read-only")
    assert command.env["SKCONSOLE_SCHEMA"] == "queue"
    assert Path(command.env["SKCONSOLE_MAPPING"]).is_absolute()  # whatever the console's cwd


def test_every_root_option_with_an_environment_variable_is_handed_to_the_console() -> None:
    """A connection option added to the root command reaches serve's consoles by its own
    declaration: no line of serve's names it."""
    handed = handed_over()
    assert {"read_dsn", "queues", "data_dir", "mapping", "schema"} <= set(handed)
    root = {**ROOT, **{name: f"value-of-{name}" for name in handed}, "read_only": True}

    command = console_command(root, read_only=False, user="u", host="h")

    for name, var in handed.items():
        if name != "read_only":  # serve's own choice, said by --read-only or not at all
            assert command.env[var] == f"value-of-{name}"
    assert "SKCONSOLE_READ_ONLY" not in command.env


def test_the_console_is_started_with_no_shell_left_between() -> None:
    command = console_command(ROOT, read_only=True, user="u", host="h")

    assert shlex.split(command.shell()) == ["exec", *command.argv]
