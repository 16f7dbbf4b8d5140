"""Running the ``skconsole`` command in the test process.

Starting a Python process costs about half a second before the command does
anything; most CLI tests check what a command prints and how it exits, which
the process boundary does not change. :func:`run_in_process` runs the real
entry point (``skconsole.cli.app.main``: option hoisting, one-line errors, exit
codes) with its own argv, environment, stdin, stdout and stderr, and puts back
what a command may change for the rest of the process (the table mapping,
environment variables). Tests of what only a real process shows (signals, a
traceback-free exit of the interpreter, the embedded server started from the
command line) keep ``run_cli(..., process=True)``.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import traceback
from collections.abc import Sequence
from contextlib import redirect_stderr, redirect_stdout


class _Stdin(io.StringIO):
    """What a command reads when the test gives it input: never a terminal."""

    def isatty(self) -> bool:
        return False


def run_in_process(
    args: Sequence[str], *, input: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``skconsole ARGS`` run by the entry point in this process, as a CompletedProcess."""
    from skconsole.cli import output
    from skconsole.cli.app import main

    out, err = io.StringIO(), io.StringIO()
    saved = (sys.argv, sys.stdin, dict(os.environ))
    # rich fixes a console's size when COLUMNS is set as it is made (this process's, not
    # this command's): the command's environment decides it, as in a process of its own
    consoles = (output.out, output.err)
    sizes = [(c._width, c._height) for c in consoles]
    for c in consoles:
        c._width = c._height = None
    sys.argv = ["skconsole", *args]
    sys.stdin = _Stdin(input or "")
    os.environ.update(env or {})
    code = 0
    try:
        with redirect_stdout(out), redirect_stderr(err):
            try:
                main()
            except SystemExit as exc:
                if isinstance(exc.code, str):  # sys.exit("text"): the text on stderr, exit 1
                    err.write(exc.code + "\n")
                    code = 1
                else:
                    code = int(exc.code or 0)
            except Exception:  # what a process would die of: its traceback, exit 1
                traceback.print_exc(file=err)
                code = 1
    finally:
        sys.argv, sys.stdin = saved[0], saved[1]
        os.environ.clear()
        os.environ.update(saved[2])
        for c, (width, height) in zip(consoles, sizes, strict=True):
            c._width, c._height = width, height
    return subprocess.CompletedProcess(["skconsole", *args], code, out.getvalue(), err.getvalue())
