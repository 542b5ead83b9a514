"""Running the phases: one build (runner), many (batch), the shared test session, sharding and
``mindrian check``. It sits above the phases it runs; ``builder.pipeline`` below them holds the
contract, errors, codes, serialisation, checkpoints and results."""

__all__: list[str] = []
