"""``skconsole serve`` in a real browser (Debian's Chromium, driven by Playwright), on a
real database with a few failed jobs: the console draws and answers keys in the tab;
it is read-only unless --allow-writes, and then what it writes is audited as whoever
holds the token, from the browser; stopping the server ends its consoles.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import pytest

pytest.importorskip("playwright.sync_api", reason="Playwright is not installed (the dev extra)")
pytestmark = pytest.mark.skipif(
    not Path("/usr/bin/chromium").exists(), reason="no /usr/bin/chromium: apt-get install chromium"
)

from skconsole.db.connect import Database  # noqa: E402
from tests.support.waiting import wait_until  # noqa: E402
from tests.web.conftest import ConsoleTab, Served  # noqa: E402

OpenTab = Callable[[str], ConsoleTab]
Serve = Callable[..., Served]


def test_the_console_draws_its_depth_panel_in_a_browser_tab(
    serve: Serve, open_tab: OpenTab, seeded: Database
) -> None:
    tab = open_tab(serve().url)

    tab.wait_for("Queue depth")
    tab.wait_for("tui.timeout")


def test_the_tab_loads_nothing_from_anywhere_but_the_server(
    serve: Serve, open_tab: OpenTab, seeded: Database
) -> None:
    served = serve()
    tab = open_tab(served.url)
    tab.wait_for("Queue depth")

    base = served.url.split("?")[0]
    assert tab.requests
    assert all(url.startswith(base) for url in tab.requests), tab.requests


def test_a_key_opens_the_failure_group_under_the_cursor(
    serve: Serve, open_tab: OpenTab, seeded: Database
) -> None:
    tab = open_tab(serve().url)
    tab.wait_for("UpstreamTimeout")

    mark = tab.press("3", "Enter")

    tab.wait_for("Failure group  ", since=mark)


def test_read_only_unless_told_a_write_key_opens_nothing(
    serve: Serve, open_tab: OpenTab, seeded: Database
) -> None:
    """R (requeue) on a failure group, then ? (help): had R opened its dialog, ? would be
    typed into the dialog; the help opens instead and says the write keys are hidden."""
    tab = open_tab(serve().url)
    tab.wait_for("READ-ONLY")
    tab.wait_for("UpstreamTimeout")

    mark = tab.press("3", "R", "?")

    tab.wait_for("hidden: read-only", since=mark)
    assert "Enter previews" not in tab.screen.since(mark)  # the requeue dialog's hint
    assert _audit_rows(seeded) == []


@pytest.mark.parametrize("who", ["--user", "--token-file"])
def test_with_allow_writes_an_action_is_audited_as_its_user_from_the_browser(
    serve: Serve, open_tab: OpenTab, seeded: Database, tmp_path: Path, who: str
) -> None:
    """As --user, else as the token: its file's name."""
    if who == "--user":
        served = serve("--allow-writes", "--user", "alice")
        url, user = served.url, "alice"
    else:
        token_file = tmp_path / "ops-team.token"
        token_file.write_text("a-token-of-the-ops-team-0123456789\n", encoding="utf-8")
        token_file.chmod(0o600)
        served = serve("--allow-writes", "--token-file", str(token_file))
        url, user = served.base + "?token=a-token-of-the-ops-team-0123456789", "ops-team.token"
    tab = open_tab(url)
    tab.wait_for("UpstreamTimeout")

    tab.wait_for("Enter previews", since=tab.press("3", "R"))  # the requeue dialog
    tab.wait_for("Confirm requeue", since=tab.press("Enter"))
    tab.press("y")

    wait_until(lambda: bool(_audit_rows(seeded)), timeout=30)
    assert _audit_rows(seeded) == [("requeue", user, f"browser via {socket.gethostname()}")]


def test_stopping_the_server_ends_the_consoles_it_started(
    serve: Serve, open_tab: OpenTab, seeded: Database
) -> None:
    served = serve()
    tab = open_tab(served.url)
    tab.wait_for("Queue depth")
    consoles = psutil.Process(served.process.pid).children(recursive=True)
    assert consoles  # the tab's console

    served.process.terminate()
    served.process.wait(30)

    _, alive = psutil.wait_procs(consoles, timeout=30)
    assert alive == []


def _audit_rows(db: Database) -> list[tuple[str, str, str]]:
    with db.connect() as c:
        rows = c.execute(
            "SELECT audit_action, audit_user, audit_host FROM sk_audit_t ORDER BY audit_id"
        ).fetchall()
    return [tuple(r) for r in rows]


# -- links: /job/<id>, a bad place, the l key --------------------------------------------
def _failed_job(db: Database) -> str:
    with db.connect() as c:
        row = c.execute(
            "SELECT task_id::text FROM sk_task_results_t WHERE task_status = 5"
            " ORDER BY task_id LIMIT 1"
        ).fetchone()
    assert row is not None
    return str(row[0])


def test_a_job_url_opens_that_jobs_detail(
    serve: Serve, open_tab: OpenTab, seeded: Database
) -> None:
    served = serve()
    job_id = _failed_job(seeded)
    token = served.url.split("?token=")[1]

    tab = open_tab(f"{served.base.rstrip('/')}/job/{job_id}?token={token}")

    tab.wait_for(f"Job {job_id}")


def test_a_bad_place_is_refused_with_400_without_starting_a_console(
    serve: Serve, browser: Any, seeded: Database
) -> None:
    served = serve()
    token = served.url.split("?token=")[1]
    page = browser.new_page()
    try:
        response = page.goto(f"{served.base.rstrip('/')}/job/%24(reboot)?token={token}")

        assert response is not None
        assert response.status == 400
        assert "not a job id" in page.content()
    finally:
        page.close()
    assert psutil.Process(served.process.pid).children(recursive=True) == []


def test_the_link_key_shows_the_url_of_the_job_shown(
    serve: Serve, open_tab: OpenTab, seeded: Database
) -> None:
    served = serve()
    job_id = _failed_job(seeded)
    token = served.url.split("?token=")[1]
    base = served.base.rstrip("/")
    tab = open_tab(f"{base}/job/{job_id}?token={token}")
    tab.wait_for(f"Job {job_id}")

    mark = tab.press("l")

    tab.wait_for(f"{base}/job/{job_id}", since=mark)
