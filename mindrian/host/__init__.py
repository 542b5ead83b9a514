"""The host's tools (Bash, Read, Write, Edit, Glob, Grep, WebFetch) and their permissions."""

from mindrian.host.patterns import (
    HOST_TOOLS,
    Pattern,
    PatternError,
    is_host_tool,
    parse_pattern,
    runs_arbitrary_code,
)

__all__ = [
    "HOST_TOOLS",
    "Pattern",
    "PatternError",
    "is_host_tool",
    "parse_pattern",
    "runs_arbitrary_code",
]
