"""The status numbers in the SQL are the Python side's JobStatus codes and sets (no database).

SQL cannot import :mod:`skconsole.core.status`: a query says ``task_status IN (4, 5, 6)``
where Python says ``FAILED``. This is the specification that ties the two. Every place
the shipped SQL (sql/queries and sql/schema) compares a status with a number, writes one,
or defaults a missing one is read here, and

- every number is a :class:`JobStatus` code;
- every list of numbers is one of the sets of :data:`SETS`, each built from the named
  sets of core/status.py, so changing what "failed" or "waiting" means in Python
  without the SQL (or the other way round) fails here;
- the single numbers mean what the SQL around them says (:data:`SINGLE`).

The benchmark's seed data (sql/bench) is left out: its numbers are made-up rows, not rules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

from skconsole.core.status import ENDED, FAILED, FINAL, RAN, UNSUCCESSFUL, WAITING, JobStatus
from skconsole.db.sqlfiles import sql_root

S = JobStatus

#: The sets of statuses the SQL may spell out as a list, each with what it means there.
SETS: dict[frozenset[JobStatus], str] = {
    frozenset(FAILED): "failed: a failure group's jobs (failures, history, group selections)",
    frozenset(WAITING) - {S.FAULTED}: (
        "claimable: waiting with a queue row a skconsole worker claims (Faulted is parked:"
        " waiting for an operator)"
    ),
    frozenset(FINAL) | {S.FAULTED}: (
        "settled: neither running nor waiting to run, so a keyed re-post runs it again"
    ),
    (frozenset(FINAL) - {S.PROCESSED}) | {S.FAULTED}: (
        "ended by a failed attempt: it will not be retried, so it is finalized now"
    ),
    frozenset(FINAL): ("over: a job posted after= it is decided now (released, or cancelled)"),
    frozenset(RAN): "ran to an end, succeeded or failed: the record keeps its run time",
    frozenset(ENDED): "an ending the record counts (from the job rows, read degraded)",
    frozenset(UNSUCCESSFUL): (
        "over without success: a job waiting for it (after=) is cancelled, or runs with"
        " after_failure='run'"
    ),
}

#: The single numbers the SQL compares with or writes, each with what it stands for.
SINGLE: dict[JobStatus, str] = {
    S.UNPROCESSED: "posted, ready to claim: a new, re-posted, handed back or requeued job",
    S.PROCESSING: "in flight: the claim, the fence, the reaper, the limits and the in-flight reads",
    S.PROCESSED: "succeeded: throughput, history and execution times",
    S.ERROR: "an attempt failed and its retry waits for the back-off",
    S.FAULTED: "failed past its attempts: parked for an operator",
    S.FATAL: "failed for good",
    S.CANCELLED: "cancelled by an operator",
}


@dataclass(frozen=True)
class StatusUse:
    """One place the SQL names statuses by number."""

    file: str
    line: int
    text: str
    codes: tuple[int, ...]
    is_list: bool

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.text}"


_NUMBERS = r"\(\s*\d+(?:\s*,\s*\d+)*\s*\)"
_STATUS = r"\b[\w.]*status\w*"
#: how the SQL names statuses by number
PATTERNS = (
    # task_status = 2, r.task_status + 0 = 2, status <> 7, task_status IN (4, 5, 6)
    re.compile(
        rf"{_STATUS}\s*(?:\+\s*0\s*)?(?:=|<>|!=|(?:NOT\s+)?IN)\s*(?P<codes>{_NUMBERS}|\d+\b)",
        re.IGNORECASE,
    ),
    # a queue row without its result row counts as coalesce(r.task_status, 1)
    re.compile(rf"coalesce\(\s*{_STATUS}\s*,\s*(?P<codes>\d+)\s*\)", re.IGNORECASE),
    # task_status = CASE WHEN ... THEN 1 ... ELSE 4 END
    re.compile(rf"{_STATUS}\s*=\s*CASE\b(?P<case>.*?)\bEND\b", re.IGNORECASE | re.DOTALL),
    # 2 = ANY(%(statuses)s::integer[])
    re.compile(r"\b(?P<codes>\d+)\s*=\s*ANY\(\s*%\(statuses\)s", re.IGNORECASE),
)
_CASE_RESULT = re.compile(r"\b(?:THEN|ELSE)\s+(\d+)\b", re.IGNORECASE)


def _without_comments(text: str) -> str:
    """The SQL with each ``--`` comment blanked (same length, so line numbers hold)."""
    return re.sub(r"--[^\n]*", lambda m: " " * len(m.group()), text)


def status_uses(name: str, text: str) -> list[StatusUse]:
    """Every place ``text`` names statuses by number."""
    sql = _without_comments(text)
    uses = []
    for pattern in PATTERNS:
        for m in pattern.finditer(sql):
            if "case" in m.groupdict() and m.group("case") is not None:
                codes = tuple(int(n) for n in _CASE_RESULT.findall(m.group("case")))
                is_list = False
            else:
                codes = tuple(int(n) for n in re.findall(r"\d+", m.group("codes")))
                is_list = m.group("codes").startswith("(")
            line = sql.count("\n", 0, m.start()) + 1
            text_ = " ".join(m.group().split())
            uses.append(StatusUse(name, line, text_, codes, is_list))
    return uses


def _shipped_sql() -> list[StatusUse]:
    root = sql_root()
    uses = []
    for folder in ("queries", "schema"):
        for path in sorted((root / folder).glob("*.sql")):
            name = f"{folder}/{path.name}"
            uses += status_uses(name, path.read_text(encoding="utf-8"))
    return uses


USES = _shipped_sql()


def _ids(uses: list[StatusUse]) -> list[str]:
    return [str(u) for u in uses]


def test_the_reader_finds_the_status_numbers_of_the_sql() -> None:
    """Not a vacuous pass: the places every reader of the SQL knows are found."""
    found = {(u.file, u.codes) for u in USES}
    assert ("queries/failure_groups.sql", (4, 5, 6)) in found
    assert ("queries/claim.sql", (2,)) in found
    assert ("queries/reap.sql", (1, 7, 5, 4)) in found  # the CASE that ends a hung attempt
    assert ("schema/140_skconsole_selection.sql", (1,)) in found  # coalesce(r.task_status, 1)
    assert ("queries/ops_cancel.sql", (2,)) in found  # 2 = ANY(%(statuses)s)
    assert ("schema/100_skconsole_interop.sql", (2,)) in found
    assert len(USES) >= 60


@pytest.mark.parametrize("use", USES, ids=_ids(USES))
def test_every_status_number_in_the_sql_is_a_job_status(use: StatusUse) -> None:
    unknown = [c for c in use.codes if c not in set(JobStatus)]
    assert not unknown, f"{use}: {unknown} is no JobStatus code"
    assert S.UNKNOWN not in use.codes, f"{use}: 0 Unknown is never a status the SQL means"


LISTS = [u for u in USES if u.is_list]


@pytest.mark.parametrize("use", LISTS, ids=_ids(LISTS))
def test_every_list_of_statuses_in_the_sql_is_a_set_the_python_side_names(use: StatusUse) -> None:
    spelled = frozenset(JobStatus(c) for c in use.codes)
    assert spelled in SETS, (
        f"{use}: {sorted(spelled)} is none of the sets of core/status.py that SETS lists;"
        " use one (or name the new set in core/status.py and here, saying what it means)"
    )
    assert len(spelled) == len(use.codes), f"{use}: a status is listed twice"


def test_every_set_and_number_named_here_is_one_the_sql_uses() -> None:
    """The specification says what the SQL holds, no more: a set it stopped using goes."""
    lists = {frozenset(JobStatus(c) for c in u.codes) for u in LISTS}
    assert lists == set(SETS)
    singles = {JobStatus(c) for u in USES if not u.is_list for c in u.codes}
    assert singles == set(SINGLE)


def test_a_failure_filter_in_the_sql_is_what_python_calls_failed() -> None:
    """The failure groups (SQL) and a failure group's statuses (Python) are the same jobs."""
    for name in ("failure_groups", "failure_jobs", "history", "ops_resolve_group"):
        spelled = {
            frozenset(u.codes) for u in USES if u.file == f"queries/{name}.sql" and u.is_list
        }
        assert spelled == {frozenset(FAILED)}, name


@pytest.mark.parametrize(
    ("text", "codes"),
    [
        ("WHERE r.task_status IN (4, 5, 7)", (4, 5, 7)),
        ("AND r.task_status + 0 = 2", (2,)),
        ("WHERE status <> 8 -- IN (1, 2)", (8,)),
        ("SET task_status = CASE WHEN x THEN 1 ELSE 9 END, n = 3", (1, 9)),
        ("coalesce(r.task_status, 1) = ANY(%(statuses)s)", (1,)),
    ],
)
def test_the_reader_reads_each_form_and_skips_comments(text: str, codes: tuple[int, ...]) -> None:
    assert [u.codes for u in status_uses("x.sql", text)] == [codes]


def test_a_wrong_number_or_set_would_be_caught() -> None:
    """The checks above, on SQL that gets them wrong."""
    (fault,) = status_uses("x.sql", "WHERE r.task_status IN (4, 5, 7)")
    assert frozenset(JobStatus(c) for c in fault.codes) not in SETS
    (unknown,) = status_uses("x.sql", "WHERE task_status = 8")
    assert 8 not in set(JobStatus) and unknown.codes == (8,)
