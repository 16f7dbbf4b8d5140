"""The grains the per-minute record is rolled at, and which one a read takes.

Each minute's counts are also added into its quarter hour and its hour (aligned to UTC),
so a chart over a day or a week adds a few thousand rows rather than every minute of it
(record_roll.sql); a read takes the coarsest grain that divides its step and its start
(record.sql). Shared by the worker that rolls and the read model that reads.
"""

from __future__ import annotations

from datetime import UTC, datetime

#: minutes per rolled row, finest first
RECORD_GRAINS: tuple[int, ...] = (1, 15, 60)


def aligned(since: datetime, step_s: int) -> datetime:
    """``since`` moved back to a whole number of steps since the epoch (UTC), so that
    steps of a quarter hour or an hour fall on the rolled rows' own spans."""
    epoch = int(since.timestamp())
    return datetime.fromtimestamp(epoch - epoch % step_s, UTC)


def grain_for(step_s: int, since: datetime) -> int:
    """The coarsest grain (minutes) whose rows fit whole in steps of ``step_s`` seconds
    starting at ``since``."""
    start = int(since.timestamp())
    fitting = [g for g in RECORD_GRAINS if step_s % (g * 60) == 0 and start % (g * 60) == 0]
    return max(fitting, default=1)
