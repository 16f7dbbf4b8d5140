"""``Job.another``: the copies ``enqueue --count`` posts, made without checking again."""

from __future__ import annotations

import uuid

import pytest

from skconsole.core.errors import InvalidJobError
from skconsole.producer import Job


def test_a_copy_of_a_job_has_a_new_id_and_the_same_contents() -> None:
    job = Job("bulk.copy", {"a": 1}, priority=3, delay=2.0, source="me")
    twin = job.another()

    assert twin.task_id != job.task_id and isinstance(twin.task_id, uuid.UUID)
    assert (twin.task_type, twin.payload_json, twin.priority, twin.delay, twin.source) == (
        "bulk.copy",
        '{"a":1}',
        3,
        2.0,
        "me",
    )


def test_a_keyed_job_cannot_be_copied() -> None:
    with pytest.raises(InvalidJobError, match="keyed job"):
        Job("bulk.copy", key="k").another()
