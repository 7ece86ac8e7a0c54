"""The database the migrations build is the schema the repository says it is."""

import difflib

from tests.db.schema_snapshot import SNAPSHOT_FILE, snapshot


def test_migrations_build_the_checked_in_schema(admin):
    built = snapshot(admin)
    expected = SNAPSHOT_FILE.read_text()
    diff = "".join(difflib.unified_diff(expected.splitlines(True), built.splitlines(True),
                                        "tests/db/schema.current.txt", "migrated database"))
    assert not diff, f"schema drift (run `make schema` if intended):\n{diff}"
