"""``skconsole serve``: the console in a browser tab (:mod:`skconsole.web`).

Each browser session gets a console process of its own, started with this
command's connection options; the server itself only relays screens and keys.
The safety model, said once in docs/howto/browser.md:

- it listens on 127.0.0.1 unless ``--host`` says otherwise;
- every request shows the token (printed in the URL, or kept in ``--token-file``);
  without it nothing is served and no console starts;
- the consoles are read-only (their sessions too) unless ``--allow-writes``;
- what a console writes is audited as ``--user``, else the token's name, from
  host ``browser via <this host>`` (:mod:`skconsole.core.actor`'s variables).

The database is checked here first, so a wrong DSN or a missing schema ends
the command with one line instead of a browser tab that closes.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import shlex
import socket
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from skconsole.cli.app import app
from skconsole.cli.options import (
    HostOpt,
    PortOpt,
    check_range,
    check_text,
    options_of,
    refresh_interval,
)
from skconsole.cli.output import out
from skconsole.core import actor
from skconsole.core.errors import ConfigError
from skconsole.core.extras import require_extra
from skconsole.core.places import SERVE_URL_ENV, base_url
from skconsole.core.text import is_printable, quoted
from skconsole.web.token import Token

DEFAULT_PORT = 8000
#: consoles at once by default: each is a process with database connections of its own
DEFAULT_MAX_SESSIONS = 8
MAX_SESSIONS = 100
#: audit_user is varchar(250); a name is a person or a token, not a paragraph
MAX_USER_CHARS = 100


@dataclass(frozen=True)
class ConsoleCommand:
    """The console a browser session starts: its argv and what it adds to the environment
    (the DSN travels there, not in an argv every user of the machine can read)."""

    argv: tuple[str, ...]
    env: Mapping[str, str]

    def shell(self) -> str:
        """textual-serve starts it through a shell; ``exec`` leaves no shell between."""
        return "exec " + shlex.join(self.argv)


def console_command(
    root: Mapping[str, Any],
    *,
    read_only: bool,
    user: str,
    host: str,
    handed: Mapping[str, str] | None = None,
) -> ConsoleCommand:
    """The console for ``root``, the root command's parameters: every connection option
    reaches it through the environment variable the option itself declares
    (:func:`handed_over`), so an option added to the root command is handed over with no
    line here; only ``--dsn`` (a list there, one DSN here) and what serve decides itself
    (read-only, the actor) are said."""
    argv = [sys.executable, "-m", "skconsole", "--refresh", str(root.get("refresh") or "2s")]
    if root.get("setup") and not root.get("no_setup"):
        argv.append("--setup")
    if read_only:
        argv.append("--read-only")
    env = {actor.USER_ENV: user, actor.HOST_ENV: host}
    dsn = root.get("dsn")
    if isinstance(dsn, list | tuple):  # --dsn repeats (several queues); serve takes one
        dsn = dsn[0] if len(dsn) == 1 else None
    if dsn:
        env["SKCONSOLE_DSN"] = str(dsn)
    for name, var in (handed_over() if handed is None else handed).items():
        value = root.get(name)
        if value is None or value is False or name == "read_only":  # serve decides that
            continue
        # a file, as this process found it, whatever the console's working directory
        env[var] = (
            "1"
            if value is True
            else str(Path(value).resolve() if isinstance(value, Path) else value)
        )
    return ConsoleCommand(tuple(argv), env)


def handed_over() -> dict[str, str]:
    """The root command's options that declare an environment variable, by parameter
    name (``--read-dsn``, ``--queues``, ``--mapping``, ``--schema``, ...): the one
    declaration of each connection option says how a console started by serve gets it."""
    import typer.main

    from skconsole.cli.app import app

    handed: dict[str, str] = {}
    for param in typer.main.get_command(app).params:
        envvar = getattr(param, "envvar", None)  # an option's (Typer's own class or Click's)
        if param.name and isinstance(envvar, str):
            handed[param.name] = envvar
    return handed


def browser_host() -> str:
    """The audit row's host for a console of a browser session."""
    return f"browser via {socket.gethostname()}"


def _check_user(user: str | None) -> None:
    if user is None:
        return
    check_text("--user", user)
    if not user.strip() or not is_printable(user) or len(user) > MAX_USER_CHARS:
        raise ConfigError(
            f"--user must be 1 to {MAX_USER_CHARS} printable characters, got {quoted(user)}"
        )


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def _url_host(host: str) -> str:
    """The host part of a URL to open: a wildcard address is this machine's name."""
    if host in ("", "0.0.0.0", "::"):
        return socket.gethostname()
    return f"[{host}]" if ":" in host else host


@app.command()
def serve(
    ctx: typer.Context,
    host: HostOpt = "127.0.0.1",
    port: PortOpt = DEFAULT_PORT,
    token_file: Annotated[
        Path | None,
        typer.Option(
            "--token-file",
            help="Read the token from this file (not readable by every user);"
            " default: a new token, printed in the URL",
        ),
    ] = None,
    allow_writes: Annotated[
        bool,
        typer.Option(
            "--allow-writes",
            help="Let the browser's consoles write (requeue, cancel, ...): each action is"
            " audited with --user, else the token's name",
        ),
    ] = False,
    max_sessions: Annotated[
        int,
        typer.Option(
            "--max-sessions",
            help=f"Most consoles at once, one per tab (1 to {MAX_SESSIONS}); a tab past it is"
            " refused until another closes",
        ),
    ] = DEFAULT_MAX_SESSIONS,
    user: Annotated[
        str | None,
        typer.Option(
            "--user",
            help="Who acts, in the audit rows of the browser's consoles"
            " (default: the --token-file's name, or serve-token)",
        ),
    ] = None,
    public_url: Annotated[
        str | None,
        typer.Option(
            "--public-url",
            help="The address the browsers reach this server at (behind a proxy or a tunnel):"
            " the start of the links the consoles' l key gives; default: the address printed",
            show_default=False,
        ),
    ] = None,
) -> None:
    """The console in a browser tab: one console per session, behind a token (read-only
    unless --allow-writes)."""
    check_range("--port", port, 0, 65535)
    check_range("--max-sessions", max_sessions, 1, MAX_SESSIONS)
    check_text("--host", host)
    _check_user(user)
    if public_url is not None:
        check_text("--public-url", public_url)
        try:
            public_url = base_url(public_url)
        except ConfigError as exc:
            raise ConfigError(f"--public-url: {exc}") from None
    opts = options_of(ctx)
    if allow_writes and opts.read_only:
        raise ConfigError("--allow-writes contradicts --read-only (or SKCONSOLE_READ_ONLY)")
    token = Token.read(token_file) if token_file is not None else Token.generate()
    root = ctx.find_root().params
    refresh_interval(str(root.get("refresh") or "2s"))  # a bad --refresh: here, not per tab
    require_extra("web", "skconsole serve")
    from skconsole.tui.launch import schema_state
    from skconsole.web.server import ConsoleServer, serve_until_stopped
    from skconsole.worker.run import configure_logging

    read_only = not allow_writes
    db = opts.database("skconsole-serve", read_only=read_only)
    schema_state(db, read_only=read_only, setup=opts.setup)  # one line now, not a closed tab
    acting = user or token.name
    command = console_command(root, read_only=read_only, user=acting, host=browser_host())
    os.environ.update(command.env)  # textual-serve gives each console this environment

    def started(bound_host: str, bound_port: int) -> None:
        base = f"http://{_url_host(bound_host)}:{bound_port}/"
        # the consoles' links (l): each console is started after this, with this environment
        os.environ[SERVE_URL_ENV] = public_url or base.rstrip("/")
        mode = (
            f"writes allowed, audited as {acting} from {browser_host()}"
            if allow_writes
            else "read-only"
        )
        out.print(
            f"serving the console of {escape(db.description)} on {escape(base)} ({escape(mode)})",
            soft_wrap=True,
            highlight=False,
        )
        if token.from_file:
            out.print(f"open {escape(base)}?token=<the token in {escape(str(token_file))}>")
        else:
            out.print(f"open {escape(base)}?token={token.value}", soft_wrap=True)
        if not _loopback(bound_host):
            out.print(
                "note: listening beyond this machine: anyone who can reach the port and holds"
                " the token gets a console; the traffic is plain HTTP (put TLS in front)",
                soft_wrap=True,
            )
        sys.stdout.flush()

    configure_logging()
    server = ConsoleServer(command.shell(), token, host=host, port=port, max_sessions=max_sessions)
    asyncio.run(serve_until_stopped(server, started))
