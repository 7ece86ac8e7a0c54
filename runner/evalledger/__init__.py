"""evalledger: a PostgreSQL-centric ledger for LLM evaluations."""

__version__ = "0.1.1.dev0"
