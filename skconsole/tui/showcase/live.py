"""One scene as a running console: ``python -m skconsole.tui.showcase.live [SCENE]``.

The scenes of :mod:`.scenes` run headless for the snapshot tests and the SVG
screenshots; this runs one on a real driver (a terminal, or textual-serve's web
driver when a browser session starts it), its keys pressed by an autopilot, so
``screenshots/browser.png`` (:mod:`skconsole.web.screenshot`) shows the same fixed
data as the other pictures. Quit with q or ctrl+q.
"""

from __future__ import annotations

import sys

from skconsole.tui.showcase.scenes import BY_NAME


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    name = args[0] if args else "main"
    scene = BY_NAME.get(name)
    if scene is None:
        print(f"no scene {name!r}; one of: {', '.join(BY_NAME)}", file=sys.stderr)
        return 2
    scene.build().run(auto_pilot=scene.prepare)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
