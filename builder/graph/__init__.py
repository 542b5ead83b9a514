"""The framework graph on the builder side: phase 5's GraphConfig, Cypher linting, select and
export."""

__all__: list[str] = []
