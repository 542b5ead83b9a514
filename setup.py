"""Packaging that pyproject.toml cannot say: the repository's ``templates/`` folder ships inside
the ``builder`` package as ``builder._templates``, so an installed mindrian finds its templates
through ``importlib.resources`` wherever it runs.

Folders that hold only data (the templates, ``builder/schemas``) are listed as packages too:
Python can import them as namespace packages, and setuptools warns that it would leave out such
a folder when it is not in ``packages``.
"""

from setuptools import find_namespace_packages, find_packages, setup

#: templates/'s folders whose names are Python identifiers, as packages under builder._templates
#: ("{{ name }}", the scaffold's skill folder, is data of its parent).
_TEMPLATES = [
    "builder._templates",
    *(f"builder._templates.{name}" for name in find_namespace_packages(where="templates")),
]

setup(
    packages=[*find_packages(include=["builder*", "mindrian*"]), "builder.schemas", *_TEMPLATES],
    package_dir={"builder._templates": "templates"},
)
