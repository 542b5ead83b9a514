"""One error type per stage, all under :class:`CompilerError`, itself under the runtime's
:class:`mindrian.errors.MindrianError` (the one root of every error mindrian reports).

Every error carries a message, a short machine-readable code and, when the
problem comes from a file, the place in it. :func:`builder.pipeline.results.problem_of` turns
these (and any other exception) into a located problem and an exit status, in one place.
"""

from __future__ import annotations

from dataclasses import dataclass

from mindrian.errors import MindrianError

__all__ = [
    "AgentCommandError",
    "ArchitectureError",
    "CodegenError",
    "CompilerError",
    "GraphSchemaError",
    "HandoffConfigError",
    "PipelineError",
    "RegistrationError",
    "ScaffoldError",
    "SkillError",
    "SourceLocation",
    "ToolAssemblyError",
    "UsageError",
]


@dataclass(frozen=True)
class SourceLocation:
    """A place in a source file; line and column are 1-based, 0 when unknown."""

    path: str
    """The file as the user named it (POSIX separators)."""
    line: int = 0
    """1-based line, or 0 when the whole file is meant."""
    column: int = 0
    """1-based column, or 0 when the whole line is meant."""

    def __str__(self) -> str:
        parts = [self.path]
        if self.line:
            parts.append(str(self.line))
            if self.column:
                parts.append(str(self.column))
        return ":".join(parts)


class CompilerError(MindrianError):
    """Base of every error the compiler reports to a user (never a bug)."""

    stage = "mindrian"
    default_code = "E000"
    code: str
    """The registered code (builder/pipeline/codes.py), ``default_code`` unless given."""

    def __init__(
        self,
        message: str,
        *,
        location: SourceLocation | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.location = location
        self.code = code or self.default_code

    def render(self) -> str:
        """The compiler-style line: ``PATH:LINE:COL: error[CODE]: message``."""
        prefix = f"{self.location}: " if self.location else ""
        return f"{prefix}error[{self.code}]: {self.message}"


class UsageError(CompilerError):
    """The command line itself is wrong (exit status 2)."""

    stage = "usage"
    default_code = "U001"


class PipelineError(CompilerError):
    """The runner could not proceed (missing phase, unreadable checkpoint)."""

    stage = "pipeline"
    default_code = "P001"


class SkillError(CompilerError):
    """Phase 1: the SKILL.md cannot be read or does not satisfy the schema."""

    stage = "skill_analysis"
    default_code = "S001"


class ArchitectureError(CompilerError):
    """Phase 2: type or model cannot be determined."""

    stage = "architecture"


class HandoffConfigError(CompilerError):
    """Phase 3: the handoff contract asks for something the runtime lacks."""

    stage = "handoff_protocol"


class ToolAssemblyError(CompilerError):
    """Phase 4: an MCP server, tool or custom function is unusable."""

    stage = "tool_assembly"


class GraphSchemaError(CompilerError):
    """Phase 5: the graph schema or its queries are invalid."""

    stage = "neo4j_schema"
    default_code = "G001"


class CodegenError(CompilerError):
    """Phase 6: the package cannot be rendered, compiled or tested."""

    stage = "code_generation"
    default_code = "C001"


class RegistrationError(CompilerError):
    """Phase 7: the registry refused the framework or the end-to-end run failed."""

    stage = "registration"
    default_code = "R001"


class ScaffoldError(CompilerError):
    """``mindrian new``: the skill folder cannot be created (a valid command line, exit status
    1)."""

    stage = "scaffold"
    default_code = "N001"


class AgentCommandError(CompilerError):
    """``mindrian run`` / ``serve``: an unusable agent, model script or database (exit status 1)."""

    stage = "run"
    default_code = "X001"
