"""The hot tables' side of queue health: rows live and dead, sizes, vacuum history, and
the autovacuum settings in force for each (the server's, overridden by a table's own)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from skconsole.core.json_types import JsonObject
from skconsole.read.query import iso

#: The server settings that decide when autovacuum runs; a table's reloptions override some.
SERVER_SETTINGS = (
    "autovacuum",
    "track_counts",
    "autovacuum_naptime",
    "autovacuum_vacuum_scale_factor",
    "autovacuum_vacuum_threshold",
    "autovacuum_analyze_scale_factor",
    "autovacuum_analyze_threshold",
    "autovacuum_vacuum_cost_delay",
    "autovacuum_vacuum_cost_limit",
    "vacuum_cost_delay",
    "vacuum_cost_limit",
)


def _reloptions(options: Sequence[str] | None) -> dict[str, str]:
    """``["autovacuum_enabled=false", ...]`` as a mapping."""
    pairs = (o.partition("=") for o in options or ())
    return {name: value for name, _, value in pairs}


def is_on(value: str | None) -> bool:
    """A boolean server setting as pg_settings spells it ("on"), or a reloption ("true")."""
    return (value or "").strip().lower() in ("on", "true", "yes", "1")


@dataclass(frozen=True)
class AutovacuumSettings:
    """The autovacuum settings in force for one table: its own storage options where set
    (named in ``from_table``), else the server's. ``enabled`` is false when autovacuum
    is off for the server, for the table, or when ``track_counts`` is off (without
    statistics autovacuum never knows a table needs it)."""

    enabled: bool
    vacuum_scale_factor: float
    vacuum_threshold: int
    analyze_scale_factor: float
    analyze_threshold: int
    vacuum_cost_delay_ms: float
    vacuum_cost_limit: int
    from_table: tuple[str, ...] = ()

    def vacuum_after(self, live_rows: int) -> int:
        """Dead rows that make autovacuum pick the table: threshold + scale factor * rows."""
        return self.vacuum_threshold + int(self.vacuum_scale_factor * live_rows)

    def as_dict(self) -> JsonObject:
        return {**asdict(self), "from_table": list(self.from_table)}


def autovacuum_settings(
    server: Mapping[str, str], reloptions: Sequence[str] | None
) -> AutovacuumSettings:
    """The settings in force for a table with these reloptions on a server with these settings."""
    table = _reloptions(reloptions)

    def pick(name: str) -> str:
        return table.get(name) or server.get(name, "0")

    delay = float(pick("autovacuum_vacuum_cost_delay"))
    limit = int(float(pick("autovacuum_vacuum_cost_limit")))
    enabled = (
        is_on(server.get("autovacuum"))
        and is_on(server.get("track_counts"))
        and is_on(table.get("autovacuum_enabled", "on"))
    )
    return AutovacuumSettings(
        enabled=enabled,
        vacuum_scale_factor=float(pick("autovacuum_vacuum_scale_factor")),
        vacuum_threshold=int(pick("autovacuum_vacuum_threshold")),
        analyze_scale_factor=float(pick("autovacuum_analyze_scale_factor")),
        analyze_threshold=int(pick("autovacuum_analyze_threshold")),
        # -1: the plain vacuum_cost_* setting applies
        vacuum_cost_delay_ms=float(server.get("vacuum_cost_delay", "0")) if delay < 0 else delay,
        vacuum_cost_limit=int(server.get("vacuum_cost_limit", "200")) if limit < 0 else limit,
        from_table=tuple(sorted(n for n in table if n.startswith("autovacuum"))),
    )


@dataclass(frozen=True)
class TableHealth:
    """One hot table: its rows (statistics, live and dead), sizes, vacuum and analyze history,
    the vacuum running on it now (``vacuum_running``: "autovacuum" or "vacuum", None when
    none), and its autovacuum settings."""

    table: str
    live_rows: int
    dead_rows: int
    table_bytes: int
    index_bytes: int
    last_vacuum: datetime | None
    last_autovacuum: datetime | None
    last_analyze: datetime | None
    last_autoanalyze: datetime | None
    vacuum_running: str | None
    vacuum_phase: str | None
    autovacuum: AutovacuumSettings

    @property
    def dead_share(self) -> float:
        total = self.live_rows + self.dead_rows
        return self.dead_rows / total if total else 0.0

    @property
    def bloat_bytes_estimate(self) -> int:
        """An estimate: the dead share of the table's size. It counts space dead rows take
        now, not free space an earlier vacuum left inside the file (pgstattuple measures
        both, but needs an extension and reads the whole table)."""
        return int(self.dead_share * self.table_bytes)

    @property
    def last_vacuumed(self) -> datetime | None:
        times = [t for t in (self.last_vacuum, self.last_autovacuum) if t is not None]
        return max(times) if times else None

    def as_dict(self) -> JsonObject:
        return {
            "table": self.table,
            "live_rows": self.live_rows,
            "dead_rows": self.dead_rows,
            "dead_share": round(self.dead_share, 4),
            "table_bytes": self.table_bytes,
            "index_bytes": self.index_bytes,
            "bloat_bytes_estimate": self.bloat_bytes_estimate,
            "last_vacuum": iso(self.last_vacuum),
            "last_autovacuum": iso(self.last_autovacuum),
            "last_analyze": iso(self.last_analyze),
            "last_autoanalyze": iso(self.last_autoanalyze),
            "vacuum_running": self.vacuum_running,
            "vacuum_phase": self.vacuum_phase,
            "autovacuum": self.autovacuum.as_dict(),
        }


def table_row(server: Mapping[str, str]) -> Callable[..., TableHealth]:
    """How a row of health_tables.sql becomes a :class:`TableHealth` on this server: its
    storage options read against the server's settings, the vacuum running on it named
    by who runs it (its backend type)."""

    def row(
        *,
        reloptions: Sequence[str] | None,
        vacuum_phase: str | None,
        vacuum_backend: str | None,
        **cols: Any,
    ) -> TableHealth:
        running = None
        if vacuum_phase is not None or vacuum_backend is not None:
            running = "autovacuum" if vacuum_backend == "autovacuum worker" else "vacuum"
        return TableHealth(
            vacuum_running=running,
            vacuum_phase=vacuum_phase,
            autovacuum=autovacuum_settings(server, reloptions),
            **cols,
        )

    return row
