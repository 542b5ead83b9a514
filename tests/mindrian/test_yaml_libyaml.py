"""libyaml's emitter writes a generated file only where it gives PyYAML's own bytes.

``dump_yaml`` (spec.yaml) and registry.yaml's entries go through libyaml when
:func:`mindrian.yaml_emit.libyaml_writes_alike` admits the data. Differential:
for every admitted document, random and real (this project's generated files, the
shared corpus's skills as phase 1 reads them), both emitters' bytes must be equal.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mindrian import serial
from mindrian.graph import registry_yaml
from mindrian.yaml_emit import libyaml_writes_alike

REPO = Path(__file__).resolve().parents[2]
CORPORA = [(REPO.parent / "shared" / name).resolve() for name in ("corpus", "routing")]
SKILLS = sorted(p for c in CORPORA if c.is_dir() for p in c.rglob("SKILL.md"))
SPECS = sorted((REPO / "generated").glob("*/spec.yaml"))

#: PyYAML's and libyaml's analyses part on these (indicators, breaks, the BMP's edges, the byte
#: order mark, NEL) besides the characters PyYAML's analysis treats apart.
TRICKY = (
    "-?:,[]{}#&*!|>'\"%@`.=~<  \t\r\n\n\x00\x07\x1f\x7e\x7f\x85\x9f\xa0é\u2028\u2029\ud7ff"
    "\ue000\ufeff\ufffd\ufffe\U00010000😀\U0010ffffaZ09"
)
LOOKALIKES = ["yes", "null", "~", "1.0", "0x1", "---", "...", "- a", "a: b", "a #b", "<<", "1e3"]
texts = st.text(alphabet=st.sampled_from(TRICKY), max_size=16) | st.sampled_from(LOOKALIKES)
scalars = texts | st.integers() | st.floats() | st.booleans() | st.none()
documents = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=10,
)
#: Documents the admission refuses, each because libyaml writes other bytes for it.
DIFFERING: list[Any] = [
    "a lone scalar",
    {"": "an empty key"},
    {"k": "past the BMP 😀"},
    {"k" * 128: "a long key"},
]


class _RegistryFast(yaml.CSafeDumper):
    """registry.yaml's representation through libyaml's emitter."""


_RegistryFast.add_representer(str, registry_yaml._represent_str)


def _spec_bytes(data: Any, dumper: type) -> str:
    options = {"sort_keys": False, "allow_unicode": True, "default_flow_style": False}
    return str(yaml.dump(data, Dumper=dumper, width=2**31 - 1, **options))


def _registry_bytes(data: Any, dumper: type) -> str:
    return str(yaml.dump(data, Dumper=dumper, **registry_yaml._STYLE))


def _spec_admitted(data: Any) -> bool:
    return libyaml_writes_alike(data, serial._literal_style, 2**31 - 1)


def _registry_admitted(data: Any) -> bool:
    return libyaml_writes_alike(data, registry_yaml._never_literal, registry_yaml._STYLE["width"])


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents)
def test_an_admitted_document_gets_pyyamls_bytes_from_libyaml(document: Any) -> None:
    if _spec_admitted(document):
        expected = _spec_bytes(document, serial._Dumper)
        assert _spec_bytes(document, serial._FastDumper) == expected
        assert serial.dump_yaml(document) == expected
    if _registry_admitted(document):
        assert _registry_bytes(document, _RegistryFast) == _registry_bytes(
            document, registry_yaml._Dumper
        )


@pytest.mark.parametrize("document", DIFFERING, ids=repr)
def test_what_libyaml_writes_otherwise_is_left_to_pyyaml(document: Any) -> None:
    expected = _spec_bytes(document, serial._Dumper)
    assert _spec_bytes(document, serial._FastDumper) != expected  # why it is refused
    assert not _spec_admitted(document) and not _registry_admitted(document)
    assert serial.dump_yaml(document) == expected


@pytest.mark.parametrize("path", SPECS, ids=lambda p: p.parent.name)
def test_every_generated_spec_is_written_by_libyaml_with_the_same_bytes(path: Path) -> None:
    data = serial.load_yaml(path.read_text(encoding="utf-8"))
    assert _spec_admitted(data)
    assert _spec_bytes(data, serial._FastDumper) == _spec_bytes(data, serial._Dumper)


def test_every_registry_entry_is_written_by_libyaml_with_the_same_bytes() -> None:
    records = registry_yaml.load_registry_yaml(REPO / "generated" / "registry.yaml")
    assert records
    for record in records:
        entry = [json.loads(registry_yaml._key(record))]
        assert _registry_admitted(entry), record.id
        assert _registry_bytes(entry, _RegistryFast) == _registry_bytes(
            entry, registry_yaml._Dumper
        )


def _spec_of(path: Path) -> Any:
    """The data phase 6 writes as the skill's spec.yaml (phases 1-5 run here)."""
    from builder.codegen.render import positionless
    from builder.phases import PHASE_NAMES, load_phase
    from builder.phases.outputs import Outputs
    from builder.pipeline.config import BuildConfig
    from builder.pipeline.contract import PhaseInput
    from builder.skill.source import load_source

    source = load_source(path, display=path.name)
    config = BuildConfig(root=str(REPO))
    previous = Outputs()
    for name in PHASE_NAMES[: PHASE_NAMES.index("code_generation")]:
        result = load_phase(name).run(PhaseInput(source=source, config=config, previous=previous))
        previous = previous.after(name, lambda output=result.output: output)
    return positionless(serial.to_plain(previous.spec()))


@pytest.mark.skipif(not SKILLS, reason=f"shared skills not found at {CORPORA}")
def test_every_shared_skills_spec_is_written_alike_when_admitted() -> None:
    admitted = 0
    for path in SKILLS:
        data = _spec_of(path)
        if _spec_admitted(data):
            admitted += 1
            assert _spec_bytes(data, serial._FastDumper) == _spec_bytes(data, serial._Dumper), path
    assert admitted >= len(SKILLS) // 2  # the admission is not vacuous on real skills
