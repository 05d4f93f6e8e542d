# The Makefile is the source of truth for every task. `make help` lists them.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PYTEST_ARGS ?=

# Debian packages the tests need (installed only when missing). chromium: the browser tests
# drive Debian's /usr/bin/chromium (Playwright never downloads a browser).
SYSTEM_PACKAGES := git chromium openssh-server

# The web UI (web/, React + TypeScript + Vite) is built into the Python package.
WEB := web
WEB_STAMP := $(WEB)/node_modules/.installed
WEB_OUT := src/xum/server/static/index.html
WEB_SOURCES := $(shell find $(WEB)/src $(WEB)/public -type f 2>/dev/null) $(WEB)/index.html \
	$(WEB)/vite.config.ts $(WEB)/tsconfig.json $(WEB)/package.json

.PHONY: help run test lint fmt typecheck bench clean venv deps-system check build-web test-web

help: ## List the targets
	@grep -E '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  %-12s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	@touch $(STAMP)

venv: $(STAMP) ## Create .venv and install xum with its dev tools

deps-system: ## Install the Debian packages the tests need (only those missing)
	@missing=""; for p in $(SYSTEM_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi

$(WEB_STAMP): $(WEB)/package.json $(WEB)/package-lock.json
	@command -v npm >/dev/null || { echo "npm is needed to build the web UI (Node.js 20+)"; exit 1; }
	cd $(WEB) && npm ci --no-audit --no-fund --loglevel=error
	@touch $(WEB_STAMP)

$(WEB_OUT): $(WEB_STAMP) $(WEB_SOURCES)
	cd $(WEB) && npm run --silent build

build-web: $(WEB_OUT) ## Build the web UI into src/xum/server/static (typechecks it first)

test-web: $(WEB_STAMP) ## Unit tests of the web UI's logic (Vitest)
	cd $(WEB) && npx vitest run

run: venv build-web ## Start xum server with this directory as a project; prints a sign-in link
	$(BIN)/xum server --add-project . $(SERVER_ARGS)

test: venv deps-system build-web test-web ## Install what tests need and run them all
	$(BIN)/pytest -q $(PYTEST_ARGS)

lint: venv ## ruff lint and format check
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

fmt: venv ## Format and autofix
	$(BIN)/ruff format src tests bench
	$(BIN)/ruff check --fix src tests bench

typecheck: venv ## mypy (strict) over src/xum
	$(BIN)/mypy

check: lint typecheck test ## lint + typecheck + test

bench: venv ## Run the benchmarks; prints one JSON document
	@$(BIN)/python -m bench

clean: ## Remove the environment and build output
	rm -rf $(VENV) dist build .pytest_cache .mypy_cache .ruff_cache .bench src/xum/_build_info.py
	rm -rf $(WEB)/node_modules src/xum/server/static test-artifacts
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
