"""Conformance with the Attractor specification over pipelines collected from public repositories.

The collected files are cited in data/attractor_pipelines.toml and read from
$MINDRIAN_ATTRACTOR_CACHE, else ../shared/attractor-pipelines beside the
project root, else .cache/attractor-pipelines (skipped when absent). The
project's own fixtures, which cover every construct of the vocabulary, are
checked on every run.
"""

import os
import re
import tomllib
from pathlib import Path

import pytest

from mindrian.workflow import (
    NodeKind,
    StepLimitExceeded,
    WorkflowError,
    errors,
    parse,
    run,
    validate,
)
from mindrian.workflow.command import dry_run_handlers

# Slow: parses and validates a few hundred public pipelines.
pytestmark = pytest.mark.slow

HERE = Path(__file__).parent
MANIFEST = tomllib.loads((HERE / "data" / "attractor_pipelines.toml").read_text(encoding="utf-8"))
PIPELINES = MANIFEST["pipeline"]
ROOT = HERE.parents[2]
# The shared data beside the checkout (where CI has it) unless the environment names a cache.
SHARED = ROOT.parent / "shared" / "attractor-pipelines"
DEFAULT_CACHE = SHARED if SHARED.is_dir() else ROOT / ".cache" / "attractor-pipelines"
CACHE = Path(os.environ.get("MINDRIAN_ATTRACTOR_CACHE", DEFAULT_CACHE))
OWN = sorted((HERE / "fixtures_dot" / "attractor").glob("*.dot"))


def cached(entry):
    if not CACHE.is_dir():  # one reason for all, so the summary shows one line
        pytest.skip(
            f"no Attractor pipeline cache at {CACHE}: the files are not part of this project"
            " (see data/attractor_pipelines.toml)"
        )
    owner, repo = entry["repo"].split("/")
    path = CACHE / f"{owner}+{repo}" / entry["path"]
    if not path.is_file():
        pytest.skip(f"{entry['repo']}:{entry['path']} is not in the cache {CACHE}")
    return path


def test_manifest_cites_each_pipeline_once_with_a_verdict():
    assert len(PIPELINES) >= 190
    assert len({(e["repo"], e["path"]) for e in PIPELINES}) == len(PIPELINES)
    assert len({e["repo"] for e in PIPELINES}) >= 9
    for entry in PIPELINES:
        assert re.fullmatch(r"[0-9a-f]{40}", entry["commit"]), entry
        assert entry["path"].endswith(".dot"), entry
        assert entry["verdict"] in ("valid", "rejected"), entry
        assert ("reason" in entry) == (entry["verdict"] == "rejected"), entry
        assert ("dry_run" in entry) == (entry["verdict"] == "valid"), entry


def _id(entry):
    return f"{entry['repo']}:{entry['path']}"


@pytest.mark.parametrize("entry", PIPELINES, ids=_id)
def test_collected_pipeline_gets_its_recorded_verdict(entry):
    path = cached(entry)
    text = path.read_text(encoding="utf-8")
    if entry["verdict"] == "rejected":
        try:
            problems = errors(validate(parse(text)))
        except WorkflowError as exc:
            found = (exc.message, exc.line)
        else:
            assert problems, "accepted, but recorded as rejected"
            found = (f"{problems[0].rule}: {problems[0].message}", problems[0].line)
        assert found[0].startswith(entry["reason"]) and found[1] == entry["line"]
        return
    graph = parse(text)
    assert errors(validate(graph)) == ()
    try:
        status = run(graph, dry_run_handlers(graph, {}, lambda line: None), base_dir=path.parent)
        ended = status.status
    except StepLimitExceeded:
        ended = "step_limit"
    assert ended == entry["dry_run"]


def test_own_fixtures_cover_the_whole_vocabulary():
    texts = [path.read_text(encoding="utf-8") for path in OWN]
    graphs = [parse(text) for text in texts]
    kinds = {node.kind for graph in graphs for node in graph.nodes}
    assert kinds == set(NodeKind)
    edges = [edge for graph in graphs for edge in graph.edges]
    nodes = [node for graph in graphs for node in graph.nodes]
    assert any(isinstance(e.weight, float) for e in edges)
    assert any("context." in (e.condition or "") for e in edges)
    assert any("preferred_label=" in (e.condition or "") for e in edges)
    assert any(n.timeout is not None for n in nodes)
    assert any(n.goal_gate and n.retry_target for n in nodes)
    assert any(n.type for n in nodes)
    assert any("subgraph" in text for text in texts)
    assert all(errors(validate(graph)) == () for graph in graphs)
