"""Restarting the test server from a test, as an operator would.

A Debian cluster (/var/lib/postgresql/VERSION/NAME, with pg_ctlcluster) is
restarted with ``pg_ctlcluster``, which keeps its own log file; any other
server (the embedded one) with ``pg_ctl restart``: the data directory comes
from the server itself, the pg_ctl of the running server's own installation
from its postmaster.opts (which also carries the options it was started
with), and it runs as the data directory's owner.
"""

from __future__ import annotations

import os
import pwd
import shlex
import shutil
import subprocess
from pathlib import Path

import psycopg


def restart_server(dsn: str, mode: str = "fast") -> None:
    """``pg_ctl restart -m fast|immediate``; returns once the server accepts connections."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute("SHOW data_directory").fetchone()
    assert row is not None
    data_dir = Path(str(row[0]))
    if shutil.which("pg_ctlcluster") and data_dir.parent.parent == Path("/var/lib/postgresql"):
        subprocess.run(
            ["pg_ctlcluster", "--skip-systemctl-redirect", "-m", mode,
             data_dir.parent.name, data_dir.name, "restart"],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=90,
        )  # fmt: skip
        return
    postgres = shlex.split((data_dir / "postmaster.opts").read_text())[0]
    pg_ctl = Path(postgres).parent / "pg_ctl"
    owner = pwd.getpwuid(data_dir.stat().st_uid).pw_name
    log = Path("/tmp") / f"skconsole-restart-{os.getpid()}.log"
    log.touch()
    os.chown(log, data_dir.stat().st_uid, data_dir.stat().st_gid)
    user = owner if os.geteuid() == 0 and owner != pwd.getpwuid(os.geteuid()).pw_name else None
    subprocess.run(
        [str(pg_ctl), "-D", str(data_dir), "-m", mode, "-w", "-t", "60", "-l", str(log), "restart"],
        check=True,
        user=user,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=90,
    )
