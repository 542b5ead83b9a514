"""``read_reference`` reads the package's copy of a reference file, named by ``spec.yaml``."""

from __future__ import annotations

from pathlib import Path

import pytest

from mindrian.agents.references import read_reference_tool, reference_elements


def _spec(path: str) -> dict[str, object]:
    return {"instructions": {"elements": [{"name": "guide", "path": path, "digest": "d"}]}}


def _read(elements: dict[str, Path], name: str) -> str:
    function = read_reference_tool(elements)
    assert function.entrypoint is not None
    return str(function.entrypoint(name=name))


def test_the_text_is_read_from_the_skill_folder_at_the_call(tmp_path: Path) -> None:
    skill = tmp_path / "skill"
    (skill / "references").mkdir(parents=True)
    elements = reference_elements(_spec("references/guide.md"), skill)
    assert elements == {"guide": skill / "references" / "guide.md"}
    missing = _read(elements, "guide")
    assert missing.startswith("Reference 'guide' could not be read from the package (guide.md)")
    (skill / "references" / "guide.md").write_text("# Guide\nBe brief.\n", encoding="utf-8")
    assert _read(elements, "guide") == "# Guide\nBe brief.\n"


@pytest.mark.parametrize("path", ["../outside.md", "/etc/passwd", "references/../../x.md", ""])
def test_a_spec_path_leaving_the_skill_folder_is_refused(tmp_path: Path, path: str) -> None:
    with pytest.raises(ValueError, match="leaves the skill folder"):
        reference_elements(_spec(path), tmp_path / "skill")
