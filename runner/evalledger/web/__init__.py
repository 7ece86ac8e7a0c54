"""The review web app: `evalledger serve` (app.py, templates/, static/; its named queries are sql/web/queries.sql)."""
