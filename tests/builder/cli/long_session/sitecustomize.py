"""Injected into a build by a test (on its ``PYTHONPATH``): a shared test session that lasts.

The batch's shared pytest session (``run_session``) first creates ``$LONG_SESSION/started``,
then waits two minutes before testing, so a Ctrl-C the test sends once the file exists lands while
a session is under way, whatever the machine's speed.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from builder.pipeline import package_tests

_FOLDER = Path(os.environ["LONG_SESSION"])
_SECONDS = 120.0
_run_session = package_tests.run_session


def _long_session(*args: Any, **kwargs: Any) -> Any:
    (_FOLDER / "started").touch()
    time.sleep(_SECONDS)
    return _run_session(*args, **kwargs)


package_tests.run_session = _long_session
