def test_migrated(admin):
    assert admin.execute("select count(*) from target").fetchone()[0] == 2
