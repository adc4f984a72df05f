# agent-session-store: `make test` (lint, types, tests), `make run` (the local stack), `make bundle`.
PYTHON ?= python3
# Byte-compiled modules are kept (the environment may say not to): every test worker and subprocess then
# imports the frameworks without compiling them again, which halves the suite's start-up.
unexport PYTHONDONTWRITEBYTECODE
VENV   := .venv
PY     := $(VENV)/bin/python
UV     := $(VENV)/bin/uv
STAMP  := $(VENV)/.installed
# LlamaIndex's DynamoDB store pins aioboto3 (and botocore 1.40): the bench measures it from its own venv.
LLAMA_VENV  := .venv-llama-index
LLAMA_STAMP := $(LLAMA_VENV)/.installed

.PHONY: install browser node-tools test test-extended lint typecheck unit run demo openapi bundle security reliability bench bench-contention bench-startup screenshots bench-envs lock clean

$(STAMP): pyproject.toml requirements/lock.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@$(PY) -m pip install -q --disable-pip-version-check uv==0.13.8
	@$(UV) pip install -q --python $(PY) -r requirements/lock.txt
	@$(UV) pip install -q --python $(PY) --no-deps -e .
	@touch $(STAMP)

install: $(STAMP)

$(LLAMA_STAMP): requirements/llama-index.txt $(STAMP)
	@test -x $(LLAMA_VENV)/bin/python || $(PYTHON) -m venv $(LLAMA_VENV)
	@$(UV) pip install -q --python $(LLAMA_VENV)/bin/python -r requirements/llama-index.txt
	@touch $(LLAMA_STAMP)

bench-envs: $(LLAMA_STAMP)

lint: $(STAMP)
	$(VENV)/bin/ruff check store functions infra tests bench
	$(VENV)/bin/ruff format --check store functions infra tests bench

typecheck: $(STAMP)
	$(VENV)/bin/mypy

# the console's tests drive Chromium: found, or installed (apt-get as root or through sudo, else Playwright's
# download), or one line saying what to install, before the suite starts
browser: $(STAMP)
	@$(PY) -m infra.browser

unit: $(STAMP) $(LLAMA_STAMP) browser
	$(PY) -m pytest -n 2 --dist worksteal --durations=20

# the MCP clients nobody here wrote (tests/node: the conformance suite, the TypeScript SDK), from npm's lock
node-tools: $(STAMP)
	@$(PY) -m infra.node

# the longest runs, kept out of `make test` so that it stays under 15 minutes; CI runs both
test-extended: $(STAMP) $(LLAMA_STAMP) browser node-tools
	$(PY) -m pytest -n 2 --dist worksteal -m extended --durations=10

# lint first (seconds); then the types and the suite side by side (mypy is one core's work, the suite's
# two workers leave it room)
test: lint
	@$(MAKE) --no-print-directory -j2 typecheck unit

run: $(STAMP)
	$(PY) -m infra.cli local $(ARGS)

demo: $(STAMP)
	$(PY) -m infra.local.demo

openapi: $(STAMP)
	$(PY) -m infra.deploy.openapi

bundle: $(STAMP)
	$(PY) -m infra.deploy.bundle

security: $(STAMP)
	$(PY) -m infra.deploy.static_checks

# The long reliability runs behind docs/reliability.md (make test runs a fast subset of each).
reliability: $(STAMP)
	$(PY) -m infra.cli faults --rate 0.1 --sessions 20 --turns 20
	$(PY) -m infra.cli faults --rate 0.3 --sessions 20 --turns 20
	$(PY) -m infra.cli crash --kills 50
	SCHEMATHESIS_EXAMPLES=100 $(PY) -m pytest tests/api/test_schemathesis.py -p no:warnings
	$(PY) -m bench.load
	$(PY) -m infra.deploy.static_checks

# This store against LangChain, LlamaIndex and Strands, and as a LangGraph checkpointer against
# DynamoDBSaver (bench/results.md and its plots, from scratch).
bench: $(STAMP) $(LLAMA_STAMP)
	$(PY) -m bench.compare
	$(PY) -m bench.append_contention
	$(PY) -m bench.scale

# many writers on one session, the design before the writer queue and after it (into bench/results.md)
bench-contention: $(STAMP)
	$(PY) -m bench.append_contention

# the README's console screenshots (docs/screenshots/), from the browser tests
screenshots: $(STAMP) browser
	AGENT_STORE_SCREENSHOTS=docs/screenshots $(PY) -m pytest tests/api/test_console.py tests/api/test_framework_conversations.py -q -k "transcript or timeline or console_renders"

# cold start alone: import times measured again, bench/results.md and bench/scale.md re-rendered
bench-startup: $(STAMP) $(LLAMA_STAMP)
	$(PY) -m bench.startup

# Re-resolve the pinned set after editing pyproject.toml or requirements/constraints.in.
lock: $(STAMP)
	$(UV) pip compile pyproject.toml --extra dev --extra async --extra bench --extra strands --extra openai-agents --extra adk \
		--extra langgraph --extra langchain --extra otel --extra local --extra memory --extra mcp \
		-c requirements/constraints.in \
		-o requirements/lock.txt --python-version 3.11
	$(UV) pip compile requirements/llama-index.in -o requirements/llama-index.txt --python-version 3.11

clean:
	rm -rf $(VENV) $(LLAMA_VENV) .mypy_cache .ruff_cache
