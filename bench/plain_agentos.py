"""One generated agent served as plain Agno: its Agno ``Agent`` on AgentOS, no mindrian wrapper.

The baseline of ``bench/bench_serve.py``: the same Agno agent mindrian builds
(model, instructions, output schema) and the same session database, but
AgentOS runs the ``Agent`` itself, so the difference in latency is what the
wrapper, its checks and its routes cost.

    python -m bench.plain_agentos --port 7780 --db sqlite:///s.db --model scripted:PATH
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from bench.common import ROOT
from mindrian.model_choice import choose_model
from mindrian.packages import agent_class, registered_packages
from mindrian.project import ProjectPaths
from mindrian.serve import open_database

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Serve ``--agent`` on 127.0.0.1 until interrupted."""
    parser = argparse.ArgumentParser(prog="python -m bench.plain_agentos")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--db", required=True, help="session database URL")
    parser.add_argument("--model", required=True, help="provider:id or scripted:PATH")
    parser.add_argument("--agent", default="pws-validation", help="registered agent id")
    options = parser.parse_args(argv)

    import uvicorn
    from agno.os import AgentOS

    project = ProjectPaths.locate(ROOT)
    package = next(p for p in registered_packages(project) if p.agent_id == options.agent)
    model = choose_model(options.model, base=Path.cwd()).model_for(package.agent_id)
    plain = agent_class(package)(model=model).agent
    db = open_database(options.db, project)
    plain.db = db
    app = AgentOS(id="plain", agents=[plain], db=db, telemetry=False).get_app()
    uvicorn.run(app, host="127.0.0.1", port=options.port, log_level="warning")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
