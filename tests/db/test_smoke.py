def test_seed_002_brains_are_registered(admin):
    brains = admin.execute("SELECT target_id FROM target WHERE kind = 'brain' ORDER BY 1").fetchall()
    assert brains == [("AGT-901",), ("AGT-902",)]
