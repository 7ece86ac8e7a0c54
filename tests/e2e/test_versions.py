"""One version: the package's, beside the ledger's last migration. doctor says which one is ahead,
and a package older than its ledger writes nothing (exit 3, one line) while reading still works."""

from __future__ import annotations

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import make_conninfo

import evalledger
from evalledger.core.migrate import migrate
from tests.cli import run_cli
from tests.released import migrations_of_the_release, post_release_migrations, released_migrations

V = evalledger.__version__
FUTURE = "9000.from-a-newer-evalledger"


def test_version_is_the_package_version():
    result = run_cli("--version")
    assert (result.code, result.out, result.err) == (0, f"evalledger, version {V}\n", "")


@pytest.fixture
def ledger_at_release(admin, dsn, tmp_path):
    """A database migrated to the release only (the package knows a later migration)."""
    name = f"{admin.info.dbname}_at_release"
    admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    at_release = make_conninfo(dsn, dbname=name)
    migrate(at_release, migrations_of_the_release(tmp_path))
    yield at_release
    admin.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))


def version_line(out: str) -> str:
    return next(line for line in out.splitlines() if "  version: " in line)


def test_doctor_says_the_package_and_the_ledger_agree(dsn):
    result = run_cli("doctor", env={"DATABASE_URL": dsn})
    assert result.code == 0, result.out + result.err
    assert version_line(result.out) == (f"ok    version: evalledger {V}, the ledger's last migration "
                                        f"{post_release_migrations()[-1]}: they agree")


@pytest.mark.long  # a ledger migrated from the release, not a clone of the template
def test_doctor_on_an_older_ledger_says_to_migrate(ledger_at_release):
    result = run_cli("doctor", env={"DATABASE_URL": ledger_at_release})
    assert version_line(result.out) == (f"warn  version: evalledger {V}, the ledger's last migration "
                                        f"{released_migrations()[-1]}: the package is newer (it brings "
                                        f"{', '.join(post_release_migrations())}): "
                                        "run `evalledger db migrate`")
    # The release's ledger has the coverage check of its own version only: doctor says so, not a traceback.
    assert [line for line in result.out.splitlines() if "  journal: " in line and "coverage" in line] == [
        "warn  journal: coverage not checked: the ledger lacks this package's journal_coverage_v2 "
        "(run `evalledger db migrate`)"], result.out + result.err
    assert run_cli("db", "migrate", env={"DATABASE_URL": ledger_at_release}).code == 0
    result = run_cli("doctor", env={"DATABASE_URL": ledger_at_release})
    assert version_line(result.out).endswith(": they agree")
    assert "ok    journal: every ledger table journalled" in result.out, result.out


@pytest.fixture
def newer_ledger(dsn, admin):
    """The test database as a newer evalledger would leave it: one migration this package lacks."""
    admin.execute("INSERT INTO public._yoyo_migration (migration_hash, migration_id, applied_at_utc) "
                  "VALUES (md5(%s), %s, now() AT TIME ZONE 'UTC')", (FUTURE, FUTURE))
    return dsn


REFUSED = (f"evalledger: error: the ledger has migration {FUTURE}, which evalledger {V} does not know: "
           "upgrade evalledger before writing to this ledger\n")


def test_doctor_on_a_newer_ledger_says_writing_is_refused(newer_ledger):
    result = run_cli("doctor", env={"DATABASE_URL": newer_ledger})
    assert version_line(result.out) == (
        f"warn  version: evalledger {V}, the ledger's last migration {FUTURE}: the ledger has migration {FUTURE}, "
        f"which evalledger {V} does not know: upgrade evalledger before writing to this ledger; every command "
        "that writes refuses (exit 3) until then")


@pytest.mark.parametrize("command", [
    ("target", "add", "BOT-7", "--kind", "bot", "--name", "A bot"),  # the owner's registry
    ("hold", "add", "--brain", "AGT-901", "--reason", "audit"),  # the owner's hold
])
def test_a_package_older_than_its_ledger_writes_nothing(newer_ledger, admin, command):
    before = admin.execute("SELECT count(*) FROM evalledger.target").fetchone()[0]
    result = run_cli(*command, env={"DATABASE_URL": newer_ledger})
    assert (result.code, result.out, result.err) == (3, "", REFUSED)
    assert admin.execute("SELECT count(*) FROM evalledger.target").fetchone()[0] == before


def test_a_package_older_than_its_ledger_still_reads(newer_ledger):
    result = run_cli("target", "list", env={"DATABASE_URL": newer_ledger})
    assert result.code == 0, result.err
    assert "AGT-901" in result.out


# The migrations the pre-releases applied after 0001.baseline, which the 0.1.0 fold folded into it.
PRE_RELEASE = ("0005.insiders", "0006.journal", "0007.runs", "0008.bi", "0010.write-costs", "0011.reference-clock",
               "0012.question-verdict")


@pytest.fixture
def pre_release_ledger(dsn, admin):
    """The test database as a pre-release evalledger left it: the folded migrations applied too."""
    for migration_id in PRE_RELEASE:
        admin.execute("INSERT INTO public._yoyo_migration (migration_hash, migration_id, applied_at_utc) "
                      "VALUES (md5(%s), %s, now() AT TIME ZONE 'UTC')", (migration_id, migration_id))
    return dsn


REBUILD = (f"the ledger was built by a pre-release evalledger: its migrations {', '.join(PRE_RELEASE)} were folded "
           f"into 0001.baseline before the release, so evalledger {V} can neither use nor upgrade it; rebuild it "
           "(a new database: `evalledger db reset --yes` for the embedded one, then `evalledger db migrate`)")


def test_doctor_on_a_pre_release_ledger_says_to_rebuild_it(pre_release_ledger):
    result = run_cli("doctor", env={"DATABASE_URL": pre_release_ledger})
    assert result.code == 1
    assert version_line(result.out) == (f"fail  version: evalledger {V}, the ledger's last migration "
                                        f"{post_release_migrations()[-1]}: {REBUILD}; every command that writes refuses (exit 3)")


@pytest.mark.parametrize("command", [
    ("target", "add", "BOT-7", "--kind", "bot", "--name", "A bot"),
    ("db", "migrate"),  # no migration upgrades it: never "up to date"
])
def test_a_pre_release_ledger_is_refused_in_one_line(pre_release_ledger, admin, command):
    before = admin.execute("SELECT count(*) FROM evalledger.target").fetchone()[0]
    result = run_cli(*command, env={"DATABASE_URL": pre_release_ledger})
    assert (result.code, result.out, result.err) == (3, "", f"evalledger: error: {REBUILD}\n")
    assert admin.execute("SELECT count(*) FROM evalledger.target").fetchone()[0] == before


def test_a_newer_ledger_is_not_taken_for_a_pre_release(newer_ledger):
    """Only a migration sorting before the package's last one is a pre-release's."""
    result = run_cli("doctor", env={"DATABASE_URL": newer_ledger})
    assert version_line(result.out).startswith("warn  version: ")
