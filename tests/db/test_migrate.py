"""The migration runner: yoyo's bookkeeping with its known gaps closed."""

import subprocess
import sys

import psycopg
import pytest
from psycopg.conninfo import make_conninfo

from evalledger.core.db import describe
from evalledger.core.errors import EvalledgerError
from evalledger.core.migrate import expand_includes, migrate, read_migrations, status
from evalledger.core.paths import migrations_dir
from tests.db.insider_logins import logins, refusal_of  # noqa: F401 (fixture)


@pytest.fixture
def empty_dsn(admin, dsn):
    """A database with nothing in it, on the same server."""
    name = "evalledger_migrate_scratch"
    admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    admin.execute(f"CREATE DATABASE {name}")
    yield make_conninfo(dsn, dbname=name)
    admin.execute(f"DROP DATABASE {name} WITH (FORCE)")


def applied_marks(dsn):
    with psycopg.connect(dsn) as conn:
        return [r[0] for r in conn.execute("SELECT migration_id FROM _yoyo_migration ORDER BY migration_id")]


def test_a_failing_migration_leaves_neither_its_changes_nor_its_mark(empty_dsn, tmp_path):
    (tmp_path / "0001.good.sql").write_text("CREATE TABLE good (id int);\nINSERT INTO good VALUES (1);\n")
    (tmp_path / "0002.bad.sql").write_text("CREATE TABLE half (id int);\nSELECT 1 / 0;\n")
    with pytest.raises(psycopg.errors.DivisionByZero):
        migrate(empty_dsn, tmp_path)
    assert applied_marks(empty_dsn) == ["0001.good"]
    with psycopg.connect(empty_dsn) as conn:
        assert conn.execute("SELECT to_regclass('half')").fetchone()[0] is None
        assert conn.execute("SELECT count(*) FROM good").fetchone()[0] == 1
    assert status(empty_dsn, tmp_path).pending == ["0002.bad"]


def test_percent_signs_reach_the_server_as_written(empty_dsn, tmp_path):
    (tmp_path / "0001.percent.sql").write_text(
        "CREATE TABLE p AS SELECT format('%s%%', 50) AS share, '100%' AS literal;\n")
    assert migrate(empty_dsn, tmp_path) == ["0001.percent"]
    with psycopg.connect(empty_dsn) as conn:
        assert conn.execute("SELECT share, literal FROM p").fetchone() == ("50%", "100%")


def test_includes_expand_relative_to_the_including_file(tmp_path):
    (tmp_path / "parts").mkdir()
    (tmp_path / "parts" / "f_v1.sql").write_text("SELECT 'included';\n")
    (tmp_path / "0001.x.sql").write_text("SELECT 1;\n\\ir parts/f_v1.sql\nSELECT 2;\n")
    assert expand_includes(tmp_path / "0001.x.sql") == "SELECT 1;\nSELECT 'included';\n\nSELECT 2;\n"
    (tmp_path / "0002.y.sql").write_text("\\ir parts/missing.sql\n")
    with pytest.raises(EvalledgerError, match="missing include"):
        expand_includes(tmp_path / "0002.y.sql")


@pytest.mark.processes
def test_migrate_twice_at_once_applies_each_migration_once(empty_dsn):
    script = "import sys; from evalledger.core.migrate import migrate; print(migrate(sys.argv[1]))"
    runs = [subprocess.Popen([sys.executable, "-c", script, empty_dsn], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outputs = [run.communicate(timeout=300) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], outputs
    every = [m.id for m in read_migrations()]
    assert sorted(out for out, _ in outputs) == sorted(["[]\n", f"{every}\n"])
    assert applied_marks(empty_dsn) == every
    assert migrate(empty_dsn) == []


# A later migration in the ledger's habit: tables, functions and triggers created while acting as
# the code role, then its own policies and grants. On a superuser install the DDL guard is live.
LATER_MIGRATION = """\
SET LOCAL ROLE evalledger_code;
SET LOCAL search_path = evalledger, pg_temp;
CREATE TABLE later (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, note text NOT NULL);
CREATE FUNCTION later_admit_v1() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN NEW.note := upper(NEW.note); RETURN NEW; END $$;
CREATE FUNCTION later_count_v1() RETURNS bigint LANGUAGE sql STABLE AS $$ SELECT count(*) FROM evalledger.later $$;
CREATE TRIGGER later_10_admit BEFORE INSERT ON later FOR EACH ROW EXECUTE FUNCTION later_admit_v1();
CREATE TRIGGER later_00_append_only BEFORE UPDATE OR DELETE ON later FOR EACH ROW EXECUTE FUNCTION refuse_change_v3();
ALTER TABLE later ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY,
    ENABLE ALWAYS TRIGGER later_10_admit, ENABLE ALWAYS TRIGGER later_00_append_only;
CREATE POLICY later_owner_all ON later TO evalledger_owner USING (true) WITH CHECK (true);
GRANT SELECT, INSERT, UPDATE, DELETE ON later TO evalledger_owner;
CREATE POLICY later_runner ON later TO evalledger_runner USING (true) WITH CHECK (true);
GRANT SELECT, INSERT (note) ON later TO evalledger_runner;
REVOKE EXECUTE ON FUNCTION later_admit_v1(), later_count_v1() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION later_count_v1() TO evalledger_runner;
RESET ROLE;
"""


def test_a_later_migration_acting_as_the_code_role_applies_over_the_baseline(empty_dsn, tmp_path):
    baseline = next(p for p in migrations_dir().glob("0001.*.sql"))
    (tmp_path / baseline.name).write_text(expand_includes(baseline))
    (tmp_path / "0002.later.sql").write_text(LATER_MIGRATION)
    assert migrate(empty_dsn, tmp_path) == [baseline.stem, "0002.later"]
    with psycopg.connect(empty_dsn, autocommit=True) as conn:
        owners = dict(conn.execute("SELECT proname, pg_get_userbyid(proowner) FROM pg_proc "
                                   "WHERE proname IN ('later_admit_v1', 'later_count_v1')").fetchall())
        # The code role's like every ledger function: the owner role can never redefine them.
        assert owners == {"later_admit_v1": "evalledger_code", "later_count_v1": "evalledger_code"}
        conn.execute("SET ROLE evalledger_owner")
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="permission denied for schema evalledger"):
            conn.execute("CREATE OR REPLACE FUNCTION evalledger.later_admit_v1() RETURNS trigger "
                         "LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$")
        conn.execute("RESET ROLE")
        conn.execute("SET ROLE evalledger_runner")
        conn.execute("INSERT INTO evalledger.later (note) VALUES ('kept')")
        assert conn.execute("SELECT note, evalledger.later_count_v1() FROM evalledger.later").fetchone() == ("KEPT", 1)
        conn.execute("SET ROLE evalledger_owner")
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="later is append-only: DELETE refused"):
            conn.execute("DELETE FROM evalledger.later")


@pytest.mark.processes
def test_no_application_login_can_hold_migrations_up(dsn, logins):
    """Migrations queued on an advisory key that any login could take and hold, stalling every
    `db migrate` for good. The lock is now yoyo's lock table, on which no application role holds a
    privilege: each login is refused even the weakest lock, and one holding the old key, in a
    transaction reading what it may, holds nothing up."""
    held = []
    for role in ("runner", "reviewer", "revops", "auditor", "owner", "agent", "retention"):
        conn = logins(role)
        assert refusal_of(conn, "DO $$ BEGIN LOCK TABLE public.yoyo_lock IN ACCESS SHARE MODE; END $$") == (
            "42501", "permission denied for table yoyo_lock")
        conn.execute("SELECT pg_advisory_lock_shared(x'6576616C6C656467'::bigint)")  # the old key: it stalled migrate
        conn.execute("BEGIN")
        conn.execute("SELECT count(*) FROM pg_class")
        held.append(conn)
    script = "import sys; from evalledger.core.migrate import migrate; print(migrate(sys.argv[1]))"
    done = subprocess.run([sys.executable, "-c", script, dsn], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (0, "[]\n"), done.stderr


def test_a_lock_table_someone_else_owns_is_refused(empty_dsn, admin):
    """Were the lock table another role's (made before the first migrate, where a server lets logins
    create tables in public), that role could lock it: migrate refuses, naming it, and applies nothing."""
    role = "evalledger_migrate_squatter"
    admin.execute(f"DROP ROLE IF EXISTS {role}")
    admin.execute(f"CREATE ROLE {role}")
    try:
        with psycopg.connect(empty_dsn, autocommit=True) as conn:
            conn.execute("CREATE TABLE yoyo_lock (locked int DEFAULT 1, ctime timestamp, pid int NOT NULL, "
                         "PRIMARY KEY (pid))")
            conn.execute(f"ALTER TABLE yoyo_lock OWNER TO {role}")
        with pytest.raises(EvalledgerError) as refused:
            migrate(empty_dsn)
        assert str(refused.value) == (f"migrate: the lock table yoyo_lock belongs to {role}, who may then hold every "
                                      "migration up: drop it as the installer and run migrate again")
        with psycopg.connect(empty_dsn) as conn:
            assert conn.execute("SELECT to_regclass('_yoyo_migration')").fetchone()[0] is None
    finally:
        with psycopg.connect(empty_dsn, autocommit=True) as conn:
            conn.execute("DROP TABLE IF EXISTS yoyo_lock")
        admin.execute(f"DROP ROLE {role}")


@pytest.mark.parametrize("level", ["repeatable read", "serializable"])
def test_a_migration_runs_read_committed_whatever_the_installers_session_says(empty_dsn, tmp_path, level):
    """A backfill locks what it reads, then reads: under READ COMMITTED its reading statement sees
    every row committed before the lock was granted; a snapshot the installer's default isolation
    took earlier in the transaction would miss them. The migration's own transaction is pinned."""
    (tmp_path / "0001.seen.sql").write_text(
        "CREATE TABLE seen AS SELECT current_setting('transaction_isolation') AS level;\n")
    options = "-c default_transaction_isolation=" + level.replace(" ", "\\ ")
    with psycopg.connect(make_conninfo(empty_dsn, options=options)) as conn:
        assert conn.execute("SHOW transaction_isolation").fetchone()[0] == level
    assert migrate(make_conninfo(empty_dsn, options=options), tmp_path) == ["0001.seen"]
    with psycopg.connect(empty_dsn) as conn:
        assert conn.execute("SELECT level FROM seen").fetchone()[0] == "read committed"


READ_ONLY_INSTALLER = "evalledger_migrate_read_only"


@pytest.fixture
def read_only_installer(admin, empty_dsn):
    """A login that owns the empty database (and so may migrate it), for its sessions to be made read-only."""
    from tests.conftest import TEST_PASSWORD

    admin.execute(f"DROP ROLE IF EXISTS {READ_ONLY_INSTALLER}")
    admin.execute(f"CREATE ROLE {READ_ONLY_INSTALLER} LOGIN PASSWORD '{TEST_PASSWORD}'")
    database = psycopg.conninfo.conninfo_to_dict(empty_dsn)["dbname"]
    admin.execute(f"ALTER DATABASE {database} OWNER TO {READ_ONLY_INSTALLER}")
    with psycopg.connect(empty_dsn, autocommit=True) as conn:
        conn.execute(f"ALTER SCHEMA public OWNER TO {READ_ONLY_INSTALLER}")
    yield make_conninfo(empty_dsn, user=READ_ONLY_INSTALLER, password=TEST_PASSWORD)
    writable = make_conninfo(empty_dsn, options="-c default_transaction_read_only=off")
    with psycopg.connect(writable, autocommit=True) as conn:  # its database and schema, back to the installer
        conn.execute(f"REASSIGN OWNED BY {READ_ONLY_INSTALLER} TO CURRENT_USER")
    admin.execute(f"DROP ROLE {READ_ONLY_INSTALLER}")


@pytest.mark.parametrize("said", ["client", "user", "database", "database user"])
def test_a_read_only_session_is_refused_before_anything_naming_who_made_it_read_only(admin, read_only_installer,
                                                                                     tmp_path, said):
    """yoyo made its lock table in a read-only session, failed, and then reported the table missing:
    `the database is not migrated ... run evalledger db migrate`, to someone running just that. Now
    migrate refuses at once, saying who set default_transaction_read_only and what to do, and writes
    nothing."""
    (tmp_path / "0001.t.sql").write_text("CREATE TABLE t ();\n")
    database = psycopg.conninfo.conninfo_to_dict(read_only_installer)["dbname"]
    url = read_only_installer
    if said == "client":
        url = make_conninfo(url, options="-c default_transaction_read_only=on")
    elif said == "user":
        admin.execute(f"ALTER ROLE {READ_ONLY_INSTALLER} SET default_transaction_read_only = on")
    elif said == "database":
        admin.execute(f"ALTER DATABASE {database} SET default_transaction_read_only = on")
    else:
        admin.execute(f"ALTER ROLE {READ_ONLY_INSTALLER} IN DATABASE {database} SET default_transaction_read_only = on")
    where, fix = {
        "client": ("by this connection's options (PGOPTIONS, or options in the URL)", "leave it out of them"),
        "user": (f"for role {READ_ONLY_INSTALLER} (ALTER ROLE ... SET)", "reset it for the role, or connect as another"),
        "database": (f"for database {database} (ALTER DATABASE ... SET)", "reset it for the database"),
        "database user": (f"for role {READ_ONLY_INSTALLER} in database {database} (ALTER ROLE ... IN DATABASE ... SET)",
                          "reset it for the role there, or connect as another"),
    }[said]
    with pytest.raises(EvalledgerError) as refused:
        migrate(url, tmp_path)
    # Named as every message names a server (describe: a URL without a port is on 5432).
    assert str(refused.value) == (
        f"the database at {describe(url)} refused a write: its sessions start read-only, "
        f"default_transaction_read_only = on {where}; commands that write need a session that may write: {fix}")
    assert describe(url).startswith(f"{READ_ONLY_INSTALLER}@") and describe(url).endswith(f"/{database}")
    with psycopg.connect(make_conninfo(read_only_installer, options="-c default_transaction_read_only=off")) as conn:
        assert conn.execute("SELECT to_regclass('t'), to_regclass('_yoyo_migration'), "
                            "to_regclass('yoyo_lock')").fetchone() == (None, None, None)


def test_a_read_only_session_on_a_migrated_database_is_up_to_date(read_only_installer, tmp_path):
    """Nothing to write, nothing refused: a read-only installer may ask whether anything is pending."""
    (tmp_path / "0001.t.sql").write_text("CREATE TABLE t ();\n")
    assert migrate(read_only_installer, tmp_path) == ["0001.t"]
    read_only = make_conninfo(read_only_installer, options="-c default_transaction_read_only=on")
    assert migrate(read_only, tmp_path) == []
    (tmp_path / "0002.u.sql").write_text("CREATE TABLE u ();\n")
    with pytest.raises(EvalledgerError, match="refused a write: its sessions start read-only"):
        migrate(read_only, tmp_path)
    assert status(read_only_installer, tmp_path).pending == ["0002.u"]
