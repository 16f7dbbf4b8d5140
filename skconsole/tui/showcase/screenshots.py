"""Write the documentation's screenshots: ``python -m skconsole.tui.showcase.screenshots [DIR]``.

Runs the console headless at 120x40 on the fixed data source and frozen
clock (the same scenes the snapshot tests compare) and saves one SVG per
scene into DIR (default: ``screenshots/`` in the current directory, the
repository's root: the README and the site show them from there).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from skconsole.tui.showcase.scenes import BY_NAME, SCREENSHOTS, SIZE, Scene


async def capture(scene: Scene, path: Path) -> None:
    app = scene.build()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await scene.prepare(pilot)
        await pilot.wait_for_scheduled_animations()
        await pilot.pause()
        app.save_screenshot(path.name, str(path.parent))


async def capture_all(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for file_name, scene_name in SCREENSHOTS.items():
        path = folder / file_name
        await capture(BY_NAME[scene_name], path)
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    folder = Path(args[0]) if args else Path("screenshots")
    for path in asyncio.run(capture_all(folder)):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
