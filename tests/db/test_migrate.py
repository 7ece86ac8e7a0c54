"""The migration runner: yoyo's bookkeeping with its known gaps closed."""

import subprocess
import sys

import psycopg
import pytest
from psycopg.conninfo import make_conninfo

from evalledger.core.errors import EvalledgerError
from evalledger.core.migrate import expand_includes, migrate, read_migrations, status


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
