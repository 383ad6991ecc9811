# The two commands a newcomer needs: `make run` and `make test`. See README.md.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
INSTALLED := $(VENV)/.installed

.PHONY: run test install lint check-migrations

$(PY):
	$(PYTHON) -m venv $(VENV)

# Reinstall whenever the dependencies in pyproject.toml change.
$(INSTALLED): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet ".[test]"
	@rm -rf build *.egg-info
	@touch $@

install: $(INSTALLED)

# The sandbox upstream on :8001, the portal on :8000 (both on SQLite), a background worker and
# the sweep that re-queues stuck deliveries every minute. Ctrl-C stops them all; if one stops
# by itself, the others are stopped too. Job control (set -m) gives each its own process
# group, so the runserver's reloader child is stopped with it.
run: install
	$(PY) manage.py migrate --noinput
	$(PY) manage.py demo_staff
	@set -m; \
	$(PY) manage.py sandbox --host 127.0.0.1 --port 8001 & sandbox=$$!; \
	$(PY) manage.py db_worker --no-startup-delay & worker=$$!; \
	$(PY) manage.py sweep_attempts --every 60 & sweep=$$!; \
	$(PY) manage.py runserver 127.0.0.1:8000 & portal=$$!; \
	trap 'trap - INT TERM EXIT; echo "Stopping the portal, the worker and the sandbox."; \
	      kill -TERM -- -$$sandbox -$$worker -$$sweep -$$portal 2>/dev/null; wait' INT TERM EXIT; \
	wait -n

test: install
	$(PY) -m pytest

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

check-migrations: install
	$(PY) manage.py makemigrations --check --dry-run
