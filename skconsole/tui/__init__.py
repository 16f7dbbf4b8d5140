"""The operations console (Textual).

Only this package and ``cli.py`` import textual. The console reads through
``skconsole.read`` and acts through ``skconsole.ops``, and it does both only
from :mod:`skconsole.tui.database_source`, in worker threads, never on the UI thread.
"""
