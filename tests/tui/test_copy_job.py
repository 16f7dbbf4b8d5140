"""``c`` on a job's detail copies it to the clipboard (OSC 52) and, since many terminals
ignore OSC 52 without a word, also to a file of the user's own that the toast names."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from skconsole.tui.app import ConsoleApp
from skconsole.tui.screens.job_detail import JobDetailScreen
from skconsole.tui.showcase.fake_source import FixedSource
from skconsole.tui.showcase.fixed_data import FrozenClock
from skconsole.tui.showcase.scenes import settle
from tests.tui.conftest import SIZE, notices


async def test_c_on_a_job_saves_it_to_a_private_file_the_toast_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    app = ConsoleApp(FixedSource(), clock=FrozenClock(), auto_refresh=False, actor="t")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter", "enter")
        await settle(pilot)
        detail = app.screen
        assert isinstance(detail, JobDetailScreen) and detail.detail is not None

        await pilot.press("c")

        [saved] = (tmp_path / "skconsole" / "copies").iterdir()
        assert saved.name == f"skconsole-job-{str(detail.task_id)[:8]}.txt"
        assert stat.S_IMODE(saved.stat().st_mode) == 0o600
        text = saved.read_text(encoding="utf-8")
        assert text.startswith(f"task_id: {detail.detail.task_id}\n")
        assert "payload:" in text and "last error:" in text
        assert app.clipboard.strip() == text.strip()
        [toast] = [m for m in notices(app) if m.startswith("Copied job")]
        assert toast.endswith(f"also saved to {saved}.")
