"""Phase 7's end-to-end probe: ``e2e`` runs in a subprocess against a generated package,
``runner`` starts it (one process per probe, or a forking server for batches)."""

__all__: list[str] = []
