"""``python -m builder``: the same as the ``mindrian`` script."""

from builder.cli import main

raise SystemExit(main())
