"""What each skill of a cold batch pays per phase output and per package, in this process.

A cold ``build --all`` writes seven checkpoints per skill, each phase output
dumped to YAML once (its digest and its file share the text), and renders each
package once (a batch's phase 6 takes up what it rendered for the shared
session). Measured on this project's skills, phases 1-5 run in this process
first (untimed):

* a phase output's checkpoint YAML, with the dumper's own string nodes and, for
  comparison, through PyYAML's representer dispatch (what the builder did
  before: the same bytes);
* one package's rendering (phase 6 without writing or testing).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import yaml

from bench.common import ROOT, Row

__all__ = ["rows"]

#: Passes over the outputs; the best pass is kept (least disturbed by other load).
PASSES = 5


def _best_ms(work: Callable[[], None], count: int) -> float:
    """Milliseconds per item of the fastest of :data:`PASSES` passes over ``count`` items."""
    best = float("inf")
    for _ in range(PASSES):
        began = time.process_time()
        work()
        best = min(best, time.process_time() - began)
    return 1000.0 * best / count


def _inputs() -> list[Any]:
    """Phase 6's inputs for every skill of this project (phases 1-5 run here)."""
    from builder.orchestration.batch import discover
    from builder.phases import PHASE_NAMES, load_phase
    from builder.phases.outputs import Outputs
    from builder.pipeline.config import BuildConfig
    from builder.pipeline.contract import PhaseInput
    from builder.skill.source import load_source

    config = BuildConfig(root=str(ROOT))
    found = []
    for path in discover(ROOT):
        source = load_source(path, display=path.relative_to(ROOT).as_posix())
        previous = Outputs()
        for name in PHASE_NAMES[: PHASE_NAMES.index("code_generation")]:
            result = load_phase(name).run(
                PhaseInput(source=source, config=config, previous=previous)
            )
            previous = previous.after(name, lambda output=result.output: output)
        found.append(PhaseInput(source=source, config=config, previous=previous))
    return found


def _outputs(inputs: Sequence[Any]) -> list[Any]:
    """Every phase output phases 1-5 handed over, as plain data (what a checkpoint holds)."""
    from builder.pipeline.serial import to_plain

    plain = []
    for item in inputs:
        for read in (item.previous.skill, item.previous.spec, item.previous.graph):
            plain.append({"output": to_plain(read())})
    return plain


def rows() -> list[Row]:
    """Checkpoint YAML per phase output (now and through PyYAML's dispatch), rendering per
    package."""
    import mindrian.serial as serial
    from builder.phases.code_generation import PHASE

    inputs = _inputs()
    outputs = _outputs(inputs)
    dispatch = type(
        "Dispatch", (serial._FastDumper,), {"represent_data": yaml.SafeDumper.represent_data}
    )
    options: dict[str, Any] = {"sort_keys": False, "allow_unicode": True}
    options |= {"default_flow_style": False, "width": 2**31 - 1}

    def now() -> None:
        for data in outputs:
            serial.dump_yaml(data, fast=True)

    def before() -> None:
        for data in outputs:
            yaml.dump(data, Dumper=dispatch, **options)

    def render() -> None:
        for item in inputs:
            PHASE.render(item)

    ours, theirs = _best_ms(now, len(outputs)), _best_ms(before, len(outputs))
    return [
        Row(
            "checkpoint YAML of a phase output",
            ours,
            "ms",
            None,
            f"{len(outputs)} outputs of {len(inputs)} skills; {theirs:.3f} ms through PyYAML's "
            "representer dispatch (same bytes)",
        ),
        Row(
            "phase 6 rendering of a package",
            _best_ms(render, len(inputs)),
            "ms",
            None,
            "once per package in a batch (it was twice: staged for the session, then in phase 6)",
        ),
    ]
