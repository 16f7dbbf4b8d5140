"""A fixed incident for the console at a past minute (``--at``, ``--bundle``) in the
snapshot tests and screenshots: the night of the frozen clock, 02:30 to 03:30, when the
mail provider refused mail from 02:41 on (a spike at 02:47), two of the four workers
went at 02:44 and the mail queue grew until 03:00, then drained.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta

from skconsole.core.latency import Histogram, bucket_of
from skconsole.read.incident import AuditLine, Incident, SampleError, SeenWorker
from skconsole.read.past import Book, Gauge
from skconsole.read.record import Counts, RecordSource
from skconsole.tui.model import AuditRow
from skconsole.tui.past_source import BundleBooks, when
from skconsole.tui.showcase.frozen import FROZEN_AT, fixed_id

MINUTE = timedelta(minutes=1)
#: the minute the fixed past opens on: the worst of the incident
INCIDENT_AT = FROZEN_AT.replace(hour=2, minute=47)
SINCE = FROZEN_AT.replace(hour=2, minute=30)
UNTIL = FROZEN_AT.replace(hour=3, minute=30)
SMTP_SIG = "smtplib.SMTPDataError: (<n>, b'4.7.0 Try again later')"
PDF_SIG = "InvoiceRenderError: template <*> missing field 'vat_id'"
TYPES = ("invoice.render", "mail.send", "report.build")


def _hist(ms: float, n: int, spread: int = 2) -> Histogram:
    """``n`` times around ``ms``: spread over a few buckets, the max a little above."""
    if n <= 0:
        return Histogram()
    b = bucket_of(ms)
    counts = [0] * (b + spread + 1)
    for i in range(n):
        counts[b + (i % (spread + 1))] += 1
    return Histogram(tuple(counts), ms * 2.2)


def _smtp_failures(at: datetime) -> int:
    """SMTP refusals per minute: from 02:41, worst at 02:47, over by 03:05."""
    m = int((at - INCIDENT_AT) / MINUTE)
    if m < -6 or m > 18:
        return 0
    return max(0, 140 - abs(m) * 12) if m <= 0 else max(0, 140 - m * 8)


def _mail_waiting(at: datetime) -> int:
    m = int((at - INCIDENT_AT) / MINUTE)
    if m < -6:
        return 20
    if m <= 13:
        return 20 + (m + 6) * 95
    return max(15, 20 + 19 * 95 - (m - 13) * 160)


def fixed_book() -> Book:
    """The record and the gauges of 01:30 to 03:30."""
    since, until = SINCE - timedelta(hours=1), UNTIL
    by_type: dict[str, dict[datetime, Counts]] = {t: {} for t in TYPES}
    by_signature: dict[tuple[str, str], dict[datetime, Counts]] = {
        ("mail.send", SMTP_SIG): {},
        ("invoice.render", PDF_SIG): {},
    }
    gauges: list[Gauge] = []
    at = since
    while at < until:
        i = int((at - since) / MINUTE)
        smtp = _smtp_failures(at)
        mail_ok = max(0, 180 - smtp) if smtp else 180
        by_type["mail.send"][at] = Counts(
            posted=190 + (i % 7) * 3,
            started=mail_ok + smtp,
            succeeded=mail_ok,
            failed_recoverable=smtp - smtp // 9,
            failed_faulted=smtp // 9,
            wait=_hist(40.0 + 25 * _mail_waiting(at), mail_ok + smtp),
            run=_hist(180.0 + 6 * smtp, mail_ok + smtp),
        )
        if smtp:
            by_signature[("mail.send", SMTP_SIG)][at] = Counts(
                failed_recoverable=smtp - smtp // 9, failed_faulted=smtp // 9
            )
        pdf = 2 if i % 9 == 0 else 0
        by_type["invoice.render"][at] = Counts(
            posted=40,
            started=40,
            succeeded=40 - pdf,
            failed_fatal=pdf,
            wait=_hist(12.0, 40),
            run=_hist(850.0, 40),
        )
        if pdf:
            by_signature[("invoice.render", PDF_SIG)][at] = Counts(failed_fatal=pdf)
        if i % 15 == 0:
            by_type["report.build"][at] = Counts(
                posted=1, started=1, succeeded=1, wait=_hist(5.0, 1), run=_hist(41_000.0, 1)
            )
        workers = 2 if INCIDENT_AT - 3 * MINUTE <= at < INCIDENT_AT + 18 * MINUTE else 4
        mail, invoice = _mail_waiting(at), 6 + i % 5
        running = (workers * 4, 3, 1 if i % 15 < 2 else 0)
        gauges += [
            Gauge(at, "", mail + invoice, 12, sum(running), workers, False),
            Gauge(at, "invoice.render", invoice, 0, running[1], None, False),
            Gauge(at, "mail.send", mail, 12, running[0], None, False),
            Gauge(at, "report.build", 0, 0, running[2], None, False),
        ]
        at += MINUTE
    return Book(
        since,
        until,
        RecordSource.RECORD,
        since - timedelta(days=13),
        by_type,
        by_signature,
        tuple(gauges),
    )


def fixed_incident() -> Incident:
    """The bundle ``skconsole incident export --since 02:30 --until 03:30`` would write."""
    return Incident(
        SINCE,
        UNTIL,
        FROZEN_AT,
        "ops@db.prod.example:5432/queue",
        fixed_book(),
        (
            SampleError(
                SMTP_SIG,
                fixed_id(901),
                2,
                INCIDENT_AT + timedelta(seconds=31),
                4,
                "mail.send",
                'Traceback (most recent call last):\n  File "mail.py", line 88, in send\n'
                "smtplib.SMTPDataError: (451, b'4.7.0 Try again later')",
            ),
            SampleError(
                PDF_SIG,
                fixed_id(902),
                1,
                INCIDENT_AT - timedelta(minutes=4),
                6,
                "invoice.render",
                "InvoiceRenderError: template eu-b2b missing field 'vat_id'",
            ),
        ),
        (
            AuditLine(
                5012,
                INCIDENT_AT + timedelta(minutes=6, seconds=12),
                "console (maria@ops-laptop)",
                "pause",
                "pause type mail.send",
                0,
            ),
            AuditLine(
                5013,
                INCIDENT_AT + timedelta(minutes=21),
                "console (maria@ops-laptop)",
                "resume",
                "resume type mail.send",
                0,
            ),
            AuditLine(
                5009,
                INCIDENT_AT - timedelta(minutes=40),
                "cli (deploy@ci-runner-3)",
                "bump",
                "bump 12 jobs of report.build to run now",
                12,
            ),
        ),
        tuple(
            SeenWorker(
                fixed_id(700 + n),
                f"worker-{n}",
                f"mail-worker-{n}.prod",
                4100 + n,
                ("mail.send", "invoice.render", "report.build"),
                SINCE - timedelta(hours=6),
                INCIDENT_AT - timedelta(minutes=3) if n > 2 else UNTIL,
                None,
                "2.14.1",
            )
            for n in (1, 2, 3, 4)
        ),
    )


class FixedBooks:
    """The fixed book as a database's past would serve it (``skconsole --at 02:47``): no
    database, the same minutes."""

    def __init__(self, book: Book, description: str) -> None:
        self.book = book
        self.description = description
        self.connection = f"host=db.prod.example dbname=queue (the record, {description})"

    def book_around(self, at: datetime) -> Book:
        return self.book

    def audit(self, at: datetime) -> tuple[AuditRow, ...]:
        return BundleBooks(fixed_incident(), "fixed").audit(at)

    def samples(self) -> Mapping[str, str]:
        return {}

    def bounds(self) -> tuple[datetime, datetime]:
        return self.book.since, self.book.until - MINUTE

    def bounds_text(self) -> str:
        first, last = self.bounds()
        return f"the record, {when(first)} to {when(last)}"

    def close(self) -> None:
        pass
