# The Makefile is the source of truth for every task. `make help` lists them.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PYTEST_ARGS ?=

# Debian packages the tests need (installed only when missing).
SYSTEM_PACKAGES := git

.PHONY: help run test lint fmt typecheck bench clean venv deps-system check

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

run: venv ## Set up everything and start xum on this directory
	@echo "xum is not serving a UI yet; running 'xum doctor' to check this machine's setup."
	@echo "Then try: $(BIN)/xum --help"
	$(BIN)/xum doctor

test: venv deps-system ## Install what tests need and run them all
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
	$(BIN)/python -m bench

clean: ## Remove the environment and build output
	rm -rf $(VENV) dist build .pytest_cache .mypy_cache .ruff_cache .bench src/xum/_build_info.py
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
