"""Every screen and dialog at 120x40, on fixed data and a frozen clock.

The scenes are the ones ``python -m skconsole.tui.showcase.screenshots`` draws for the
README. Update after an intended change with ``pytest tests/tui --snapshot-update``
and look at the report before committing.
"""

from __future__ import annotations

from typing import Any

import pytest

from skconsole.tui.showcase.scenes import SCENES, SIZE, Scene


@pytest.mark.parametrize("scene", SCENES, ids=[s.name for s in SCENES])
def test_scene(scene: Scene, snap_compare: Any) -> None:
    assert snap_compare(scene.build(), terminal_size=SIZE, run_before=scene.prepare)
