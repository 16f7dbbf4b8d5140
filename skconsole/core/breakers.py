"""What the workers' upkeep and the operator's actions share about circuit breakers
(sql/schema/150_skconsole_breakers.sql), with no database."""

from __future__ import annotations

#: How often each worker's upkeep ticks the breakers (breaker_tick.sql): the longest
#: an armed breaker takes to open past its threshold, an open one to half-open past its
#: cool-down, a half-open one to decide once its canaries ended.
BREAKER_TICK_S = 2.0
#: The rows of a type, in claim order, that a tick (or an open) walks to park the held
#: ones: what the next claims would walk. Bounds a tick's work on a deep queue.
PARK_SCAN = 2_000
