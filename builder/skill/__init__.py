"""Skill input: reading SKILL.md and its folder, front matter, body, and the typed models."""

__all__: list[str] = []
