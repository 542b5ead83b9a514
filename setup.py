"""Packaging that pyproject.toml cannot say: the repository's ``templates/`` folder ships inside
the ``builder`` package as ``builder._templates``, so an installed mindrian finds its templates
through ``importlib.resources`` wherever it runs."""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["builder*", "mindrian*"]), "builder._templates"],
    package_dir={"builder._templates": "templates"},
)
