"""Posting jobs, from Python (sync or async) and from ``skconsole enqueue``.

``job`` checks a job when it is made; ``plan`` decides how a post is written
(one statement, or binary COPY for many jobs without keys); ``client`` holds
the producers and their atomicity rules. The names load on first use: a worker,
which needs ``job`` alone, imports neither the producers nor the plan.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skconsole.core.lazy import lazy_names

if TYPE_CHECKING:
    from skconsole.producer.client import AsyncProducer, Producer, Progress
    from skconsole.producer.dotnet import dotnet_payload, dotnet_type_name
    from skconsole.producer.job import (
        MAX_DELAY_S,
        MAX_NAME,
        MAX_PAYLOAD_DEPTH,
        MAX_PRIORITY,
        Job,
        PostCounts,
        PostResult,
        default_source,
        job_id_for_key,
        validate_payload_json,
    )
    from skconsole.producer.plan import BATCH_ROWS, COPY_MIN_ROWS, STREAM_CHUNK

__all__ = [
    "BATCH_ROWS",
    "COPY_MIN_ROWS",
    "MAX_DELAY_S",
    "MAX_NAME",
    "MAX_PAYLOAD_DEPTH",
    "MAX_PRIORITY",
    "STREAM_CHUNK",
    "AsyncProducer",
    "Job",
    "PostCounts",
    "PostResult",
    "Producer",
    "Progress",
    "default_source",
    "dotnet_payload",
    "dotnet_type_name",
    "job_id_for_key",
    "validate_payload_json",
]


__getattr__, __dir__ = lazy_names(
    __name__,
    {
        **dict.fromkeys(("AsyncProducer", "Producer", "Progress"), "skconsole.producer.client"),
        **dict.fromkeys(("dotnet_payload", "dotnet_type_name"), "skconsole.producer.dotnet"),
        **dict.fromkeys(("BATCH_ROWS", "COPY_MIN_ROWS", "STREAM_CHUNK"), "skconsole.producer.plan"),
        **dict.fromkeys(
            (
                "MAX_DELAY_S",
                "MAX_NAME",
                "MAX_PAYLOAD_DEPTH",
                "MAX_PRIORITY",
                "Job",
                "PostCounts",
                "PostResult",
                "default_source",
                "job_id_for_key",
                "validate_payload_json",
            ),
            "skconsole.producer.job",
        ),
    },
)
