"""Every `evalledger.name` the README and docs/ name that is not a Python module is a table, view
or function of the migrated schema (the Python ones are imported by tests/unit/test_docs.py)."""

from __future__ import annotations

import pytest

from tests.unit.test_docs import sql_names


def test_the_pages_name_objects_of_the_schema():
    # Not vacuous: the capture page names the table its writer fills.
    assert "evalledger.eval_candidates" in sql_names()


@pytest.mark.shared_db
@pytest.mark.parametrize("name", sql_names())
def test_every_schema_object_the_pages_name_exists(admin, name):
    schema, _, object_name = name.partition(".")
    found = admin.execute(
        "SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %(s)s AND c.relname = %(o)s"
        " UNION ALL SELECT 1 FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
        " WHERE n.nspname = %(s)s AND p.proname = %(o)s",
        {"s": schema, "o": object_name}).fetchone()
    assert found, f"the docs name {name}, which the migrated schema does not have"
