# agent-session-store: `make test` (lint, types, tests), `make run` (the local stack), `make bundle`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
UV     := $(VENV)/bin/uv
STAMP  := $(VENV)/.installed

.PHONY: install test lint typecheck unit run demo openapi bundle security reliability bench lock clean

$(STAMP): pyproject.toml requirements/lock.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@$(PY) -m pip install -q --disable-pip-version-check uv==0.13.8
	@$(UV) pip install -q --python $(PY) -r requirements/lock.txt
	@$(UV) pip install -q --python $(PY) --no-deps -e .
	@touch $(STAMP)

install: $(STAMP)

lint: $(STAMP)
	$(VENV)/bin/ruff check store functions infra tests bench
	$(VENV)/bin/ruff format --check store functions infra tests bench

typecheck: $(STAMP)
	$(VENV)/bin/mypy

unit: $(STAMP)
	$(PY) -m pytest

test: lint typecheck unit

run: $(STAMP)
	$(PY) -m infra.cli local

demo: $(STAMP)
	$(PY) -m infra.demo

openapi: $(STAMP)
	$(PY) -m infra.openapi

bundle: $(STAMP)
	$(PY) -m infra.bundle

security: $(STAMP)
	$(PY) -m infra.static_checks

# The long reliability runs behind docs/reliability.md (make test runs a fast subset of each).
reliability: $(STAMP)
	$(PY) -m infra.cli faults --rate 0.1 --sessions 20 --turns 20
	$(PY) -m infra.cli faults --rate 0.3 --sessions 20 --turns 20
	$(PY) -m infra.cli crash --kills 50
	SCHEMATHESIS_EXAMPLES=100 $(PY) -m pytest tests/test_schemathesis.py -p no:warnings
	$(PY) -m bench.load
	$(PY) -m infra.static_checks

# This store against LangChain, LlamaIndex and Strands (bench/results.md and its plots, from scratch).
bench: $(STAMP)
	$(PY) -m bench.compare

# Re-resolve the pinned set after editing pyproject.toml or requirements/constraints.in.
lock: $(STAMP)
	$(UV) pip compile pyproject.toml --extra dev --extra async --extra bench --extra strands --extra openai-agents --extra adk \
		--extra langgraph --extra langchain \
		-c requirements/constraints.in \
		-o requirements/lock.txt --python-version 3.11

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache
