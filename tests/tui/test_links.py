"""What a link opens and gives: ``--open`` opens a job, a failure group (by its short id)
or a search once the data is in; l shows and copies the URL of what is shown under
``skconsole serve``, and says in one line that there is none without it. On a real
PostgreSQL."""

from __future__ import annotations

from uuid import UUID

from skconsole.core.places import parse_place
from skconsole.read import group_id
from skconsole.tui.screens.group_jobs import GroupJobsScreen
from skconsole.tui.screens.job_detail import JobDetailScreen
from skconsole.tui.screens.link import LinkScreen
from skconsole.tui.screens.search import SearchScreen
from tests.db.test_job_command import add_job
from tests.tui.conftest import Conn, MakeApp, shown_screen, until

ONE = UUID("ab12cd34-0000-4000-8000-000000000001")
BASE = "http://console.example:8000"


async def test_open_job_opens_that_jobs_detail(conn: Conn, make_app: MakeApp) -> None:
    add_job(conn, ONE)
    app = make_app(open_at=parse_place(f"job:{ONE}"))
    async with app.run_test(size=(160, 50)) as pilot:
        screen = await shown_screen(pilot, JobDetailScreen)

        assert screen.task_id == str(ONE)


async def test_open_group_opens_the_failure_group_of_that_id(
    seeded: object, make_app: MakeApp
) -> None:
    app = make_app()
    async with app.run_test(size=(160, 50)) as pilot:
        await until(pilot, lambda: bool(app.snapshot and app.snapshot.failures))
        assert app.snapshot is not None
        signature = app.snapshot.failures[0].signature
    app = make_app(open_at=parse_place(f"group:{group_id(signature)}"))
    async with app.run_test(size=(160, 50)) as pilot:
        screen = await shown_screen(pilot, GroupJobsScreen)

        assert screen.group.signature == signature


async def test_open_search_opens_the_search_on_that_line(seeded: object, make_app: MakeApp) -> None:
    app = make_app(open_at=parse_place("search:status=5"))
    async with app.run_test(size=(160, 50)) as pilot:
        screen = await shown_screen(pilot, SearchScreen, lambda s: s.query_ is not None)

        assert screen.line == "status=5"


async def test_the_link_key_shows_the_url_of_the_job_shown_under_serve(
    conn: Conn, make_app: MakeApp
) -> None:
    add_job(conn, ONE)
    app = make_app(open_at=parse_place(f"job:{ONE}"), serve_url=BASE)
    async with app.run_test(size=(160, 50)) as pilot:
        await shown_screen(pilot, JobDetailScreen)
        await pilot.press("l")
        link = await shown_screen(pilot, LinkScreen)

        assert link.url == f"{BASE}/job/{ONE}"
        assert app.clipboard == link.url


async def test_the_link_key_of_a_search_gives_its_line_percent_encoded(
    seeded: object, make_app: MakeApp
) -> None:
    app = make_app(open_at=parse_place("search:status=5 type=tui.timeout"), serve_url=BASE)
    async with app.run_test(size=(160, 50)) as pilot:
        await shown_screen(pilot, SearchScreen, lambda s: s.query_ is not None)
        await pilot.press("l")
        link = await shown_screen(pilot, LinkScreen)

        assert link.url == f"{BASE}/search?q=status%3D5%20type%3Dtui.timeout"


async def test_without_serve_the_link_key_says_there_is_no_url(
    conn: Conn, make_app: MakeApp
) -> None:
    add_job(conn, ONE)
    app = make_app(open_at=parse_place(f"job:{ONE}"))
    async with app.run_test(size=(160, 50), notifications=True) as pilot:
        await shown_screen(pilot, JobDetailScreen)
        await pilot.press("l")
        await until(pilot, lambda: bool(app._notifications))

        (said,) = [n.message for n in app._notifications]
        assert said.startswith("No URL: this console does not run under `skconsole serve`")
        assert not isinstance(app.screen, LinkScreen)
