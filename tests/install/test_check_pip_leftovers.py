"""``pip install generated/<pkg>`` builds in place; what it leaves there is not drift."""

from __future__ import annotations

from pathlib import Path

from builder.pipeline.check import read_tree


def test_in_place_build_leftovers_are_not_builder_output(tmp_path: Path) -> None:
    files = {
        "pws_validation/agent.py": b"a",
        "pws_validation/build/lib/pws_validation/agent.py": b"a",
        "pws_validation/mindrian_agent_pws.egg-info/PKG-INFO": b"m",
        # Only those two names, only directly in a package folder, are pip's.
        "pws_validation/references/build/notes.md": b"kept",
        "pws_validation/build.md": b"kept",
        "build/registry-note.txt": b"kept",
    }
    for name, data in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    assert sorted(read_tree(tmp_path)) == [
        "build/registry-note.txt",
        "pws_validation/agent.py",
        "pws_validation/build.md",
        "pws_validation/references/build/notes.md",
    ]
