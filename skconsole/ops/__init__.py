"""Operator actions: everything the console does, and the CLI commands of the same name.

Each action is a module with ``preview(conn, selection, ...) -> Preview`` and
``execute(conn, selection, *, actor, ids=None, ...) -> ActionResult``:
:mod:`requeue`, :mod:`bump`, :mod:`purge`, :mod:`reap`, :mod:`cancel`,
:mod:`pause` and :mod:`resume`. Pass ``ids=preview.ids`` to act on exactly
what was shown; the SQL re-checks each job's state, and the result counts the
ones left alone because they changed meanwhile. Every execution writes an
audit row (:mod:`audit`). Writes are refused with ReadOnlyError on a
read-only session, a standby, or a role without write privileges.

Use an autocommit connection (``Database.connect()`` gives one): each batch
commits on its own, so no lock outlives its batch.
"""

from skconsole.ops import audit, bump, cancel, pause, purge, reap, requeue, resume
from skconsole.ops.audit import AuditEntry
from skconsole.ops.guard import ensure_writable
from skconsole.ops.model import (
    BATCH_SIZE,
    ActionResult,
    Actor,
    JobRow,
    Preview,
    ProgressCallback,
    Selection,
)

__all__ = [
    "BATCH_SIZE",
    "ActionResult",
    "Actor",
    "AuditEntry",
    "JobRow",
    "Preview",
    "ProgressCallback",
    "Selection",
    "audit",
    "bump",
    "cancel",
    "ensure_writable",
    "pause",
    "purge",
    "reap",
    "requeue",
    "resume",
]
