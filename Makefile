# The Makefile is the source of truth for every task. `make help` lists them.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PYTEST_ARGS ?=
# pytest-xdist workers. The suite mostly waits (servers, subprocesses, polls), so on a 2-core
# machine 4 workers measured faster than 2 or serial; set WORKERS=0 to run in one process.
WORKERS ?= 4
XDIST := -n $(WORKERS) --dist worksteal
# What a developer runs between edits: the unit tests and the integration tests not marked slow.
FAST_MARKS := unit or (integration and not slow)

# Debian packages the tests need (installed only when missing). chromium: the browser tests
# drive Debian's /usr/bin/chromium (Playwright never downloads a browser); tmux: the terminal UI's
# real-terminal test; bubblewrap: the command sandbox (bwrap); docker-compose: the Compose-based
# Dev Container tests (against podman's API service).
SYSTEM_PACKAGES := git chromium openssh-server tmux bubblewrap podman runc docker-compose
# Installed without their recommended packages: docker-compose recommends docker.io, a second
# container engine (and containerd) the tests neither need nor want beside podman.
BARE_PACKAGES := docker-compose

# The web UI (web/, React + TypeScript + Vite) is built into the Python package.
WEB := web
WEB_STAMP := $(WEB)/node_modules/.installed
WEB_OUT := src/xum/server/static/index.html
WEB_SOURCES := $(shell find $(WEB)/src $(WEB)/public -type f 2>/dev/null) $(WEB)/index.html \
	$(WEB)/vite.config.ts $(WEB)/tsconfig.json $(WEB)/package.json

# The Dev Container CLI (@devcontainers/cli, pinned in tools/devcontainer/package.json), which
# the devcontainer runtime runs when no `devcontainer` is on PATH.
DEVCONTAINER := tools/devcontainer
DEVCONTAINER_STAMP := $(DEVCONTAINER)/node_modules/.installed

# Third-party ACP agents (opencode, Claude Code's and Codex's ACP adapters, Gemini CLI; pinned in
# tools/external-agents/package.json) that the external-agent tests and bench drive against the
# fake LLM. npm ci installs each platform's binary as an optional dependency: nothing is
# downloaded when they run.
EXTERNAL_AGENTS := tools/external-agents
EXTERNAL_AGENTS_STAMP := $(EXTERNAL_AGENTS)/node_modules/.installed

# The oldest Node.js the build tools accept (web/package.json "engines"). Without it npm or Vite
# fail with an obscure error, so each web recipe first checks and says what to install.
NODE_MIN := 20.19
define check_node
	@command -v npm >/dev/null && command -v node >/dev/null && NODE_MIN=$(NODE_MIN) node -e \
	  'const [a, b] = process.env.NODE_MIN.split(".").map(Number); const [x, y] = process.versions.node.split(".").map(Number); process.exit(x > a || (x === a && y >= b) ? 0 : 1)' \
	  || { echo "error: building the web UI needs Node.js >= $(NODE_MIN) and npm (found: node $$(node --version 2>/dev/null || echo missing), npm $$(npm --version 2>/dev/null || echo missing)); install them: on Debian 'sudo apt-get install nodejs npm' if its Node is new enough, otherwise NodeSource (https://github.com/nodesource/distributions)" >&2; exit 1; }
endef

.PHONY: help run test test-fast event-schema lint fmt typecheck bench clean venv deps-system check build-web test-web \
	check-node devcontainer-cli external-agents

help: ## List the targets
	@grep -E '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  %-12s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	@touch $(STAMP)

venv: $(STAMP) ## Create .venv and install xum with its dev tools

deps-system: ## Install the Debian packages the tests need (only those missing)
	@set -e; missing=""; for p in $(SYSTEM_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi; \
	  bare=""; full=""; for p in $$missing; do \
	    case " $(BARE_PACKAGES) " in *" $$p "*) bare="$$bare $$p";; *) full="$$full $$p";; esac; done; \
	  $$SUDO apt-get update -qq; \
	  if [ -n "$$full" ]; then DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$full >/dev/null; fi; \
	  if [ -n "$$bare" ]; then DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$bare >/dev/null; fi; \
	fi

check-node: ## Check for Node.js >= 20.19 and npm (the web UI build needs them)
	$(check_node)

$(WEB_STAMP): $(WEB)/package.json $(WEB)/package-lock.json
	$(check_node)
	cd $(WEB) && npm ci --no-audit --no-fund --loglevel=error
	@touch $(WEB_STAMP)

$(WEB_OUT): $(WEB_STAMP) $(WEB_SOURCES)
	$(check_node)
	cd $(WEB) && npm run --silent build

$(DEVCONTAINER_STAMP): $(DEVCONTAINER)/package.json $(DEVCONTAINER)/package-lock.json
	$(check_node)
	cd $(DEVCONTAINER) && npm ci --no-audit --no-fund --loglevel=error
	@touch $(DEVCONTAINER_STAMP)

devcontainer-cli: $(DEVCONTAINER_STAMP) ## Install the Dev Container CLI into tools/devcontainer (the devcontainer runtime runs it)

$(EXTERNAL_AGENTS_STAMP): $(EXTERNAL_AGENTS)/package.json $(EXTERNAL_AGENTS)/package-lock.json
	$(check_node)
	npm ci --prefix $(EXTERNAL_AGENTS) --no-audit --no-fund --loglevel=error
	@touch $(EXTERNAL_AGENTS_STAMP)

external-agents: $(EXTERNAL_AGENTS_STAMP) ## Install the real ACP agents the external-agent tests drive (tools/external-agents)

build-web: $(WEB_OUT) ## Build the web UI into src/xum/server/static (typechecks it first)

test-web: $(WEB_STAMP) ## Unit tests of the web UI's logic (Vitest)
	$(check_node)
	cd $(WEB) && npx vitest run

# SERVER_ARGS go to `xum server`. Naming a project there (--add-project <path>) replaces this
# checkout as the project `make run` adds.
run: venv build-web devcontainer-cli ## Start xum server (this checkout as a project, or SERVER_ARGS="--add-project <path>"); prints a sign-in link
	$(BIN)/xum server $(if $(findstring --add-project,$(SERVER_ARGS)),,--add-project .) $(SERVER_ARGS)

test: venv deps-system build-web test-web devcontainer-cli external-agents ## Install what tests need and run them all (parallel; CI runs this)
	$(BIN)/pytest -q $(XDIST) --durations=15 $(PYTEST_ARGS)

test-fast: venv ## The quick tier between edits: unit tests and the quick integration tests
	$(BIN)/pytest -q $(XDIST) -m "$(FAST_MARKS)" $(PYTEST_ARGS)

event-schema: venv ## Regenerate web/src/api/events.schema.json from the engine's event classes
	$(BIN)/python -m xum.testing.event_schema

lint: venv ## ruff lint and format check
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

fmt: venv ## Format and autofix
	$(BIN)/ruff format src tests bench
	$(BIN)/ruff check --fix src tests bench

typecheck: venv ## mypy (strict) over src/xum
	$(BIN)/mypy

check: lint typecheck test ## lint + typecheck + test

bench: venv external-agents ## Run the benchmarks; prints one JSON document
	@$(BIN)/python -m bench

clean: ## Remove the environment and build output
	rm -rf $(VENV) dist build .pytest_cache .mypy_cache .ruff_cache .bench src/xum/_build_info.py
	rm -rf $(WEB)/node_modules $(DEVCONTAINER)/node_modules $(EXTERNAL_AGENTS)/node_modules
	rm -rf src/xum/server/static test-artifacts
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
