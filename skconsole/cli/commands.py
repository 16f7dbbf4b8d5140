"""Which module defines each command, so a process imports only the one it runs.

Importing every command module costs about half a second (psycopg, the read
models, the operator actions, the engine); ``skconsole worker``, ``skconsole
check`` or ``skconsole job ID`` need one of them, and a process that starts a
worker starts its first job sooner for it. :func:`load` imports what an argument
list needs: the one module of the command it names; every module for the root's
``--help``, shell completion, or a name that is no command (so Click can list
them, or say which one was meant). A unit test holds this table to the commands
the modules really register.
"""

from __future__ import annotations

import importlib
import os

#: each command (or group of commands) and the module of skconsole.cli defining it,
#: in the order ``skconsole --help`` lists them
MODULES: dict[str, str] = {
    "check": "check",
    "demo": "demo",
    "setup": "posting",
    "enqueue": "posting",
    "worker": "running",
    "bench": "running",
    "exporter": "exporter",
    "requeue": "ops",
    "bump": "ops",
    "purge": "ops",
    "reap": "ops",
    "cancel": "ops",
    "edit": "ops",
    "pause": "ops",
    "resume": "ops",
    "limit": "ops",
    "audit": "ops",
    "waves": "waves",
    "find": "find",
    "find-index": "find",
    "vacuum": "health",
    "cancel-session": "health",
    "job": "job",
    "retention": "retention",
    "db": "server",
    "slo": "slo",
    "breaker": "breaker",
    "status": "status",
    "serve": "serve",
    "why": "why",
    "schema": "schema",
    "incident": "incident",
}


def load_all() -> None:
    """Register every command, in the order of :data:`MODULES`."""
    for module in dict.fromkeys(MODULES.values()):
        importlib.import_module(f"skconsole.cli.{module}")


def load(command: str | None, argv: list[str]) -> None:
    """Register what running ``argv`` (whose command is ``command``; None: the console)
    needs."""
    completing = any(k.startswith("_SKCONSOLE_COMPLETE") for k in os.environ)
    if (
        completing
        or (command is None and "--help" in argv)
        or (command is not None and command not in MODULES)
    ):
        load_all()
    elif command is not None:
        importlib.import_module(f"skconsole.cli.{MODULES[command]}")
