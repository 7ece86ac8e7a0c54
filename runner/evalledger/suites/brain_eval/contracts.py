"""The view-contracts hash (seed 002's brain_view_contracts_hash): the SHA-256 of the brain-ready
view definitions in effect, read from the live views (pg_get_viewdef) or from a folder of
CREATE VIEW files, each definition canonicalised with sqlglot first.

Canonical form (CANON_VERSION "canon-v1"): the definition parsed as PostgreSQL, comments dropped,
unquoted identifiers folded to lower case and every identifier quoted, grouping parentheses
dropped and every operator parenthesised instead (so the text is unambiguous and a needed
parenthesis is never lost), AND/OR chains flattened, and the spellings PostgreSQL itself rewrites
or prints differently between major versions made one: ``IN (a, b)`` is ``= ANY (ARRAY[a, b])``,
``BETWEEN`` is ``>= AND <=``, ``'x'::text`` is ``'x'``, ``INNER``/``OUTER`` join words are
dropped, ``x AS x`` is ``x``, the contract schema's own qualifier is dropped, and a column
qualified by the only relation of its SELECT is unqualified (PostgreSQL 15 prints ``t.a`` there,
16 and later ``a``). Anything else that differs is a different contract.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import psycopg
import sqlglot
from psycopg import sql
from sqlglot import exp
from sqlglot.errors import ParseError
from sqlglot.optimizer.normalize_identifiers import normalize_identifiers
from sqlglot.optimizer.scope import traverse_scope

from evalledger.core import reader
from evalledger.core.errors import EvalledgerError
from evalledger.core.queries import Queries

QUERIES = Queries(__package__)
CANON_VERSION = "canon-v1"
DIALECT = "postgres"


@dataclass(frozen=True)
class View:
    """One view of a contract: its name (no schema) and its canonical definition."""

    name: str
    canonical: str

    @property
    def sha256(self) -> str:
        """The SHA-256 of this view's canonical definition."""
        return hashlib.sha256(self.canonical.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Contracts:
    """The views a hash covers, where they were read, and the hash."""

    source: str
    views: tuple[View, ...]

    @property
    def sha256(self) -> str:
        """brain_view_contracts_hash: over every view's name and canonical definition, by name."""
        text = "".join(f"{v.name}\t{v.canonical}\n" for v in sorted(self.views, key=lambda v: v.name))
        return hashlib.sha256(f"{CANON_VERSION}\n{text}".encode("utf-8")).hexdigest()

    def as_json(self) -> dict:
        """The hash, the source and the views, as `contracts hash --json` prints them (and a run records)."""
        return {"brain_view_contracts_hash": self.sha256, "canonical_form": CANON_VERSION, "source": self.source,
                "views": [{"name": v.name, "sha256": v.sha256} for v in sorted(self.views, key=lambda v: v.name)]}


# -- canonical form ----------------------------------------------------------------------------------

def _unparen(node: exp.Expression) -> exp.Expression:
    if isinstance(node, exp.Paren) and not isinstance(node.this, exp.Query):
        return node.this
    return node


def _drop_grouping(tree: exp.Expression) -> exp.Expression:
    while True:
        parens = [p for p in tree.find_all(exp.Paren) if not isinstance(p.this, exp.Query)]
        if not parens:
            return tree
        for paren in parens:
            if paren is tree:
                tree = paren.this
            else:
                paren.replace(paren.this)


def _array_of(values: list[exp.Expression]) -> exp.Expression:
    return exp.Array(expressions=[v.copy() for v in values])


def _rewrite(node: exp.Expression) -> exp.Expression:
    """PostgreSQL's own spelling of what it stores differently from what was written."""
    if isinstance(node, exp.Not) and isinstance(node.this, exp.In) and node.this.expressions:
        inner = node.this
        return exp.NEQ(this=inner.this.copy(), expression=exp.All(this=_array_of(inner.expressions)))
    if isinstance(node, exp.In) and node.expressions and not node.args.get("query"):
        return exp.EQ(this=node.this.copy(), expression=exp.Any(this=_array_of(node.expressions)))
    if isinstance(node, exp.Anonymous) and node.name.upper() == "ALL" and len(node.expressions) == 1:
        return exp.All(this=node.expressions[0].copy())  # sqlglot reads `ALL (ARRAY[...])` as a call
    if isinstance(node, exp.Not) and isinstance(node.this, exp.Between):
        b = node.this
        return exp.Or(this=exp.LT(this=b.this.copy(), expression=b.args["low"].copy()),
                      expression=exp.GT(this=b.this.copy(), expression=b.args["high"].copy()))
    if isinstance(node, exp.Between):
        return exp.And(this=exp.GTE(this=node.this.copy(), expression=node.args["low"].copy()),
                       expression=exp.LTE(this=node.this.copy(), expression=node.args["high"].copy()))
    if (isinstance(node, exp.Cast) and isinstance(node.this, exp.Literal) and node.this.is_string
            and node.to.is_type(exp.DataType.Type.TEXT)):
        return node.this.copy()
    if isinstance(node, exp.Join):
        kind = (node.args.get("kind") or "").upper()
        if kind == "INNER" or (kind == "OUTER" and node.args.get("side")):
            node.set("kind", None)
    if (isinstance(node, exp.Alias) and isinstance(node.this, exp.Column)
            and node.this.name == node.alias and isinstance(node.parent, exp.Select)):
        return node.this
    return node


def _flatten_connectors(tree: exp.Expression) -> exp.Expression:
    """a AND (b AND c) and (a AND b) AND c are one chain: rebuilt left-deep, in order."""
    def rebuild(node):
        if isinstance(node, (exp.And, exp.Or)) and not isinstance(node.parent, type(node)):
            operands = list(node.flatten())
            chain = operands[0]
            for operand in operands[1:]:
                chain = type(node)(this=chain, expression=operand)
            return chain
        return node
    return tree.transform(rebuild, copy=False)


def _join_group(node: exp.Expression) -> tuple[exp.Expression, list]:
    """An unaliased parenthesised join group as its first relation and its joins, in order."""
    if isinstance(node, exp.Subquery) and not node.alias and not isinstance(node.this, exp.Query):
        inner = node.this
        joins = list(inner.args.get("joins") or [])
        inner.set("joins", None)
        base, base_joins = _join_group(inner)
        return base, base_joins + joins
    return node, []


def _ungroup_leading_joins(tree: exp.Expression) -> None:
    """FROM (a JOIN b ON x) LEFT JOIN c is FROM a JOIN b ON x LEFT JOIN c: joins associate to the
    left, so parentheses around the leading group are redundant (PostgreSQL prints them unless
    pretty); a parenthesised group on the right of a join keeps its meaning and its parentheses."""
    for select in tree.find_all(exp.Select):
        source = select.args.get("from_")
        if source is None:
            continue
        base, joins = _join_group(source.this)
        if joins:
            source.set("this", base)
            select.set("joins", [*joins, *(select.args.get("joins") or [])])


def _unqualify_sole_relation(tree: exp.Expression) -> None:
    """In a SELECT over a single relation, `rel.col` is `col` (PostgreSQL 16+ prints it so)."""
    for scope in traverse_scope(tree):
        select = scope.expression
        if not isinstance(select, exp.Select) or select.args.get("joins") or len(scope.sources) != 1:
            continue
        [name] = scope.sources
        for column in scope.columns:
            if column.table == name and not column.args.get("db"):
                column.set("table", None)


def _unqualify_schema(tree: exp.Expression, schema: str | None) -> None:
    if not schema:
        return
    for table in tree.find_all(exp.Table):
        if table.args.get("db") is not None and table.db == schema and not table.args.get("catalog"):
            table.set("db", None)


def _parenthesise(tree: exp.Expression) -> exp.Expression:
    for node in list(tree.find_all(exp.Binary, exp.Not)):
        if node is tree:
            tree = exp.Paren(this=node)
        elif not isinstance(node.parent, exp.Paren):
            paren = exp.Paren()
            node.replace(paren)
            paren.set("this", node)
    return tree


def canonical_query(query: exp.Expression, schema: str | None = None) -> str:
    """The canonical text of a view's query (an already parsed sqlglot tree; it is changed)."""
    tree = normalize_identifiers(query, dialect=DIALECT)
    tree = _drop_grouping(tree)
    tree = tree.transform(_rewrite, copy=False)
    tree = _drop_grouping(tree)
    tree = _flatten_connectors(tree)
    _ungroup_leading_joins(tree)
    _unqualify_schema(tree, schema)
    _unqualify_sole_relation(tree)
    tree = _parenthesise(tree)
    return tree.sql(dialect=DIALECT, comments=False, identify=True, pretty=False)


def canonical_sql(text: str, schema: str | None = None, where: str = "view") -> str:
    """The canonical text of one view definition given as SQL (a SELECT or WITH query)."""
    try:
        statements = [s for s in sqlglot.parse(text, read=DIALECT) if s is not None]
    except ParseError as exc:
        raise EvalledgerError(f"{where}: sqlglot cannot parse it: {_parse_error(exc)}") from None
    if len(statements) != 1 or not isinstance(statements[0], exp.Query):
        raise EvalledgerError(f"{where}: expected one query, got {len(statements)} statement(s)")
    return canonical_query(statements[0], schema)


def _parse_error(exc: ParseError) -> str:
    first = exc.errors[0] if exc.errors else {}
    return " ".join(str(first.get("description", exc)).split())[:200]


# -- reading a contract ------------------------------------------------------------------------------

def definitions(conn: psycopg.Connection, schema: str, described: str) -> list[tuple[str, str]]:
    """(name, definition) of every view of schema in conn's database, as pg_get_viewdef prints it
    with names in that schema unqualified and every other schema's qualified; EvalledgerError when
    the schema has no views."""
    with conn.transaction():
        conn.execute(QUERIES["contract_search_path"], {"schema": schema})
        found = conn.execute(QUERIES["contract_views"], {"schema": schema}).fetchall()
    if not found:
        raise EvalledgerError(f"no views in schema {schema} at {described}")
    return found


def from_database(conn: psycopg.Connection, schema: str, described: str) -> Contracts:
    """The contract of the live views of schema in conn's database."""
    views = tuple(View(name, canonical_sql(definition, schema, f"view {schema}.{name}"))
                  for name, definition in definitions(conn, schema, described))
    return Contracts(f"database {described} schema {schema}", views)


def dump(conn: psycopg.Connection, schema: str, described: str, folder: Path) -> list[Path]:
    """Write each live view of schema as folder/<name>.sql (CREATE VIEW <name> AS its definition):
    the files a brain whose warehouse is elsewhere is hashed from."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, definition in definitions(conn, schema, described):
        path = folder / f"{name}.sql"
        create = sql.SQL("CREATE VIEW {} AS").format(sql.Identifier(name)).as_string(conn)
        path.write_text(f"-- {schema}.{name}, from {described}\n{create}\n{definition.rstrip()}\n", encoding="utf-8")
        written.append(path)
    return written


def _view_name(table: exp.Table, schema: str | None, where: str) -> str:
    table = normalize_identifiers(table.copy(), dialect=DIALECT)
    if table.args.get("db") is not None and schema is not None and table.db != schema:
        raise EvalledgerError(f"{where}: view {table.db}.{table.name} is not in schema {schema}")
    return table.name


def from_folder(folder: Path, schema: str | None = None) -> Contracts:
    """The views defined by the CREATE VIEW statements of the *.sql files in folder (by file name)."""
    if not folder.is_dir():
        raise EvalledgerError(f"{folder}: no such folder of CREATE VIEW files")
    files = sorted(folder.glob("*.sql"))
    if not files:
        raise EvalledgerError(f"{folder}: no *.sql files")
    views: dict[str, View] = {}
    for path in files:
        text = reader.read_text(path, "view file")
        try:
            statements = [s for s in sqlglot.parse(text, read=DIALECT) if s is not None]
        except ParseError as exc:
            line = exc.errors[0].get("line") if exc.errors else None
            raise EvalledgerError(f"{path}:{line or 1}: sqlglot cannot parse it: {_parse_error(exc)}") from None
        for number, statement in enumerate(statements, start=1):
            where = f"{path}: statement {number}"
            if not (isinstance(statement, exp.Create) and (statement.args.get("kind") or "").upper() == "VIEW"
                    and isinstance(statement.expression, exp.Query)):
                raise EvalledgerError(f"{where}: not a CREATE VIEW ... AS query")
            target = statement.this
            columns = []
            if isinstance(target, exp.Schema):
                columns = [c.name for c in normalize_identifiers(target.copy(), dialect=DIALECT).expressions]
                target = target.this
            name = _view_name(target, schema, where)
            if name in views:
                raise EvalledgerError(f"{where}: view {name} is defined twice")
            query = statement.expression
            if columns:
                _name_columns(query, columns, where)
            views[name] = View(name, canonical_query(query, schema))
    return Contracts(f"folder {folder}" + (f" schema {schema}" if schema else ""), tuple(views.values()))


def _name_columns(query: exp.Expression, columns: list[str], where: str) -> None:
    """CREATE VIEW v (a, b) AS SELECT x, y: PostgreSQL stores SELECT x AS a, y AS b."""
    select = query
    while isinstance(select, exp.Subquery):
        select = select.this
    if not isinstance(select, exp.Select) or len(columns) > len(select.expressions):
        raise EvalledgerError(f"{where}: its column list does not fit its SELECT list")
    for projection, column in zip(select.expressions, columns):
        inner = projection.this if isinstance(projection, exp.Alias) else projection
        projection.replace(exp.Alias(this=inner.copy(), alias=exp.to_identifier(column)))
