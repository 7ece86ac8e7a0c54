"""The database's administration: the embedded server, migrations, backups and restores, dumps,
replicas, doctor, and what the owner registers: targets, legal holds, retention (`evalledger db`,
`doctor`, `target`, `hold`, `retention`).
The runner never imports it; its named queries are the core's (sql/core/queries.sql) and its own
(sql/ops/queries.sql)."""
