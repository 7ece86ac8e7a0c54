# Two commands on a fresh machine with Python 3.11+ and make: `make demo`, `make test`; `make check`
# before each commit.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo check test test-db faults test-dates wheel-check dist dist-check release-checksums docs bench clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "evalledger needs Python 3.11 or newer")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/evalledger demo

# Two workers, one per core, each with an embedded server and a template of its own; one process
# on DATABASE_URL's server, whose login roles every session on it shares.
WORKERS = $(if $(DATABASE_URL),0,2)

# The quick loop before each commit: the unit tests, the CLI in-process and the database tests on
# clones of the session's template; no clusters of their own (slow), none that runs for seconds
# (long: a ledger of the release, retries waited out, an in-process campaign), no real processes
# (processes), no fault campaign (faults), no browser (tests/web). Byte-code is written even where
# PYTHONDONTWRITEBYTECODE is set, so that the next run reads pytest's rewritten test modules instead
# of rewriting them (seconds a worker).
CHECK = -m 'not slow and not long and not processes and not faults' --ignore=tests/web
check: $(STAMP)
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -n $(WORKERS) --dist loadgroup $(CHECK)

# Everything.
test: $(STAMP)
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -n $(WORKERS) --dist loadgroup

# The database tests alone (e.g. against DATABASE_URL=...some other server).
test-db: $(STAMP)
	$(BIN)/python -m pytest -n $(WORKERS) tests/db

# The fault campaign alone (tests/faults; `make test` runs it too): processes and the server killed,
# disks that refuse, at moments drawn from a seed it prints; EVALLEDGER_FAULT_SEED=N replays one.
faults: $(STAMP)
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -n $(WORKERS) --dist loadgroup -m faults tests/faults

# The database and CLI tests at the ends of a month and of a year, at noon on the 1st and the 5th of
# a month and at a moment drawn within the next 400 days (printed, and replayable), with the tests
# and the PostgreSQL they start both shifted by Debian's faketime (see .ci/test-dates).
test-dates: $(STAMP)
	.ci/test-dates $(BIN)/python

# The wheel as a user gets it: built, installed in a fresh venv, migrating and running the demo.
wheel-check:
	PYTHON=$(PYTHON) .ci/wheel-check

# The wheel and the sdist, built from a clean tree into dist/ (`python -m build`).
dist: $(STAMP)
	rm -rf dist
	$(BIN)/python -m build --no-isolation --outdir dist . >/dev/null
	@ls dist

# The built wheel in a fresh venv: its `evalledger --version` is evalledger.__version__, and it
# carries every migration and SQL file of the checkout.
dist-check: dist
	$(BIN)/python -m tests.dist_check dist

# At a release: freeze migrations/$(MIGRATION).sql (its \ir lines expanded in place, so it no longer
# reads the current files) and append its checksum to migrations/released.sha256, after which a test
# fails if it ever changes. E.g. MIGRATION=0101.panel-bounds.
release-checksums: $(STAMP)
	@test -n "$(MIGRATION)" || { echo "usage: make release-checksums MIGRATION=NNNN.name" >&2; exit 3; }
	$(BIN)/python -m tests.released $(MIGRATION)

# Regenerate docs/cli.md (every command's --help) after adding or changing a command.
docs: $(STAMP)
	$(BIN)/cog -r docs/cli.md

bench: $(STAMP)
	for b in bench/*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV)
