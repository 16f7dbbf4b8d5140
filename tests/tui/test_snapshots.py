"""Every screen and dialog at 120x40, and the key ones at 80x24 and 200x50, on fixed
data and a frozen clock.

The scenes are the ones ``python -m skconsole.tui.showcase.screenshots`` draws for the
README. Update after an intended change with ``pytest tests/tui --snapshot-update``
and look at the report before committing.
"""

from __future__ import annotations

from typing import Any

import pytest

from skconsole.tui.showcase.scenes import BY_NAME, SCENES, SIZE, Scene


@pytest.mark.parametrize("scene", SCENES, ids=[s.name for s in SCENES])
def test_scene(scene: Scene, snap_compare: Any) -> None:
    assert snap_compare(scene.build(), terminal_size=SIZE, run_before=scene.prepare)


#: the key scenes again on an on-call laptop's terminal and on a wide one
SIZED = [
    (BY_NAME[name], size)
    for name in (
        "main",
        "confirm",
        "in-flight",
        "failure-drilldown",
        "job-detail",
        "workers",
        "help",
        "factors",
        "edit-job",
        "dead-workers",
        "dead-workers-hung",
        "charts",
        "charts-type-week",
        "past-at",
        "past-bundle",
        "failures-breaker-open",
        "breaker-dialog",
    )
    for size in ((80, 24), (200, 50))
]


@pytest.mark.parametrize(("scene", "size"), SIZED, ids=[f"{s.name}-{w}x{h}" for s, (w, h) in SIZED])
def test_scene_sized(scene: Scene, size: tuple[int, int], snap_compare: Any) -> None:
    assert snap_compare(scene.build(), terminal_size=size, run_before=scene.prepare)
