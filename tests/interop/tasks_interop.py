"""skconsole handlers for the .NET payload types of the interop tier
(``skconsole worker --tasks tests.interop.tasks_interop``).

They run the same task types as the emulated Stakhanovise.NET consumers
(:mod:`tests.interop.dotnet_app`), so both kinds of consumer share one queue.
Every execution is logged with its start and end to ``$SKTEST_LOG_DIR/<pid>.runs``
(:func:`tests.support.tasks_faults.execution`), so a test can tell how often,
and when, each job ran in a skconsole worker.

=====================  ==============================================================
type                   behaviour
=====================  ==============================================================
ChargeCard             sleeps ``SleepMs`` milliseconds (thread), then succeeds
SyncLedger             ``Mode`` "raise": a recoverable exception; "timeout": awaits
                       past its 0.5 s timeout; "fatal": FatalTaskError. Retries wait
                       60 s, so they are left to whoever runs the type next
SendReminder           snoozes 10 minutes (hands the job back, claimable later)
ExportReport           its first attempt fails (a recoverable ReportFailed, retried in
                       60 s); a later one awaits ``SleepMs`` milliseconds, then succeeds
=====================  ==============================================================
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from skconsole.core.errors import FatalTaskError, Snooze
from skconsole.worker.registry import JobContext, TaskOptions, TaskRegistry
from tests.support.tasks_faults import execution

CHARGE_CARD = "Billing.Tasks.ChargeCard"
SYNC_LEDGER = "Billing.Tasks.SyncLedger"
SEND_REMINDER = "Billing.Tasks.SendReminder"
EXPORT_REPORT = "Billing.Tasks.ExportReport"
ASSEMBLY = "Billing"

tasks = TaskRegistry(TaskOptions(max_attempts=5, backoff=60.0, max_backoff=60.0, timeout=30.0))


class LedgerUnavailable(Exception):
    pass


class ReportFailed(Exception):
    pass


@tasks.task(CHARGE_CARD)
def charge_card(payload: Any, ctx: JobContext) -> None:
    with execution(ctx.task_id):
        time.sleep(float(payload.get("SleepMs", 0)) / 1000)


@tasks.task(SYNC_LEDGER, timeout=0.5)
async def sync_ledger(payload: Any, ctx: JobContext) -> None:
    mode = payload.get("Mode")
    if mode == "raise":
        raise LedgerUnavailable(f"ledger {payload.get('LedgerId')} unavailable")
    if mode == "timeout":
        await asyncio.sleep(30)
    if mode == "fatal":
        raise FatalTaskError(f"ledger {payload.get('LedgerId')} does not exist")


@tasks.task(SEND_REMINDER)
async def send_reminder(payload: Any, ctx: JobContext) -> None:
    raise Snooze(600)


@tasks.task(EXPORT_REPORT)
async def export_report(payload: Any, ctx: JobContext) -> None:
    if ctx.error_count == 0:
        raise ReportFailed(f"report {payload.get('ReportId')} failed to render")
    with execution(ctx.task_id):
        await asyncio.sleep(float(payload.get("SleepMs", 0)) / 1000)
