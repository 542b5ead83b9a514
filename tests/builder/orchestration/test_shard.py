"""``--shard I/N``: a deterministic split whose union is the whole run, for build and check."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from build_factories import make_project, skill_text

from builder.orchestration.batch import BatchOptions, Target
from builder.orchestration.shard import Shard, owned_tree, shard_of, spec_sources
from builder.pipeline.build_results import BuildReport
from builder.pipeline.config import BuildConfig
from builder.pipeline.errors import UsageError

NAMES = [f"skills/s{k:03d}/SKILL.md" for k in range(60)]


@pytest.mark.parametrize("count", [1, 2, 3, 7])
def test_shards_partition_the_skills(count: int) -> None:
    parts = [Shard(i, count).select(NAMES) for i in range(1, count + 1)]
    assert sorted(p for part in parts for p in part) == sorted(NAMES)  # union, no duplicates
    assert all(part == [n for n in NAMES if n in part] for part in parts)  # input order kept
    if count > 1:
        assert all(0 < len(part) < len(NAMES) for part in parts)


def test_a_skill_keeps_its_shard_when_others_are_added() -> None:
    before = {n: shard_of(n, 4) for n in NAMES}
    assert {n: shard_of(n, 4) for n in [*NAMES, "skills/new/SKILL.md"]}.items() >= before.items()


@pytest.mark.parametrize("text", ["0/3", "4/3", "3", "a/b", "1/0", "-1/2", ""])
def test_a_bad_shard_is_a_usage_error(text: str) -> None:
    with pytest.raises(UsageError) as caught:
        Shard.parse(text)
    assert caught.value.code == "U017"


def test_parse_reads_index_and_count() -> None:
    assert Shard.parse("2/5") == Shard(2, 5)


def _package(identifier: str, agent_id: str, source: str) -> dict[str, bytes]:
    spec = f"id: {agent_id}\nidentifier: {identifier}\nsource_path: {source}\n"
    return {f"{identifier}/spec.yaml": spec.encode(), f"{identifier}/agent.py": b"AGENT = 1\n"}


def _registry(ids: list[str]) -> bytes:
    entries = "".join(f"- id: {i}\n  name: {i}\n" for i in sorted(ids))
    return f"format: 1\nframeworks:\n{entries}".encode()


def test_owned_trees_of_all_shards_make_up_the_whole_tree() -> None:
    tree: dict[str, bytes] = {}
    for k in range(12):
        tree |= _package(f"p{k}", f"agent-{k}", f"skills/s{k}/SKILL.md")
    tree["orphan/notes.txt"] = b"no spec here\n"
    tree["registry.yaml"] = _registry([f"agent-{k}" for k in range(12)] + ["ghost"])
    sources = spec_sources(tree)
    parts = [owned_tree(tree, Shard(i, 3), sources) for i in (1, 2, 3)]
    files = [name for part in parts for name in part if name != "registry.yaml"]
    assert sorted(files) == sorted(n for n in tree if n != "registry.yaml")
    ids = [line for part in parts for line in part["registry.yaml"].decode().splitlines()]
    assert sorted(i for i in ids if i.startswith("- id:")) == sorted(
        f"- id: {i}" for i in [*(f"agent-{k}" for k in range(12)), "ghost"]
    )
    for part in parts:  # a package and its registry entry go to the same shard
        for name in part:
            if name.endswith("spec.yaml"):
                agent_id = sources[name.split("/")[0]][0]
                assert f"- id: {agent_id}" in part["registry.yaml"].decode()


class PerSkillRegeneration:
    """Replaces ``build_many`` in ``check``: one package per skill asked for, and their registry."""

    def __init__(self) -> None:
        self.built: list[str] = []

    def __call__(
        self, skills: list[Target], config: BuildConfig, options: BatchOptions, **_: Any
    ) -> tuple[BuildReport, ...]:
        ids = []
        for target in skills:
            name = target.display.split("/")[1]
            ids.append(f"{name}-agent")
            for path, data in _package(name, f"{name}-agent", target.display).items():
                (options.out_dir / path).parent.mkdir(parents=True, exist_ok=True)
                (options.out_dir / path).write_bytes(data)
        (options.out_dir / "registry.yaml").write_bytes(_registry(ids))
        self.built.extend(t.display for t in skills)
        return tuple(BuildReport(t.display, f"x{i}", (), None) for i, t in enumerate(skills))


def _drift(cli: Any, root: Path, *args: str) -> set[str]:
    result = cli(["check", *args], root)
    return {line[len("--- a/") :] for line in result.out.splitlines() if line.startswith("--- a/")}


def test_the_union_of_sharded_checks_is_the_whole_check(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = [f"s{k}" for k in range(9)]
    root = make_project(tmp_path, {n: skill_text(f"{n}-agent") for n in names})
    committed: dict[str, bytes] = {}
    for n in names:
        committed |= _package(n, f"{n}-agent", f"skills/{n}/SKILL.md")
    committed["registry.yaml"] = _registry([f"{n}-agent" for n in names])
    for path, data in committed.items():
        (root / "generated" / path).parent.mkdir(parents=True, exist_ok=True)
        (root / "generated" / path).write_bytes(data)
    for n in ("s1", "s4", "s7"):  # hand edits in three packages
        (root / "generated" / n / "agent.py").write_bytes(b"AGENT = 2\n")
    (root / "generated" / "stale").mkdir()
    (root / "generated" / "stale" / "old.py").write_bytes(b"\n")
    fake = PerSkillRegeneration()
    monkeypatch.setattr("builder.orchestration.check.build_many", fake)

    whole = _drift(cli, root)
    assert whole == {"generated/s1/agent.py", "generated/s4/agent.py", "generated/s7/agent.py"} | {
        "generated/stale/old.py"
    }
    fake.built.clear()
    shards = [_drift(cli, root, "--shard", f"{i}/3") for i in (1, 2, 3)]
    assert sorted(fake.built) == sorted(f"skills/{n}/SKILL.md" for n in names)
    assert set().union(*shards) == whole
    assert sum(map(len, shards)) == len(whole)  # no drift is reported twice


def test_build_all_shards_cover_every_skill_once(cli: Any, tmp_path: Path) -> None:
    names = [f"s{k}" for k in range(8)]
    root = make_project(tmp_path, {n: skill_text(f"{n}-agent") for n in names})
    built = []
    for i in (1, 2):
        result = cli(
            ["build", "--all", "--until", "skill_analysis", "--json", "--shard", f"{i}/2"], root
        )
        assert result.code == 0, result.err
        built.append([b["path"] for b in json.loads(result.out)["builds"]])
    assert sorted(built[0] + built[1]) == sorted(f"skills/{n}/SKILL.md" for n in names)
    assert built[0] and built[1]
