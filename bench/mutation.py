"""``make mutation``: how many one-line breakages the generated packages' own tests catch.

Every skill is built (phases 1-6, ``--until code_generation``, which leaves the
tested packages in the output folder, unregistered) into a temporary folder from
this checkout, and the runtime ``mindrian`` is copied beside it; the packages' tests import
those copies. Each mutation below replaces one line, in the runtime copy or in
one generated package, then runs the tests that could notice it (every
package's for the runtime, the package's own otherwise) and puts the line back.
A mutation is caught when those tests fail. The table lists each one; the last
line is the score. The exit status is 0 whatever the score (benchmarks inform),
1 when a mutation no longer applies (the list must follow the code) or the
unmutated packages fail their tests.

    python -m bench.mutation                 # build into a temp folder, then mutate
    python -m bench.mutation --packages DIR  # use packages built already
    python -m bench.mutation --skill skills/pws  # one skill's package mutations only

With ``--skill`` only the named skills are built and only their packages'
mutations run: a runtime mutation is scored against every package's tests.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["MUTATIONS", "Mutation", "main"]

ROOT = Path(__file__).resolve().parent.parent
#: Upper bound for one test run.
TIMEOUT_SECONDS = 600


@dataclass(frozen=True)
class Mutation:
    """One one-line breakage."""

    target: str
    """``runtime:<path under mindrian/>`` or ``<package>/<file>`` of a generated package."""
    old: str
    """Text of the first line holding it is replaced (the line must exist)."""
    new: str
    """What replaces ``old`` on that line."""
    what: str
    """The breakage in a few words."""


MUTATIONS: tuple[Mutation, ...] = (
    # -- what the model is told ----------------------------------------------------------
    Mutation(
        "runtime:agents/role.py",
        "instructions=self.instructions,",
        'instructions="",',
        "role instructions not sent (Larry)",
    ),
    Mutation(
        "runtime:agents/operator.py",
        "instructions=self.instructions,",
        'instructions="",',
        "operator instructions not sent",
    ),
    Mutation(
        "runtime:agents/base.py",
        'options.setdefault("description", self.description or None)',
        'options.setdefault("description", None)',
        "description dropped",
    ),
    Mutation(
        "runtime:agents/collaborative.py",
        "(self.instructions, own, SYNTHESIS_INSTRUCTIONS)",
        "(own, SYNTHESIS_INSTRUCTIONS)",
        "team leader loses the methodology",
    ),
    Mutation(
        "runtime:agents/collaborative.py",
        "filter(None, (self.description, self.instructions, instructions))",
        "filter(None, (self.description, instructions))",
        "team members lose the skill's instructions",
    ),
    Mutation(
        "runtime:agents/collaborative.py",
        "(self.instructions, own, SYNTHESIS_INSTRUCTIONS)",
        "(self.instructions, SYNTHESIS_INSTRUCTIONS)",
        "synthesiser loses its own instructions",
    ),
    Mutation(
        "runtime:agents/pipeline.py",
        'instructions="\\n\\n".join(filter(None, (self.instructions, instructions))),',
        "instructions=instructions,",
        "pipeline phases lose the skill-wide instructions",
    ),
    Mutation(
        "runtime:agents/guided.py",
        'instructions="\\n\\n".join(filter(None, (self.instructions, instructions))),',
        "instructions=instructions,",
        "guided steps lose the skill-wide instructions",
    ),
    Mutation(
        "runtime:agents/package.py",
        '"instructions": self.instructions + tools.guide,',
        '"instructions": tools.guide,',
        "instructions.md not loaded",
    ),
    Mutation(
        "larry/instructions.md",
        "- Ask exactly one question per turn, and keep the turn under 80 words.",
        "",
        "a front-matter rule removed from Larry's instructions",
    ),
    Mutation(
        "pws_validation/instructions.md",
        "- Nothing is invented: when information is missing",
        "- Anything may be invented: when information is missing",
        "a quality criterion rewritten",
    ),
    Mutation(
        "jtbd/instructions.md",
        "Tone: empathetic, specific, evidence-led",
        "Tone: neutral",
        "the tone replaced",
    ),
    # -- conversation and steps -------------------------------------------------------------
    Mutation(
        "runtime:agents/role.py",
        "num_history_runs=self.history_runs,",
        "num_history_runs=1,",
        "role history cut to one run",
    ),
    Mutation(
        "runtime:agents/role.py",
        "add_history_to_context=True,",
        "add_history_to_context=False,",
        "role history not sent",
    ),
    Mutation(
        "runtime:agents/pipeline.py",
        "done[-1].output if done else task,",
        "task,",
        "a phase does not see the previous output",
    ),
    Mutation(
        "runtime:agents/guided.py",
        'replace(current, status="skipped")',
        "replace(current, user_input=answer)",
        "skip not recorded",
    ),
    Mutation(
        "runtime:agents/collaborative.py",
        "if n != self.synthesizer)",
        "if True)",
        "the synthesiser also answers as a member",
    ),
    Mutation(
        "de_bono_hats/spec.yaml",
        "synthesizer: Blue Hat",
        "synthesizer: ''",
        "the named synthesiser ignored",
    ),
    Mutation(
        "lean_canvas/agent.py",
        "(GuidedAgent, package=PACKAGE)",
        "(GuidedAgent)",
        "the class loses its package",
    ),
    # -- model settings --------------------------------------------------------------------
    Mutation(
        "runtime:providers.py",
        'values["temperature"] = settings.temperature',
        'values["temperature"] = 1.0',
        "temperature replaced",
    ),
    Mutation(
        "runtime:providers.py",
        "values[cap] = settings.max_tokens",
        "values[cap] = 8192",
        "max_tokens not applied",
    ),
    Mutation(
        "runtime:providers.py",
        '"budget_tokens": settings.thinking_budget}',
        '"budget_tokens": 1024}',
        "thinking budget replaced",
    ),
    Mutation(
        "runtime:agents/package.py",
        '"model_settings": ModelSettings.from_spec(self.spec["model"]),',
        '"model_settings": ModelSettings(),',
        "spec settings not read",
    ),
    Mutation(
        "pws_validation/spec.yaml", "temperature: 0.3", "temperature: 0.9", "a changed temperature"
    ),
    Mutation(
        "deep_research/spec.yaml", "max_tokens: 12000", "max_tokens: 1200", "a changed response cap"
    ),
    # -- structured answers --------------------------------------------------------------------
    Mutation(
        "runtime:agents/operator.py",
        "if not isinstance(content, self.output_schema):",
        "if False:",
        "an answer off the schema accepted",
    ),
    Mutation(
        "runtime:agents/output.py",
        'ConfigDict(extra="forbid"',
        'ConfigDict(extra="ignore"',
        "unknown scores accepted",
    ),
    Mutation(
        "runtime:agents/output.py",
        "Field(ge=low, le=high, alias=",
        "Field(alias=",
        "score ranges dropped",
    ),
    Mutation(
        "runtime:agents/output.py",
        "elif abs(stated - parts) > _TOLERANCE:",
        "elif False:",
        "an inconsistent total accepted",
    ),
    Mutation(
        "runtime:agents/output.py",
        "description=described),",
        'description=""),',
        "score descriptions dropped",
    ),
    Mutation(
        "runtime:agents/collaborative.py",
        "output_schema=self.output_schema,",
        "output_schema=None,",
        "team synthesis unstructured",
    ),
    Mutation(
        "runtime:agents/base.py",
        "content = {k: v for k, v in (reply.structured or {}).items() if k in _CONTENT_FIELDS}",
        "content = {}",
        "declared returns left empty",
    ),
    Mutation("pws_validation/spec.yaml", "maximum: 25.0", "maximum: 30.0", "a score range widened"),
    # -- the handoff contract -----------------------------------------------------------------
    Mutation(
        "runtime:agents/base.py",
        "if clarity.overall_clarity >= self.min_clarity:",
        "if True:",
        "clarity not checked",
    ),
    Mutation(
        "runtime:agents/base.py",
        "if self.allowed_callers and context.from_agent not in self.allowed_callers:",
        "if False:",
        "callers not checked",
    ),
    Mutation(
        "runtime:agents/base.py",
        "if context.handoff_type not in self.accepted_handoffs:",
        "if False:",
        "handoff types not checked",
    ),
    Mutation(
        "runtime:agents/package.py",
        '"min_clarity": float(receives.get("min_clarity") or 0.0),',
        '"min_clarity": 0.0,',
        "min_clarity not read",
    ),
    Mutation(
        "runtime:agents/package.py",
        'return frozenset(HandoffType(t) for t in self.handoff.get("supports", ("delegate",)))',
        "return frozenset({HandoffType.DELEGATE})",
        "supports not read",
    ),
    Mutation(
        "pws_validation/spec.yaml",
        "min_clarity: 0.6",
        "min_clarity: 0.0",
        "pws accepts an unclear problem",
    ),
    Mutation("devil_advocate/spec.yaml", "    - larry", "    - anyone", "the callers changed"),
    Mutation(
        "minto_pyramid/README.md",
        "| accepts | delegate, return, escalate |",
        "| accepts | delegate |",
        "README states other handoff types",
    ),
)


def _runtime_dir(work: Path) -> Path:
    return work / "runtime"


def _file_of(mutation: Mutation, work: Path, packages: Path) -> Path:
    if mutation.target.startswith("runtime:"):
        return _runtime_dir(work) / "mindrian" / mutation.target.removeprefix("runtime:")
    return packages / mutation.target


def _env(work: Path, packages: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(
        PYTHONPATH=os.pathsep.join((str(_runtime_dir(work)), str(packages))),
        PYTHONDONTWRITEBYTECODE="1",
        AGNO_TELEMETRY="false",
        MINDRIAN_OFFLINE="1",
    )
    return env


def _tests_pass(folders: Sequence[str], work: Path, packages: Path) -> bool:
    command = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider"]
    command += ["-p", "no:hypothesispytest", "--rootdir", str(packages)]
    command += [f"{name}/tests" for name in folders]
    done = subprocess.run(
        command,
        cwd=packages,
        env=_env(work, packages),
        capture_output=True,
        timeout=TIMEOUT_SECONDS,
        check=False,
    )
    return done.returncode == 0


def _mutated(text: str, mutation: Mutation) -> str | None:
    lines = text.split("\n")
    for index, line in enumerate(lines):
        if mutation.old in line:
            lines[index] = line.replace(mutation.old, mutation.new, 1)
            return "\n".join(lines)
    return None


def _build(packages: Path, work: Path, skills: Sequence[str]) -> None:
    command = [sys.executable, "-m", "builder", "build", *(skills or ["--all"])]
    command += ["--quiet", "--out", str(packages)]
    command += ["--checkpoints", str(work / "checkpoints"), "--registry", str(work / "reg.lbug")]
    command += ["--until", "code_generation"]
    subprocess.run(command, cwd=ROOT, check=True, timeout=3600)


def _chosen(names: Sequence[str], every: bool) -> tuple[Mutation, ...]:
    """Every mutation, or (one skill's run) only those of the packages in ``names``."""
    if every:
        return MUTATIONS
    return tuple(m for m in MUTATIONS if m.target.split("/", 1)[0] in names)


def _run(packages: Path, work: Path, every: bool) -> int:
    shutil.copytree(ROOT / "mindrian", _runtime_dir(work) / "mindrian")
    names = sorted(p.parent.name for p in packages.glob("*/agent.py"))
    (packages / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    if not names or not _tests_pass(names, work, packages):
        print("the unmutated packages fail their own tests (or none was built)", file=sys.stderr)
        return 1
    mutations = _chosen(names, every)
    caught = 0
    stale = []
    width = max(len(m.what) for m in MUTATIONS)
    for number, mutation in enumerate(mutations, 1):
        path = _file_of(mutation, work, packages)
        original = path.read_text(encoding="utf-8") if path.is_file() else ""
        changed = _mutated(original, mutation)
        if changed is None:
            stale.append(mutation)
            print(f"{number:3}  {mutation.what:<{width}}  NOT APPLIED  {mutation.target}")
            continue
        path.write_text(changed, encoding="utf-8")
        try:
            runtime = mutation.target.startswith("runtime:")
            folders = names if runtime else [mutation.target.split("/", 1)[0]]
            noticed = not _tests_pass(folders, work, packages)
        finally:
            path.write_text(original, encoding="utf-8")
        caught += noticed
        verdict = "caught" if noticed else "MISSED"
        print(f"{number:3}  {mutation.what:<{width}}  {verdict:<11}  {mutation.target}", flush=True)
    applied = len(mutations) - len(stale)
    share = 100 * caught / applied if applied else 0.0
    print(f"caught {caught} of {applied} mutations ({share:.0f} %)")
    return 1 if stale else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Build (unless given packages), apply every mutation in turn, print the table."""
    parser = argparse.ArgumentParser(prog="python -m bench.mutation", description=__doc__)
    parser.add_argument("--packages", type=Path, help="Generated packages to copy and mutate.")
    parser.add_argument(
        "--skill", action="append", default=[], help="Build only this skill (repeatable)."
    )
    args = parser.parse_args(argv)
    if args.packages is not None and args.skill:
        parser.error("give --packages or --skill, not both")
    with tempfile.TemporaryDirectory(prefix="mindrian-mutation-") as temp:
        work = Path(temp)
        packages = work / "packages"
        if args.packages is None:
            _build(packages, work, args.skill)
        else:
            shutil.copytree(args.packages, packages, ignore=shutil.ignore_patterns("__pycache__"))
        return _run(packages, work, every=not args.skill)


if __name__ == "__main__":
    raise SystemExit(main())
