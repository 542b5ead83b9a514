"""``mindrian validate`` answered by the script's entry point without the command line
application prints what the application prints, byte for byte, with its exit status; anything
the entry point does not handle goes to the application (builder.entry)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from build_factories import make_project, skill_text

_ENTRY = "from builder.entry import main; raise SystemExit(main())"
_SKILLS = {
    "good": skill_text("good", triggers="\n  - plan\n  - gaps"),
    "warned": skill_text("warned", colour="blue", triggers="\n  - plan"),
    "untriggered": skill_text("untriggered"),
    "foreign": skill_text("foreign").replace("type: operator", "type: weird"),
    "bad": skill_text("bad").replace("type: operator", "type: operater"),
    "nameless": "---\ndescription: no name\n---\n# Body\n",
}


def _run(argv: list[str], project: Path) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONIOENCODING"}
    done = subprocess.run(
        [sys.executable, *argv], capture_output=True, text=True, cwd=project, env=env, timeout=120
    )
    return done.returncode, done.stdout, done.stderr


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_project(tmp_path_factory.mktemp("entry"), _SKILLS)
    outside = tmp_path_factory.mktemp("outside") / "linked"
    outside.mkdir()
    (outside / "SKILL.md").write_text(skill_text("linked"), encoding="utf-8")
    (root / "skills" / "linked").symlink_to(outside)
    return root


@pytest.mark.parametrize(
    "args",
    [
        ["skills/good/SKILL.md"],
        ["skills/good"],
        ["skills/warned/SKILL.md", "skills/foreign/SKILL.md"],
        ["skills/warned/SKILL.md", "--quiet"],
        ["-q", "skills/bad/SKILL.md", "skills/good/SKILL.md"],
        ["skills/bad/SKILL.md", "--format", "github"],
        ["--format=github", "skills/warned", "skills/nameless/SKILL.md"],
        ["--format", "human", "skills/missing/SKILL.md"],
        ["skills/good", "skills/linked/SKILL.md"],  # refused (S114): the application reports it
        ["--format", "json", "skills/good"],  # the application refuses the format (U041)
        [],  # no path (U005)
        ["--", "skills/good"],
    ],
)
def test_the_entry_point_prints_what_the_application_prints(project: Path, args: list[str]) -> None:
    application = _run(["-m", "builder", "validate", *args], project)
    assert _run(["-c", _ENTRY, "validate", *args], project) == application


def test_a_valid_skill_is_validated_without_the_application(project: Path) -> None:
    probe = (
        "import sys\n"
        "from builder.entry import main\n"
        "status = main(['validate', 'skills/good/SKILL.md', '--format', 'github'])\n"
        "print(status, 'builder.cli.app' in sys.modules, 'typer' in sys.modules)\n"
    )
    code, out, err = _run(["-c", probe], project)
    assert (code, err) == (0, "")
    assert out.splitlines()[-1] == "0 False False"


#: What validating a skill whose front matter is plain block YAML must not import: the
#: command line, the YAML libraries (builder.skill.quick_yaml composes it), what only a
#: refusal's hint needs (difflib), GitHub annotations (--format github), the later phases
#: and what they render with (the MCP catalog: the configuration only reads mcp.yaml), what
#: only some skills need (a chain's reader, the inference of triggers the skill does not give,
#: OpenSSL for the digests of references and scripts, which a validation does not keep, the
#: reading of a value strict YAML refuses), a build's reports, a package's files and the
#: server's settings, the runtime's engines (issue 39: start-up within 3 x ``python -c pass``).
_NOT_FOR_VALIDATE = (
    "agno",
    "ast",  # with dis and tokenize, what inspect imports (builder.entry.defer_import)
    "asyncio",
    "builder.cli.app",
    "builder.mcp.catalog",
    "builder.orchestration.serve_settings",
    "builder.pipeline.annotations",
    "builder.pipeline.build_results",
    "builder.pipeline.probe_result",
    "builder.phases.architecture",
    "builder.phases.code_generation",
    "builder.phases.registration",
    "builder.skill.chain",
    "builder.skill.lenient_yaml",
    "builder.skill.package_files",
    "builder.skill.triggers",
    "click",
    "difflib",
    "dis",
    "hashlib",
    "importlib.metadata",
    "jinja2",
    "jsonschema",
    "ladybug",
    "logging",
    "mindrian.project",  # the layout's record: validate needs the root only (project_root)
    "mindrian.routing",  # what infers triggers reads
    "neo4j",
    "pydantic",
    "ruamel",
    "tokenize",
    "typer",
    "yaml",
)


@pytest.mark.parametrize(
    ("skill", "allowed"),
    [
        ("skills/good/SKILL.md", ()),
        ("skills/warned", ("difflib",)),  # "did you mean" for its unknown key (W123)
        ("skills/bad/SKILL.md", ("difflib",)),
        ("skills/untriggered", ("builder.skill.triggers", "mindrian.routing")),
    ],
)
def test_validating_a_skill_imports_only_what_phase_1_reads(
    project: Path, skill: str, allowed: tuple[str, ...]
) -> None:
    probe = (
        "import json, sys\n"
        "from builder.entry import main\n"
        f"status = main(['validate', {skill!r}])\n"
        "print(json.dumps([status, sorted(sys.modules)]))\n"
    )
    code, out, err = _run(["-c", probe], project)
    status, modules = json.loads(out.splitlines()[-1])
    assert code == 0, err
    assert status == (1 if "bad" in skill else 0)
    imported = [
        m
        for m in _NOT_FOR_VALIDATE
        if m not in allowed and any(n == m or n.startswith(m + ".") for n in modules)
    ]
    assert imported == []


#: Records a validation of a plain skill never makes, each a frozen dataclass whose definition
#: costs about a fiftieth of the interpreter's start: a build's reports, the server's settings,
#: the probe's verdict, a project's layout, a package's files, what a phase staged for a shared
#: session, a YAML value read as if quoted, a chain's stages.
_RECORDS_NOT_FOR_VALIDATE = (
    "BuildReport",
    "PhaseReport",
    "ProbeResult",
    "ProjectPaths",
    "QuotedValue",
    "ServeSettings",
    "SkillFile",
    "Staged",
    "_Stage",
)


def test_validating_a_skill_defines_only_the_records_it_reads(project: Path) -> None:
    probe = (
        "import dataclasses, json, sys\n"
        "from builder.entry import main\n"
        "status = main(['validate', 'skills/good/SKILL.md'])\n"
        "records = sorted(\n"
        "    name\n"
        "    for module in list(sys.modules.values())\n"
        "    for name, value in vars(module).items()\n"
        "    if isinstance(value, type) and dataclasses.is_dataclass(value)\n"
        ")\n"
        "print(json.dumps([status, records]))\n"
    )
    code, out, err = _run(["-c", probe], project)
    status, records = json.loads(out.splitlines()[-1])
    assert (code, status) == (0, 0), err
    assert "SkillDefinition" in records  # what phase 1 makes: the probe sees the records
    assert [r for r in _RECORDS_NOT_FOR_VALIDATE if r in records] == []


#: Patterns that only some skills reach (builder.pipeline.patterns): a list, a numbered
#: heading, a block scalar, a subagent note, a chain's stage file, and a refusal of
#: pyproject.toml.
_PATTERNS_ON_FIRST_USE = (
    "builder.orchestration.project._TOML_PLACE",
    "builder.skill.body._ITEM",
    "builder.skill.chain_layout._STAGE_NAME",
    "builder.skill.quick_yaml._HEADER",
    "builder.skill.stages._NUMBERED",
    "builder.skill.subagent._FENCE",
)


def test_validating_a_plain_skill_compiles_no_pattern_it_does_not_reach(project: Path) -> None:
    probe = (
        "import functools, json, re, sys\n"
        "from builder.entry import main\n"
        "status = main(['validate', 'skills/good/SKILL.md'])\n"
        "waiting, compiled = [], []\n"
        "for name, module in list(sys.modules.items()):\n"
        "    for attribute, value in list(vars(module).items()):\n"
        "        made = getattr(value, '__wrapped__', None)\n"
        "        if isinstance(made, functools.partial) and made.func is re.compile:\n"
        "            found = compiled if value.cache_info().currsize else waiting\n"
        "            found.append(f'{name}.{attribute}')\n"
        "print(json.dumps([status, waiting, compiled]))\n"
    )
    code, out, err = _run(["-c", probe], project)
    status, waiting, compiled = json.loads(out.splitlines()[-1])
    assert (code, status) == (0, 0), err
    assert compiled == []
    assert [p for p in _PATTERNS_ON_FIRST_USE if p not in waiting] == []


def test_validating_reads_the_project_file_once(project: Path) -> None:
    # Finding the project and reading its configuration share one parse of pyproject.toml.
    probe = (
        "import tomllib\n"
        "parses = []\n"
        "loads = tomllib.loads\n"
        "tomllib.loads = lambda text: parses.append(text) or loads(text)\n"
        "from builder.entry import main\n"
        "status = main(['validate', 'skills/good/SKILL.md'])\n"
        "print(status, len(parses))\n"
    )
    code, out, err = _run(["-c", probe], project)
    assert (code, err) == (0, "")
    assert out.splitlines()[-1] == "0 1"


def test_a_deferred_module_runs_on_first_use_and_then_is_the_module() -> None:
    # validate and a one-shot select defer inspect, which dataclasses imports for the
    # docstring of a class without one: such a class still gets it, and whoever imports
    # inspect afterwards gets the real module, the stand-in lending it its names.
    probe = (
        "import sys\n"
        "from builder.entry import defer_import\n"
        "defer_import('inspect')\n"
        "import dataclasses\n"
        "assert 'ast' not in sys.modules, 'inspect ran'\n"
        "stand_in = sys.modules['inspect']\n"
        "@dataclasses.dataclass\n"
        "class Point:\n"
        "    x: int\n"
        "import inspect\n"
        "real = sys.modules['inspect']\n"
        "print(Point.__doc__, real is not stand_in, type(real).__name__,\n"
        "      inspect.signature is real.signature, stand_in.Parameter is real.Parameter)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120
    )
    assert done.stdout.split() == ["Point(x:", "int)", "True", "module", "True", "True"], (
        done.stderr
    )


def test_the_application_runs_with_the_cyclic_collector_on(project: Path) -> None:
    # The quick paths pause the collector; a command they hand over (a build of many skills)
    # must get it back, or its garbage cycles would pile up until it ends.
    probe = (
        "import gc\n"
        "import builder.cli.app\n"
        "seen = []\n"
        "builder.cli.app.main = lambda args: seen.append((args, gc.isenabled())) or 0\n"
        "from builder.entry import main\n"
        "print(main(['validate', '--format', 'json', 'skills/good']), seen)\n"
    )
    code, out, err = _run(["-c", probe], project)
    assert (code, err) == (0, "")
    assert out.splitlines()[-1] == "0 [(['validate', '--format', 'json', 'skills/good'], True)]"


@pytest.mark.parametrize("args", [["validate", "skills/good"], ["explain", "--help"], []])
def test_the_script_ends_with_its_objects_frozen_out_of_the_last_collection(
    project: Path, args: list[str]
) -> None:
    """Whichever path answers (quick, or the application with its status), the process's
    objects are out of the cyclic collector's reach when the script returns: the interpreter's
    last collection, after a batch a tenth of a second of one core, walks none of them."""
    script = (
        "import gc, sys\n"
        "from builder.entry import main\n"
        f"status = main({args!r})\n"
        "print(status, gc.get_freeze_count() > 1000)\n"
    )
    code, out, _ = _run(["-c", script], project)
    assert code == 0
    status, frozen = out.split()[-2:]
    assert frozen == "True"
    assert status == ("2" if not args else "0")
