"""``a`` on a job's detail: the job as a pytest module (:mod:`skconsole.views.reproduce`).

The text is made from the detail the screen already read (no database call), and
a new file is written to the current directory, as ``skconsole job ID --as-test``
would print it, when the console knows the tasks module (it was started with
``--tasks``). Without it, the toast gives the command to run instead (and copies
it): the database does not record which module holds the handler. A file already
there is never overwritten: it may be the developer's own by now.
"""

from __future__ import annotations

import os
from pathlib import Path

from skconsole.core.text import printable
from skconsole.read import JobDetail
from skconsole.views.reproduce import file_name_for, job_as_test


def command_for(detail: JobDetail) -> str:
    """The command that writes the test, for a console that does not know the module."""
    return f"skconsole job {detail.task_id} --as-test --tasks MODULE > {file_name_for(detail)}"


def write_new(path: Path, text: str) -> None:
    """``text`` in a new file ``path`` (FileExistsError if there is one, a symlink too)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)


def write_test(detail: JobDetail, tasks: str, directory: Path) -> str:
    """Write the test to ``directory``; the one line the toast says."""
    path = directory / file_name_for(detail)
    shown = printable(str(path))
    try:
        write_new(path, job_as_test(detail, tasks))
    except FileExistsError:
        return f"{shown} exists already: not overwritten (move it away and press a again)."
    except OSError as exc:
        return f"Could not write {shown}: {printable(exc.strerror or str(exc))}."
    return f"Wrote {shown}: pytest runs the job's handler on its payload again."
