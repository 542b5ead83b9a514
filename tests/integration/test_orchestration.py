"""Seed 001's flow end to end: Larry clarifies, selects, delegates and synthesises.

Everything is real except the models: the packages are built by ``mindrian build``
from the project's own skills (see ``conftest.py``), the frameworks are chosen
by the embedded registry that build registered them in, Larry's required MCP
server is started as a subprocess, and every handoff goes through a
``HandoffManager`` that emits control frames and records usage in that registry.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from mindrian.agents import MindrianAgent
from mindrian.frames import Frame, FrameParser, coalesce
from mindrian.graph import EmbeddedRegistry, Usage
from mindrian.handoff import HandoffManager, HandoffResult, ProblemClarity
from mindrian.handoff.tools import Orchestration
from mindrian.packages import PackageFolder
from mindrian.project import ProjectPaths
from mindrian.testing import ScriptedModel, SeenMessage, Step

ROOT = Path(__file__).resolve().parents[2]
SESSION = "founder-1"

#: What each framework's model answers: valid for its generated output schema.
ANSWERS: dict[str, dict[str, Any]] = {
    "pws-validation": {
        "output": "# PWS Scorecard\n\nTotal 68/100: PIVOT.",
        "key_findings": ["Four-hour replies are a real, weekly pain"],
        "recommendations": ["Measure deflection on 200 past tickets before building"],
        "confidence": 0.7,
        "scores": {"problem": 22, "solution": 15, "business": 17, "people": 14},
        "suggested_next_agents": ["devil-advocate"],
    },
    "devil-advocate": {
        "output": "# Strongest objection\n\nShoppers may refuse to talk to a bot.",
        "key_findings": ["Deflection of 50% rests on belief, not evidence"],
        "recommendations": ["Run a one-week concierge test"],
        "confidence": 0.6,
        "scores": {"fragility": 7, "evidence_gap": 8},
    },
}

CLARIFY_1 = {
    "what": "An AI chatbot for the support team",
    "who": "",
    "success": "",
    "what_clarity": 0.3,
    "who_clarity": 0.1,
    "success_clarity": 0.0,
}
CLARIFY_2 = {
    "what": "Support replies take four hours",
    "who": "Shoppers of an e-commerce shop with six support staff",
    "success": "",
    "what_clarity": 0.8,
    "who_clarity": 0.75,
    "success_clarity": 0.2,
}
CLARIFY_3 = {
    **CLARIFY_2,
    "success": "Replies under one hour and half the tickets deflected",
    "success_clarity": 0.75,
}


def tool_results(messages: tuple[SeenMessage, ...]) -> list[str]:
    return [m.content for m in messages if m.role == "tool"]


def synthesis(messages: tuple[SeenMessage, ...]) -> str:
    """Larry's closing turn, made of what both delegations returned (so only if they ran)."""
    results = tool_results(messages)
    pws = next(r for r in results if r.startswith("pws-validation answered"))
    devil = next(r for r in results if r.startswith("devil-advocate answered"))
    verdict = pws.split("Total ", 1)[1].split(".", 1)[0]
    objection = devil.split("\n\n")[2].splitlines()[-1]
    return f"The validation scored you {verdict}. The strongest objection: {objection}"


def larry_model() -> ScriptedModel:
    return ScriptedModel(
        # Turn 1: the problem is unclear; a premature delegation is refused.
        Step.tool_call("assess_clarity", **CLARIFY_1),
        Step.tool_call("delegate", framework_id="pws-validation", task="Validate the chatbot"),
        "What happens today that the chatbot should fix, and for whom?",
        # Turn 2: what and who are clear, success is not.
        Step.tool_call("assess_clarity", **CLARIFY_2),
        "What would success look like, as a number?",
        # Turn 3: clear enough; select, delegate twice, synthesise.
        Step.tool_call("assess_clarity", **CLARIFY_3),
        Step.tool_call("select_frameworks", context="is my support chatbot idea worth building"),
        Step.tool_call(
            "delegate", framework_id="pws-validation", task="Validate this opportunity with PWS"
        ),
        Step.tool_call(
            "delegate", framework_id="devil-advocate", task="Attack the PWS verdict and its scores"
        ),
        synthesis,
    )


def scripted(models: dict[str, ScriptedModel]) -> Callable[[type[MindrianAgent]], object]:
    def make(cls: type[MindrianAgent]) -> object:
        model = ScriptedModel(Step.structured(ANSWERS[cls.agent_id]))
        models[cls.agent_id] = model
        return cls(model=model)

    return make


def frames_in(text: str) -> list[tuple[str, dict[str, Any]]]:
    parser = FrameParser()
    events = [e for i in range(0, len(text), 7) for e in parser.feed(text[i : i + 7])]
    return [
        (e.type, dict(e.payload))
        for e in coalesce([*events, *parser.close()])
        if isinstance(e, Frame)
    ]


@pytest.fixture
def flow(
    built_project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[dict[str, Any]]:
    # Larry's required MCP server serves the registry of its working directory.
    monkeypatch.chdir(built_project)
    registry = EmbeddedRegistry(ProjectPaths(built_project).embedded_registry)
    frames = io.StringIO()
    framework_models: dict[str, ScriptedModel] = {}
    packages = PackageFolder(built_project / "generated", make=scripted(framework_models))
    orchestration = Orchestration(
        agent_id="larry",
        registry=registry,
        agents=packages,
        can_delegate_to=packages.infos["larry"].can_delegate_to,
        min_clarity=packages.min_clarity(),
        manager=HandoffManager(frames=frames, usage=registry),
    )
    larry_class = packages.agent_class("larry")
    assert larry_class is not None
    model = larry_model()
    larry = larry_class(model=model, state_dir=tmp_path / "state", orchestration=orchestration)
    yield {
        "larry": larry,
        "model": model,
        "frameworks": framework_models,
        "orchestration": orchestration,
        "registry": registry,
        "frames": frames,
    }
    registry.close()


def test_larry_clarifies_selects_delegates_and_synthesises(flow: dict[str, Any]) -> None:
    larry, model = flow["larry"], flow["model"]
    registry: EmbeddedRegistry = flow["registry"]
    before = {fid: registry.usage(fid) for fid in ANSWERS}

    async def conversation() -> list[str]:
        replies = []
        for message in (
            "I want to build an AI chatbot for our support team",
            "We answer in four hours and shoppers complain; we are six people",
            "Replies under an hour, and half the tickets answered without us",
        ):
            replies.append((await larry.run(message, session_id=SESSION)).content)
        return replies

    replies = asyncio.run(conversation())

    model.assert_complete()
    for framework_model in flow["frameworks"].values():
        framework_model.assert_complete()
    assert replies == [
        "What happens today that the chatbot should fix, and for whom?",
        "What would success look like, as a number?",
        "The validation scored you 68/100: PIVOT. "
        "The strongest objection: Shoppers may refuse to talk to a bot.",
    ]

    # Clarity rose turn by turn, and the premature delegation was refused on it.
    state = flow["orchestration"].session(SESSION)
    overall = [round(c.overall_clarity, 3) for c in state.clarity.turns]
    assert overall == [round(0.4 / 3, 3), 0.583, 0.767]
    refused = tool_results(model.calls[2].messages)[-1]
    assert refused == (
        "Not delegated: overall clarity 0.13 is below the 0.60 pws-validation needs. "
        "Clarify first: what success looks like."
    )

    # Selection came from the registry: pws-validation first for the founder's question.
    (ranking,) = [r for r in tool_results(model.calls[7].messages) if r.startswith("Frameworks")]
    assert ranking.splitlines()[1].startswith("1. pws-validation (PWS Validation): score ")

    # Each framework got the clarified problem; devil-advocate also got PWS's analysis.
    pws_prompt = flow["frameworks"]["pws-validation"].calls[0].last_user_message
    devil_prompt = flow["frameworks"]["devil-advocate"].calls[0].last_user_message
    for prompt in (pws_prompt, devil_prompt):
        assert "Replies under one hour and half the tickets deflected" in prompt
        assert "Return your results to: **larry**" in prompt
    assert "### pws-validation" in devil_prompt and "PIVOT" in devil_prompt
    assert [r.from_agent for r in state.results] == ["pws-validation", "devil-advocate"]
    assert all(r.success for r in state.results)
    assert state.results[0].scores == {
        "problem": 22.0,
        "solution": 15.0,
        "business": 17.0,
        "people": 14.0,
        "total": 68.0,
    }
    context = flow["orchestration"].manager.history[1].context
    assert context.problem_clarity == ProblemClarity(**CLARIFY_3)

    # Frames, in order, one HANDOFF and one READY per delegation.
    assert [
        (kind, payload.get("to") or payload.get("stage"))
        for kind, payload in frames_in(flow["frames"].getvalue())
    ] == [
        ("HANDOFF", "pws-validation"),
        ("READY", "larry"),
        ("HANDOFF", "devil-advocate"),
        ("READY", "larry"),
    ]

    # One successful USED_BY per delegation, in the registry the build registered into.
    for framework_id, usage in before.items():
        assert registry.usage(framework_id) == Usage(usage.uses + 1, usage.successes + 1)


def test_selection_favours_the_successor_of_a_framework_already_consulted(
    flow: dict[str, Any],
) -> None:
    orchestration: Orchestration = flow["orchestration"]
    state = orchestration.session("chain")
    alone = orchestration.select(state, "stress test the plan")[0]
    # Ranked first by text relevance (its trigger "stress test"), plus any recorded usage.
    assert alone.id == "devil-advocate"
    # Once pws-validation has answered, its successor devil-advocate (weight 0.8) gains.
    state.results.append(
        HandoffResult(
            handoff_id="earlier",
            from_agent="pws-validation",
            to_agent="larry",
            success=True,
            output="PIVOT",
        )
    )
    after = orchestration.select(state, "stress test the plan")[0]
    assert (after.id, after.score) == ("devil-advocate", pytest.approx(alone.score + 0.3 * 0.8))


def test_larry_never_delegates_outside_its_list_or_to_itself(flow: dict[str, Any]) -> None:
    orchestration: Orchestration = flow["orchestration"]
    state = orchestration.session("limits")
    state.clarity.update(what_clarity=1.0, who_clarity=1.0, success_clarity=1.0)
    refusals = [
        asyncio.run(orchestration.delegate(state, target, "anything"))
        for target in ("larry", "lean-canvas")
    ]
    assert refusals == [
        "Not delegated: larry may not delegate to 'larry' (minto-pyramid, pws-validation, "
        "devil-advocate, deep-research, de-bono-hats, jtbd).",
        "Not delegated: larry may not delegate to 'lean-canvas' (minto-pyramid, pws-validation, "
        "devil-advocate, deep-research, de-bono-hats, jtbd).",
    ]
    missing = asyncio.run(orchestration.delegate(state, "jtbd", "anything"))
    assert missing == "Not delegated: no agent package provides 'jtbd'."
    assert orchestration.manager.history == ()


# --- the same flow as `mindrian run larry` sessions, one process per turn -------------


def _turn(project: Path, script: dict[str, Any], message: str, tmp_path: Path) -> Any:
    path = tmp_path / f"turn-{len(list(tmp_path.glob('turn-*')))}.yaml"
    path.write_text(yaml.safe_dump(script), encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "builder", "run", "larry", message, "--session", "cli",
         "--model", f"scripted:{path}", "--frames"],
        cwd=project,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )  # fmt: skip


def call(name: str, **arguments: Any) -> dict[str, Any]:
    """A tool-call answer of a model script."""
    return {"tool_call": {"name": name, "arguments": arguments}}


def test_the_flow_runs_as_mindrian_run_larry_sessions(built_project: Path, tmp_path: Path) -> None:
    first = _turn(
        built_project,
        {
            "agents": {
                "larry": [
                    call("assess_clarity", **CLARIFY_2),
                    call("delegate", framework_id="pws-validation", task="Validate"),
                    "What would success look like, as a number?",
                ]
            }
        },
        "We answer in four hours and shoppers complain; we are six people",
        tmp_path,
    )
    assert first.returncode == 0, first.stderr
    assert first.stdout.splitlines() == [
        '<<<MINDRIAN:READY:{"stage":"larry"}>>>',
        "What would success look like, as a number?",
    ], "the delegation was refused (clarity 0.58 < 0.60): no handoff frames"

    # Only success is newly clear: what and who are kept from the earlier process.
    newly = {**CLARIFY_3, "what": "", "who": ""}
    second = _turn(
        built_project,
        {
            "agents": {
                "larry": [
                    call("assess_clarity", **newly),
                    call("select_frameworks", context="is my idea worth building"),
                    call("delegate", framework_id="pws-validation", task="Validate"),
                    call("delegate", framework_id="devil-advocate", task="Attack it"),
                    "PIVOT at 68/100; the strongest objection is that shoppers may refuse a bot.",
                ],
                "pws-validation": [{"json": ANSWERS["pws-validation"]}],
                "devil-advocate": [{"json": ANSWERS["devil-advocate"]}],
            }
        },
        "Replies under an hour, and half the tickets answered without us",
        tmp_path,
    )
    assert second.returncode == 0, second.stderr
    lines = second.stdout.splitlines()
    assert (
        lines[-1] == "PIVOT at 68/100; the strongest objection is that shoppers may refuse a bot."
    )
    shown = [(kind, body.get("to") or body.get("stage")) for kind, body in frames_in(second.stdout)]
    assert shown == [
        ("READY", "larry"),
        ("HANDOFF", "pws-validation"),
        ("READY", "larry"),
        ("HANDOFF", "devil-advocate"),
        ("READY", "larry"),
    ]
    # The clarity the frameworks were handed came from both processes.
    saved = list((built_project / ".mindrian" / "state" / "orchestration" / "larry").glob("*.json"))
    (state,) = [json.loads(p.read_text(encoding="utf-8")) for p in saved]
    assert state["clarity"]["who"] == CLARIFY_2["who"]
    assert state["clarity"]["success"] == CLARIFY_3["success"]
    assert [r["from_agent"] for r in state["results"]] == ["pws-validation", "devil-advocate"]
    assert len(state["turns"]) == 2
