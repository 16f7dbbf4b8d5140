"""``skconsole check``: the queue's health as one verdict, the Nagios plugin way.

Four checks, each a pure function over read models (so each rule is tested on
made-up data), and :func:`evaluate` to combine them:

- ``slo`` (:func:`check_slos`): a type whose oldest ready job has waited past
  its SLO is CRITICAL; within 20% of it, WARNING (thresholds:
  :func:`skconsole.read.flow.slo_state`). A paused type's breach is only a WARNING:
  an operator stopped it on purpose, and the pause is what to look at.
  A type with a max failure rate (``slo set --max-failure-rate``) whose jobs
  finished in the last 5 minutes failed (5 Faulted, 6 Fatal) more often than
  that is a WARNING; more than twice as often, or every one, CRITICAL
  (:func:`skconsole.read.flow.failure_state`; judged from
  ``FAILURE_RATE_MIN_FINISHED`` finished jobs, and a paused type's only a
  WARNING, as above).
- ``hung`` (:func:`check_hung`): jobs ``sk_inflight_tasks()`` calls hung
  (their worker's lease lapsed, or it is gone) are a WARNING from
  ``Thresholds.hung_warn`` of them: any live worker's reaper puts such a job
  back within seconds of its lease lapsing. One still hung after
  ``hung_critical_s`` (its worker silent that long) is CRITICAL: then nothing
  is reaping, i.e. no live worker runs upkeep.
- ``workers`` (:func:`check_workers`): a worker whose lease lapsed while it
  still holds jobs is CRITICAL (it died or hangs mid-job); ready jobs of an
  unpaused type that no alive worker runs are a WARNING (a worker that does
  not register, such as a Stakhanovise.NET one, would not be seen).
- ``replication`` (:func:`check_replication`): after a failover, claims are held
  until every execution the old primary handed out has stopped (lease + margin):
  a WARNING while they are, which says when the failover was and to which
  timeline (the summary names a failover of the last day); a server whose
  ``synchronous_standby_names`` waits for a standby that is not connected is
  CRITICAL: every commit waits, posts and claims alike.
- ``health`` (:func:`check_health`): the table-health read model's advice on
  the xmin horizon held, tables mostly dead and long lock waits
  (:data:`HEALTH_RULES`) is a WARNING each: it slows the queue down before it
  stops it.

``--skip CHECK`` leaves a check out, its perfdata with it: ``workers`` on a queue
whose consumers are Stakhanovise.NET processes (they register nowhere, so every
type they run would read as unserved), or ``health`` for a role that should not
read the statistics views.

The output follows the Nagios plugin convention: one summary line
(``SKCONSOLE CRITICAL - 1 SLO breached (emails.send: oldest ready 95s > 30s) |
perfdata``), then one line per finding; exit 0 OK, 1 WARNING, 2 CRITICAL,
3 UNKNOWN (the database cannot be reached, or its schema is missing, or no
answer came within the bound).
Every line passes through :func:`skconsole.core.text.printable`, and a ``|`` in a
task type is escaped, so text from the database can neither reach a terminal
raw nor cut the line where the perfdata begins.

A monitoring read must answer on time, or say it cannot see: the bound it runs
within (:func:`within`, :func:`bounded_session`, :class:`TimedOut`) is
:mod:`skconsole.check.bounds`, named here too for the faces that import it from here.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import psycopg

from skconsole import read
from skconsole.check.bounds import READ_TIMEOUT_BOUNDS_S as READ_TIMEOUT_BOUNDS_S
from skconsole.check.bounds import READ_TIMEOUT_S as READ_TIMEOUT_S
from skconsole.check.bounds import SessionBounds as SessionBounds
from skconsole.check.bounds import TimedOut as TimedOut
from skconsole.check.bounds import Watch as Watch
from skconsole.check.bounds import bounded_session as bounded_session
from skconsole.check.bounds import within as within
from skconsole.core.durations import format_age
from skconsole.core.errors import SkconsoleError
from skconsole.core.json_types import JsonObject, attributes
from skconsole.core.text import printable
from skconsole.db.layout import has_skconsole_objects
from skconsole.read import health as health_model
from skconsole.read.flow import (
    FAILURE_RATE_CRITICAL_FACTOR,
    SLO_WARN_SHARE,
    SloState,
    TypeFlow,
    flow,
    percent_text,
)

Conn = psycopg.Connection[Any]

#: What the summary line starts with: the service name, as Nagios plugins print it.
SERVICE = "SKCONSOLE"
#: The health advice rules check reports: what the queue's state says now (a held
#: xmin horizon, tables mostly dead, long lock waits). "autovacuum_off" is left to
#: `skconsole status health`: a setting, not a state, and a server run that way on
#: purpose would stay WARNING for good, which teaches people to ignore the check.
HEALTH_RULES = ("horizon_session", "horizon_prepared", "horizon_slot", "dead_rows", "lock_wait")
#: The checks, in the order they are reported; ``--skip`` takes these names.
CHECKS = ("slo", "hung", "workers", "health", "schedules", "replication", "breakers")
#: a failover this recent is named in the replication check's summary
FAILOVER_NAMED_S = 86_400.0
#: Findings named in the summary line per check; the rest are counted ("...").
SUMMARY_FINDINGS = 3


class Level(enum.IntEnum):
    """A check's verdict; its value is the exit code (Nagios plugin convention)."""

    OK = 0
    WARNING = 1
    CRITICAL = 2
    UNKNOWN = 3

    def as_dict(self) -> JsonObject:
        """The verdict as a finding's or a check's JSON holds it: its number and its name."""
        return {"status": int(self), "status_name": self.name}


@dataclass(frozen=True)
class Thresholds:
    """When the hung check speaks up (the SLOs are the types' own; the health rules take
    :class:`skconsole.read.health.Thresholds`)."""

    #: WARNING from this many hung jobs
    hung_warn: int = 1
    #: CRITICAL when a hung job's worker has been silent this long (nothing reaps it)
    hung_critical_s: float = 600.0


@dataclass(frozen=True)
class Finding:
    """One thing a check found, with its verdict. ``subject``: the task type, worker,
    or advice rule it is about."""

    check: str
    level: Level
    subject: str
    text: str

    def as_dict(self) -> JsonObject:
        return {
            "check": self.check,
            **self.level.as_dict(),
            "subject": self.subject,
            "text": self.text,
        }


@dataclass(frozen=True)
class CheckResult:
    """One check: its verdict (the worst of its findings), a few words, its findings."""

    name: str
    summary: str
    findings: tuple[Finding, ...] = ()

    @property
    def level(self) -> Level:
        return max((f.level for f in self.findings), default=Level.OK)

    def as_dict(self) -> JsonObject:
        return {
            "name": self.name,
            **self.level.as_dict(),
            "summary": self.summary,
            "findings": [f.as_dict() for f in self.findings],
        }


_PLAIN_LABEL = re.compile(r"[A-Za-z0-9_.:-]+")


@dataclass(frozen=True)
class Perf:
    """One performance datum: ``'label'=value[unit];[warn];[crit];[min];[max]``."""

    label: str
    value: float
    unit: str = ""
    warn: float | None = None
    crit: float | None = None
    minimum: float | None = 0.0
    #: the check it belongs to (left out with it)
    check: str = ""

    def render(self) -> str:
        # a label may hold anything but "=" and "'" (doubled inside quotes)
        label = printable(self.label).replace("=", "_").replace("|", "_")
        if not _PLAIN_LABEL.fullmatch(label):
            label = "'" + label.replace("'", "''") + "'"
        fields = [f"{self.value:g}{self.unit}"] + [
            "" if v is None else f"{v:g}" for v in (self.warn, self.crit, self.minimum)
        ]
        return f"{label}={';'.join(fields).rstrip(';')}"

    def as_dict(self) -> JsonObject:
        return {**attributes(self, "label value unit warn crit"), "min": self.minimum}


def _line_text(text: str) -> str:
    """Text fit for a line of plugin output: printable, and no "|" (it starts perfdata)."""
    return printable(text).replace("|", "\\x7c")


@dataclass(frozen=True)
class Report:
    """Every check's result and the perfdata; ``error``: why nothing could be checked
    (then the verdict is UNKNOWN)."""

    checks: tuple[CheckResult, ...] = ()
    perfdata: tuple[Perf, ...] = ()
    error: str | None = None

    @property
    def level(self) -> Level:
        if self.error is not None:
            return Level.UNKNOWN
        return max((c.level for c in self.checks), default=Level.OK)

    @property
    def exit_code(self) -> int:
        return int(self.level)

    def summary_line(self) -> str:
        """The first line: ``SKCONSOLE LEVEL - what is wrong (worst first) | perfdata``."""
        perf = " ".join(p.render() for p in self.perfdata)
        if self.error is not None:
            return self.headline()
        return self.headline() + (f" | {perf}" if perf else "")

    def headline(self) -> str:
        """The first line without its perfdata: ``SKCONSOLE LEVEL - what is wrong``."""
        head = f"{SERVICE} {self.level.name} - "
        if self.error is not None:
            return head + _line_text(self.error)
        failing = sorted((c for c in self.checks if c.level > Level.OK), key=lambda c: -c.level)
        if failing:
            parts = []
            for c in failing:
                named = [f.text for f in c.findings if f.level == c.level]
                more = len(named) - SUMMARY_FINDINGS
                listed = "; ".join(named[:SUMMARY_FINDINGS]) + (
                    f"; {more} more" if more > 0 else ""
                )
                parts.append(f"{c.summary} ({listed})")
            text = ", ".join(parts)
        else:
            text = ", ".join(c.summary for c in self.checks)
        return head + _line_text(text)

    def detail_lines(self) -> list[str]:
        """One line per finding, worst first: ``CRITICAL slo: emails.send: ...``."""
        findings = sorted((f for c in self.checks for f in c.findings), key=lambda f: -int(f.level))
        return [_line_text(f"{f.level.name} {f.check}: {f.text}") for f in findings]

    def lines(self) -> list[str]:
        return [self.summary_line(), *self.detail_lines()]

    def as_dict(self) -> JsonObject:
        return {
            "status": self.exit_code,
            "status_name": self.level.name,
            "summary": self.summary_line(),
            "error": self.error,
            "checks": [c.as_dict() for c in self.checks],
            "perfdata": [p.as_dict() for p in self.perfdata],
        }


def _plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


# -- the checks ------------------------------------------------------------------------
def check_slos(flows: Sequence[TypeFlow]) -> CheckResult:
    """The types' SLOs against their oldest ready job (see the module's docstring)."""
    findings = []
    with_slo = [f for f in flows if f.slo_max_wait_s is not None]
    for f in with_slo:
        state, slo, oldest = f.slo_state, f.slo_max_wait_s, f.oldest_ready_s
        if state is SloState.BREACHED:
            assert slo is not None and oldest is not None
            text = f"{f.task_type}: oldest ready {format_age(oldest)} > {format_age(slo)}"
            if f.paused:
                findings.append(Finding("slo", Level.WARNING, f.task_type, text + " (paused)"))
            else:
                findings.append(Finding("slo", Level.CRITICAL, f.task_type, text))
        elif state is SloState.WARNING:
            assert slo is not None and oldest is not None
            findings.append(
                Finding(
                    "slo",
                    Level.WARNING,
                    f.task_type,
                    f"{f.task_type}: oldest ready {format_age(oldest)}, within"
                    f" {1 - SLO_WARN_SHARE:.0%} of its SLO {format_age(slo)}"
                    f" ({f.slo_text})",
                )
            )
    with_rate = [f for f in flows if f.slo_max_failure_rate is not None]
    for f in with_rate:
        finding = _failure_finding(f)
        if finding is not None:
            findings.append(finding)
    breached = sum(1 for f in findings if f.level == Level.CRITICAL)
    near = len(findings) - breached
    slos = len(with_slo) + len(with_rate)
    if breached:
        summary = f"{_plural(breached, 'SLO')} breached"
    elif near:
        summary = f"{_plural(near, 'SLO')} at risk"
    elif slos:
        summary = f"{_plural(slos, 'SLO')} met"
    else:
        summary = "no SLO set"
    return CheckResult("slo", summary, tuple(findings))


def _failure_finding(f: TypeFlow) -> Finding | None:
    """A type's failure rate over its max: WARNING; BREACHED (over twice it, or all
    failing): CRITICAL, but a paused type's only a WARNING."""
    state, rate, limit = f.failure_state, f.failure_rate, f.slo_max_failure_rate
    if state not in (SloState.WARNING, SloState.BREACHED):
        return None
    assert rate is not None and limit is not None
    text = (
        f"{f.task_type}: {f.failures:,} of {f.finished:,} jobs failed in the last"
        f" {format_age(f.window_s)} ({percent_text(rate)}"
    )
    if state is SloState.BREACHED:
        over = f" > {FAILURE_RATE_CRITICAL_FACTOR:g}x its max {percent_text(limit)})"
        if f.paused:
            return Finding("slo", Level.WARNING, f.task_type, text + over + " (paused)")
        return Finding("slo", Level.CRITICAL, f.task_type, text + over)
    return Finding("slo", Level.WARNING, f.task_type, text + f" > max {percent_text(limit)})")


def check_schedules(schedules: Sequence[read.ScheduleInfo]) -> CheckResult:
    """A published schedule that no live worker has (removed from the code, or all its
    workers gone) posts no tick: WARNING, as nothing that ran on it runs any more. A
    paused one is meant to post none."""
    findings = tuple(
        Finding(
            "schedules",
            Level.WARNING,
            s.task_type,
            f"{s.task_type}: {s.schedule}, but no running worker schedules it"
            " (removed from the code, or its workers are gone)",
        )
        for s in schedules
        if s.orphaned and not s.paused
    )
    if findings:
        summary = f"{_plural(len(findings), 'schedule')} no worker has"
    else:
        summary = f"{_plural(len(schedules), 'schedule')} kept" if schedules else "no schedule"
    return CheckResult("schedules", summary, findings)


def check_breakers(breakers: Sequence[read.Breaker]) -> CheckResult:
    """A circuit breaker holding jobs back is a WARNING: the queue is degraded on purpose
    (a partner is failing), and someone should know it is open, and for how long."""
    findings = tuple(
        Finding(
            "breakers",
            Level.WARNING,
            b.task_type,
            f"{b.task_type}: breaker #{b.breaker_id} on {b.signature!r} is {b.status_line}",
        )
        for b in breakers
        if b.state.holds
    )
    if findings:
        summary = f"{_plural(len(findings), 'breaker')} holding jobs back"
    else:
        summary = f"{_plural(len(breakers), 'breaker')} closed"
    return CheckResult("breakers", summary, findings)


def _silent_s(job: read.InflightJob) -> float | None:
    """How long the job's worker has said nothing: its heartbeat's age, or, with no
    worker known (gone, or none recorded), how long the job has been processing."""
    return job.heartbeat_age_s if job.heartbeat_age_s is not None else job.running_s


def check_hung(inflight: read.Inflight, thresholds: Thresholds | None = None) -> CheckResult:
    """Hung jobs: WARNING from ``hung_warn`` of them, CRITICAL when one has been hung for
    ``hung_critical_s`` (``inflight`` lists hung jobs first, so its row cap keeps them)."""
    limits = thresholds or Thresholds()
    findings = []
    hung = [j for j in inflight.jobs if j.hung]
    stale = [j for j in hung if (_silent_s(j) or 0.0) >= limits.hung_critical_s]
    for j in stale:
        findings.append(
            Finding(
                "hung",
                Level.CRITICAL,
                j.task_type,
                f"job {j.task_id} ({j.task_type}) hung for over"
                f" {format_age(limits.hung_critical_s)}, nothing reaps it: {j.hung_reason}",
            )
        )
    if inflight.hung >= limits.hung_warn:
        critical = {j.task_id for j in stale}
        by_type: dict[str, list[read.InflightJob]] = {}
        for j in hung:
            if j.task_id not in critical:
                by_type.setdefault(j.task_type, []).append(j)
        for task_type, jobs in sorted(by_type.items()):
            findings.append(
                Finding(
                    "hung",
                    Level.WARNING,
                    task_type,
                    f"{task_type}: {_plural(len(jobs), 'hung job')} ({jobs[0].hung_reason})",
                )
            )
    summary = f"{_plural(inflight.hung, 'hung job')}" if inflight.hung else "no hung job"
    return CheckResult("hung", summary, tuple(findings))


def check_workers(
    workers: Sequence[read.WorkerInfo] | None, flows: Sequence[TypeFlow]
) -> CheckResult:
    """Dead workers holding jobs (CRITICAL); ready jobs no alive worker runs (WARNING:
    :func:`skconsole.read.unserved_types`, the rule the console's panels follow too).
    ``workers`` None: there is no registry to judge (Stakhanovise.NET's tables alone)."""
    if workers is None:
        return CheckResult("workers", "no worker registry (Stakhanovise.NET tables only)", ())
    findings = []
    for w in workers:
        if w.state.lease_lapsed and w.in_flight > 0:
            findings.append(
                Finding(
                    "workers",
                    Level.CRITICAL,
                    str(w.worker_id),
                    f"worker {w.host} pid {w.pid} {w.state.value} (no heartbeat for"
                    f" {format_age(w.heartbeat_age_s)}) holding {_plural(w.in_flight, 'job')}",
                )
            )
    alive = [w for w in workers if w.alive]
    unserved = set(read.unserved_types(workers, flows))
    for f in flows:
        if f.task_type in unserved:
            findings.append(
                Finding(
                    "workers",
                    Level.WARNING,
                    f.task_type,
                    f"{f.task_type}: {f.ready:,} ready, no alive worker runs it",
                )
            )
    dead = sum(1 for f in findings if f.level == Level.CRITICAL)
    if dead:
        summary = f"{_plural(dead, 'dead worker')} holding jobs"
    elif findings:
        summary = f"{_plural(len(findings), 'type')} with no alive worker"
    else:
        summary = f"{_plural(len(alive), 'worker')} alive"
    return CheckResult("workers", summary, tuple(findings))


def check_health(h: health_model.Health) -> CheckResult:
    """The table-health read model's advice on the queue's state (HEALTH_RULES), each a
    WARNING."""
    findings = tuple(
        Finding("health", Level.WARNING, a.rule, a.text) for a in h.advice if a.rule in HEALTH_RULES
    )
    summary = f"{_plural(len(findings), 'health warning')}" if findings else "tables healthy"
    return CheckResult("health", summary, findings)


def check_replication(r: read.Replication) -> CheckResult:
    """A failover's hold on claims, or one no worker has reached yet (WARNING); a
    synchronous standby missing (CRITICAL)."""
    findings = []
    last = r.last_failover
    if r.mode is read.ReplicationMode.STALLED:
        findings.append(Finding("replication", Level.CRITICAL, "synchronous_standby", r.says()))
    if r.unseen_failover:
        note = r.failover_note() or ""
        findings.append(Finding("replication", Level.WARNING, f"timeline {r.timeline}", note))
    elif last is not None and last.held:
        findings.append(
            Finding(
                "replication",
                Level.WARNING,
                f"timeline {last.timeline}",
                f"{last.text()}: no job is claimed until every execution the old primary"
                " handed out has stopped",
            )
        )
    timeline = f"timeline {r.timeline}" if r.timeline is not None else "timeline unknown"
    summary = f"{r.mode.value} replication, {timeline}"
    if r.unseen_failover:
        summary = f"a failover to timeline {r.timeline} no worker has reached yet"
    elif last is not None and last.held:
        summary = f"claims held after a failover to timeline {last.timeline}"
    elif last is not None and last.age_s < FAILOVER_NAMED_S:
        summary += f" (a failover {format_age(last.age_s)} ago)"
    return CheckResult("replication", summary, tuple(findings))


def perfdata(
    flows: Sequence[TypeFlow],
    inflight: read.Inflight,
    workers: Sequence[read.WorkerInfo] | None,
    thresholds: Thresholds,
) -> tuple[Perf, ...]:
    """The oldest ready job's age of each type with a max wait and the failure rate (%)
    of each with a max failure rate (warn and crit from them), the hung jobs, and the
    alive and dead workers."""
    perf = [
        Perf(
            f"oldest_ready_{f.task_type}",
            round(f.oldest_ready_s or 0.0, 3),
            "s",
            warn=round(SLO_WARN_SHARE * f.slo_max_wait_s, 3),
            crit=f.slo_max_wait_s,
            check="slo",
        )
        for f in flows
        if f.slo_max_wait_s is not None
    ]
    perf += [
        Perf(
            f"failure_rate_{f.task_type}",
            round(100.0 * (f.failure_rate or 0.0), 3),
            "%",
            warn=round(100.0 * f.slo_max_failure_rate, 3),
            crit=round(
                min(100.0, 100.0 * FAILURE_RATE_CRITICAL_FACTOR * f.slo_max_failure_rate), 3
            ),
            check="slo",
        )
        for f in flows
        if f.slo_max_failure_rate is not None
    ]
    perf.append(Perf("hung_jobs", inflight.hung, warn=thresholds.hung_warn, check="hung"))
    if workers is not None:
        dead = sum(1 for w in workers if w.state.lease_lapsed and w.in_flight > 0)
        perf += [
            Perf("alive_workers", sum(1 for w in workers if w.alive), check="workers"),
            Perf("dead_workers", dead, crit=1, check="workers"),
        ]
    return tuple(perf)


def skipped(names: Sequence[str]) -> frozenset[str]:
    """The checks ``--skip`` names, refused when one is unknown or none would be left."""
    unknown = [n for n in names if n not in CHECKS]
    if unknown:
        raise SkconsoleError(f"--skip: no check {unknown[0]!r} (the checks: {', '.join(CHECKS)})")
    if set(names) >= set(CHECKS):
        raise SkconsoleError("--skip: every check is left out, nothing would be checked")
    return frozenset(names)


def evaluate(
    flows: Sequence[TypeFlow],
    inflight: read.Inflight,
    workers: Sequence[read.WorkerInfo] | None,
    table_health: health_model.Health | None,
    thresholds: Thresholds | None = None,
    skip: frozenset[str] = frozenset(),
    schedules: Sequence[read.ScheduleInfo] = (),
    replication: read.Replication | None = None,
    breakers: Sequence[read.Breaker] = (),
) -> Report:
    """Every check over the read models given but those in ``skip`` (pure: no database);
    ``workers`` None: no worker registry to judge; ``table_health`` and ``replication``
    None: only when their check is skipped."""
    limits = thresholds or Thresholds()
    results = []
    if "slo" not in skip:
        results.append(check_slos(flows))
    if "hung" not in skip:
        results.append(check_hung(inflight, limits))
    if "workers" not in skip:
        results.append(check_workers(workers, flows))
    if "health" not in skip and table_health is not None:
        results.append(check_health(table_health))
    if "schedules" not in skip:
        results.append(check_schedules(schedules))
    if "breakers" not in skip and breakers:  # a queue with no breaker says nothing of them
        results.append(check_breakers(breakers))
    perf = perfdata(flows, inflight, workers, limits)
    if "replication" not in skip and replication is not None:
        results.append(check_replication(replication))
        held = replication.last_failover.held_for_s if replication.last_failover else 0.0
        perf += (Perf("claims_held", round(held, 3), "s", check="replication"),)
    return Report(tuple(results), tuple(p for p in perf if p.check not in skip))


@dataclass(frozen=True)
class Models:
    """The read models a verdict is made of, as one check read them (a skipped check's
    model is not read: ``workers`` None, ``table_health`` None, no schedules,
    ``replication`` None)."""

    flows: tuple[TypeFlow, ...]
    inflight: read.Inflight
    workers: tuple[read.WorkerInfo, ...] | None
    table_health: health_model.Health | None
    schedules: tuple[read.ScheduleInfo, ...]
    replication: read.Replication | None
    breakers: tuple[read.Breaker, ...] = ()

    def evaluate(
        self, thresholds: Thresholds | None = None, skip: frozenset[str] = frozenset()
    ) -> Report:
        return evaluate(
            self.flows,
            self.inflight,
            self.workers,
            self.table_health,
            thresholds,
            skip,
            self.schedules,
            self.replication,
            self.breakers,
        )


def read_models(
    conn: Conn,
    health_thresholds: health_model.Thresholds | None = None,
    skip: frozenset[str] = frozenset(),
    watch: Watch | None = None,
) -> Models:
    """What a check reads (reads only: works on a read-only session, and on
    Stakhanovise.NET's tables alone, whose workers register nowhere); a skipped check's
    model is not read (``health`` reads the statistics views). ``watch``: the bound it
    runs within (:func:`within`), told what it reads, so a timeout says where it hung.
    The console's overview of several queues reads each one through this too."""
    at = watch.at if watch is not None else (lambda stage: None)
    at("reading the flow of each task type")
    flows = flow(conn)
    at("reading the jobs in flight")
    inflight = read.inflight(conn)
    read_workers = "workers" not in skip and has_skconsole_objects(conn)
    at("reading the workers")
    workers = read.workers(conn) if read_workers else None
    at("reading the queue tables' health")
    table_health = None if "health" in skip else health_model.health(conn, limits=health_thresholds)
    at("reading the schedules")
    schedules = () if "schedules" in skip else read.schedules(conn)
    at("reading the replication and the last failover")
    replication = None if "replication" in skip else read.replication(conn)
    at("reading the circuit breakers")
    breakers = () if "breakers" in skip else read.breakers(conn)
    return Models(
        tuple(flows),
        inflight,
        None if workers is None else tuple(workers),
        table_health,
        tuple(schedules),
        replication,
        tuple(breakers),
    )


def run(
    conn: Conn,
    thresholds: Thresholds | None = None,
    health_thresholds: health_model.Thresholds | None = None,
    skip: frozenset[str] = frozenset(),
    watch: Watch | None = None,
) -> Report:
    """Read the models (:func:`read_models`) and evaluate them."""
    return read_models(conn, health_thresholds, skip, watch).evaluate(thresholds, skip)


# -- several queues ----------------------------------------------------------------------
#: How bad a verdict is when several queues' are combined, least first: a queue known to
#: be CRITICAL outranks one that could not be checked (the Icinga order of severity).
SEVERITY = (Level.OK, Level.WARNING, Level.UNKNOWN, Level.CRITICAL)


def worst(levels: Sequence[Level]) -> Level:
    """The worst of ``levels`` by :data:`SEVERITY` (OK when there are none)."""
    return max(levels, key=SEVERITY.index, default=Level.OK)


@dataclass(frozen=True)
class QueueReports:
    """One verdict per queue (``skconsole check`` with several queues), in the order the
    queues were named, and the worst of them as the whole check's verdict."""

    reports: tuple[tuple[str, Report], ...]

    @property
    def level(self) -> Level:
        return worst([r.level for _, r in self.reports])

    @property
    def exit_code(self) -> int:
        return int(self.level)

    def summary_line(self) -> str:
        """``SKCONSOLE CRITICAL - billing CRITICAL, search UNKNOWN, emails OK | billing:...``:
        each queue's verdict, the worst first, and every queue's perfdata, its label
        prefixed with the queue's name."""
        ranked = sorted(self.reports, key=lambda nr: -SEVERITY.index(nr[1].level))
        text = ", ".join(f"{name} {r.level.name}" for name, r in ranked)
        perf = " ".join(
            replace(p, label=f"{name}:{p.label}").render()
            for name, r in self.reports
            for p in r.perfdata
        )
        return f"{SERVICE} {self.level.name} - {_line_text(text)}" + (f" | {perf}" if perf else "")

    def lines(self) -> list[str]:
        """The summary line, then each queue's headline and findings, each line prefixed
        with the queue's name."""
        lines = [self.summary_line()]
        for name, r in self.reports:
            prefix = _line_text(name) + ": "
            lines += [prefix + r.headline(), *(prefix + line for line in r.detail_lines())]
        return lines

    def as_list(self) -> list[JsonObject]:
        """Each queue's report (:meth:`Report.as_dict`) keyed by its name (``queue``)."""
        return [{"queue": name, **r.as_dict()} for name, r in self.reports]
