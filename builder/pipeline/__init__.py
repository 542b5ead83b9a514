"""The pipeline machinery: phase contract, runner, batch, checkpoints, reports, errors."""

__all__: list[str] = []
