"""Fuzz suite: any SKILL.md gives a result or a located error with a code, never a crash.

Phase 1 meets arbitrary text and arbitrary YAML front matter (2,000 cases);
phases 1-6 meet valid-shaped skills with hostile values: NaN, infinities,
integers beyond any float, control characters (300 cases, phase 6 rendering,
formatting and compiling the package without its pytest run), and a failed
build never leaves a package half staged or installed; a few skills are built
through all seven phases by the command line with ``--json`` (exit 0 or 1, a
complete JSON report on stdout, never the internal-error status 3). Examples
are derandomised: CI runs the same cases every time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from builder.orchestration.runner import build_source
from builder.phases import load_phase
from builder.phases.code_generation import RENDER_ONLY
from builder.phases.skill_analysis import analyse
from builder.pipeline.config import BuildConfig
from builder.pipeline.contract import SkillSource
from builder.pipeline.errors import CompilerError
from builder.pipeline.serial import to_plain
from builder.skill.source import source_digest
from mindrian.project import ProjectPaths

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
FUZZ = settings(
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

#: Scalars as YAML may carry them: NaN, infinities, huge integers, control characters.
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**400), max_value=10**400),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
    st.sampled_from(["operator", "role", "collaborative", "pipeline", "guided", "anthropic:x"]),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=12,
)
MINDRIAN_KEYS = [
    "type", "version", "model", "tone", "triggers", "problem_types", "inputs", "outputs",
    "chains_to", "handoff", "sub_agents", "phases", "scores", "tools", "behavioral_rules",
    "debate_rounds", "metadata", "allowed-tools", "license",
]  # fmt: skip
headings = st.sampled_from(
    ["Methodology", "Process", "Output format", "Quality criteria", "Phases", "Examples", "x"]
)


def skill_source(text: str | bytes) -> SkillSource:
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    return SkillSource(
        path="skills/fuzz/SKILL.md", data=raw, files=(), digest=source_digest(raw, ())
    )


def front_matter(data: dict[str, Any]) -> str:
    return yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=4096)


@st.composite
def skills(draw: st.DrawFn, *, hostile_fields: bool = True) -> str:
    data: dict[str, Any] = {
        "name": draw(
            st.one_of(
                st.text(min_size=1, max_size=60),
                st.from_regex(r"[a-z][a-z-]{0,20}", fullmatch=True),
            )
        ),
        "description": draw(st.text(min_size=1, max_size=80)),
    }
    if hostile_fields:
        for key in draw(st.lists(st.sampled_from(MINDRIAN_KEYS), max_size=5, unique=True)):
            data[key] = draw(values)
    body = "\n\n".join(
        f"{'#' * draw(st.integers(1, 3))} {draw(headings)}{draw(st.text(max_size=20))}\n\n"
        f"{draw(st.text(max_size=60))}"
        for _ in range(draw(st.integers(0, 4)))
    )
    return f"---\n{front_matter(data)}---\n{body}\n"


def assert_clean(run: Any) -> Any:
    """``run()``'s result, or None when it raised a located, coded compiler error."""
    try:
        return run()
    except CompilerError as error:
        assert error.code and error.code != "I001", error
        assert error.location is None or error.location.path == "skills/fuzz/SKILL.md"
        return None


@settings(FUZZ, max_examples=700)
@given(st.one_of(st.text(max_size=400), st.binary(max_size=400)))
def test_phase_one_takes_any_text(text: str | bytes) -> None:
    assert_clean(lambda: analyse(skill_source(text)))


@settings(FUZZ, max_examples=1300)
@given(skills())
def test_phase_one_takes_any_front_matter(text: str) -> None:
    result = assert_clean(lambda: analyse(skill_source(text)))
    if result is not None:
        # What phase 1 accepts, later phases can digest: finite numbers only.
        json.dumps(to_plain(result.output), allow_nan=False)


#: Numbers as a hostile skill writes them: NaN, infinities, beyond any float, negative.
numbers = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(10**400), max_value=10**400),
    st.floats(min_value=0, max_value=1),
)
#: Text with control characters, line breaks and anything else a terminal or a prompt fears.
prose = st.text(max_size=30)


@st.composite
def mindrian_fields(draw: st.DrawFn) -> dict[str, Any]:
    """Mindrian fields of the right shapes, with hostile values in them."""
    fields: dict[str, Any] = {
        "type": draw(st.sampled_from(["operator", "role", "collaborative", "pipeline", "guided"])),
        "model": "anthropic:" + draw(st.text(min_size=1, max_size=20)),
        "triggers": draw(st.lists(prose, min_size=1, max_size=3)),
    }
    optional: dict[str, st.SearchStrategy[Any]] = {
        "tone": prose,
        "behavioral_rules": st.lists(prose, max_size=3),
        "problem_types": st.lists(prose, max_size=3),
        "inputs": st.lists(st.from_regex(r"[a-z_]{1,8}", fullmatch=True), max_size=3),
        "chains_to": st.lists(
            st.fixed_dictionaries(
                {"target": st.from_regex(r"[a-z][a-z-]{0,10}", fullmatch=True), "weight": numbers}
            ),
            max_size=2,
        ),
        "handoff": st.fixed_dictionaries({"min_clarity": numbers}),
        "debate_rounds": numbers,
        "sub_agents": st.lists(
            st.fixed_dictionaries({"name": prose, "instructions": prose}), max_size=3
        ),
        "phases": st.lists(prose, max_size=3),
        "scores": st.fixed_dictionaries(
            {
                "dimensions": st.lists(
                    st.fixed_dictionaries(
                        {"name": prose, "min": numbers, "max": numbers, "description": prose}
                    ),
                    max_size=2,
                )
            }
        ),
    }
    for key in draw(st.lists(st.sampled_from(sorted(optional)), max_size=4, unique=True)):
        fields[key] = draw(optional[key])
    return fields


@st.composite
def valid_shaped_skills(draw: st.DrawFn) -> str:
    """A SKILL.md with a plausible name, Mindrian fields of hostile values and any body."""
    data: dict[str, Any] = {
        "name": draw(st.from_regex(r"[a-z][a-z-]{0,20}", fullmatch=True)),
        "description": draw(st.text(min_size=1, max_size=80)),
    }
    fields = draw(mindrian_fields())
    if draw(st.booleans()):
        data["metadata"] = {"mindrian": fields}
    else:
        data.update(fields)
    body = "\n\n".join(
        f"{'#' * draw(st.integers(1, 3))} {draw(headings)}{draw(st.text(max_size=20))}\n\n"
        f"{draw(st.text(max_size=60))}"
        for _ in range(draw(st.integers(0, 4)))
    )
    return f"---\n{front_matter(data)}---\n{body}\n"


def _render_only(name: str) -> Any:
    return RENDER_ONLY if name == "code_generation" else load_phase(name)


@settings(FUZZ, max_examples=300)
@given(valid_shaped_skills())
def test_phases_one_to_six_take_hostile_values_and_stage_atomically(
    tmp_path_factory: pytest.TempPathFactory, text: str
) -> None:
    folder = tmp_path_factory.mktemp("fuzz")
    report = build_source(
        skill_source(text),
        BuildConfig(root=str(folder)),
        checkpoints_dir=folder / "checkpoints",
        until_phase="code_generation",
        phases=_render_only,  # phase 6 renders, formats and compiles; its pytest run is the CLI's
    )
    last = report.phases[-1].name if report.phases else "none"
    event(f"{'failed' if report.problem else 'passed'} at {last}")
    paths = ProjectPaths(folder)
    staged = sorted(p.name for p in paths.staging.iterdir()) if paths.staging.exists() else []
    # Nothing is installed before phase 7; staging holds a whole ready package or nothing.
    assert not paths.generated.exists()
    if report.problem is not None:
        assert report.problem.exit_code == 1 and report.problem.code != "I001", report.problem
        assert staged == []
    else:
        assert len(report.phases) == 6
        (ready,) = staged
        package = paths.staging / ready / ready.removesuffix(".ready")
        assert (package / "agent.py").is_file() and (package / "spec.yaml").is_file()


@settings(FUZZ, max_examples=int(os.environ.get("MINDRIAN_FUZZ_BUILDS", "3")))
@given(skills(hostile_fields=False))
def test_full_builds_exit_cleanly_with_a_complete_json_report(
    tmp_path_factory: pytest.TempPathFactory, text: str
) -> None:
    project = tmp_path_factory.mktemp("project")
    (project / "pyproject.toml").write_text('[project]\nname = "f"\n\n[tool.mindrian]\n')
    skill = project / "skills" / "fuzz" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(
        text.replace("\n---\n", "\nmodel: anthropic:m\ntriggers: [fuzz]\n---\n", 1),
        encoding="utf-8",
        errors="surrogatepass",
    )
    done = subprocess.run(
        [sys.executable, "-m", "builder", "build", "skills/fuzz/SKILL.md", "--json"],
        cwd=project,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode in (0, 1), done.stderr
    assert "Traceback" not in done.stderr
    report = json.loads(done.stdout)
    assert report["exit_code"] == done.returncode and len(report["builds"]) == 1
    paths = ProjectPaths(project)
    installed = (
        sorted(p.name for p in paths.generated.iterdir()) if paths.generated.exists() else []
    )
    # One transaction: the package and registry.yaml are both there, or neither is.
    if done.returncode == 0:
        assert len(installed) == 2 and "registry.yaml" in installed
    else:
        assert installed == []
    # Staging keeps at most the ready package a failed phase 7 leaves for the next build.
    staged = sorted(p.name for p in paths.staging.iterdir()) if paths.staging.exists() else []
    assert staged == [] or (
        done.returncode == 1 and len(staged) == 1 and staged[0].endswith(".ready")
    )
