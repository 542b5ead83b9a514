"""The mindrian compiler: SKILL.md in, agent package and registry entry out."""

__all__ = ["__version__"]

__version__ = "0.1.0"
