# The two commands a newcomer needs: `make run` and `make test`. See README.md.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
INSTALLED := $(VENV)/.installed

.PHONY: run test test-quick test-backend install lint check-migrations

$(PY):
	$(PYTHON) -m venv $(VENV)

# Reinstall whenever the dependencies in pyproject.toml change.
$(INSTALLED): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet ".[test]"
	@rm -rf build *.egg-info
	@touch $@

install: $(INSTALLED)

# The sandbox upstream on :8001, the portal on :8000 (both on SQLite), background workers for
# deliveries, for bulk registrations and for media (answer pictures fetched, read-aloud audio made),
# the sweep that re-queues stuck deliveries and the one that resumes stalled bulk
# registrations (and wipes expired passwords), every minute, the one that escalates
# unacknowledged safeguarding alerts (every 30 s; alert emails print on the delivery worker's
# console while EMAIL_URL is unset) and the one that erases records past the partner's
# retention period, every hour, and the housekeeping one that prunes finished task results and
# old upstream-failure rows, every hour, and the roster's (every 30 s: it takes up syncs whose
# worker died, and the files put in ROSTER_DROP_DIR when that is set); uploaded rosters are read
# by the imports worker. Into an empty database, seed_demo first registers a demo cohort
# through the sandbox (it waits for the sandbox to answer).
# Ctrl-C (or a TERM) stops them all; if one stops by itself, the others are stopped too. Job
# control (set -m) gives each its own process group, so the runserver's reloader child is
# stopped with it. The trap ignores a second signal (make forwards TERM to the shell itself)
# so that it always finishes stopping the others.
# Staff sign in without a second factor in the demo (STAFF_MFA_REQUIRED=false, for every
# process it starts); `make run STAFF_MFA_REQUIRED=true` tries the second factor too.
run: export STAFF_MFA_REQUIRED ?= false
run: install
	$(PY) manage.py migrate --noinput
	$(PY) manage.py demo_staff
	@if [ "$$STAFF_MFA_REQUIRED" = false ]; then echo "Demo: staff sign in without a second factor (STAFF_MFA_REQUIRED=false). To try it: make run STAFF_MFA_REQUIRED=true"; fi
	@set -m; \
	$(PY) manage.py sandbox --host 127.0.0.1 --port 8001 & sandbox=$$!; \
	trap 'trap "" INT TERM; trap - EXIT; echo "Stopping the portal, the workers and the sandbox."; \
	      kill -TERM -- -$$sandbox $${seed:+-$$seed} $${worker:+-$$worker} \
	      $${importer:+-$$importer} $${media:+-$$media} $${sweep:+-$$sweep} $${alerts:+-$$alerts} \
	      $${imports:+-$$imports} $${retention:+-$$retention} \
	      $${housekeeping:+-$$housekeeping} $${roster:+-$$roster} \
	      $${portal:+-$$portal} 2>/dev/null; wait; exit' INT TERM EXIT; \
	$(PY) manage.py seed_demo & seed=$$!; wait $$seed; seed=; \
	$(PY) manage.py db_worker --no-startup-delay & worker=$$!; \
	$(PY) manage.py db_worker --no-startup-delay --queue-name imports & importer=$$!; \
	$(PY) manage.py db_worker --no-startup-delay --queue-name media & media=$$!; \
	$(PY) manage.py sweep_attempts --every 60 & sweep=$$!; \
	$(PY) manage.py sweep_imports --every 60 & imports=$$!; \
	$(PY) manage.py sweep_alerts --every 30 & alerts=$$!; \
	$(PY) manage.py sweep_retention --every 3600 & retention=$$!; \
	$(PY) manage.py sweep_housekeeping --every 3600 & housekeeping=$$!; \
	$(PY) manage.py sweep_roster --every 30 & roster=$$!; \
	$(PY) manage.py runserver 127.0.0.1:8000 & portal=$$!; \
	wait -n

# The portal as it runs in production (docs/deploy.md): settings from the environment or .env
# (.env.example lists every one; no sandbox, PARTNER_API_* must be set), collectstatic and
# migrate, then gunicorn on 127.0.0.1:$$PORT (default 8000), both db_workers and the sweeps of
# `make run`, each in its own process group. Ctrl-C or TERM stops them all; one that dies is
# started again, and after 5 deaths within 5 minutes the others are stopped and it exits
# non-zero. `manage.py serve --help` for the options.
.PHONY: serve backup restore
serve: install
	$(PY) manage.py serve

# A PostgreSQL dump (pg_dump custom format) into BACKUP_DIR (default backups/); prints where.
backup: install
	$(PY) manage.py backup

# make restore FILE=backups/portal-....dump: into the (empty or missing) DATABASE_URL database.
restore: install
	@test -n "$(FILE)" || { echo "Usage: make restore FILE=backups/portal-....dump"; exit 2; }
	$(PY) manage.py restore "$(FILE)"

# Both run the tests on every core (pytest-xdist): each worker has its own test database.
test: install
	$(PY) -m pytest -n auto

# The suite without the browser tests (marker `browser`): the quick loop while editing.
test-quick: install
	$(PY) -m pytest -n auto -m "not browser"

# Only the tests whose behaviour depends on the database backend (marker `backend`), on the
# DATABASE_URL database (SQLite by default). CI runs the whole suite on PostgreSQL and these
# on SQLite too (.ci/run). No test marked means pytest's exit code 5: a failure here.
test-backend: install
	$(PY) -m pytest -n auto -m backend

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports

check-migrations: install
	$(PY) manage.py makemigrations --check --dry-run

# The benchmark of issue 5 (not part of `make test`): on PostgreSQL (BENCH_DATABASE_URL,
# default postgres://root@127.0.0.1:5432/portal_bench, created and migrated if missing), with
# 100,000 learners and 300,000 attempts generated once and reused, and a trust of 50 schools
# with as many again in a database of its own (BENCH_TRUST_DATABASE_URL, default
# portal_bench_trust), and a trust's OneRoster roster in another (BENCH_ROSTER_DATABASE_URL,
# default portal_bench_roster); prints one table of measured figures against targets. See
# bench/README.md.
BENCH_DATABASE_URL ?= postgres://root@127.0.0.1:5432/portal_bench
BENCH_TRUST_DATABASE_URL ?= postgres://root@127.0.0.1:5432/portal_bench_trust
BENCH_ROSTER_DATABASE_URL ?= postgres://root@127.0.0.1:5432/portal_bench_roster
.PHONY: bench
bench: install
	BENCH_DATABASE_URL=$(BENCH_DATABASE_URL) BENCH_TRUST_DATABASE_URL=$(BENCH_TRUST_DATABASE_URL) \
	  BENCH_ROSTER_DATABASE_URL=$(BENCH_ROSTER_DATABASE_URL) $(PY) -m bench.run

# The scale-out load test of issue 17 (not part of `make test`): nginx (Debian's, installed
# with apt if missing, started with its own config on a free port) in front of two gunicorn
# instances, two delivery workers, the imports worker and the sweep, on PostgreSQL
# (portal_loadtest, recreated each run) and Redis (db 4), against the sandbox (150 ms, 2% of
# submissions refused with 503); one gunicorn and one worker are SIGKILLed half-way and
# restarted. Prints one table. LEARNERS and MINUTES set the size; QUICK=1 is 40 learners in
# 2 minutes. FAULTS=1 runs on a Redis and a PostgreSQL cluster of its own and takes them away
# (Redis for 60 s at a third, a PostgreSQL restart at two thirds). See bench/README.md.
LEARNERS ?= 300
MINUTES ?= 10
.PHONY: loadtest
loadtest: install
	@test -x /usr/sbin/nginx || (apt-get update -qq && apt-get install -y -qq nginx)
	$(PY) -m bench.loadtest --learners $(LEARNERS) --minutes $(MINUTES) $(if $(QUICK),--quick) $(if $(FAULTS),--faults)
