"""The browser face: ``skconsole serve`` puts the console in a browser tab.

- :mod:`.token`: the one secret a browser must show (generated, or read from a
  file the way a secret file is checked); standard library only, so the CLI
  can check it before the optional ``web`` extra is imported;
- :mod:`.server`: textual-serve's web server behind that token, with a page of
  ours that loads nothing from off the host (imports aiohttp and textual-serve:
  ``pip install 'skconsole[web]'``);
- :mod:`.screenshot`: ``screenshots/browser.png``, taken by a real browser.

Nothing below the faces imports this package (``tests/unit/test_import_graph.py``).
"""
