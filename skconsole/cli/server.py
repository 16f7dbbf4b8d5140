"""``skconsole db start`` / ``stop`` / ``status`` / ``uri``: the embedded PostgreSQL server."""

from __future__ import annotations

import json
import os
from typing import Annotated
from urllib.parse import quote

import typer

from skconsole.cli.app import db_app
from skconsole.cli.options import JsonOpt, check_text, options_of
from skconsole.cli.output import err, out
from skconsole.core.errors import ConfigError
from skconsole.db.embedded import EmbeddedServer


# -- db ------------------------------------------------------------------------------
def _server(ctx: typer.Context, *, demo: bool = False) -> EmbeddedServer:
    """The embedded server of --data-dir; with ``demo``, the demo's unless --data-dir
    names another (as ``skconsole demo`` chooses it)."""
    o = options_of(ctx)
    if o.dsn_given:  # $SKCONSOLE_DSN alone is ignored: it is often this server's own uri
        raise ConfigError(
            "`skconsole db` manages the embedded server; it does not apply with --dsn"
        )
    where = o.data_dir or os.environ.get("SKCONSOLE_DATA_DIR") or None
    if where is None and demo:
        from skconsole.demo.scenario import demo_data_dir

        where = demo_data_dir()
    return EmbeddedServer(where)


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
def db_status(ctx: typer.Context, as_json: JsonOpt = False) -> None:
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
def db_uri(
    ctx: typer.Context,
    database: Annotated[
        str | None,
        typer.Option("--database", help="The database the DSN names [default: postgres]"),
    ] = None,
    demo: Annotated[
        bool,
        typer.Option(
            "--demo",
            help="The running demo's queue: its database (skconsole_demo) on its server"
            " (demo-pgdata beside the default data directory, or --data-dir)",
        ),
    ] = False,
) -> None:
    """Print the embedded server's DSN (it must be running: `skconsole db start`, or
    `skconsole demo` with --demo)."""
    from skconsole.demo.scenario import DEMO_DATABASE

    check_text("--database", database)
    server = _server(ctx, demo=demo)
    name = database or (DEMO_DATABASE if demo else None)
    st = server.status(database=None if name is None else quote(name, safe=""))
    if not st.running or not st.uri:
        if demo:
            raise ConfigError(
                f"the demo is not running on {server.data_dir}: start it with `skconsole demo`"
                " (and --data-dir if it was started with one)"
            )
        raise ConfigError("the embedded server is not running: start it with `skconsole db start`")
    print(st.uri)
