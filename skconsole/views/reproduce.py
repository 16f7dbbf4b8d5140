"""A job as a pytest module: ``skconsole job ID --as-test`` and the console's ``a`` key.

Why: a production failure is easiest to fix once it fails on a developer's
machine. The module this writes posts the job's exact payload (its type and
priority too) to a scratch queue (:mod:`skconsole.testing`), runs its handler
from the tasks module the worker runs (``skconsole worker --tasks``), and asserts
that the job succeeds: it fails while the handler still fails, its message
quoting today's error beside the one raised now, and passes once the handler is
fixed. A job that had not failed gives the same test, which then says so.

The text is made from the job's read model alone (a pure function: no database,
no clock), so both faces write the same file. Everything the job holds is
hostile text (a payload, a type, an error): it goes into the module only as a
string literal this writes itself, ASCII with every other character escaped, so
nothing of it can end a string, a comment or the docstring, and the file shows
the same in any terminal or editor. The docstring holds only what skconsole
itself writes (an id, a status, counts, times).
"""

from __future__ import annotations

import json
import re
from datetime import datetime

from skconsole.core.errors import ConfigError
from skconsole.core.signature import final_exception_line
from skconsole.core.status import FAILED, JobStatus
from skconsole.core.stored_error import readable_error
from skconsole.core.text import quoted
from skconsole.read import JobDetail

#: what ``--tasks`` names: a dotted module, optionally ``:attribute`` (as ``skconsole worker``)
_TASKS = re.compile(
    r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*(?::[A-Za-z_][A-Za-z0-9_]*)?"
)
#: a string literal longer than this is written as one piece per line of text
_ONE_LINE = 72
#: the most characters of text in one piece of a long literal
_PIECE = 64
_ESCAPES = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def check_tasks(tasks: str) -> str:
    """``tasks`` as ``--tasks`` takes it (``module`` or ``module:attribute``), else a
    ConfigError in one line."""
    if not _TASKS.fullmatch(tasks):
        raise ConfigError(
            f"--tasks names the module the worker runs (module or module:attribute,"
            f" e.g. myapp.tasks), got {quoted(tasks)}"
        )
    return tasks


def file_name_for(detail: JobDetail) -> str:
    """Where the test goes by default: ``test_job_<first 8 hex digits>.py``."""
    return f"test_job_{detail.task_id.hex[:8]}.py"


def py_string(text: str) -> str:
    """``text`` as a Python literal of printable ASCII: every other character escaped
    (``\\xNN``, ``\\uNNNN``, ``\\UNNNNNNNN``); in double quotes unless the text holds
    more of them than of single ones (as ``ruff format`` writes it)."""
    quote = "'" if text.count('"') > text.count("'") else '"'
    out = []
    for ch in text:
        code = ord(ch)
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ch == quote:
            out.append("\\" + ch)
        elif 0x20 <= code < 0x7F:
            out.append(ch)
        elif code <= 0xFF:
            out.append(f"\\x{code:02x}")
        elif code <= 0xFFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    return quote + "".join(out) + quote


def _pieces(text: str) -> list[str]:
    """``text`` cut after each line break and every ``_PIECE`` characters."""
    pieces: list[str] = []
    for line in text.splitlines(keepends=True):
        pieces.extend(line[i : i + _PIECE] for i in range(0, len(line), _PIECE))
    return pieces or [""]


def _assign(name: str, text: str | None) -> str:
    """``NAME = "..."``: one line, or a parenthesised piece a line when long."""
    if text is None:
        return f"{name} = None"
    single = py_string(text)
    if len(single) <= _ONE_LINE and "\n" not in text[:-1]:
        return f"{name} = {single}"
    body = "\n".join(f"    {py_string(p)}" for p in _pieces(text))
    return f"{name} = (\n{body}\n)"


def _when(at: datetime | None) -> str:
    return at.isoformat(timespec="seconds") if at is not None else "an unknown time"


def _is_json(payload: str | None) -> bool:
    if payload is None:
        return True
    try:
        json.loads(payload)
    except ValueError:
        return False
    return True


def _failed(detail: JobDetail) -> bool:
    """Its last attempt failed (4 Error, 5 Faulted, 6 Fatal)."""
    return detail.status in FAILED


def _story(detail: JobDetail) -> str:
    """What the docstring says of the job: how it ended, when, and what this test does."""
    status = f"{detail.status} {JobStatus.label_of(detail.status)}"
    attempts = f"{detail.attempt} attempt{'' if detail.attempt == 1 else 's'}"
    if _failed(detail):
        named = (
            "with TODAY_ERROR (ERROR_TEXT below is all of it, as stored)"
            if detail.last_error is not None
            else "with no error text stored"
        )
        told = (
            f"It failed: {status} after {attempts}, the last at {_when(detail.last_attempt_at)},\n"
            f"{named}. This test fails\n"
            "while the handler still fails, and passes once it is fixed."
        )
    else:
        earlier = (
            "\nERROR_TEXT is its last error, from an earlier attempt."
            if detail.last_error is not None
            else ""
        )
        told = (
            f"It had not failed when this was written ({status} after {attempts}):\n"
            f"this test checks that it succeeds.{earlier}"
        )
    payload = (
        ""
        if _is_json(detail.payload)
        else "\n\nIts payload is not valid JSON (another application wrote it): skconsole's\n"
        "producer refuses to post it, and so does this test."
    )
    return told + payload


def job_as_test(detail: JobDetail, tasks: str) -> str:
    """The pytest module that runs ``detail``'s job again with its handler from
    ``tasks`` (as ``skconsole worker --tasks`` names it): printable ASCII, ruff-clean."""
    check_tasks(tasks)
    failed = _failed(detail)
    today = final_exception_line(detail.last_error) if failed and detail.last_error else None
    error_text = readable_error(detail.last_error) if detail.last_error else None
    name = f"test_job_{detail.task_id.hex[:8]}_succeeds"
    if failed:
        verdict = '        f"\\n(in production: {TODAY_ERROR})"\n'
    else:
        verdict = '        "\\n(in production it had not failed)"\n'
    return (
        f'"""Job {detail.task_id}, as `skconsole job ID --as-test` wrote it.\n'
        "\n"
        f"{_story(detail)}\n"
        "\n"
        "It posts the job (TASK_TYPE, PAYLOAD_JSON, PRIORITY) to a scratch queue and runs\n"
        "its handler from TASKS, retries without back-off. The queue is made on the server\n"
        "SKCONSOLE_TEST_DSN names (its user needs CREATEDB), else on an embedded PostgreSQL.\n"
        '"""\n'
        "\n"
        "from skconsole.core.status import JobStatus\n"
        "from skconsole.core.stored_error import readable_error\n"
        "from skconsole.core.text import printable\n"
        "from skconsole.testing import ScratchQueue\n"
        "from skconsole.worker.registry import load_registry\n"
        "\n"
        "# the module the worker runs (skconsole worker --tasks): the handler under test\n"
        f"{_assign('TASKS', tasks)}\n"
        "# the job as it was posted\n"
        f"{_assign('TASK_TYPE', detail.task_type)}\n"
        f"{_assign('PAYLOAD_JSON', detail.payload if detail.payload is not None else 'null')}\n"
        f"PRIORITY = {int(detail.priority)}\n"
        "# the error it failed with in production: the line that names it, and all of it\n"
        f"{_assign('TODAY_ERROR', today)}\n"
        f"{_assign('ERROR_TEXT', error_text)}\n"
        "\n"
        "\n"
        f"def {name}(skconsole_queue: ScratchQueue) -> None:\n"
        "    registry = load_registry(TASKS)\n"
        "    job_id = skconsole_queue.post(\n"
        "        TASK_TYPE, payload_json=PAYLOAD_JSON, priority=PRIORITY\n"
        "    )\n"
        "\n"
        "    job = skconsole_queue.run(registry, types=TASK_TYPE, backoff=0).job(job_id)\n"
        "\n"
        "    now = readable_error(job.error) if job.error is not None else job.status.label\n"
        "    assert job.status is JobStatus.PROCESSED, printable(\n"
        '        f"the job ended {job.status.label}: {job.error_summary}"\n'
        f"{verdict}"
        '        f"\\n\\n{now}",\n'
        "        keep_newlines=True,\n"
        "    )\n"
    )
