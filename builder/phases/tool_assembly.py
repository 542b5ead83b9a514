"""Phase 4, tool assembly: MCP servers, custom Python tools and global actions.

Requests come from the SkillDefinition; servers are resolved in the MCP
catalog; custom tools are described from their type hints and docstrings by a child
process (``builder.mcp.describe``: a skill never chooses what the builder
imports); every tool definition is validated against seed 004's format.
Whether servers are usable is asked of an injected probe (configuration check
by default, a real MCP handshake with ``--connect``), so the phase itself is a
pure function of its inputs and the probe's answers.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from builder.mcp.catalog import CatalogEntry, build_catalog
from builder.mcp.describe import (
    Described,
    DescribeFailed,
    ToolRequest,
    describe_tools,
)
from builder.mcp.probe import HandshakeProbe, Probe, ProbeResult, check_configuration
from builder.mcp.tooldefs import definition_errors, definition_to_plain
from builder.phases import phase_number
from builder.phases.architecture import field_line
from builder.phases.keys import custom_tools_extra
from builder.phases.outputs import Inputs, Outputs
from builder.pipeline.contract import CheckResult, PhaseHooks, PhaseResult
from builder.pipeline.errors import SourceLocation, ToolAssemblyError
from builder.skill.frontmatter import decode_skill
from builder.skill.host_tools import decide_host_tools
from builder.skill.model import (
    CustomToolRequest,
    GlobalActionRequest,
    McpServerRequest,
    SkillDefinition,
)
from builder.skill.spec import (
    AgentSpec,
    CustomToolConfig,
    GlobalActionConfig,
    McpServerConfig,
    ScriptCandidate,
    ToolConfig,
)

__all__ = ["PHASE", "Describer", "ToolAssemblyPhase"]

#: Describes a skill's custom tools from the project root, in request order.
Describer = Callable[[Sequence[ToolRequest], Path], tuple[Described, ...]]

#: Warning code: an optional server the build machine cannot start or reach.
_UNAVAILABLE = "W401"

_DOTTED = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)+$")


@dataclass(frozen=True)
class _Named:
    """A tool name the model will see and where it was asked for."""

    name: str
    origin: str
    line: int


def _loc(d: SkillDefinition, line: int, *paths: str) -> SourceLocation:
    return SourceLocation(d.source_path, line or field_line(d, *paths))


def _server_paths(i: int) -> tuple[str, ...]:
    return (
        f"tools.mcp_servers.{i}.server",
        f"tools.mcp_servers.{i}",
        f"mcp_tools.{i}",
        "tools.mcp_servers",
        "mcp_tools",
    )


def _resolve_server(
    d: SkillDefinition,
    i: int,
    request: McpServerRequest,
    catalog: Mapping[str, CatalogEntry],
) -> McpServerConfig:
    entry = catalog.get(request.server)
    where = _loc(d, request.line, *_server_paths(i))
    if entry is None:
        raise ToolAssemblyError(
            f"unknown MCP server {request.server!r}; the catalog has: {', '.join(catalog)}",
            location=where,
            code="T002",
        )
    tools = request.tools or entry.default_tools
    for tool in tools:
        if tool not in entry.tools:
            raise ToolAssemblyError(
                f"MCP server {entry.name!r} has no tool {tool!r}; it offers: "
                f"{', '.join(entry.tools)}",
                location=where,
                code="T003",
            )
    return McpServerConfig(
        name=entry.name,
        transport=entry.transport,
        command=entry.command,
        args=entry.args,
        url=entry.url,
        env=entry.env,
        package=entry.package,
        tools=tuple(tools),
        required=request.required,
        line=where.line,
    )


def _custom_where(d: SkillDefinition, i: int, request: CustomToolRequest) -> SourceLocation:
    return _loc(
        d,
        request.line,
        f"tools.custom_tools.{i}.function",
        f"tools.custom_tools.{i}",
        "tools.custom_tools",
    )


def _custom_tools(
    d: SkillDefinition, root: Path, describer: Describer
) -> tuple[CustomToolConfig, ...]:
    """Every custom tool, described by ``describer`` (a child process) in one call."""
    places = [_custom_where(d, i, r) for i, r in enumerate(d.custom_tools)]
    if not places:
        return ()
    for request, where in zip(d.custom_tools, places, strict=True):
        if not _DOTTED.match(request.function):
            raise ToolAssemblyError(
                f"custom tool {request.name!r}: {request.function!r} is not a dotted path like "
                "package.module.function",
                location=where,
                code="T004",
            )
    try:
        described = describer(
            [ToolRequest(r.function, r.name, r.description) for r in d.custom_tools], root
        )
    except DescribeFailed as exc:
        names = ", ".join(repr(r.name) for r in d.custom_tools)
        raise ToolAssemblyError(
            f"custom tools {names}: {exc}", location=places[0], code="T011"
        ) from exc
    return tuple(
        _custom_tool(r, found, where)
        for r, found, where in zip(d.custom_tools, described, places, strict=True)
    )


def _custom_tool(
    request: CustomToolRequest, found: Described, where: SourceLocation
) -> CustomToolConfig:
    if found.failure == "signature":
        raise ToolAssemblyError(
            f"custom tool {request.name!r}: {found.reason}", location=where, code="T006"
        )
    if found.definition is None:
        raise ToolAssemblyError(
            f"custom tool {request.name!r}: cannot import {request.function}: {found.reason}",
            location=where,
            code="T005",
        )
    problems = definition_errors(definition_to_plain(found.definition))
    if problems:
        raise ToolAssemblyError(
            f"custom tool {request.name!r} does not fit the tool-definition format: "
            f"{'; '.join(problems)}",
            location=where,
            code="T007",
        )
    return CustomToolConfig(
        name=request.name,
        function=request.function,
        definition=found.definition,
        line=where.line,
    )


def _check_unique(d: SkillDefinition, names: list[_Named], what: str) -> None:
    seen: dict[str, _Named] = {}
    for named in names:
        first = seen.setdefault(named.name, named)
        if first is not named:
            raise ToolAssemblyError(
                f"duplicate {what} {named.name!r}: from {named.origin} and from {first.origin}"
                + (f" (line {first.line})" if first.line else ""),
                location=SourceLocation(d.source_path, named.line),
                code="T008",
            )


def _global_action(
    d: SkillDefinition,
    i: int,
    request: GlobalActionRequest,
    servers: Mapping[str, McpServerConfig],
    custom: Mapping[str, CustomToolConfig],
) -> GlobalActionConfig:
    where = _loc(
        d,
        request.line,
        f"tools.global_actions.{i}.tool",
        f"tools.global_actions.{i}",
        "tools.global_actions",
    )
    server, dot, tool = request.tool.partition(".")
    available = [f"{s.name}.{t}" for s in servers.values() for t in s.tools] + list(custom)
    if dot and server in servers and tool in servers[server].tools:
        bound = GlobalActionConfig(request.action, tool, server, request.description, where.line)
    elif not dot and request.tool in custom:
        bound = GlobalActionConfig(
            request.action, request.tool, "", request.description, where.line
        )
    else:
        raise ToolAssemblyError(
            f"global action {request.action!r} uses {request.tool!r}, which is not among the "
            "agent's tools "
            "(request it under tools.mcp_servers or tools.custom_tools); available: "
            f"{', '.join(available) or 'none'}",
            location=where,
            code="T009",
        )
    return bound


def _apply_probe(
    source_path: str,
    server: McpServerConfig,
    result: ProbeResult,
    failures: list[CheckResult],
    unknown: list[CheckResult],
    warnings: list[str],
) -> tuple[McpServerConfig, str]:
    """(the server with the tools a handshake described, its state for the check's reason).

    What the probe found depends on the build machine (PATH, network), so it goes to the
    checks and warnings, never into the server's config: the spec stays the same everywhere.
    """
    where = SourceLocation("", server.line)
    if not result.ok:
        if server.required:
            failures.append(
                CheckResult(
                    "mcps_connected",
                    False,
                    f"required MCP server {server.name!r}: {result.detail}",
                )
            )
        else:
            warnings.append(
                f"{SourceLocation(source_path, server.line)}: warning[{_UNAVAILABLE}]: optional "
                f"MCP server {server.name!r} is unavailable on this machine: {result.detail}"
            )
        return server, f"{server.name} unavailable ({result.detail})"
    if not result.handshake:
        return server, f"{server.name} configured ({result.detail})"
    offered = {t.name: t for t in result.tools}
    missing = [t for t in server.tools if t not in offered]
    if missing:
        unknown.append(
            CheckResult(
                "tools_available",
                False,
                f"MCP server {server.name!r} does not offer {', '.join(missing)}; it offers: "
                f"{', '.join(offered)}",
                where,
            )
        )
    definitions = tuple(offered[t] for t in server.tools if t in offered)
    for definition in definitions:
        problems = definition_errors(definition_to_plain(definition))
        if problems:
            unknown.append(
                CheckResult(
                    "tools_available",
                    False,
                    f"tool {definition.name!r} of {server.name!r} breaks the tool-definition "
                    f"format: {'; '.join(problems)}",
                    where,
                )
            )
    return replace(server, definitions=definitions), f"{server.name} connected ({result.detail})"


def _with_path(d: SkillDefinition, location: SourceLocation | None) -> SourceLocation | None:
    return SourceLocation(d.source_path, location.line) if location else None


class ToolAssemblyPhase(PhaseHooks[Outputs, AgentSpec]):
    """Phase 4: attach a ToolConfig whose servers and tools are all usable."""

    name = "tool_assembly"
    number = phase_number(name)
    checks = ("mcps_connected", "tools_available")
    output_type = AgentSpec

    def __init__(
        self,
        configuration_probe: Probe = check_configuration,
        handshake_probe: Callable[[Path], Probe] = HandshakeProbe,
        describer: Describer | None = None,
    ) -> None:
        self._configuration_probe = configuration_probe
        self._handshake_probe = handshake_probe
        self._describer = describer or _describe_in_child

    def extra_digest(self, inputs: Inputs) -> str:
        """The source files of the custom tools' modules: editing one describes its tools again."""
        return custom_tools_extra(inputs)

    def run(self, inputs: Inputs) -> PhaseResult[AgentSpec]:
        """A new AgentSpec with ``tools`` set; raises ToolAssemblyError for unusable requests."""
        d, spec = inputs.previous.skill(), inputs.previous.spec()
        catalog = build_catalog(inputs.config.mcp_catalog)
        requested = [_resolve_server(d, i, r, catalog) for i, r in enumerate(d.mcp_servers)]
        custom = _custom_tools(d, Path(inputs.config.root), self._describer)
        _check_unique(
            d,
            [_Named(s.name, f"the MCP server request at line {s.line}", s.line) for s in requested],
            "MCP server",
        )
        _check_unique(
            d,
            [_Named(t, f"MCP server {s.name!r}", s.line) for s in requested for t in s.tools]
            + [_Named(c.name, f"custom tool {c.function}", c.line) for c in custom],
            "tool name",
        )
        by_server = {s.name: s for s in requested}
        by_custom = {c.name: c for c in custom}
        actions = tuple(
            _global_action(d, i, a, by_server, by_custom) for i, a in enumerate(d.global_actions)
        )

        probe = (
            self._handshake_probe(Path(inputs.config.root))
            if inputs.config.connect
            else self._configuration_probe
        )
        failures: list[CheckResult] = []
        unknown: list[CheckResult] = []
        warnings: list[str] = []
        probed = [
            _apply_probe(d.source_path, s, probe(catalog[s.name]), failures, unknown, warnings)
            for s in requested
        ]
        host, host_warnings = decide_host_tools(
            d, _skill_text(inputs), [name for name, _ in inputs.source.files]
        )
        warnings.extend(host_warnings)
        config = ToolConfig(
            mcp_servers=tuple(server for server, _ in probed),
            custom_tools=tuple(custom),
            global_actions=actions,
            scripts=tuple(ScriptCandidate(s.path, s.language) for s in d.scripts),
            connection_check="handshake" if inputs.config.connect else "configuration",
            host=host,
        )
        checks = (
            _first(failures, d)
            or CheckResult(
                "mcps_connected", True, _connected_reason(config, [state for _, state in probed])
            ),
            _first(unknown, d) or CheckResult("tools_available", True, _available_reason(config)),
        )
        return PhaseResult(
            output=replace(spec, tools=config), checks=checks, warnings=tuple(warnings)
        )


def _skill_text(inputs: Inputs) -> str:
    """SKILL.md's text as phase 1 read it (to locate allowed-tools entries to the column)."""
    return decode_skill(inputs.source.data, inputs.source.path)


def _describe_in_child(requests: Sequence[ToolRequest], root: Path) -> tuple[Described, ...]:
    return describe_tools(requests, cwd=root)


def _first(results: list[CheckResult], d: SkillDefinition) -> CheckResult | None:
    if not results:
        return None
    first = results[0]
    reason = first.reason if len(results) == 1 else f"{first.reason} (and {len(results) - 1} more)"
    return replace(first, reason=reason, location=_with_path(d, first.location))


def _connected_reason(config: ToolConfig, states: Sequence[str]) -> str:
    if not states:
        return "no MCP servers requested"
    how = "handshake" if config.connection_check == "handshake" else "configuration check"
    return f"{how}: {', '.join(states)}"


def _available_reason(config: ToolConfig) -> str:
    names = config.tool_names()
    return f"{len(names)} tools available: {', '.join(names)}" if names else "no tools requested"


#: The phase object the runner loads.
PHASE = ToolAssemblyPhase()
