"""The ground floor of the builder: the phase contract, checkpoints, results and their
presentation, errors and their codes, configuration, serialisation. The phases build on it and
``builder.orchestration`` runs them; it imports neither."""

__all__: list[str] = []
