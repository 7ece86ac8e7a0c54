"""A released migration never changes: not its text, nor any file it includes (tests/released.py)."""

import shutil

import pytest

from tests.released import LIST, ROOT, append, entries, problems


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


def test_an_edited_include_is_a_change_of_the_migration(copy):
    listing, migrations = copy / "released.sha256", copy / "migrations"
    append("0001.baseline", listing, migrations)
    included = copy / "sql" / "core" / "hot_tier_v1.sql"
    included.write_text(included.read_text().replace("24 months", "25 months"))
    assert "0001.baseline.sql: released with sha256" in problems(listing, migrations)[0]


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
