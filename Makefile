# Two commands on a fresh machine with Python 3.11+ and make: `make demo`, `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-db test-dates wheel-check schema bench clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "evalledger needs Python 3.11 or newer")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/evalledger demo

# Everything. Locally, `$(BIN)/python -m pytest -m 'not slow'` leaves out the tests that build
# PostgreSQL clusters of their own.
test: $(STAMP)
	$(BIN)/python -m pytest

# The database tests alone (e.g. against DATABASE_URL=...some other server).
test-db: $(STAMP)
	$(BIN)/python -m pytest tests/db

# The database and CLI tests at the last second of a month (this one; January's in December)
# and of this year, UTC, with the tests and the PostgreSQL they start both shifted by Debian's
# faketime: no test may depend on the calendar. The monotonic clock stays real, so timeouts hold.
MONTH_END ?= $(shell d=$$(date -u +%Y-%m-01); [ "$$(date -u +%m)" = 12 ] && d=$$(date -u -d "$$d +1 month" +%Y-%m-01); \
	date -u -d "$$d +1 month -1 second" '+%Y-%m-%d %H:%M:%S')
YEAR_END ?= $(shell date -u +%Y)-12-31 23:59:59
test-dates: $(STAMP)
	@command -v faketime >/dev/null || { echo "make test-dates needs faketime (apt-get install faketime)" >&2; exit 1; }
	@for at in "$(MONTH_END)" "$(YEAR_END)"; do \
		echo "tests at $$at UTC"; \
		env -u DATABASE_URL faketime --exclude-monotonic "$$at UTC" $(BIN)/python -m pytest -q -m 'not slow' tests/db tests/e2e || exit $$?; \
	done

# The wheel as a user gets it: built, installed in a fresh venv, migrating and running the demo.
wheel-check:
	PYTHON=$(PYTHON) .ci/wheel-check

# Refresh tests/db/schema.current.txt after adding a migration.
schema: $(STAMP)
	$(BIN)/python -m tests.db.schema_snapshot

bench: $(STAMP)
	for b in bench/*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) .test-home
