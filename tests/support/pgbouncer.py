"""A real PgBouncer (Debian's ``pgbouncer``; .ci/run installs it) in front of the test server.

``Bouncers(dsn).start(pool_mode, **settings)`` starts one on a free 127.0.0.1 port and
returns a :class:`Bouncer`: its ``dsn`` reaches the test database through it (under
an alias of its own, so nothing a process learnt about another pooler applies), and
it can be restarted on the same port (a pooler restart) or told things on its admin
console (``RECONNECT``: every server connection is replaced once released, so the
next transaction of every client lands on a new server session).
"""

from __future__ import annotations

import contextlib
import getpass
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
from psycopg import conninfo

from tests.support.waiting import wait_until

PGBOUNCER = shutil.which("pgbouncer") or next(
    (p for p in ("/usr/sbin/pgbouncer", "/usr/bin/pgbouncer") if os.access(p, os.X_OK)), None
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for_port(port: int, proc: subprocess.Popen[bytes], log: Path) -> None:
    def listening() -> bool:
        if proc.poll() is not None:
            raise AssertionError(f"pgbouncer exited ({proc.returncode}): {log.read_text()}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return True
        return False

    wait_until(
        listening, 15, lambda: f"pgbouncer did not listen on {port}: {log.read_text()}", 0.05
    )


@dataclass(eq=False)
class Bouncer:
    """One running pgbouncer."""

    ini: Path
    log: Path
    port: int
    alias: str
    user: str
    run_as: str
    proc: subprocess.Popen[bytes] | None = field(default=None, init=False)

    @property
    def dsn(self) -> str:
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{self.alias}"

    def start(self) -> Bouncer:
        as_user = ["-u", self.run_as] if os.geteuid() == 0 else []  # it refuses to run as root
        assert PGBOUNCER is not None
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                [PGBOUNCER, *as_user, str(self.ini)], stdout=out, stderr=subprocess.STDOUT
            )
        _wait_for_port(self.port, self.proc, self.log)
        return self

    def stop(self, *, kill: bool = False) -> None:
        """Stop it (``kill``: SIGKILL, every client and server connection cut at once)."""
        if self.proc is None:
            return
        if kill:
            self.proc.kill()
        else:
            self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        self.proc = None

    def restart(self, *, kill: bool = True) -> None:
        """Down and up again on the same port: every connection through it is cut."""
        self.stop(kill=kill)
        self.start()

    def admin(self, command: str) -> list[tuple[Any, ...]]:
        """One command of the admin console (``SHOW POOLS``, ``RECONNECT``, ...)."""
        dsn = f"postgresql://{self.user}@127.0.0.1:{self.port}/pgbouncer"
        with psycopg.connect(dsn, autocommit=True, prepare_threshold=None) as c:
            cur = c.execute(command)
            return cur.fetchall() if cur.description else []

    def server_connections(self) -> int:
        """Server connections open for the test database now (SHOW POOLS: active + idle +
        used + tested + login)."""
        with psycopg.connect(
            f"postgresql://{self.user}@127.0.0.1:{self.port}/pgbouncer",
            autocommit=True,
            prepare_threshold=None,
        ) as c:
            cur = c.execute("SHOW POOLS")
            names = [d.name for d in cur.description or ()]
            for row in cur.fetchall():
                pool = dict(zip(names, row, strict=True))
                if pool["database"] == self.alias:
                    return sum(
                        int(pool[k])
                        for k in ("sv_active", "sv_idle", "sv_used", "sv_tested", "sv_login")
                    )
        return 0


class Bouncers:
    """Every pgbouncer a test starts in front of the server of ``dsn``; :meth:`close`
    stops them all and removes their files."""

    def __init__(self, dsn: str) -> None:
        server = conninfo.conninfo_to_dict(dsn)
        self.user = str(server.get("user") or getpass.getuser())
        self.target = {
            "host": str(server.get("host") or "localhost"),
            "port": str(server.get("port") or 5432),
            "dbname": str(server.get("dbname") or self.user),
            "user": self.user,
        }
        if server.get("password"):
            self.target["password"] = str(server["password"])
        # as root: the unprivileged user that can reach the server, i.e. the owner of the
        # embedded server's socket directory (its data directory, mode 0700), else nobody
        socket_dir = Path(self.target["host"])
        owner = socket_dir.stat().st_uid if socket_dir.is_dir() else 0
        self.run_as = pwd.getpwuid(owner).pw_name if owner else "nobody"
        self.tmp = Path(tempfile.mkdtemp(prefix="skconsole-pgbouncer-"))
        self.tmp.chmod(0o755)  # pgbouncer runs as an unprivileged user
        self.started: list[Bouncer] = []

    def start(self, pool_mode: str, **settings: str | int) -> Bouncer:
        """A pgbouncer in ``pool_mode``, with extra ``[pgbouncer]`` settings as keywords."""
        port = free_port()
        alias = f"skq_{uuid.uuid4().hex[:8]}"
        ini = self.tmp / f"pgbouncer-{port}.ini"
        users = self.tmp / f"users-{port}.txt"
        users.write_text(f'"{self.user}" ""\n')
        lines = [
            "[databases]",
            f"{alias} = " + " ".join(f"{k}={v}" for k, v in self.target.items()),
            "[pgbouncer]",
            "listen_addr = 127.0.0.1",
            f"listen_port = {port}",
            "unix_socket_dir =",
            "auth_type = trust",
            f"auth_file = {users}",
            f"admin_users = {self.user}",
            f"pool_mode = {pool_mode}",
            *(f"{k} = {v}" for k, v in settings.items()),
        ]
        ini.write_text("\n".join(lines) + "\n")
        for f in (ini, users):
            f.chmod(0o644)
        bouncer = Bouncer(
            ini, self.tmp / f"pgbouncer-{port}.log", port, alias, self.user, self.run_as
        )
        self.started.append(bouncer)
        return bouncer.start()

    def close(self) -> None:
        for bouncer in self.started:
            bouncer.stop()
        shutil.rmtree(self.tmp, ignore_errors=True)
