"""The options and arguments several ``mindrian`` commands share, each defined once.

A command declares a parameter with one of these ``Annotated`` aliases
(``quiet: QuietOpt = False``), so a flag has the same spelling, metavar,
bounds and help wherever it appears (``tests/builder/cli/test_options.py``
checks it). Where one flag means two things, there are two aliases
(``RegistryWriteOpt`` for the database phase 7 writes, ``RegistryReadOpt`` for
the registry a query reads), or the command that differs declares its own:
``run --frames`` prints handoff frames rather than batch events, ``run --json``
the agent's result, and ``workflow run --model`` answers graph steps.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

__all__ = [
    "AllOpt",
    "BaseUrlOpt",
    "CheckpointsOpt",
    "FormatOpt",
    "FramesOpt",
    "JobsOpt",
    "JsonOpt",
    "MaxTokensOpt",
    "ModelOpt",
    "Neo4jReadOpt",
    "Neo4jWriteOpt",
    "NoThinkingOpt",
    "OutOpt",
    "PathsArg",
    "QuietOpt",
    "RecordOpt",
    "RegistryReadOpt",
    "RegistryWriteOpt",
    "ShardOpt",
    "TemperatureOpt",
    "TimingsOpt",
    "WorkspaceOpt",
]

#: SKILL.md files or skill folders (build, register, validate, fmt).
PathsArg = Annotated[
    list[Path] | None,
    typer.Argument(
        metavar="PATH...",
        help="SKILL.md files, or skill folders containing one.",
        show_default=False,
    ),
]
#: Every skill of the project instead of named ones.
AllOpt = Annotated[
    bool, typer.Option("--all", help="Every skills/**/SKILL.md of the project, instead of PATHs.")
]
#: Errors only on stderr.
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="Print errors only.")]
#: A machine-readable report on stdout.
JsonOpt = Annotated[bool, typer.Option("--json", help="Print a machine-readable report on stdout.")]
#: How findings are printed: the human lines always; github adds workflow-command annotations on
#: stdout (GitHub Actions shows them on the pull request's lines); json is --json.
FormatOpt = Annotated[
    str,
    typer.Option(
        "--format",
        metavar="FORMAT",
        help="human, github (also ::error annotations on stdout for GitHub Actions), or json "
        "where the command has --json (the same as --json).",
    ),
]
#: Control frames of a batch (build, register, check).
FramesOpt = Annotated[
    bool,
    typer.Option(
        "--frames",
        help="Also print control frames on stdout, one per event: "
        "<<<MINDRIAN:READY|PHASE|ERROR|DONE:{json}>>> "
        "(human lines stay on stderr).",
    ),
]
#: Phase timings of a batch.
TimingsOpt = Annotated[bool, typer.Option("--timings", help="Show how long each phase took.")]
#: Skills built at once.
JobsOpt = Annotated[
    int | None,
    typer.Option(
        "--jobs",
        "-j",
        metavar="N",
        min=1,
        help=(
            "Most skills built at once (phases 1-6) [default: min(2, CPUs)]; without "
            "generated tests (check) a worker starts only for every 8 skills."
        ),
    ),
]
#: One part of a batch, for CI matrices.
ShardOpt = Annotated[
    str | None,
    typer.Option(
        "--shard",
        metavar="I/N",
        help="Only the I-th of N parts of the skills (split by path hash), for CI matrices.",
    ),
]
#: Where the generated packages are (written by build and register, read by explain).
OutOpt = Annotated[
    Path | None,
    typer.Option(
        "--out", metavar="DIR", help="Folder of the generated packages [default: generated/]."
    ),
]
#: Where the phases' checkpoints are.
CheckpointsOpt = Annotated[
    Path | None,
    typer.Option(
        "--checkpoints",
        metavar="DIR",
        help="Checkpoint folder [default: .mindrian/checkpoints/].",
    ),
]
#: The embedded registry phase 7 writes (build, register).
RegistryWriteOpt = Annotated[
    Path | None,
    typer.Option(
        "--registry",
        metavar="DB",
        help="Embedded registry database phase 7 writes [default: .mindrian/registry.lbug].",
    ),
]
#: The registry a query reads (select, graph export).
RegistryReadOpt = Annotated[
    Path | None,
    typer.Option(
        "--registry",
        metavar="PATH",
        help="Embedded registry database, or a registry.yaml to load into memory "
        "[default: .mindrian/registry.lbug, built from generated/registry.yaml when missing].",
    ),
]
#: Neo4j as the registry phase 7 writes (build, register).
Neo4jWriteOpt = Annotated[
    str | None,
    typer.Option(
        "--neo4j-uri",
        metavar="URI",
        help="Register in Neo4j at URI (also NEO4J_URI) instead of the embedded registry.",
    ),
]
#: Neo4j as the registry a query reads (select, graph export).
Neo4jReadOpt = Annotated[
    str | None,
    typer.Option(
        "--neo4j-uri",
        metavar="URI",
        help="Read the Neo4j database at URI instead (also NEO4J_URI); user and password "
        "come from NEO4J_USERNAME and NEO4J_PASSWORD, never from the command line.",
    ),
]
#: The model every agent of a run or a server uses.
ModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model",
        metavar="PROVIDER:ID",
        help="Model of every agent: provider:model_id, or scripted:PATH to replay a script "
        "[default: $MINDRIAN_MODEL, else each agent's own].",
    ),
]
#: The server of an OpenAI-compatible provider (llama.cpp, vLLM, Ollama, LiteLLM, a gateway).
BaseUrlOpt = Annotated[
    str | None,
    typer.Option(
        "--base-url",
        metavar="URL",
        help="Send the model's requests to this OpenAI-compatible server, e.g. "
        "--model openai-chat:NAME --base-url http://127.0.0.1:8080/v1 "
        "[default: $MINDRIAN_BASE_URL].",
        show_default=False,
    ),
]
#: A response cap replacing the spec's in every model of the agent.
MaxTokensOpt = Annotated[
    int | None,
    typer.Option(
        "--max-tokens",
        metavar="N",
        min=1,
        help="Cap every model response at N tokens [default: each spec's].",
        show_default=False,
    ),
]
#: A sampling temperature replacing the spec's in every model of the agent.
TemperatureOpt = Annotated[
    float | None,
    typer.Option(
        "--temperature",
        metavar="T",
        min=0.0,
        help="Sampling temperature of every model [default: each spec's].",
        show_default=False,
    ),
]
#: Drops the spec's thinking budget from every model of the agent.
NoThinkingOpt = Annotated[
    bool,
    typer.Option(
        "--no-thinking",
        help="Drop the specs' thinking budgets (a provider without one drops it anyway, "
        "with a warning).",
    ),
]
#: Writes what the models answered, for replay without a provider.
RecordOpt = Annotated[
    Path | None,
    typer.Option(
        "--record",
        metavar="FILE",
        help="Write every model answer (tool calls included) of the run to FILE, a script "
        "that --model scripted:FILE replays with no provider (also a failed run's).",
        dir_okay=False,
    ),
]
#: Where host tools (Bash, Read, Write…) work: run and serve.
WorkspaceOpt = Annotated[
    Path | None,
    typer.Option(
        "--workspace",
        metavar="DIR",
        help="Folder the agents' host tools (Bash, Read, Write…) work in; serve gives each user "
        "a folder of their own under it [default: the current folder].",
        file_okay=False,
    ),
]
#: The interface a server listens on (serve, mcp --http).
HostOpt = Annotated[str, typer.Option("--host", metavar="HOST", help="Interface to listen on.")]
#: The port a server listens on (serve, mcp --http).
PortOpt = Annotated[
    int, typer.Option("--port", metavar="PORT", min=1, max=65535, help="Port to listen on.")
]
#: Anonymous serving beyond loopback (serve, mcp --http).
InsecureOpt = Annotated[
    bool,
    typer.Option(
        "--insecure",
        help="Serve beyond loopback with no authentication anyway (warned on every start).",
    ),
]
#: Host tool calls the user approves in advance (run, mcp --agents).
ApproveOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--approve",
        metavar="PATTERN",
        help="Approve host tool calls matching a permission rule, e.g. 'Write' or "
        "'Bash(npm test:*)' (repeatable); without a terminal, other calls are denied.",
    ),
]
