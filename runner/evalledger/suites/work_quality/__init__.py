"""The work-quality suite (seed 003): a cross-family panel judges a run's real work product and
its price; snapshots on disk (the seed's Go-readable history) and in the ledger; Compare and the
regression gate computed by the database."""
