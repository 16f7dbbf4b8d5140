"""``python -m skconsole.bench.peers``: the method is in the package docstring."""

import sys

from skconsole.bench.peers.harness import main

sys.exit(main())
