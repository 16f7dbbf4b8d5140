"""``skconsole db start`` / ``stop`` / ``status`` / ``uri``: the embedded PostgreSQL server."""

from __future__ import annotations

import json
import os
from typing import Annotated

import typer

from skconsole.cli.app import db_app
from skconsole.cli.options import (
    options_of,
)
from skconsole.cli.output import err, out
from skconsole.core.errors import ConfigError
from skconsole.db.embedded import EmbeddedServer


# -- db ------------------------------------------------------------------------------
def _server(ctx: typer.Context) -> EmbeddedServer:
    o = options_of(ctx)
    if o.dsn:
        raise ConfigError(
            "`skconsole db` manages the embedded server; it does not apply with --dsn"
        )
    return EmbeddedServer(o.data_dir or os.environ.get("SKCONSOLE_DATA_DIR") or None)


@db_app.command("start")
def db_start(ctx: typer.Context) -> None:
    """Start the embedded server in the background (it keeps running until `db stop`)."""
    st = _server(ctx).start_background()
    out.print(f"embedded PostgreSQL running in {st.data_dir}")
    out.print(st.uri or "")


@db_app.command("stop")
def db_stop(ctx: typer.Context) -> None:
    """Stop the embedded server, whoever is using it."""
    server = _server(ctx)
    before = server.status()
    others = [p for p in before.registered_pids if p != before.holder_pid]
    st = server.stop()
    if others:
        err.print(
            f"note: {len(others)} other skconsole process(es) were attached: {', '.join(map(str, others))}"
        )
    out.print("stopped" if not st.running else "still running")


@db_app.command("status")
def db_status(ctx: typer.Context, as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Show whether the embedded server runs, its DSN and who is attached."""
    st = _server(ctx).status()
    if as_json:
        print(json.dumps(st.as_dict()))
        return
    out.print(f"data dir      {st.data_dir}{'' if st.initialized else ' (not initialised)'}")
    out.print(f"running       {'yes, pid ' + str(st.server_pid) if st.running else 'no'}")
    if st.uri:
        out.print(f"dsn           {st.uri}")
    out.print(
        f"held by       {'skconsole db start (pid ' + str(st.holder_pid) + ')' if st.holder_pid else 'no background holder'}"
    )
    out.print(f"attached pids {', '.join(map(str, st.registered_pids)) or '-'}")


@db_app.command("uri")
def db_uri(ctx: typer.Context) -> None:
    """Print the embedded server's DSN (it must be running: `skconsole db start`)."""
    st = _server(ctx).status()
    if not st.running or not st.uri:
        raise ConfigError("the embedded server is not running: start it with `skconsole db start`")
    print(st.uri)
