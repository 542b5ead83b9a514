"""Every Cypher text of the registry passes Neo4j's own front end; the seed's does not."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from builder.graph import cypher_lint
from mindrian.graph import queries as q

SCHEMA = cypher_lint.LintSchema(q.LABELS, q.RELATIONSHIP_TYPES, q.PROPERTY_KEYS + q.ROW_KEYS)


@pytest.fixture(scope="module")
def linter() -> None:
    reason = cypher_lint.unavailable_reason()
    if reason is None:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"Cypher linter required in CI: {reason}")
    pytest.skip(f"Cypher linter unavailable: {reason}")


@pytest.fixture(scope="module")
def all_diagnostics(linter: None) -> dict[str, tuple[cypher_lint.Diagnostic, ...]]:
    texts = {name: query.text for name, query in q.ALL_QUERIES.items()}
    params = {name: query.params for name, query in q.ALL_QUERIES.items()}
    return cypher_lint.lint(texts, params, SCHEMA)


@pytest.mark.parametrize("name", sorted(q.ALL_QUERIES))
def test_registry_query_is_clean(
    all_diagnostics: dict[str, tuple[cypher_lint.Diagnostic, ...]], name: str
) -> None:
    assert all_diagnostics[name] == ()


def test_seed_selection_query_is_rejected_for_implicit_grouping(linter: None) -> None:
    params = {"seed": ("triggers", "problem_types", "previous_frameworks")}
    (finding,) = cypher_lint.lint({"seed": q.SEED_SELECT_QUERY}, params, SCHEMA)["seed"]
    assert finding.severity == "error"
    assert "Aggregation column contains implicit grouping expressions" in finding.message
    assert finding.message.endswith("Illegal expression(s): score")
    # Points at the second WITH, where `score` is mixed into the aggregation.
    assert q.SEED_SELECT_QUERY.splitlines()[finding.line - 1].startswith("WITH f, score + COALESCE")


# name: (text, declared params, expected severity, fragment of the expected message)
PROBES = {
    "undeclared-param": (
        "MATCH (f:Framework) RETURN f.id, $undeclared",
        (),
        "error",
        "$undeclared is not defined",
    ),
    "misspelt-label": (
        "MATCH (f:Framwork) RETURN f.id",
        (),
        "warning",
        "Label Framwork is not",
    ),
    "misspelt-property": (
        "MATCH (f:Framework) RETURN f.idd",
        (),
        "warning",
        "idd is not present",
    ),
    "syntax-error": ("MATCH (f:Framework RETURN f", (), "error", ""),
}


@pytest.fixture(scope="module")
def probe_results(linter: None) -> dict[str, tuple[cypher_lint.Diagnostic, ...]]:
    texts = {name: text for name, (text, _, _, _) in PROBES.items()}
    params = {name: declared for name, (_, declared, _, _) in PROBES.items()}
    return cypher_lint.lint(texts, params, SCHEMA)


@pytest.mark.parametrize("name", sorted(PROBES))
def test_linter_reports_problems(
    probe_results: dict[str, tuple[cypher_lint.Diagnostic, ...]], name: str
) -> None:
    _, _, severity, fragment = PROBES[name]
    found = probe_results[name]
    assert any(d.severity == severity and fragment in d.message for d in found), found
    assert all(d.line >= 1 and d.column >= 1 for d in found)


def test_batch_keeps_input_order(linter: None) -> None:
    result = cypher_lint.lint({"b": "RETURN 1", "a": "RETURN $x"}, {"a": ("x",)})
    assert list(result) == ["b", "a"]
    assert result == {"b": (), "a": ()}


def test_missing_node_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cypher_lint.shutil, "which", lambda name: None)
    assert cypher_lint.available() is False
    with pytest.raises(cypher_lint.LinterUnavailable, match="node is not on PATH"):
        cypher_lint.lint({"a": "RETURN 1"})


def test_missing_package_is_reported(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # Node is there, npm is not, and neither the checkout nor the cache has the package.
    monkeypatch.setattr(
        cypher_lint.shutil, "which", lambda name: "/usr/bin/node" if name == "node" else None
    )
    monkeypatch.setattr(cypher_lint, "_INSTALLED", Path("absent") / "package.json")
    monkeypatch.setenv("MINDRIAN_CACHE_DIR", str(tmp_path))
    assert cypher_lint.available() is False
    with pytest.raises(cypher_lint.LinterUnavailable, match="npm is not on PATH to install it"):
        cypher_lint.lint({"a": "RETURN 1"})


def _counting_node(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    runs: list[str] = []
    real = cypher_lint._run_node

    def run(payload: str) -> dict:
        runs.append(payload)
        return real(payload)

    monkeypatch.setattr(cypher_lint, "_run_node", run)
    return runs


def test_results_are_cached_by_request(
    linter: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = _counting_node(monkeypatch)
    first = cypher_lint.lint({"a": "MATCH (n) RETURN n.$x"}, cache_dir=tmp_path)
    again = cypher_lint.lint({"a": "MATCH (n) RETURN n.$x"}, cache_dir=tmp_path)
    assert again == first and first["a"] and len(runs) == 1
    # Any change to the request (text, declared parameters) is a different entry.
    cypher_lint.lint({"a": "MATCH (n) RETURN n"}, cache_dir=tmp_path)
    cypher_lint.lint({"a": "MATCH (n) RETURN n"}, {"a": ["x"]}, cache_dir=tmp_path)
    assert len(runs) == 3


def test_a_damaged_cache_entry_is_linted_again(
    linter: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = _counting_node(monkeypatch)
    cypher_lint.lint({"a": "RETURN 1"}, cache_dir=tmp_path)
    (entry,) = tmp_path.glob("*.json")
    entry.write_text("{not json", encoding="utf-8")
    assert cypher_lint.lint({"a": "RETURN 1"}, cache_dir=tmp_path) == {"a": ()}
    assert len(runs) == 2 and entry.read_text(encoding="utf-8").startswith("{")


def test_no_cache_dir_always_runs_node(linter: None, monkeypatch: pytest.MonkeyPatch) -> None:
    runs = _counting_node(monkeypatch)
    cypher_lint.lint({"a": "RETURN 1"}, cache_dir=None)
    cypher_lint.lint({"a": "RETURN 1"}, cache_dir=None)
    assert len(runs) == 2


def test_cache_dir_follows_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MINDRIAN_CACHE_DIR", str(tmp_path))
    assert cypher_lint.default_cache_dir() == tmp_path / "cypher-lint"
    monkeypatch.setenv("MINDRIAN_CACHE_DIR", "")
    assert cypher_lint.default_cache_dir() is None


def test_a_linter_past_its_time_is_a_linter_error(
    linter: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Phase 5 falls back to its other checks on a LinterError; a timeout used to escape as an
    # internal error (I001) of the skill being built.
    monkeypatch.setattr(cypher_lint, "_TIMEOUT_SECONDS", 0.001)
    with pytest.raises(cypher_lint.LinterError, match=r"did not answer within 0\.001 s"):
        cypher_lint.lint({"a": "RETURN 1"}, cache_dir=tmp_path)
