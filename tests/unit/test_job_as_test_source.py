"""The pytest module ``skconsole job ID --as-test`` writes (:mod:`skconsole.views.reproduce`):
valid, ruff-clean Python of printable ASCII, whatever hostile text the job holds, with
the job's exact type, payload and priority and today's error in string literals."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from skconsole.core.errors import ConfigError
from skconsole.core.stored_error import StoredError
from skconsole.read import JobDetail
from skconsole.views.reproduce import file_name_for, job_as_test, py_string

#: quotes of every kind, a backslash, line breaks, escapes, a bidi override, non-ASCII
HOSTILE = "a \"q\" 's' \"\"\" ''' back\\slash\nline\r\n\x1b[31m \u202e é 😀 \\x00 {x} # no"
TYPE = 'render"""\nimport os  # ' + HOSTILE
ERROR = StoredError(
    "myapp.Boom",
    'cannot render "O\'Brien"\n"""\nos.system("x")  # ' + HOSTILE,
    "Traceback (most recent call last):\n  File x\nmyapp.Boom: " + HOSTILE,
).stored()
TASKS = "myapp.tasks:registry"


def failed_job(**kw: Any) -> JobDetail:
    base = JobDetail(
        task_id=UUID("3f2a9c1b-0000-4000-8000-00000000abcd"),
        task_type=TYPE,
        source="web",
        payload=json.dumps({"name": HOSTILE, "n": [1.5, True, None]}, ensure_ascii=False),
        status=6,
        priority=7,
        error_count=3,
        last_error=ERROR,
        recoverable=False,
        processing_ms=12,
        posted_at=None,
        first_attempt_at=None,
        last_attempt_at=datetime(2026, 12, 6, 16, 40, tzinfo=UTC),
        finalized_at=None,
        owner_worker_id=None,
        attempt=3,
        signature=None,
        queued_until=None,
    )
    return replace(base, **kw)


def names_in(source: str) -> dict[str, Any]:
    """The module's names, once it ran (it imports skconsole; it touches no database)."""
    names: dict[str, Any] = {}
    exec(compile(source, "test_job_3f2a9c1b.py", "exec"), names)
    return names


def test_it_compiles_to_the_docstring_imports_constants_and_one_test() -> None:
    tree = ast.parse(job_as_test(failed_job(), TASKS))

    kinds = [type(node).__name__ for node in tree.body]

    assert kinds == ["Expr"] + ["ImportFrom"] * 5 + ["Assign"] * 6 + ["FunctionDef"]
    assert [n.name for n in tree.body if isinstance(n, ast.FunctionDef)] == [
        "test_job_3f2a9c1b_succeeds"
    ]


def test_the_jobs_hostile_text_comes_back_exactly_from_its_literals() -> None:
    job = failed_job()

    names = names_in(job_as_test(job, TASKS))

    assert names["TASK_TYPE"] == TYPE
    assert names["PAYLOAD_JSON"] == job.payload
    assert (names["PRIORITY"], names["TASKS"]) == (7, TASKS)


def test_every_character_of_the_module_is_printable_ascii() -> None:
    source = job_as_test(failed_job(), TASKS)

    assert all(" " <= ch <= "~" or ch == "\n" for ch in source)


def test_the_docstring_holds_none_of_the_jobs_text() -> None:
    docstring = ast.get_docstring(ast.parse(job_as_test(failed_job(), TASKS))) or ""

    assert "render" not in docstring and "Boom" not in docstring and "os" not in docstring.split()


def test_a_failed_job_names_todays_error_and_keeps_all_of_it() -> None:
    names = names_in(job_as_test(failed_job(), TASKS))

    assert names["TODAY_ERROR"] == 'myapp.Boom: cannot render "O\'Brien"'
    assert names["ERROR_TEXT"].startswith("myapp.Boom: cannot render")
    assert names["ERROR_TEXT"].endswith("myapp.Boom: " + HOSTILE)
    assert "It failed: 6 Fatal after 3 attempts, the last at 2026-12-06T16:40:00+00:00" in str(
        names["__doc__"]
    )


def test_a_job_that_had_not_failed_still_gives_a_test_that_says_so() -> None:
    source = job_as_test(failed_job(status=3, last_error=None, error_count=0, attempt=1), TASKS)
    names = names_in(source)

    assert names["TODAY_ERROR"] is None and names["ERROR_TEXT"] is None
    assert "It had not failed when this was written (3 Processed after 1 attempt)" in str(
        names["__doc__"]
    )
    assert "in production it had not failed" in source


def test_a_null_payload_is_posted_as_json_null() -> None:
    assert names_in(job_as_test(failed_job(payload=None), TASKS))["PAYLOAD_JSON"] == "null"


@pytest.mark.parametrize("tasks", ["", "my app", "os; import x", "m:a:b", "1m", "m.\n"])
def test_a_tasks_module_that_is_no_module_name_is_refused_in_one_line(tasks: str) -> None:
    with pytest.raises(ConfigError, match=r"^--tasks names the module the worker runs") as exc:
        job_as_test(failed_job(), tasks)

    assert "\n" not in str(exc.value)


def test_the_file_is_named_for_the_jobs_first_eight_hex_digits() -> None:
    assert file_name_for(failed_job()) == "test_job_3f2a9c1b.py"


@pytest.mark.parametrize("text", ["", HOSTILE, '"', "'", "\\", "\x7f\x80\uffff\U0010ffff"])
def test_a_string_literal_reads_back_as_the_text(text: str) -> None:
    literal = py_string(text)

    assert ast.literal_eval(literal) == text and literal.isascii() and literal.isprintable()


@pytest.mark.skipif(
    shutil.which("ruff", path=str(Path(sys.executable).parent)) is None,
    reason="ruff is a dev dependency",
)
def test_ruff_finds_nothing_to_check_or_format(tmp_path: Path) -> None:
    ruff = str(Path(sys.executable).parent / "ruff")
    path = tmp_path / "test_job_3f2a9c1b.py"
    path.write_text(job_as_test(failed_job(), TASKS), encoding="utf-8")

    checked = subprocess.run(
        [ruff, "check", "--isolated", str(path)], capture_output=True, text=True
    )
    formatted = subprocess.run(
        [ruff, "format", "--isolated", "--check", str(path)], capture_output=True, text=True
    )

    assert checked.returncode == 0, checked.stdout
    assert formatted.returncode == 0, formatted.stdout
