"""Code generation: the Jinja rendering of agent packages and the skill scaffold."""

__all__: list[str] = []
