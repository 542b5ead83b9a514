"""Tools: the MCP server catalog, MCP probes and tool definitions."""

__all__: list[str] = []
