"""Phase 7's end-to-end probe, run in a subprocess against a generated package."""

__all__: list[str] = []
