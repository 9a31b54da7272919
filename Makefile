# Two commands matter: `make run` (the catalogue against the reference, with
# reports) and `make test` (the project's own test suite).  Both set up the
# local virtualenv first when it is missing or older than pyproject.toml.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

NODE_EXAMPLE    := examples/node-adaptor
NODE_STAMP      := $(NODE_EXAMPLE)/node_modules/.installed
SDK_CODEX       := examples/sdk-shims/codex-sdk
SDK_CODEX_STAMP := $(SDK_CODEX)/node_modules/.installed
# HARNESS_REAL_CLIS=off leaves the real CLIs out: neither installed nor run.
# Beside the pinned pair, releases installed on demand: the one seed 004
# describes and the newest published (docs/versions.md); with several releases
# of claude the reports include drift.md and clauses by version.
ifeq ($(filter off OFF Off,$(strip $(HARNESS_REAL_CLIS))),)
REAL_CLIS   := real-clis
REAL_TARGET := --target real \
               --target 'real:claude=2.1.235' \
               --target 'real:claude=2.1.332,codex=0.171.0'
else
REAL_CLIS   :=
REAL_TARGET :=
endif
# The validator the reference model of Claude Code asks: the Ajv the binary bundles.
CLAUDE_AJV       := harness/systems/claude/ajv
CLAUDE_AJV_STAMP := $(CLAUDE_AJV)/node_modules/.installed
# Targets beside the reference: adaptors we did not write, each with a baseline.
TARGETS := --target reference \
           $(REAL_TARGET) \
           --target "node-example=cmd:node $(NODE_EXAMPLE)/adaptor.mjs" \
           --target "claude-agent-sdk=cmd:$(BIN)/python examples/sdk-shims/claude_agent_sdk_shim.py" \
           --target "codex-sdk=cmd:node $(SDK_CODEX)/shim.mjs"

.PHONY: run test lint typecheck bench mutants fuzz clean real-clis ajv

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,sdk]'
	touch $(STAMP)

$(NODE_STAMP): $(NODE_EXAMPLE)/package-lock.json
	npm ci --prefix $(NODE_EXAMPLE) --no-audit --no-fund --loglevel=error
	touch $(NODE_STAMP)

$(SDK_CODEX_STAMP): $(SDK_CODEX)/package-lock.json
	npm ci --prefix $(SDK_CODEX) --omit=optional --no-audit --no-fund --loglevel=error
	touch $(SDK_CODEX_STAMP)

$(CLAUDE_AJV_STAMP): $(CLAUDE_AJV)/package-lock.json
	npm ci --prefix $(CLAUDE_AJV) --no-audit --no-fund --loglevel=error
	touch $(CLAUDE_AJV_STAMP)

# The reference model of Claude Code's validator, on its own (the harness names this
# command when it is missing).
ajv: $(CLAUDE_AJV_STAMP)

# The pinned real claude and codex binaries, installed outside the repository;
# the tests drive them against the fake model APIs.
real-clis:
	sh scripts/install-real-clis.sh

run: $(STAMP) $(NODE_STAMP) $(SDK_CODEX_STAMP) $(CLAUDE_AJV_STAMP) $(REAL_CLIS)
	$(BIN)/harness lint scenarios
	SOURCE_DATE_EPOCH=0 $(BIN)/harness run scenarios $(TARGETS) --allow-exec --baselines baselines --reports reports

test: $(STAMP) $(NODE_STAMP) $(SDK_CODEX_STAMP) $(CLAUDE_AJV_STAMP) $(REAL_CLIS)
	$(BIN)/ruff check harness providers_fake tests examples
	$(BIN)/mypy
	$(BIN)/pytest -n 2 --dist worksteal --cov --cov-report=term:skip-covered

lint: $(STAMP)
	$(BIN)/ruff check harness providers_fake tests examples

typecheck: $(STAMP)
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/harness bench scenarios

# Mutation testing of the agent-cli catalogue (minutes; not part of `make test`),
# then the bug zoo's figure beside it (docs/zoo.md): both always run.
mutants: $(STAMP) $(NODE_STAMP)
	$(BIN)/harness mutants --jobs 2; status=$$?; $(BIN)/python -m tests.zoo.zoo --jobs 2 || status=1; exit $$status

# A larger fuzz budget than `make test` runs (docs/fuzz.md): the reference launchers
# on generated agent-cli cases, the reference models against themselves on model-api
# cases.  Findings, if any, go to fuzz-findings/.
fuzz: $(STAMP)
	$(BIN)/harness fuzz --seam agent-cli --target reference-inproc --examples 500 --seed 1
	$(BIN)/harness fuzz --seam model-api --cli claude --target reference --against reference-inproc --examples 300 --seed 1
	$(BIN)/harness fuzz --seam model-api --cli codex --target reference --against reference-inproc --examples 300 --seed 1

clean:
	rm -rf $(VENV) build *.egg-info $(NODE_EXAMPLE)/node_modules $(SDK_CODEX)/node_modules \
		$(CLAUDE_AJV)/node_modules
