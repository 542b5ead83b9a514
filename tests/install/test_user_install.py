"""mindrian as a user meets it: the built wheel in a fresh venv, a project outside this checkout.

``python -m build`` (what ``make dist`` runs) writes the sdist and, from it, the wheel; the wheel
goes into a new venv with its ``build`` extra (pip's configured indexes, the versions of
constraints.txt). Then, in a temporary folder with no PYTHONPATH and nothing of the checkout
importable, the commands of the README's "Use it in your repository": ``init``, ``new``,
``build --all`` (a copy of skills/pws and the new skill), ``check`` as the GitHub Action runs
it, ``run`` and ``serve`` with the scripted model, ``select``, and ``validate --format github``
on a broken skill. A second venv gets only a generated package: the runtime, no compiler.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from builder import __version__
from mindrian.testing.served import free_port

pytestmark = pytest.mark.slow  # builds a wheel, two venvs and whole builds

ROOT = Path(__file__).resolve().parents[2]
#: Distributions of the ``build`` extra that the runtime must not pull in.
COMPILER_ONLY = ("black", "copier", "jinja2", "ruamel")
_SERVE_TIMEOUT_SECONDS = 120
#: What a source tree has that is not source: environments, caches, build output, Node packages.
_NOT_SOURCE = (
    ".venv",
    ".git",
    "node_modules",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    ".mindrian",
    ".pytest_cache",
    ".hypothesis",
    ".mypy_cache",
    ".ruff_cache",
)


@dataclass(frozen=True)
class Dist:
    """The built distribution files."""

    wheel: Path
    """``mindrian-<version>-py3-none-any.whl``."""
    sdist: Path
    """``mindrian-<version>.tar.gz``."""


def _run(
    args: Sequence[str | Path], cwd: Path, env: dict[str, str], ok: bool = True
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    if ok:
        assert done.returncode == 0, f"{args}: {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


def _clean_env(venv: Path) -> dict[str, str]:
    """The user's shell with ``venv`` active: no PYTHONPATH, nothing pointing at the checkout."""
    keep = ("HOME", "LANG", "LC_ALL", "TMPDIR", "MINDRIAN_CACHE_DIR")
    keep += tuple(k for k in os.environ if k.startswith("PIP_"))
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env["PATH"] = os.pathsep.join((str(venv / "bin"), os.environ.get("PATH", "")))
    env.update(VIRTUAL_ENV=str(venv), AGNO_TELEMETRY="false", NO_COLOR="1")
    return env


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Dist:
    out = tmp_path_factory.mktemp("dist")
    # From a copy without the checkout's environment, caches and installed Node packages, so
    # the sdist cannot lean on them, and setuptools' in-place egg-info never races another build.
    source = tmp_path_factory.mktemp("source") / "mindrian"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*_NOT_SOURCE))
    env = {**os.environ, "PYTHONPATH": ""}
    _run([sys.executable, "-m", "build", "--outdir", out, source], cwd=out, env=env)
    (wheel,) = out.glob("mindrian-*.whl")
    (sdist,) = out.glob("mindrian-*.tar.gz")
    return Dist(wheel, sdist)


def _venv(folder: Path) -> Path:
    _run([sys.executable, "-m", "venv", folder], cwd=folder.parent, env=dict(os.environ))
    return folder


@pytest.fixture(scope="module")
def tool(dist: Dist, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv with ``mindrian[build]`` installed from the wheel."""
    venv = _venv(tmp_path_factory.mktemp("tool") / "venv")
    env = _clean_env(venv)
    pip = [venv / "bin" / "python", "-m", "pip", "install", "--quiet"]
    _run([*pip, "-c", ROOT / "constraints.txt", f"{dist.wheel}[build]"], cwd=venv, env=env)
    return venv


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "pyproject.toml").write_text('[project]\nname = "plugins"\n', encoding="utf-8")
    return folder


def test_the_distribution_carries_what_the_checkout_had(dist: Dist) -> None:
    import tarfile
    import zipfile

    names = set(zipfile.ZipFile(dist.wheel).namelist())
    for template in (ROOT / "templates").rglob("*"):
        if template.is_file():
            shipped = "builder/_templates/" + template.relative_to(ROOT / "templates").as_posix()
            assert shipped in names
    for name in ("lint.mjs", "package.json", "package-lock.json"):
        assert f"builder/graph/cypher_lint/{name}" in names
    assert {"builder/schemas/skill.schema.json", "mindrian/py.typed"} <= names
    with tarfile.open(dist.sdist) as sdist:
        members = {m.split("/", 1)[1] for m in sdist.getnames() if "/" in m}
    assert {"setup.py", "templates/agent/agent.py.jinja", "pyproject.toml"} <= members
    # The test Neo4j (GPLv3, fetched by ci/neo4j-server) is never shipped, nor its launcher.
    assert not {m for m in members | names if m.startswith("ci/") or "neo4j/" in m}


def test_a_user_repository_end_to_end(tool: Path, project: Path, tmp_path: Path) -> None:
    env = _clean_env(tool)
    mindrian = tool / "bin" / "mindrian"

    assert _run([mindrian, "--version"], project, env).stdout == f"mindrian {__version__}\n"
    assert "mindrian new" in _run([mindrian, "init"], project, env).stdout
    _run([mindrian, "new", "pricing-check", "--type", "operator"], project, env)
    shutil.copytree(ROOT / "skills" / "pws", project / "skills" / "pws")
    _run([mindrian, "build", "--all"], project, env)
    # The installed compiler writes what this checkout committed, byte for byte.
    ours = project / "generated" / "pws_validation"
    committed = ROOT / "generated" / "pws_validation"
    assert _tree(ours) == _tree(committed)

    # What pip leaves in a package folder it builds in place is not drift; an edit is, and the
    # Action's step (ci/action.sh) annotates exactly that file.
    pip = [tool / "bin" / "python", "-m", "pip", "wheel", "--quiet", "--no-deps"]
    _run([*pip, "--wheel-dir", tmp_path / "wheels", ours], project, env)
    assert (ours / "build").is_dir() and list(ours.glob("*.egg-info"))
    edited = project / "generated" / "pricing_check" / "instructions.md"
    original = edited.read_bytes()
    edited.write_bytes(original + b"edited\n")
    checked = _run(["bash", ROOT / "ci" / "action.sh"], project, env, ok=False)
    assert checked.returncode == 1
    assert [line for line in checked.stdout.splitlines() if line.startswith("::")] == [
        "::error file=generated/pricing_check/instructions.md,title=D001::differs from a fresh "
        "build of its skill (run: mindrian build --all, commit it)"
    ]
    edited.write_bytes(original)

    script = tmp_path / "pws.yaml"
    shutil.copyfile(ROOT / "examples" / "pws.yaml", script)
    model = f"scripted:{script}"
    ran = _run(
        [mindrian, "run", "pws-validation", "Lab equipment resale", "--model", model], project, env
    )
    assert "PWS scorecard" in ran.stdout
    chosen = _run([mindrian, "select", "--trigger", "validate", "--json"], project, env)
    assert "pws" in json.dumps(json.loads(chosen.stdout))
    with _served(mindrian, project, env, model, tmp_path / "serve.log") as url:
        answer = httpx.post(
            f"{url}/agents/pws-validation/runs",
            data={"message": "Lab equipment resale", "stream": "false"},
            timeout=120.0,
        )
    assert answer.status_code == 200, answer.text
    assert "PWS scorecard" in json.dumps(answer.json())

    (project / "drafts" / "broken").mkdir(parents=True)
    (project / "drafts" / "broken" / "SKILL.md").write_text("---\nname: x\n", encoding="utf-8")
    broken = _run(
        [mindrian, "validate", "--format", "github", "drafts/broken/SKILL.md"],
        project,
        env,
        ok=False,
    )
    assert broken.returncode == 1
    assert broken.stdout.startswith("::error file=drafts/broken/SKILL.md,line=1,col=1,title=S")


def test_a_generated_package_installs_the_runtime_only(
    dist: Dist, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    venv = _venv(tmp_path_factory.mktemp("agent") / "venv")
    env = _clean_env(venv)
    package = tmp_path / "pws_validation"
    shutil.copytree(ROOT / "generated" / "pws_validation", package)
    pip = [venv / "bin" / "python", "-m", "pip", "install", "--quiet"]
    _run(
        [*pip, "-c", ROOT / "constraints.txt", "--find-links", dist.wheel.parent, package],
        tmp_path,
        env,
    )
    python = venv / "bin" / "python"
    probe = "import importlib.util as u; print([m for m in %r if u.find_spec(m)])"
    assert _run([python, "-c", probe % (COMPILER_ONLY,)], tmp_path, env).stdout == "[]\n"
    snippet = (
        "import asyncio\n"
        "from mindrian.handoff import ProblemClarity\n"
        "from pws_validation import PwsValidationAgent\n"
        "agent = PwsValidationAgent()\n"
        "clarity = ProblemClarity(what_clarity=0.8, who_clarity=0.8, success_clarity=0.8)\n"
        "context = agent.create_handoff_context('Lab equipment resale', clarity)\n"
        "result = asyncio.run(agent.process_handoff(context))\n"
        "assert result.success, result.error\n"
        "print(result.output)\n"
    )
    model = {"MINDRIAN_MODEL": f"scripted:{ROOT / 'examples' / 'pws.yaml'}"}
    ran = _run([python, "-c", snippet], tmp_path, {**env, **model})
    assert "PWS scorecard" in ran.stdout
    # The command line runs on the runtime; a compiling command names the extra it lacks.
    mindrian = venv / "bin" / "mindrian"
    assert _run([mindrian, "--version"], tmp_path, env).stdout == f"mindrian {__version__}\n"
    assert _run([mindrian, "run", "--help"], tmp_path, env).stdout.startswith(
        "Usage: mindrian run "
    )
    cli = _run([mindrian, "build"], tmp_path, env, ok=False)
    assert cli.returncode == 2
    assert cli.stderr.startswith("error[U040]: mindrian build needs the compiler's dependencies")
    assert cli.stderr.endswith("install them with: pip install 'mindrian[build]'\n")


def _tree(folder: Path) -> dict[str, bytes]:
    skip = ("build", "__pycache__")
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
        and not set(skip) & set(p.relative_to(folder).parts)
        and ".egg-info" not in p.as_posix()
    }


class _Served:
    """``mindrian serve`` on a free port of 127.0.0.1 until the block ends."""

    def __init__(self, mindrian: Path, cwd: Path, env: dict[str, str], model: str, log: Path):
        self.port = free_port()
        self.log = log
        with log.open("wb") as sink:
            self.process = subprocess.Popen(
                [str(mindrian), "serve", "--port", str(self.port), "--model", model],
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=subprocess.STDOUT,
            )

    def __enter__(self) -> str:
        url = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + _SERVE_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            assert self.process.poll() is None, self.log.read_text(encoding="utf-8")
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=5) as answer:
                    if answer.status == 200:
                        return url
            except (urllib.error.URLError, OSError):
                time.sleep(0.5)
        raise AssertionError(f"no answer on {url}/health:\n{self.log.read_text()}")

    def __exit__(self, *exc: object) -> None:
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _served(mindrian: Path, cwd: Path, env: dict[str, str], model: str, log: Path) -> _Served:
    return _Served(mindrian, cwd, env, model, log)
