"""A build does not depend on which provider SDKs the building machine has installed.

The same SKILL.md naming a model on a provider whose Agno model lacks one of
the type's settings (OpenAI chat has no thinking budget) is built twice in a
fresh process: once with the ``openai`` SDK importable, once with every import
of it refused. The generated packages must be byte-identical, or regenerating
them in CI reports drift that no source change caused.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

_SKILL = """\
---
name: two-views
description: Weigh a decision from two opposed views and reconcile them.
metadata:
  mindrian:
    type: collaborative
    model: openai-chat:gpt-4o
---
# Two views

Look at the decision from each view in turn, then reconcile them.

## Perspectives

- **Optimist**: what goes right if the decision is taken.
- **Pessimist**: what goes wrong if the decision is taken.
"""

#: Put first on sys.path as ``sitecustomize``: every import of ``openai`` fails, as uninstalled.
_BLOCKER = """\
import sys


class _NoOpenAI:
    def find_spec(self, name, path=None, target=None):
        if name == "openai" or name.startswith("openai."):
            raise ImportError(f"No module named {name!r}")
        return None


sys.meta_path.insert(0, _NoOpenAI())
"""


def _build(root: Path, name: str, *, blocked: Path | None) -> dict[str, bytes]:
    """The files of the package built from ``root/skill`` into ``root/name``, by path."""
    out = root / name
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["MINDRIAN_CACHE_DIR"] = ""  # a cached answer from the other build would hide the cause
    if blocked is not None:
        env["PYTHONPATH"] = str(blocked)
    command = "import sys; from builder.cli.app import main; sys.exit(main())"
    args = ["build", str(root / "skill"), "--out", str(out), "--until", "code_generation"]
    args += ["--checkpoints", str(root / f"{name}-checkpoints"), "-q"]
    done = subprocess.run(
        [sys.executable, "-c", command, *args], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def _warnings(root: Path, name: str) -> str:
    """The text of phase 2's checkpoint (its warnings among it) of build ``name``."""
    found = sorted((root / f"{name}-checkpoints").rglob("2-architecture.yaml"))
    assert len(found) == 1
    return found[0].read_text(encoding="utf-8")


def test_the_generated_package_is_the_same_with_and_without_the_provider_sdk(
    tmp_path: Path,
) -> None:
    (tmp_path / "skill").mkdir()
    (tmp_path / "skill" / "SKILL.md").write_text(_SKILL, encoding="utf-8")
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(_BLOCKER, encoding="utf-8")

    installed = _build(tmp_path, "installed", blocked=None)
    missing = _build(tmp_path, "missing", blocked=blocker)

    # The two builds really saw different machines: one inspected the model class, one could not.
    assert "will not be applied" in _warnings(tmp_path, "installed")
    assert "is not importable" in _warnings(tmp_path, "missing")
    assert "two_views/spec.yaml" in installed
    assert "thinking_budget: 8000" in installed["two_views/spec.yaml"].decode()
    assert sorted(installed) == sorted(missing)
    differing = [path for path in installed if installed[path] != missing[path]]
    assert not differing, f"files differ with the openai SDK missing: {differing}"
