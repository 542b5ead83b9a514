"""The rendering engine: literals, identifiers, headers, formatting, template digest."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from builder.codegen import render
from builder.codegen.render import (
    GENERATED_NOTICE,
    check_identifier,
    class_name,
    environment,
    format_python,
    header,
    pyliteral,
    template_digest,
)
from builder.pipeline.errors import CodegenError

#: Text a SKILL.md may hold that would break naive code generation.
ADVERSARIAL_TEXT = (
    'say "hi"',
    "it's",
    '"""',
    "'''",
    '""""""x"""',
    "{{ spec.id }}",
    "{% for x in y %}{% endfor %}",
    "{# comment #}",
    "back\\slash\\",
    "C:\\path\\new\\table",
    "ends with a backslash \\",
    "ünïcödé — 😀 \u2028 \u200b",
    "line\nbreak\r\nand\rcarriage",
    "tab\tand \x0b \x0c \x7f \x1b[31m",
    "\\N{BULLET} \\u2022 \\x00",
    "__import__('os').system('echo pwned')",
    "class def return lambda",
    "",
)


@pytest.mark.parametrize("text", ADVERSARIAL_TEXT)
def test_pyliteral_of_text_reads_back_exactly(text: str) -> None:
    source = f"VALUE = {pyliteral(text)}\n"
    tree = ast.parse(source)
    assert isinstance(tree.body[0].value, ast.Constant)
    namespace: dict[str, object] = {}
    exec(compile(source, "<test>", "exec"), namespace)
    assert namespace["VALUE"] == text


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, "None"),
        (True, "True"),
        (3, "3"),
        (0.25, "0.25"),
        ([], "[]"),
        ((), "()"),
        (["a"], "['a']"),
        (("a",), "('a',)"),
        (("a", [1]), "('a', [1])"),
        ({"b": 1, "a": [2]}, "{'a': [2], 'b': 1}"),
    ],
)
def test_pyliteral_of_plain_data(value: object, expected: str) -> None:
    assert pyliteral(value) == expected


def test_pyliteral_survives_black_inside_nested_data() -> None:
    data = {"schema": {"properties": {t: {"description": t} for t in ADVERSARIAL_TEXT if t}}}
    source = format_python(f"DATA = {pyliteral(data)}\n", "x.py")
    namespace: dict[str, object] = {}
    exec(compile(source, "<test>", "exec"), namespace)
    assert namespace["DATA"] == ast.literal_eval(pyliteral(data))
    assert format_python(source, "x.py") == source


@pytest.mark.parametrize(
    "value",
    [float("nan"), float("inf"), {1: "int key"}, {"k": object()}, b"bytes", {"a", "b"}],
)
def test_pyliteral_refuses_what_has_no_plain_literal(value: object) -> None:
    with pytest.raises(CodegenError):
        pyliteral(value)


@pytest.mark.parametrize("name", ["pws_validation", "larry", "_private", "café"])
def test_identifiers_accepted(name: str) -> None:
    assert check_identifier(name) == name


@pytest.mark.parametrize("name", ["class", "None", "a-b", "1abc", "", "a b", "x;import os", "a.b"])
def test_identifiers_refused(name: str) -> None:
    with pytest.raises(CodegenError) as caught:
        check_identifier(name)
    assert caught.value.code == "C011"


@pytest.mark.parametrize(
    ("identifier", "expected"),
    [
        ("pws_validation", "PwsValidationAgent"),
        ("larry", "LarryAgent"),
        ("class_", "ClassAgent"),
        ("de_bono_hats", "DeBonoHatsAgent"),
        ("_x", "XAgent"),
    ],
)
def test_class_names(identifier: str, expected: str) -> None:
    assert class_name(identifier) == expected


@pytest.mark.parametrize(
    ("path", "first_line", "last_line"),
    [
        ("agent.py", "# " + GENERATED_NOTICE + ".", '# source: "skills/pws/SKILL.md"'),
        ("spec.yaml", "# " + GENERATED_NOTICE + ".", '# source: "skills/pws/SKILL.md"'),
        ("registration.cypher", "// " + GENERATED_NOTICE + ".", '// source: "skills/pws/SKILL.md"'),
        ("workflow.dot", "// " + GENERATED_NOTICE + ".", '// source: "skills/pws/SKILL.md"'),
        ("README.md", "<!--", "-->"),
    ],
)
def test_header_syntax_per_file_kind(path: str, first_line: str, last_line: str) -> None:
    lines = header(path, "skills/pws/SKILL.md").splitlines()
    assert lines[0] == first_line
    assert lines[-1] == last_line
    assert any('source: "skills/pws/SKILL.md"' in line for line in lines)


@pytest.mark.parametrize(
    "source_path",
    ["skills/a\nimport os/SKILL.md", "skills/--> <script>/SKILL.md", "skills/a\r\nb/SKILL.md"],
)
def test_header_cannot_be_broken_out_of(source_path: str) -> None:
    py = header("agent.py", source_path)
    assert all(line.startswith("# ") for line in py.splitlines())
    ast.parse(py)
    md = header("README.md", source_path)
    assert md.count("-->") == 1 and md.rstrip().endswith("-->")
    assert len(md.splitlines()) == 4


def test_header_for_unknown_suffix_is_an_error() -> None:
    with pytest.raises(CodegenError):
        header("data.bin", "s")


def test_format_python_reports_the_file_on_syntax_error() -> None:
    with pytest.raises(CodegenError, match=r"broken\.py"):
        format_python("def (:\n", "broken.py")


def test_environment_is_strict_and_sandboxed(tmp_path: Path) -> None:
    (tmp_path / "t.jinja").write_text("{{ missing }}", encoding="utf-8")
    (tmp_path / "u.jinja").write_text("{{ ''.__class__.__mro__ }}", encoding="utf-8")
    env = environment(tmp_path)
    import jinja2.exceptions

    with pytest.raises(jinja2.exceptions.UndefinedError):
        env.get_template("t.jinja").render()
    with pytest.raises(jinja2.exceptions.SecurityError):
        env.get_template("u.jinja").render()
    assert env.autoescape is False


def test_template_digest_tracks_names_and_bytes(tmp_path: Path) -> None:
    (tmp_path / "a.jinja").write_text("A", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.jinja").write_text("B", encoding="utf-8")
    first = template_digest(tmp_path)
    assert first == template_digest(tmp_path)
    (tmp_path / "sub" / "b.jinja").write_text("B2", encoding="utf-8")
    changed_bytes = template_digest(tmp_path)
    (tmp_path / "sub" / "b.jinja").rename(tmp_path / "sub" / "c.jinja")
    renamed = template_digest(tmp_path)
    assert len({first, changed_bytes, renamed}) == 3
    assert first.startswith("sha256:")


def test_shipped_templates_have_a_digest() -> None:
    assert template_digest().startswith("sha256:")


def test_black_answers_come_from_the_cache_once_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MINDRIAN_CACHE_DIR", str(tmp_path))
    cold = format_python("x = {  'a':1 }\n", "x.py")
    assert cold == 'x = {"a": 1}\n'

    def no_black(text: str, path: str) -> str:
        raise AssertionError("Black ran although its answer was cached")

    monkeypatch.setattr(render, "_black", no_black)
    assert format_python("x = {  'a':1 }\n", "x.py") == cold


def test_a_damaged_black_cache_entry_is_formatted_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MINDRIAN_CACHE_DIR", str(tmp_path))
    format_python("y=1\n", "y.py")
    (entry,) = (tmp_path / "black").iterdir()
    entry.write_text('{"formatted": 3}')
    assert format_python("y=1\n", "y.py") == "y = 1\n"
    entry.write_text("not json")
    assert format_python("y=1\n", "y.py") == "y = 1\n"


def test_black_s_answers_are_kept_within_their_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Formatting sweeps Black's folder once a day: answers unused for a month go, and the
    folder keeps at most its bound's count (it held 144,000 answers on a bench machine)."""
    from builder.pipeline.cache import Bound

    _aged: dict[Path, float] = {}
    monkeypatch.setenv("MINDRIAN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(render, "BLACK_CACHE_BOUND", Bound(max_entries=3, max_age=30 * 86400.0))
    folder = tmp_path / "black"
    texts = [f"x{i}=1\n" for i in range(5)]
    for i, text in enumerate(texts):  # each used a minute after the one before
        format_python(text, "x.py")
        (entry,) = set(folder.glob("*.json")) - set(_aged)
        _aged[entry] = time.time() - 60 * (len(texts) - i)
    for entry, used in _aged.items():
        os.utime(entry, (used, used))
    stale = folder / "0.json"
    stale.write_text('{"formatted": ""}')
    os.utime(stale, (0, 0))
    os.utime(folder / ".swept", (0, 0))  # the last sweep was long ago

    format_python(texts[-1], "x.py")

    left = sorted(folder.glob("*.json"))
    assert left == sorted(list(_aged)[-3:])


def test_a_syntax_error_is_never_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MINDRIAN_CACHE_DIR", str(tmp_path))
    for _ in range(2):
        with pytest.raises(CodegenError):
            format_python("def (:\n", "broken.py")
    assert not (tmp_path / "black").exists()


def test_a_spec_before_phase_3_is_a_bug_not_a_coded_error() -> None:
    """Issue 38, 10: C027 ("phase 6 ran without phase 3's handoff contract") was a guard of the
    kind removed with the typed hand-over: the runner never runs phase 6 before phase 3, so such
    a spec is a bug (LookupError, reported as I001), and the code is retired."""
    from phase_factories import run_phases, skill

    from builder.pipeline.codes import CODES

    results = run_phases(skill(), until=3)
    before = results["architecture"].output
    with pytest.raises(LookupError, match="read before phase 3 ran"):
        before.contract  # noqa: B018
    assert results["handoff_protocol"].output.contract is results["handoff_protocol"].output.handoff
    assert "C027" not in CODES


#: Two threads format at once while Black is first imported, in a fresh interpreter (the test's
#: has Black loaded already), with the answers cache off. The first thread is held inside
#: Black's import, at its first submodule, until the second either waits for the render lock
#: or has finished: so the second always asks for Black while the first is importing it.
_FIRST_IMPORT = """
import importlib.abc, json, sys, threading
from builder.codegen import render

assert "black" not in sys.modules
go, paused, results = threading.Event(), threading.Event(), {}


class Telling:
    # The render lock, telling (go) when a second thread has to wait for it.
    def __init__(self):
        self.lock = threading.Lock()

    def __enter__(self):
        if not self.lock.acquire(blocking=False):
            go.set()
            self.lock.acquire()

    def __exit__(self, *exc):
        self.lock.release()


class Hold(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.startswith("black.") and not paused.is_set():
            paused.set()
            go.wait(60)
        return None  # the usual finders load it


def format_once(tag):
    try:
        results[tag] = render.format_python("x  =  1\\n", "x.py")
    except Exception as error:
        results[tag] = repr(error)
    finally:
        if tag == "second":
            go.set()


render._BLACK_LOCK = Telling()
sys.meta_path.insert(0, Hold())
first = threading.Thread(target=format_once, args=("first",))
first.start()
paused.wait(60)
second = threading.Thread(target=format_once, args=("second",))
second.start()
first.join(120)
second.join(120)
print(json.dumps(results))
"""


def test_threads_formatting_while_black_is_first_imported_all_get_its_answer() -> None:
    root = Path(render.__file__).resolve().parents[2]
    env = {**os.environ, "MINDRIAN_CACHE_DIR": "", "PYTHONPATH": str(root)}
    done = subprocess.run(
        [sys.executable, "-c", _FIRST_IMPORT],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    # Before the lock the second got a module without its names: AttributeError("module
    # 'black.nodes' has no attribute 'syms'").
    assert json.loads(done.stdout) == {"first": "x = 1\n", "second": "x = 1\n"}


def test_write_tree_makes_each_folder_once(tmp_path: Path, made_folders: list[Path]) -> None:
    files = {"a.py": "a\n", "b.py": "b\n", "tests/x.py": "x\n", "tests/y.py": "y\n"}
    render.write_tree(files, tmp_path / "pkg")
    asked = [p for p in made_folders if p in (tmp_path / "pkg", tmp_path / "pkg" / "tests")]
    assert asked == [tmp_path / "pkg", tmp_path / "pkg" / "tests"]  # not once a file
    assert (tmp_path / "pkg" / "tests" / "y.py").read_text() == "y\n"


#: The templates written in Black's style (checked here, so the next test cannot pass on none).
BLACK_STYLED = {
    "__init__.py.jinja",
    "agent.py.jinja",
    "tools.py.jinja",
    "tests/__init__.py.jinja",
    "tests/conftest.py.jinja",
    "tests/test_agent.py.jinja",
}


def _real_identifiers() -> set[str]:
    """The package identifier of every real skill at hand: the shared corpus, the routing set
    and this project's skills (their names as phase 1 turns them into identifiers)."""
    import re

    from bench.common import CORPUS, ROUTING
    from builder.skill.model import python_identifier, skill_id

    name = re.compile(r"^name:[ \t]*['\"]?([^'\"\n]+)", re.MULTILINE)
    found = set()
    for root in (CORPUS, ROUTING, Path(__file__).resolve().parents[3] / "skills"):
        for path in sorted(root.rglob("SKILL.md")):
            match = name.search(path.read_text(encoding="utf-8", errors="replace"))
            if match:
                try:
                    found.add(python_identifier(skill_id(match.group(1).strip())))
                except ValueError:
                    continue
    assert len(found) > 100, "the shared corpus and routing set were not found"
    return found


def _names_of_every_shape(longest: int) -> set[str]:
    """Identifiers of every length up to ``longest``, each with as many letters as it can have,
    as few (a ``_`` after every letter but the last: ids collapse runs of separators) and half
    way: what a Black-styled line's length depends on is the identifier's length and its
    class name's (the letters)."""
    found = set()
    for length in range(1, longest + 1):
        for letters in {length, (length + 2) // 2}:
            found.add("".join(f"x{'_' * (i < length - letters)}" for i in range(letters)))
    return found


@pytest.mark.slow  # Black on some 4,000 renderings (about 5 s)
def test_black_styled_templates_give_what_black_makes_of_them() -> None:
    """Every template in Black's style renders, for every agent type and every real skill's
    name and names of every length up to the longest id, exactly what Black makes of it, so a
    line past Black's width is only ever one Black leaves so too (a name too long for any
    split) and no other name needs Black."""
    from builder.codegen.templates import AGENT_TEMPLATES
    from builder.skill.model import AGENT_TYPES, MAX_ID_LENGTH

    templates = sorted(
        str(p.relative_to(AGENT_TEMPLATES))
        for p in AGENT_TEMPLATES.rglob("*.py.jinja")
        if render.black_style(AGENT_TEMPLATES, str(p.relative_to(AGENT_TEMPLATES)))
    )
    assert set(templates) == BLACK_STYLED
    real = _real_identifiers()
    # An id has at most MAX_ID_LENGTH characters; its identifier may gain "skill_" and "_".
    identifiers = real | _names_of_every_shape(MAX_ID_LENGTH + 7)
    env = environment()
    bodies: dict[tuple[str, str], str] = {}
    for template in templates:
        for agent_type in AGENT_TYPES:
            for identifier in sorted(identifiers):
                body = env.get_template(template).render(render.names(identifier, agent_type))
                bodies.setdefault((template.removesuffix(".jinja"), body), identifier)
    wide = set()
    for (path, body), identifier in sorted(bodies.items()):
        text = header(path, "skills/x/SKILL.md") + body
        assert render._black(text, path) == text, f"{path} of {identifier}:\n{body}"
        if not render.within_black_width(body):
            wide.add(identifier)
    # Only names longer than any real one's and a bench's (ids of up to 50 characters) are
    # written past Black's width, where phase 6 still asks Black.
    assert wide and min(len(i) for i in wide) > max(50, *map(len, real))
