"""The review web app: `evalledger serve` (app.py, templates/, static/, sql/queries.sql)."""
