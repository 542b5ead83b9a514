"""Where the agent templates are, and their digest, without Jinja.

Phase 6's input digest takes :func:`template_digest`; a no-op build computes it
for every skill, so it lives apart from :mod:`builder.codegen.render`, whose
import pays for Jinja.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from builder.resources import templates_root

__all__ = ["AGENT_TEMPLATES", "TEMPLATES_ROOT", "template_digest"]

#: Root of the shipped templates (``builder._templates`` installed, ``templates/`` in the checkout).
TEMPLATES_ROOT = templates_root()
#: The Jinja templates of an agent package.
AGENT_TEMPLATES = TEMPLATES_ROOT / "agent"


def template_digest(root: Path = AGENT_TEMPLATES) -> str:
    """``sha256:`` over the sorted template file names and bytes (part of phase 6's input
    digest)."""
    h = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        name = path.relative_to(root).as_posix().encode("utf-8")
        data = path.read_bytes()
        h.update(len(name).to_bytes(8, "big") + name + len(data).to_bytes(8, "big") + data)
    return "sha256:" + h.hexdigest()
