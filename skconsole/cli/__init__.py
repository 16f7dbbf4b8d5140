"""The ``skconsole`` command line (Typer).

- :mod:`.options`: the connection options, the bounds and checks of every option,
  and the option types several commands share;
- :mod:`.output`: the console that writes (control characters made visible), JSON,
  the one-line error, and tables that fit the terminal;
- :mod:`.app`: the Typer app, the root command and :func:`main`;
- the commands: :mod:`.demo`, :mod:`.posting` (setup, enqueue), :mod:`.running` (worker,
  bench), :mod:`.server` (``db``: the embedded server),
  :mod:`.status` (``status [VIEW]``), :mod:`.job` (``job ID``: one job and its attempts), :mod:`.ops` (the operator actions, audit;
  :mod:`.acting` runs any action as a command),
  :mod:`.retention` (``retention [set|clear]``), :mod:`.health` (``vacuum``,
  ``cancel-session``: the queue tables' health) and :mod:`.exporter` (``exporter``:
  metrics for Prometheus), :mod:`.why` (``why ID``: why a job waits), :mod:`.find`
  (``find``, ``find-index``: jobs by payload), :mod:`.serve` (``serve``: the console in
  a browser tab) and :mod:`.schema` (``schema sql``, ``schema uninstall``).

Importing this package registers every command on :data:`app`.
"""

from __future__ import annotations

# imported in the order ``skconsole --help`` lists the commands
from skconsole.cli import check, demo, posting, running  # isort: skip
from skconsole.cli import exporter, ops, find, health, job, retention, server, slo, status  # isort: skip
from skconsole.cli import serve, why, schema  # isort: skip
from skconsole.cli.app import app, main

__all__ = [
    "app",
    "check",
    "demo",
    "exporter",
    "find",
    "health",
    "job",
    "main",
    "ops",
    "posting",
    "retention",
    "running",
    "schema",
    "serve",
    "server",
    "slo",
    "status",
    "why",
]
