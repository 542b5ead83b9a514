"""The pipeline machinery: phase contract, runner, batch, checkpoints, results and their
presentation, errors."""

__all__: list[str] = []
