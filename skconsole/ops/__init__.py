"""Operator actions: everything the console does, and the CLI commands of the same name.

Each action is one spec (:mod:`skconsole.ops.spec`; of a kind: :mod:`.job_action`,
:mod:`.type_actions`, :mod:`.server_action`) in a module of its own:
on jobs :data:`REQUEUE`, :data:`BUMP`, :data:`CANCEL`, :data:`REAP`, :data:`PURGE`
and :data:`EDIT`; on a task type :data:`PAUSE` and :data:`RESUME`; a circuit
breaker :data:`BREAKER`; a task type's
settings :data:`LIMIT`, :data:`SLO` and :data:`RETENTION`; on the server
:data:`VACUUM`, :data:`CANCEL_SESSION` and the search
indexes :data:`FIND_INDEX_ADD` and :data:`FIND_INDEX_DROP`. :data:`ACTIONS` lists them all. Every
spec runs the same way::

    preview = ops.REQUEUE.preview(conn, selection, ops.RequeueParams(reset_errors=True))
    result = ops.REQUEUE.execute(conn, preview.selection, params, actor=actor, ids=preview.ids)

Pass ``ids=preview.ids`` to act on exactly what was shown; the SQL re-checks
each job's state, and the result counts the ones left alone because they
changed meanwhile. Every execution writes an audit row (:mod:`audit`) in the
transaction of each batch. Writes are refused with ReadOnlyError on a
read-only session, a standby, or a role without write privileges.

Use an autocommit connection (``Database.connect()`` gives one): each batch
commits on its own, so no lock outlives its batch.
"""

from typing import Any

import skconsole.ops.audit as audit
from skconsole.core.actor import Actor
from skconsole.ops.audit import AuditEntry
from skconsole.ops.breaker import BREAKER, BreakerAction, BreakerCommand, BreakerParams
from skconsole.ops.bump import BUMP, BumpParams
from skconsole.ops.cancel import CANCEL, CancelParams
from skconsole.ops.cancel_session import CANCEL_SESSION, CancelSessionParams
from skconsole.ops.edit import EDIT, EditParams
from skconsole.ops.find_index import FIND_INDEX_ADD, FIND_INDEX_DROP, FindIndexParams
from skconsole.ops.job_action import JobAction
from skconsole.ops.limit import LIMIT, LimitParams, Limits, Rate
from skconsole.ops.model import (
    BATCH_SIZE,
    ActionResult,
    JobRow,
    Preview,
    ProgressCallback,
    Selection,
)
from skconsole.ops.pause import PAUSE
from skconsole.ops.purge import PURGE, PurgeParams
from skconsole.ops.reap import REAP, ReapParams
from skconsole.ops.requeue import REQUEUE, Attempts, RequeueParams
from skconsole.ops.resume import RESUME
from skconsole.ops.retention import RETENTION, RetentionParams
from skconsole.ops.server_action import ServerAction
from skconsole.ops.slo import SLO, SloParams
from skconsole.ops.spec import Confirm, NoParams, Params
from skconsole.ops.type_actions import TypeAction, TypeSetting
from skconsole.ops.vacuum import VACUUM, VacuumParams

#: Any operator action.
OperatorAction = (
    JobAction[Any] | TypeAction | TypeSetting[Any, Any] | ServerAction[Any] | BreakerAction
)

#: Every operator action, in the order help texts list them.
ACTIONS: tuple[OperatorAction, ...] = (
    REQUEUE,
    BUMP,
    CANCEL,
    REAP,
    PURGE,
    PAUSE,
    RESUME,
    LIMIT,
    SLO,
    RETENTION,
    BREAKER,
    EDIT,
    VACUUM,
    CANCEL_SESSION,
    FIND_INDEX_ADD,
    FIND_INDEX_DROP,
)

__all__ = [
    "ACTIONS",
    "BATCH_SIZE",
    "BREAKER",
    "BUMP",
    "CANCEL",
    "CANCEL_SESSION",
    "EDIT",
    "FIND_INDEX_ADD",
    "FIND_INDEX_DROP",
    "LIMIT",
    "PAUSE",
    "PURGE",
    "REAP",
    "REQUEUE",
    "RESUME",
    "RETENTION",
    "SLO",
    "VACUUM",
    "ActionResult",
    "Actor",
    "Attempts",
    "AuditEntry",
    "BreakerAction",
    "BreakerCommand",
    "BreakerParams",
    "BumpParams",
    "CancelParams",
    "CancelSessionParams",
    "Confirm",
    "EditParams",
    "FindIndexParams",
    "JobAction",
    "JobRow",
    "LimitParams",
    "Limits",
    "NoParams",
    "OperatorAction",
    "Params",
    "Preview",
    "ProgressCallback",
    "PurgeParams",
    "Rate",
    "ReapParams",
    "RequeueParams",
    "RetentionParams",
    "Selection",
    "ServerAction",
    "SloParams",
    "TypeAction",
    "TypeSetting",
    "VacuumParams",
    "audit",
]
