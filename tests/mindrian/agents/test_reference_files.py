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


def test_one_tool_per_set_of_elements_each_reading_its_own_files(tmp_path: Path) -> None:
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "guide.md").write_text(f"{name}'s guide", encoding="utf-8")
    first = {"guide": tmp_path / "one" / "guide.md", "style": tmp_path / "one" / "style.md"}
    second = {"guide": tmp_path / "two" / "guide.md", "style": tmp_path / "one" / "style.md"}
    # The same elements, from another mapping in another order: the tool made for them.
    again = dict(reversed(list(first.items())))
    assert read_reference_tool(again) is read_reference_tool(first)
    assert read_reference_tool(second) is not read_reference_tool(first)
    assert _read(first, "guide") == "one's guide"
    assert _read(second, "guide") == "two's guide"
    assert _read({"guide": first["guide"]}, "style").startswith("No reference named 'style'")
