"""A released migration never changes, and is self-contained: releasing one freezes it (tests/released.py)."""

import shutil

import pytest

from tests.released import LIST, ROOT, append, checksum, entries, problems


def test_no_released_migration_changed_or_went_missing():
    assert problems() == []


def test_the_list_is_well_formed():
    entries()  # raises on a malformed line
    assert LIST.exists(), "migrations/released.sha256 is the list (empty until the first release)"


@pytest.fixture
def copy(tmp_path):
    """A copy of the database side, so its files can be edited."""
    for folder in ("migrations", "triggers", "sql"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    return tmp_path


def test_a_listed_migration_that_changes_fails(copy):
    listing, migrations = copy / "released.sha256", copy / "migrations"
    append("0001.baseline", listing, migrations)
    assert problems(listing, migrations) == []
    with (migrations / "0001.baseline.sql").open("a") as f:
        f.write("-- an afterthought\n")
    assert [p.split(":")[0] for p in problems(listing, migrations)] == ["0001.baseline.sql"]


def test_every_migration_in_the_checkout_is_self_contained():
    # The released ones must be, and so is every new one: two unreleased migrations may change one
    # object (0108 and 0110 both replace retention_purge_v2), and an include of its current file would
    # make the earlier migration run the later text (docs/development.md, "Migrations").
    including = [p.name for p in sorted((ROOT / "migrations").glob("*.sql")) if "\n\\ir " in f"\n{p.read_text()}"]
    assert including == []


@pytest.fixture
def including(copy):
    """An unreleased migration that includes a current file, as one may until its release."""
    (copy / "sql" / "core" / "answer_v1.sql").write_text("CREATE FUNCTION answer_v1() RETURNS int RETURN 42;\n")
    migration = copy / "migrations" / "0900.answer.sql"
    migration.write_text("-- The answer.\n\\ir ../sql/core/answer_v1.sql\nSELECT answer_v1();\n")
    return migration


def test_releasing_freezes_the_migration_and_keeps_its_checksum(copy, including):
    listing = copy / "released.sha256"
    before = checksum(including)
    append(including.stem, listing, including.parent)
    assert including.read_text() == "-- The answer.\nCREATE FUNCTION answer_v1() RETURNS int RETURN 42;\n\nSELECT answer_v1();\n"
    assert entries(listing) == [(before, including.name)]
    assert problems(listing, including.parent) == []
    # The current file changes freely once the migration that included it is released.
    (copy / "sql" / "core" / "answer_v1.sql").write_text("CREATE FUNCTION answer_v1() RETURNS int RETURN 43;\n")
    assert problems(listing, including.parent) == []


def test_a_released_migration_that_still_includes_a_file_fails(copy, including):
    listing = copy / "released.sha256"
    listing.write_text(f"{checksum(including)}  {including.name}\n")
    assert [p.split(":")[0] for p in problems(listing, including.parent)] == [including.name]
    assert "still includes a file" in problems(listing, including.parent)[0]


def test_a_released_migration_that_is_missing_fails(copy):
    listing, migrations = copy / "released.sha256", copy / "migrations"
    append("0001.baseline", listing, migrations)
    (migrations / "0001.baseline.sql").unlink()
    assert problems(listing, migrations) == ["0001.baseline.sql: released, but missing from migrations/"]


def test_a_migration_is_released_once(copy):
    listing, migrations = copy / "released.sha256", copy / "migrations"
    append("0001.baseline", listing, migrations)
    with pytest.raises(SystemExit, match="already released"):
        append("0001.baseline.sql", listing, migrations)
    assert len(entries(listing)) == 1
