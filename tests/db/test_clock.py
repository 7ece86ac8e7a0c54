"""The database server and the tests read one clock, so a test may compare the two; `make
test-dates` shifts both with faketime, and this fails if the shift missed the server."""

from datetime import datetime, timedelta, timezone


def test_the_server_and_the_tests_share_one_clock(admin):
    server_now = admin.execute("SELECT now()").fetchone()[0]
    assert abs(server_now - datetime.now(timezone.utc)) < timedelta(minutes=5)
