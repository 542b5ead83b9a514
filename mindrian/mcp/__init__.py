"""An MCP server (stdio) that answers framework selection and guarded reads from the registry."""

from mindrian.mcp.server import REGISTRY_SCOPE, SERVER_NAME, build_server, open_source_registry

__all__ = ["REGISTRY_SCOPE", "SERVER_NAME", "build_server", "open_source_registry"]
