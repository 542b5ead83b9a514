"""Every error code the builder and the runtime report: the stage that reports it and what it means.

A code is a letter and three digits; the letter names the stage (``S`` skill analysis, ``A``
architecture, ``H`` handoff protocol, ``T`` tool assembly, ``G`` graph schema and registry,
``C`` code generation, ``R`` registration, ``P`` pipeline, ``U`` usage, ``B`` batch, ``D``
drift, ``I`` internal, ``N`` scaffold, ``V`` review (``mindrian diff``), ``X`` run and serve,
``L`` workflow lint (``mindrian workflow``), ``E`` no stage; ``W`` is a warning, its first
digit the phase it concerns, ``0`` none). Codes are part of
the command-line interface (error lines, ERROR frames, ``--json``): a code keeps its meaning,
and a retired code is not reused. An ``L`` code, an error or a warning, ends its meaning with
``(error)`` or ``(warning)``: README's table of them is generated from here
(:mod:`builder.pipeline.codes_doc`). ``tests/builder/pipeline/test_codes.py`` fails when
``builder/`` or the runtime (``mindrian/``, which cannot import this module) uses a code missing
here, when a code here is no longer used, and when a code is computed rather than written out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["CODES", "ErrorCode", "registry"]


@dataclass(frozen=True)
class ErrorCode:
    """One registered error code."""

    code: str
    """The code as printed: ``error[S204]``."""
    stage: str
    """What reports it: a phase name, ``pipeline``, ``usage``, ``registry`` …"""
    meaning: str
    """What went wrong, in a few words."""


def registry(*codes: ErrorCode) -> Mapping[str, ErrorCode]:
    """The codes by code; raises ValueError when a code is registered twice."""
    table: dict[str, ErrorCode] = {}
    for entry in codes:
        if entry.code in table:
            raise ValueError(f"error code {entry.code} is registered twice")
        table[entry.code] = entry
    return MappingProxyType(table)


#: Every code, in code order.
CODES: Mapping[str, ErrorCode] = registry(
    ErrorCode("A002", "architecture", "the agent type is not one of the five"),
    ErrorCode("A003", "architecture", "the model is not written provider:model_id"),
    ErrorCode("A004", "architecture", "the model's provider is not one Agno supports"),
    ErrorCode(
        "A005", "architecture", "no default model for the agent type in [tool.mindrian.models]"
    ),
    ErrorCode("A006", "architecture", "the model cannot run with the skill's model settings"),
    ErrorCode(
        "A007", "architecture", "an explicit type lacks the structure it needs (steps, members)"
    ),
    ErrorCode("B001", "batch", "two skills map to the same agent id or package"),
    ErrorCode(
        "C001",
        "code_generation",
        "a code generation error without a more specific code (CodegenError's default)",
    ),
    ErrorCode("C010", "code_generation", "a value does not survive as a Python literal"),
    ErrorCode("C011", "code_generation", "a name is not a usable Python identifier"),
    ErrorCode("C012", "code_generation", "no comment syntax is known for a generated file's type"),
    ErrorCode("C013", "code_generation", "a generated Python file is not valid Python"),
    ErrorCode(
        "C014", "code_generation", "a pipeline, guided or collaborative agent has no workflow.dot"
    ),
    ErrorCode("C015", "code_generation", "a rendered path would be written outside the package"),
    ErrorCode("C016", "code_generation", "the agent's thought graph breaks the Definition of Done"),
    ErrorCode("C017", "code_generation", "the agent type has no base class"),
    ErrorCode("C018", "code_generation", "the agent id is not a normalised id"),
    ErrorCode("C019", "code_generation", "debate_rounds is not a whole number of at least 1"),
    ErrorCode("C020", "code_generation", "running the generated tests changed the package"),
    ErrorCode("C021", "code_generation", "the existing package folder cannot be read"),
    ErrorCode("C022", "code_generation", "two skills map to the same package folder"),
    ErrorCode("C025", "code_generation", "the synthesizer is not one of the perspectives"),
    ErrorCode(
        "C026",
        "code_generation",
        "an output template's JSON example does not fit the generated schema",
    ),
    ErrorCode(
        "D001", "check", "mindrian check found generated files that differ from a fresh build"
    ),
    ErrorCode(
        "E000",
        "mindrian",
        "an error of the builder without a stage-specific code (CompilerError's default)",
    ),
    ErrorCode("E001", "mindrian", "the command was interrupted (Ctrl-C, SIGINT): exit status 130"),
    ErrorCode(
        "F001", "environment", "the file system refused (disk full, read-only, name too long)"
    ),
    ErrorCode(
        "G001",
        "neo4j_schema",
        "a graph schema error without a more specific code (GraphSchemaError's default)",
    ),
    ErrorCode("G010", "registry", "the registry database is unreachable or refused a statement"),
    ErrorCode("G011", "registry", "no registry database at the given path"),
    ErrorCode(
        "G012", "registry", "the registry database is empty, damaged or not a mindrian registry"
    ),
    ErrorCode("G013", "registry", "another writer held the registry lock past the wait bound"),
    ErrorCode("G014", "registry", "registry.yaml cannot be read back"),
    ErrorCode("H002", "handoff_protocol", "the runtime lacks an enum the handoff contract names"),
    ErrorCode("H003", "handoff_protocol", "the return behaviour is not one the runtime knows"),
    ErrorCode(
        "H004", "handoff_protocol", "the runtime's HandoffType lacks a type the agent supports"
    ),
    ErrorCode("I001", "internal", "an internal error (a bug), in an ERROR frame"),
    ErrorCode("L001", "workflow", "mindrian workflow: the DOT file cannot be read (error)"),
    ErrorCode(
        "L002",
        "workflow",
        "mindrian workflow: the file is not a thought graph, by its DOT syntax or an attribute "
        "value's type (error)",
    ),
    ErrorCode(
        "L003",
        "workflow",
        "mindrian workflow run: the run stopped on a bad --outcome or saved state, the step "
        "limit, a timeout, an unusable model or a failed model call (error)",
    ),
    ErrorCode(
        "L101", "workflow", "single_start: no start node (shape=Mdiamond), or a second one (error)"
    ),
    ErrorCode("L102", "workflow", "has_exit: no exit node (shape=Msquare) (error)"),
    ErrorCode("L103", "workflow", "start_has_no_incoming: an edge enters the start node (error)"),
    ErrorCode("L104", "workflow", "exit_has_no_outgoing: an edge leaves an exit node (error)"),
    ErrorCode("L105", "workflow", "reachable: a node the start cannot reach (error)"),
    ErrorCode(
        "L106", "workflow", "reaches_exit: a node from which no exit can be reached (warning)"
    ),
    ErrorCode(
        "L107", "workflow", "prompt_required: an LLM step with neither prompt nor label (warning)"
    ),
    ErrorCode("L108", "workflow", "valid_condition: an edge's condition does not parse (error)"),
    ErrorCode(
        "L109",
        "workflow",
        "decision_paths: a decision with fewer than two outgoing paths (warning)",
    ),
    ErrorCode(
        "L110",
        "workflow",
        "clear_routes: a decision point's edge shadowed by another, or none keyed (warning)",
    ),
    ErrorCode(
        "L111",
        "workflow",
        "parallel_join: a fan-out with one branch, or branches that never meet (warning)",
    ),
    ErrorCode(
        "L112", "workflow", "fidelity_valid: a node's fidelity is not a known mode (warning)"
    ),
    ErrorCode(
        "L113", "workflow", "type_known: a node's type is no built-in handler type (warning)"
    ),
    ErrorCode(
        "L114",
        "workflow",
        "retry_target_exists: a retry_target or fallback_retry_target names no node (warning)",
    ),
    ErrorCode(
        "L115", "workflow", "goal_gate_has_retry: a goal gate with no retry target (warning)"
    ),
    ErrorCode("M001", "fmt", "mindrian fmt cannot move a field without guessing"),
    ErrorCode("M002", "fmt", "mindrian fmt --check: the file would be reformatted"),
    ErrorCode("N001", "scaffold", "mindrian new cannot create the skill folder"),
    ErrorCode("N002", "scaffold", "mindrian init: skills or generated is not a folder"),
    ErrorCode("N003", "scaffold", "mindrian init: pyproject.toml cannot take [tool.mindrian]"),
    ErrorCode("N004", "scaffold", "mindrian init: the folder is inside another mindrian project"),
    ErrorCode(
        "P001",
        "pipeline",
        "a pipeline error without a more specific code (PipelineError's default)",
    ),
    ErrorCode("P003", "pipeline", "a phase check does not hold"),
    ErrorCode("P004", "pipeline", "--from needs a checkpoint that is missing or failed"),
    ErrorCode("P005", "pipeline", "a checkpoint file is damaged"),
    ErrorCode("P006", "pipeline", "the agent id cannot name a checkpoint folder"),
    ErrorCode("P007", "pipeline", "explain: no checkpoints for the agent id"),
    ErrorCode("P008", "pipeline", "a phase returned other checks than it declares"),
    ErrorCode("P009", "pipeline", "a phase module declares another phase name or number"),
    ErrorCode("P010", "pipeline", "explain --prompt: the generated package cannot be loaded"),
    ErrorCode(
        "R001",
        "registration",
        "a registration error without a more specific code (RegistrationError's default)",
    ),
    ErrorCode("R004", "registration", "the registry cannot be opened"),
    ErrorCode("R005", "registration", "generated/registry.yaml cannot rebuild the registry"),
    ErrorCode("R006", "registration", "the registry refused the registration"),
    ErrorCode(
        "R007",
        "registration",
        "the database lacks or differs on other frameworks than registry.yaml",
    ),
    ErrorCode("R008", "registration", "the registry database is damaged (see G012)"),
    ErrorCode("R009", "registration", "the registry stayed locked by another writer (see G013)"),
    ErrorCode("R010", "registration", "the Neo4j URI carries credentials"),
    ErrorCode(
        "S001",
        "skill_analysis",
        "a skill error without a more specific code (SkillError's default)",
    ),
    ErrorCode("S100", "skill_analysis", "the skill folder has no SKILL.md"),
    ErrorCode("S101", "skill_analysis", "SKILL.md has no front matter"),
    ErrorCode("S102", "skill_analysis", "the front matter is not valid YAML of the supported kind"),
    ErrorCode("S103", "skill_analysis", "the front matter is empty"),
    ErrorCode("S104", "skill_analysis", "the front matter has too many aliases"),
    ErrorCode("S105", "skill_analysis", "SKILL.md is UTF-16, not UTF-8"),
    ErrorCode("S106", "skill_analysis", "SKILL.md contains a NUL byte"),
    ErrorCode("S107", "skill_analysis", "SKILL.md exceeds the size limit"),
    ErrorCode(
        "S108",
        "skill_analysis",
        "the skill folder has too many files under references/ and scripts/",
    ),
    ErrorCode("S109", "skill_analysis", "a front-matter key is given twice"),
    ErrorCode("S110", "skill_analysis", "a YAML tag the front matter does not support"),
    ErrorCode("S111", "skill_analysis", "the front matter nests too deeply"),
    ErrorCode("S112", "skill_analysis", "a file of the skill folder links outside it"),
    ErrorCode("S113", "skill_analysis", "a references/ Markdown file exceeds the size limit"),
    ErrorCode("S114", "skill_analysis", "a skill named through a link to outside the project"),
    ErrorCode("S201", "skill_analysis", "a required field is missing"),
    ErrorCode(
        "S202",
        "skill_analysis",
        "a field breaks the front-matter schema (unknown key, wrong type or range)",
    ),
    ErrorCode("S203", "skill_analysis", "a name cannot be normalised to an id or identifier"),
    ErrorCode("S204", "skill_analysis", "the type is not one of the five agent types"),
    ErrorCode("S205", "skill_analysis", "two spellings of the same field are both given"),
    ErrorCode("S206", "skill_analysis", "score bands overlap"),
    ErrorCode("S207", "skill_analysis", "a name appears twice in a list that must be unique"),
    ErrorCode("S208", "skill_analysis", "good_for rates a problem type the skill does not list"),
    ErrorCode(
        "S209", "skill_analysis", "the package name would shadow a standard or installed module"
    ),
    ErrorCode("S210", "skill_analysis", "the id is too long"),
    ErrorCode("S211", "skill_analysis", "a number is not finite or is too large"),
    ErrorCode("S220", "skill_analysis", "a chain's stage file is missing or numbered twice"),
    ErrorCode("S221", "skill_analysis", "a chain's stages disagree with its stage files"),
    ErrorCode("S222", "skill_analysis", "a stage file's stage or chain disagrees with its place"),
    ErrorCode("S223", "skill_analysis", "a stage's input_from or output_to is not its neighbour"),
    ErrorCode("T002", "tool_assembly", "the MCP server is not in the catalog"),
    ErrorCode("T003", "tool_assembly", "the MCP server has no such tool"),
    ErrorCode("T004", "tool_assembly", "a custom tool's function is not a dotted path"),
    ErrorCode("T005", "tool_assembly", "a custom tool's function cannot be imported"),
    ErrorCode("T006", "tool_assembly", "a custom tool cannot be described from its signature"),
    ErrorCode("T007", "tool_assembly", "a custom tool does not fit the tool-definition format"),
    ErrorCode("T008", "tool_assembly", "two tools or servers have the same name"),
    ErrorCode("T009", "tool_assembly", "a global action uses a tool the agent does not have"),
    ErrorCode("T010", "tool_assembly", "an MCP catalog entry is invalid"),
    ErrorCode(
        "T011",
        "tool_assembly",
        "importing a skill's custom tools timed out or ended the importing process",
    ),
    ErrorCode(
        "T012",
        "tool_assembly",
        "an allowed-tools entry is not a permission pattern (Tool or Tool(specifier))",
    ),
    ErrorCode("U001", "usage", "a usage error without a more specific code (UsageError's default)"),
    ErrorCode("U002", "usage", "unknown phase name or number"),
    ErrorCode("U003", "usage", "--from comes after --until"),
    ErrorCode("U004", "usage", "both SKILL.md paths and --all"),
    ErrorCode("U005", "usage", "neither SKILL.md paths nor --all"),
    ErrorCode("U006", "usage", "not an agent id"),
    ErrorCode("U007", "usage", "a plugin root has nothing to build"),
    ErrorCode("U008", "usage", "both --registry and --neo4j-uri"),
    ErrorCode(
        "U009", "usage", "the Neo4j URI cannot be used: unparsable, or it carries credentials"
    ),
    ErrorCode("U010", "usage", "unknown export format"),
    ErrorCode("U011", "usage", "mindrian new: unknown agent type"),
    ErrorCode("U012", "usage", "mindrian new: the description is not one non-empty line"),
    ErrorCode("U014", "usage", "both --json and --frames"),
    ErrorCode("U015", "usage", "both a sentence and --trigger"),
    ErrorCode("U016", "usage", "--out names a file, not a folder"),
    ErrorCode("U017", "usage", "--shard is not I/N with 1 <= I <= N"),
    ErrorCode("U025", "usage", "select --eval: a trigger-eval file cannot be read or used"),
    ErrorCode("U026", "usage", "select: --eval or --explain combined with what they exclude"),
    ErrorCode(
        "U040",
        "usage",
        "a compiling command (build, check, validate, fmt, register, new) without the build extra",
    ),
    ErrorCode("U041", "usage", "--format names a format the command does not print"),
    ErrorCode(
        "U042",
        "usage",
        "[tool.mindrian] cannot be used: not TOML, an unknown key or a value of the wrong type",
    ),
    ErrorCode("U043", "usage", "mindrian run: --session is not a plain session id"),
    ErrorCode("U044", "usage", "mindrian check: both --quiet and --verbose"),
    ErrorCode("U045", "usage", "build --all or check outside a mindrian project"),
    ErrorCode("V001", "review", "mindrian diff: the project is not in a git repository"),
    ErrorCode("V002", "review", "mindrian diff: a revision names no commit"),
    ErrorCode("V003", "review", "mindrian diff: git failed or is not installed"),
    ErrorCode(
        "W000",
        "mindrian",
        "a runtime warning without a more specific code (MindrianWarning's default)",
    ),
    # W001-W003 and W108-W115 were mindrian workflow's codes before they moved to L001-L115
    # (W101-W107 meant both); they stay unused so that old output is not misread.
    ErrorCode("W101", "skill_analysis", "a foreign type is kept as metadata; the type is inferred"),
    ErrorCode(
        "W102",
        "skill_analysis",
        "a foreign model alias is kept as metadata; the default model is used",
    ),
    ErrorCode("W103", "skill_analysis", "an unquoted value holding ': ' is read as text"),
    ErrorCode(
        "W104",
        "skill_analysis",
        "a standard field of a shape the standard does not define is kept as metadata",
    ),
    ErrorCode("W105", "skill_analysis", "the description is longer than the Agent Skills limit"),
    ErrorCode(
        "W120",
        "skill_analysis",
        "an agents/*.md without front matter is named by its file and described by its first "
        "paragraph",
    ),
    ErrorCode(
        "W121",
        "skill_analysis",
        "a chain's stage list disagrees with its stage files (missing, extra or out of order)",
    ),
    ErrorCode(
        "W122",
        "skill_analysis",
        "a file of the skill folder is over the copy limits and left out of the package",
    ),
    ErrorCode("W123", "skill_analysis", "an unknown front-matter key is kept as metadata"),
    ErrorCode(
        "W124", "skill_analysis", "a field set at the top level and under metadata: the top wins"
    ),
    ErrorCode("W125", "skill_analysis", "the score bands leave some totals without a verdict"),
    ErrorCode(
        "W126", "batch", "a link under skills/ leads outside the project: its skill is not built"
    ),
    ErrorCode("W106", "skill_analysis", "the skill's name differs from its folder (Agent Skills)"),
    ErrorCode("W107", "skill_analysis", "the skill's name is not an Agent Skills name (a slug)"),
    ErrorCode(
        "W201",
        "architecture",
        "a model setting may not reach the model: the provider's Agno model lacks its field, or "
        "the provider's SDK is not installed where the build runs",
    ),
    ErrorCode(
        "W301",
        "handoff_protocol",
        "an output template's JSON example cannot be read; the output schema leaves it out",
    ),
    ErrorCode(
        "W401",
        "tool_assembly",
        "an optional MCP server cannot be started or reached from the build machine",
    ),
    ErrorCode(
        "W402",
        "tool_assembly",
        "an allowed-tools entry names a tool that is not a host tool; it is left out",
    ),
    ErrorCode(
        "W403",
        "tool_assembly",
        "an allowed-tools pattern pre-approves running arbitrary code (Bash, Bash(python3:*)…)",
    ),
    ErrorCode(
        "W701",
        "registry",
        "a registry loaded from registry.yaml ranks frameworks without their body: no package "
        "beside it, or one whose spec.yaml disagrees (mindrian.graph.RoutingBodyWarning)",
    ),
    ErrorCode("X001", "run", "mindrian run or serve: unknown agent, missing package or no project"),
    ErrorCode("X002", "run", "mindrian run: the model script is unusable"),
    ErrorCode("X003", "run", "mindrian serve: the database URL is of an unsupported kind"),
    ErrorCode(
        "X006", "run", "mindrian serve or mcp --http: a non-loopback host without authentication"
    ),
    ErrorCode("X007", "run", "mindrian serve: the SQLite sessions database cannot be opened"),
    ErrorCode("X008", "run", "mindrian run or mcp: an --approve value is not a permission rule"),
    ErrorCode("X009", "run", "mindrian run, serve or mcp: the --workspace is not a folder"),
    ErrorCode(
        "X010",
        "run",
        "mindrian serve or mcp --http: the port cannot be listened on (in use, no right)",
    ),
    ErrorCode(
        "X011",
        "run",
        "mindrian mcp: no registry to serve, one that cannot be opened, or --agents outside a "
        "project",
    ),
)
