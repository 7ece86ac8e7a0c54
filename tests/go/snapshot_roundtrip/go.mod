module evalledger.test/snapshot_roundtrip

go 1.19
