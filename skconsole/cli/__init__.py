"""The ``skconsole`` command line (Typer).

- :mod:`.options`: the connection options, the bounds and checks of every option,
  and the option types several commands share;
- :mod:`.output`: the console that writes (control characters made visible), JSON,
  the one-line error, and tables that fit the terminal;
- :mod:`.app`: the Typer app, the root command and :func:`main`;
- :mod:`.commands`: which module defines each command (a process imports only the
  one it runs);
- the commands: :mod:`.demo`, :mod:`.posting` (setup, enqueue), :mod:`.running` (worker,
  bench), :mod:`.server` (``db``: the embedded server),
  :mod:`.status` (``status [VIEW]``), :mod:`.job` (``job ID``: one job and its attempts), :mod:`.ops` (the operator actions, audit;
  :mod:`.acting` runs any action as a command),
  :mod:`.retention` (``retention [set|clear]``), :mod:`.health` (``vacuum``,
  ``cancel-session``: the queue tables' health) and :mod:`.exporter` (``exporter``:
  metrics for Prometheus), :mod:`.why` (``why ID``: why a job waits), :mod:`.find`
  (``find``, ``find-index``: jobs by payload), :mod:`.serve` (``serve``: the console in
  a browser tab) and :mod:`.schema` (``schema sql``, ``schema uninstall``).

:func:`full_app` gives the app with every command registered (the docs' generator,
the tests); the entry point, :func:`skconsole.cli.app.main`, registers only what it
runs.
"""

from __future__ import annotations

import importlib
from typing import Any


def full_app() -> Any:
    """The Typer app with every command registered (the docs' generator, the tests); the
    entry point, :func:`skconsole.cli.app.main`, registers only what it runs."""
    importlib.import_module("skconsole.cli.commands").load_all()
    return importlib.import_module("skconsole.cli.app").app


__all__ = ["full_app"]
