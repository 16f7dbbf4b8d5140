"""A primary and a streaming standby of its own, started by a test: a failover, for real.

The PostgreSQL binaries of this machine (``pg_config --bindir``, else the newest
``/usr/lib/postgresql/N/bin``) make a primary with ``initdb`` and a standby with
``pg_basebackup -R``. The standby streams from the primary through a
:class:`~tests.support.netproxy.FreezableProxy`, so a test can make it lag as
much as it likes (:meth:`ReplicatedPair.freeze_replication`: the primary goes on
committing, the standby receives nothing), then crash the primary
(``pg_ctl stop -m immediate``) and promote the standby: what the standby never
received is lost, as with an asynchronous replica that lagged. With
``synchronous=True`` the primary waits for the standby's flush before a commit
returns (``synchronous_standby_names = '*'``): nothing acknowledged is lost.

As root (initdb refuses to run as root) the servers run as the ``postgres``
system user, in a temporary directory it owns. Both listen on 127.0.0.1 only,
on free ports, with trust authentication; :meth:`ReplicatedPair.close` stops
them and deletes everything.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import psycopg

from tests.support.netproxy import FreezableProxy
from tests.support.waiting import wait_until

USER = "postgres"


def bin_dir() -> Path | None:
    """Where initdb, pg_ctl and pg_basebackup are, or None on a machine without them."""
    candidates: list[Path] = []
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        found = subprocess.run(
            ["pg_config", "--bindir"], capture_output=True, text=True, timeout=10, check=True
        )
        candidates.append(Path(found.stdout.strip()))
    versions = sorted(
        Path("/usr/lib/postgresql").glob("*/bin"),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
        reverse=True,
    )
    candidates += versions
    for path in candidates:
        if all((path / tool).exists() for tool in ("initdb", "pg_ctl", "pg_basebackup")):
            return path
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    """One cluster: its data directory, its port, and pg_ctl on it."""

    bindir: Path
    data: Path
    port: int
    log: Path
    run_as: str | None

    @property
    def dsn(self) -> str:
        return f"postgresql://{USER}@127.0.0.1:{self.port}/postgres"

    def _run(self, *args: str, timeout: float = 120) -> None:
        subprocess.run(
            [str(self.bindir / args[0]), *args[1:]],
            check=True,
            user=self.run_as,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=timeout,
        )

    def start(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-w", "-t", "60", "start")

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "-t", "60", "stop")

    def promote(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-w", "-t", "60", "promote")

    def running(self) -> bool:
        return (self.data / "postmaster.pid").exists()


class ReplicatedPair:
    """A primary and its streaming standby, the replication link through a freezable proxy."""

    def __init__(self, *, synchronous: bool = False) -> None:
        found = bin_dir()
        if found is None:
            raise RuntimeError("no PostgreSQL binaries (initdb, pg_ctl, pg_basebackup) found")
        self.bindir = found
        self.synchronous = synchronous
        self.root = Path(tempfile.mkdtemp(prefix="skconsole-failover-"))
        self.run_as = USER if os.geteuid() == 0 else None
        if self.run_as is not None:
            entry = pwd.getpwnam(self.run_as)
            os.chown(self.root, entry.pw_uid, entry.pw_gid)
        self.primary = self._server("primary")
        self.standby = self._server("standby")
        self.proxy: FreezableProxy | None = None

    def _server(self, name: str) -> Server:
        return Server(
            self.bindir, self.root / name, _free_port(), self.root / f"{name}.log", self.run_as
        )

    # -- set-up ----------------------------------------------------------------------
    def start(self) -> ReplicatedPair:
        primary, standby = self.primary, self.standby
        primary._run("initdb", "-D", str(primary.data), "-A", "trust", "-U", USER, "--no-sync")
        settings = {
            "listen_addresses": "'127.0.0.1'",
            "port": str(primary.port),
            "unix_socket_directories": f"'{self.root}'",
            "wal_level": "replica",
            "max_wal_senders": "4",
            "max_connections": "100",
            "fsync": "off",  # a crash of the server process, not of the machine
            "autovacuum": "off",
            "synchronous_standby_names": "'*'" if self.synchronous else "''",
            "wal_receiver_status_interval": "1s",
        }
        with (primary.data / "postgresql.conf").open("a") as conf:
            conf.writelines(f"{name} = {value}\n" for name, value in settings.items())
        primary.start()
        self.proxy = FreezableProxy(primary.dsn).start()
        primary._run(
            "pg_basebackup", "-h", "127.0.0.1", "-p", str(primary.port), "-U", USER,
            "-D", str(standby.data), "-R", "--no-sync", "-X", "stream",
        )  # fmt: skip
        with (standby.data / "postgresql.conf").open("a") as conf:
            # promoted, it has no standby of its own to wait for (an HA manager
            # such as Patroni sets this anew on each promotion)
            conf.write(f"port = {standby.port}\nsynchronous_standby_names = ''\n")
        with (standby.data / "postgresql.auto.conf").open("a") as conf:
            conf.write(
                f"primary_conninfo = 'host=127.0.0.1 port={self.proxy.port} user={USER}"
                " application_name=standby'\n"
            )
        standby.start()
        self.wait_streaming()
        return self

    def wait_streaming(self, timeout: float = 60) -> None:
        def streaming() -> bool:
            with psycopg.connect(self.primary.dsn, autocommit=True) as c:
                row = c.execute(
                    "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'"
                ).fetchone()
            return bool(row and row[0])

        wait_until(streaming, timeout, "the standby did not start streaming")

    # -- what the test does ------------------------------------------------------------
    @property
    def multi_host_dsn(self) -> str:
        """Both servers, the writable one chosen at each connection: what an HA client uses."""
        return (
            f"postgresql://{USER}@127.0.0.1:{self.primary.port},127.0.0.1:{self.standby.port}"
            "/postgres?target_session_attrs=read-write"
        )

    def freeze_replication(self) -> None:
        """The standby receives nothing more: what the primary commits from now on is
        lost if it crashes (asynchronous), or waits for the standby (synchronous)."""
        assert self.proxy is not None
        self.proxy.freeze()

    def crash_primary(self) -> None:
        self.primary.stop("immediate")

    def promote(self) -> None:
        self.standby.promote()

    def close(self) -> None:
        for server in (self.standby, self.primary):
            if server.running():
                with contextlib.suppress(subprocess.SubprocessError, OSError):
                    server.stop("immediate")
        if self.proxy is not None:
            self.proxy.thaw()
            self.proxy.close()
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> ReplicatedPair:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
