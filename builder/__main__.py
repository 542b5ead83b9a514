"""``python -m builder``: the same as the ``mindrian`` script."""

from builder.cli.app import main

raise SystemExit(main())
