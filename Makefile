# Two commands matter: `make run` builds skills/pws/SKILL.md, `make test` runs the suite.
# Both set up .venv first; setup does real work only when pyproject.toml or the
# Cypher linter's package-lock.json changed since the last install.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
PY_STAMP := $(VENV)/.mindrian-installed
NODE_DIR := builder/cypher_lint
NODE_STAMP := $(NODE_DIR)/node_modules/.mindrian-installed
# Tests spend much of their time waiting on subprocesses (pytest, Node, MCP servers): one worker per core.
PYTEST_ARGS ?= -n auto

# The Node part exists only once the Cypher linter folder has a lock file.
SETUP := $(PY_STAMP)
ifneq ($(wildcard $(NODE_DIR)/package-lock.json),)
SETUP += $(NODE_STAMP)
endif

.PHONY: setup run test bench lint regen check

setup: $(SETUP)

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(PY_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $@

# Without npm the build still works: phase 5 says it falls back from Neo4j's linter.
$(NODE_STAMP): $(NODE_DIR)/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		npm ci --prefix $(NODE_DIR) --no-audit --no-fund --loglevel=error && touch $@; \
	else \
		echo "note: npm not found; the Cypher linter is not installed"; \
	fi

# Builds PWS through all seven phases (the last line of the build names the package folder),
# then asks the registry which frameworks a "validate" context selects.
run: setup
	$(BIN)/mindrian build skills/pws/SKILL.md
	$(BIN)/mindrian select --trigger validate

test: setup
	$(BIN)/python -m pytest -q $(PYTEST_ARGS)

bench: setup
	$(BIN)/python -m bench.run

# Pyflakes' rules (unused imports and names, undefined names) plus syntax errors.
lint: setup
	$(BIN)/ruff check --select F,E9 --output-format concise builder mindrian bench tests generated

# Rebuild every skill into generated/ (commit the result).
regen: setup
	$(BIN)/mindrian build --all

# Regenerate every skill in a temporary folder and fail on any difference from generated/.
check: setup
	$(BIN)/mindrian check
