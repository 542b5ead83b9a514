"""The quick index: a one-shot select ranks from it without opening the registry, exactly as the
registry ranks, and only while the registry file is as it was (mindrian.routing.quick,
builder.entry)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from builder.cli.app import main as application
from builder.entry import quick_select
from mindrian.graph import EmbeddedRegistry, FrameworkRecord
from mindrian.graph.index_cache import index_cache_file, prune_index_cache
from mindrian.routing import quick, score
from mindrian.routing.rank import RoutingDocument
from mindrian.routing.score import RoutingSnapshot, rank_sentence

SENTENCES = (
    "please review these SQL migrations",
    "review the changes before release",
    "帮我准备明天的面试",  # Chinese: cut and glossed through the kept glossary
    "帮我整理文档",
    "we have schema drift in the database",
    "zzz qqq",
)


def _records() -> list[FrameworkRecord]:
    return [
        FrameworkRecord(
            "sql-review",
            "SQL review",
            "operator",
            description="Review SQL migrations for locking risks. Not for application code.",
            triggers=("migration",),
            problem_types=("schema drift",),
            good_for=(("schema drift", 0.7),),
        ),
        FrameworkRecord(
            "code-review", "Code review", "operator", description="Review code changes."
        ),
        FrameworkRecord(
            "interview", "Interview coach", "role", description="Prepare a job interview."
        ),
        FrameworkRecord("tidy", "整理", "operator", description="帮我整理文档和笔记"),
        FrameworkRecord(
            "notes",
            "Release notes",
            "operator",
            description="Write release notes.",
            chains_to=(("code-review", 0.5),),
        ),
    ]


def _settle(database: Path) -> None:
    """Date the registry's files back past SETTLED_SECONDS, as if written a while ago."""
    past = time.time() - 60
    for path in database.parent.glob(database.name + "*"):
        os.utime(path, (past, past))


@pytest.fixture
def database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MINDRIAN_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "registry.lbug"
    with EmbeddedRegistry(path) as registry:
        registry.register_many(_records())
        registry.record_usage("code-review", "s1", "h1", True)
    _settle(path)
    return path


def _kept(database: Path) -> dict[str, object]:
    """Rank every sentence through a read-only handle (which keeps the quick index)."""
    with EmbeddedRegistry(database, read_only=True) as registry:
        return {s: registry.rank_text(s, limit=3) for s in SENTENCES}


def test_the_quick_index_ranks_as_the_registry(database: Path) -> None:
    expected = _kept(database)
    file = quick.quick_file(database)
    assert file is not None and file.is_file()
    found = quick.signature(database)
    assert found is not None
    for sentence in SENTENCES:
        index = quick.load_quick(file, quick.stamp(database, found), sentence)
        assert index is not None
        assert index.usage == {"code-review": (1, 1)}
        got = tuple(rank_sentence(index.snapshot, sentence, (), (), index.usage, 3))
        assert got == expected[sentence], sentence
    assert expected["帮我准备明天的面试"][0].id == "interview"  # glossed: 面试 is interview


def test_a_changed_or_unsettled_registry_is_not_served(database: Path) -> None:
    _kept(database)
    file = quick.quick_file(database)
    assert file is not None
    before = quick.signature(database)
    assert before is not None
    with EmbeddedRegistry(database) as registry:
        registry.register(FrameworkRecord("new", "New", "operator", description="SQL review"))
    # Just written: no signature can be trusted yet.
    assert quick.signature(database) is None
    _settle(database)
    after = quick.signature(database)
    assert after is not None and after != before
    assert quick.load_quick(file, quick.stamp(database, after), SENTENCES[0]) is None
    # Another registry path or code stamp is not served either.
    other = dict(quick.stamp(database, before), registry="/elsewhere")
    assert quick.load_quick(file, other, SENTENCES[0]) is None


def test_a_damaged_file_is_ignored(database: Path) -> None:
    _kept(database)
    file = quick.quick_file(database)
    assert file is not None
    file.write_bytes(b"not a database" * 100)
    found = quick.signature(database)
    assert found is not None
    assert quick.load_quick(file, quick.stamp(database, found), SENTENCES[0]) is None


@pytest.mark.parametrize("json_out", [False, True])
@pytest.mark.parametrize("sentence", SENTENCES)
def test_the_script_prints_what_the_command_prints(
    database: Path,
    sentence: str,
    json_out: bool,
    capfd: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(database.parent)
    args = ["select", sentence, "--registry", database.name, "--limit", "3"]
    args += ["--json"] if json_out else []
    assert application(args) == 0
    expected = capfd.readouterr()
    # The command's run kept the quick index; the script now answers from it.
    answered = quick_select(args, database.parent, {})
    assert answered == (expected.out, expected.err)


def test_other_command_lines_go_to_the_application(database: Path) -> None:
    _kept(database)
    where = database.parent
    for args in (
        ["select", "review", "--registry", str(database), "--explain"],
        ["select", "-t", "review", "--registry", str(database)],
        ["select", "review", "more", "--registry", str(database)],
        ["select", "review", "--registry", str(database), "--limit", "0"],
        ["select", "review", "--registry", str(where / "missing.lbug")],
        ["build", "--all"],
        [],
    ):
        assert quick_select(args, where, {}) is None, args
    # No --registry: the project's registry, unless a Neo4j URI is set.
    assert quick_select(["select", "review"], where, {"NEO4J_URI": "bolt://x"}) is None


def test_the_quick_index_is_pruned_with_the_kept_one(database: Path) -> None:
    _kept(database)
    kept = index_cache_file(database)
    file = quick.quick_file(database)
    assert kept is not None and file is not None and file.is_file()
    database.unlink()
    for leftover in database.parent.glob(database.name + ".*"):
        leftover.unlink()
    prune_index_cache(kept.file.parent, time.time())
    assert not kept.file.exists() and not file.exists()


def test_a_current_quick_index_is_not_written_again(database: Path) -> None:
    _kept(database)
    file = quick.quick_file(database)
    assert file is not None
    written = file.stat().st_mtime_ns, file.stat().st_ino
    _kept(database)
    assert (file.stat().st_mtime_ns, file.stat().st_ino) == written
    found = quick.signature(database)
    assert found is not None and quick.holds(file, quick.stamp(database, found))
    assert not quick.holds(file, quick.stamp(database, found + "x"))


class _Counted(Sequence[str]):
    """A sequence of ids that counts the positions read."""

    def __init__(self, values: Sequence[str]) -> None:
        self.values, self.read = values, set[int]()

    def __getitem__(self, position: int) -> str:  # type: ignore[override]
        self.read.add(position)
        return self.values[position]

    def __len__(self) -> int:
        return len(self.values)


def _tied(order: Sequence[int]) -> RoutingSnapshot:
    """Frameworks that every word of "review the plan" matches equally, in ``order``."""
    documents = [RoutingDocument(f"fw-{i:03d}", f"Plan {i}", "Review the plan.") for i in order]
    return RoutingSnapshot.build((1, "r"), documents, {}, {})


def test_a_tie_among_many_is_broken_by_id_without_reading_every_id() -> None:
    snapshot = _tied(range(200))
    assert snapshot.index.ids_ascending
    counted = _Counted(snapshot.index.ids)
    snapshot.index.ids = counted  # type: ignore[assignment]
    ranked = rank_sentence(snapshot, "review the plan", (), (), {}, 3)
    assert [c.id for c in ranked] == ["fw-000", "fw-001", "fw-002"]
    assert counted.read == {0, 1, 2}


def test_a_tie_among_many_rounds_each_distinct_total_once(monkeypatch: pytest.MonkeyPatch) -> None:
    snapshot = _tied(range(200))
    rounded: list[float] = []

    def counted(value: float, digits: int) -> float:
        rounded.append(value)
        return round(value, digits)

    monkeypatch.setattr(score, "round", counted, raising=False)
    ranked = rank_sentence(snapshot, "review the plan", (), (), {}, 3)
    assert [c.id for c in ranked] == ["fw-000", "fw-001", "fw-002"]
    assert len(rounded) == 2  # the one total the 200 share, and the first's confidence


def test_a_tie_is_broken_by_id_when_ids_do_not_ascend_with_position() -> None:
    snapshot = _tied([*range(100, 200), *range(100)])
    assert not snapshot.index.ids_ascending
    ranked = rank_sentence(snapshot, "review the plan", (), (), {}, 3)
    assert [c.id for c in ranked] == ["fw-000", "fw-001", "fw-002"]


def test_a_word_and_its_stem_are_read_as_one_kept_list(
    database: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = _kept(database)["review the changes before release"]
    file = quick.quick_file(database)
    found = quick.signature(database)
    assert file is not None and found is not None
    sentence = "review the changes before release"
    index = quick.load_quick(file, quick.stamp(database, found), sentence)
    assert index is not None
    unpacked: list[bytes | None] = []
    unpack = quick._unpacked
    monkeypatch.setattr(quick, "_unpacked", lambda blob: unpacked.append(blob) or unpack(blob))
    assert tuple(rank_sentence(index.snapshot, sentence, (), (), index.usage, 3)) == expected
    # One summed list per word with its stem token (review, change, release), kept summed
    # when the index was written; neither list of the pair is unpacked on its own.
    assert len(unpacked) == 3


def test_a_quick_index_reads_the_candidates_ids_and_names_alone(database: Path) -> None:
    _kept(database)
    file = quick.quick_file(database)
    found = quick.signature(database)
    assert file is not None and found is not None
    index = quick.load_quick(file, quick.stamp(database, found), "review")
    assert index is not None and index.snapshot.index.ids_ascending
    ranked = rank_sentence(index.snapshot, "review", (), (), index.usage, 1)
    assert [c.id for c in ranked] == ["code-review"]
    columns = (index.snapshot.index.ids, index.snapshot.index.names)
    assert [len(c._some) for c in columns] == [1, 1]  # type: ignore[attr-defined]
    assert [c._read for c in columns] == [None, None]  # type: ignore[attr-defined]


#: What a one-shot select of a sentence answered from the quick index must not import: the
#: command line, the database engines, the runtime's heavy parts, the project's TOML parser
#: (a table with results names no project path), the dictionary's reader, and any sentence
#: encoder or array library.
_NOT_FOR_A_ONE_SHOT_SELECT = (
    "agno",
    "ast",  # with dis and tokenize, what inspect imports (builder.entry.defer_import)
    "builder.cli.app",
    "dis",
    "gzip",
    "importlib.resources",
    "jsonschema",
    "ladybug",
    "model2vec",
    "neo4j",
    "numpy",
    "onnxruntime",
    "pydantic",
    "sentence_transformers",
    "tokenize",
    "tokenizers",
    "tomllib",
    "torch",
    "typer",
    "yaml",
)


def test_a_one_shot_select_imports_only_what_the_sentence_needs(database: Path) -> None:
    _kept(database)
    probe = (
        "import json, sys\n"
        "from builder.entry import main\n"
        f"status = main(['select', 'review the SQL migrations', '--registry', {str(database)!r}])\n"
        "print(json.dumps([status, sorted(sys.modules)]))\n"
    )
    env = {**os.environ, "MINDRIAN_CACHE_DIR": os.environ["MINDRIAN_CACHE_DIR"]}
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=120
    )
    status, modules = json.loads(done.stdout.splitlines()[-1])
    assert status == 0, done.stderr
    assert "sql-review" in done.stdout
    imported = [
        m
        for m in _NOT_FOR_A_ONE_SHOT_SELECT
        if any(n == m or n.startswith(m + ".") for n in modules)
    ]
    assert imported == []
