"""``skconsole schema sql`` and ``skconsole schema uninstall``: the schema as a team's own
migration, and the way out (:mod:`skconsole.db.schema_sql`)."""

from __future__ import annotations

from typing import Annotated

import typer

from skconsole.cli.acting import confirm_or_exit
from skconsole.cli.app import app
from skconsole.cli.options import ActionFlags, cli_actor, options_of, takes_flags
from skconsole.cli.output import out, print_json
from skconsole.core.errors import ReadOnlyError, SchemaError, SkconsoleError
from skconsole.core.json_types import JsonObject
from skconsole.db.audit import AuditRow
from skconsole.db.mapping import DEFAULT_MAPPING
from skconsole.db.schema import SCHEMA_VERSION, recorded_version
from skconsole.db.schema_sql import alive_workers, install_sql, uninstall, uninstall_plan

schema_app = typer.Typer(
    help="The schema as SQL for your migrations, and the way out.", no_args_is_help=True
)
app.add_typer(schema_app, name="schema")


@schema_app.command("sql")
def sql_command(ctx: typer.Context) -> None:
    """Print what `skconsole setup` runs, as one transaction (for psql, Alembic, Django):
    it installs a fresh database and upgrades one of any earlier schema version.
    Takes --mapping and --schema; connects to nothing."""
    print(install_sql(options_of(ctx).mapping or DEFAULT_MAPPING), end="")


@schema_app.command("uninstall")
@takes_flags()
def uninstall_command(
    ctx: typer.Context,
    drop_audit: Annotated[
        bool,
        typer.Option("--drop-audit", help="Drop the audit log too (then nothing records this)"),
    ] = False,
    stakhanovise: Annotated[
        bool,
        typer.Option(
            "--stakhanovise",
            help="Drop Stakhanovise.NET's own tables and dequeue function too (a queue"
            " skconsole set up alone; never when a .NET application uses it)",
        ),
    ] = False,
    *,
    flags: ActionFlags,
) -> None:
    """Remove skconsole's objects from the database (confirmed, audited): its tables,
    functions, sequences, and the columns, indexes and settings it added to
    Stakhanovise.NET's tables. Refused while a worker's lease is fresh."""
    o = options_of(ctx)
    if o.read_only and not flags.dry_run:
        raise ReadOnlyError("refused: uninstall writes to the database and read-only mode is on")
    db = o.database("skconsole-uninstall")
    with db.connect() as conn:
        alive = alive_workers(conn)
        if alive and not flags.dry_run:
            raise SkconsoleError(
                f"refused: {len(alive)} worker(s) alive ({', '.join(alive[:3])}): stop them first"
            )
        version = recorded_version(conn)
        if version is not None and version > SCHEMA_VERSION:
            raise SchemaError(
                f"the database holds schema version {version}, newer than this skconsole's"
                f" {SCHEMA_VERSION}: uninstall it with the skconsole that set it up"
            )
        plan = uninstall_plan(conn, audit=drop_audit, stakhanovise=stakhanovise)
        details: JsonObject = {
            "schema_version": version,
            "tables": list(plan.tables),
            "functions": len(plan.functions),
            "sequences": list(plan.sequences),
            "columns": [f"{t}.{c}" for t, c in plan.columns],
            "indexes": list(plan.indexes),
            "stakhanovise_tables": list(plan.stakhanovise),
            "audit_kept": not drop_audit,
        }
        if not plan.count:
            out.print(f"nothing to uninstall on {db.description}", highlight=False)
            return
        summary = (
            f"{len(plan.tables)} table(s), {len(plan.functions)} function(s),"
            f" {len(plan.sequences)} sequence(s), {len(plan.columns)} column(s) and"
            f" {len(plan.indexes)} index(es) of skconsole"
            + (
                f", and Stakhanovise.NET's {len(plan.stakhanovise)} table(s)"
                if stakhanovise
                else ""
            )
        )
        if flags.dry_run:
            if flags.as_json:
                print_json({"dry_run": True, **details})
            else:
                out.print(f"would drop {summary} on {db.description}", highlight=False)
            return
        if not flags.as_json:
            out.print(f"will drop {summary} on {db.description}", highlight=False)
        confirm_or_exit(
            f"Uninstall skconsole (schema version {version or '?'}) from {db.description}?"
            + (" Every job and its history goes with it." if stakhanovise else ""),
            flags.yes,
        )
        actor = cli_actor()
        row = (
            None
            if drop_audit
            else AuditRow(actor.user, actor.host, "uninstall", {}, 0, dict(details), actor.origin)
        )
        audit_id = uninstall(conn, plan, row)
    if flags.as_json:
        print_json({"uninstalled": True, "audit_id": audit_id, **details})
        return
    kept = f" (audit #{audit_id}; the audit log is kept)" if audit_id is not None else ""
    out.print(f"uninstalled skconsole from {db.description}{kept}", highlight=False)
