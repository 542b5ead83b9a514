"""An MCP server (stdio) that answers framework selection from the registry."""

from mindrian.mcp.server import SERVER_NAME, build_server, open_source_registry

__all__ = ["SERVER_NAME", "build_server", "open_source_registry"]
