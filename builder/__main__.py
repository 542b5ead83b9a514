"""``python -m builder``: the same as the ``mindrian`` script."""

from builder.entry import main

raise SystemExit(main())
