"""The capture commands: `evalledger capture import|replay|status` and `evalledger export`.

Registered by cli.py at its bottom.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sys
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

import click

from evalledger.core import db, reader
from evalledger.core.output import plural
from evalledger.core import output
from evalledger.core.options import (LIMIT, When, database_option, echo_listing, format_options, read_url_option,
                                     window_bound)
from evalledger.core.errors import EvalledgerError

# Import keys: the same line of the same log always gets the same capture_key, so importing a
# log twice (or a log that has grown since) writes each row once.
IMPORT_NAMESPACE = uuid.UUID("7d0c4e55-2b8f-4f0e-8d6b-51a3c9e2f014")
# Fields an exported row carries: never inserted (the database assigns them), they identify the row
# in the ledger it was exported from, so importing an export back into it writes nothing twice.
EXPORT_ONLY = ("id", "created_at")
IMPORT_BATCH = 1000


@click.group("capture")
def capture_group():
    """Captured queries: import them from logs, replay the local spool, show the configuration."""


@dataclass
class ImportLine:
    """One row of a capture log: its line number, its fields, and, for a line an export wrote, the
    id and created_at that identify the row in the ledger it came from."""

    number: int
    fields: dict
    exported: tuple[int, datetime] | None = None


def parse_import(path: str, source, *, progress: bool = False, checked: bool = False) -> Iterator[ImportLine]:
    """The rows of an NDJSON capture log (a path, or an open binary stream), streamed through the
    door (core/reader.py); EvalledgerError naming file, line and field at the first bad line.
    checked: the log was read whole once already (the second pass of an import), so each row's
    fields are not checked again here (the writer checks every row it writes)."""
    from .rows import COLUMNS, RowError, normalize

    seen: dict[bytes, int] = {}  # a line's digest -> how many times it came: the key of each repeat
    known = set(COLUMNS) | {"schema_version", *EXPORT_ONLY}
    for number, text in reader.lines(source, "capture log", progress=f"reading {path}" if progress else None,
                                     name=path):
        text = text.strip()
        if not text:
            continue
        where = f"{path}:{number}"
        data = reader.decode_json(text, path, number)
        if checked:
            yield _import_line(number, where, text, data, seen)
            continue
        if not isinstance(data, dict):
            raise EvalledgerError(f"{where}: expected a JSON object, got {type(data).__name__}")
        unknown = sorted(set(data) - known)
        if unknown:
            raise EvalledgerError(f"{where}: {reader.json_path(unknown[:1])}: unknown field")
        if "schema_version" in data and (data["schema_version"] != 1 or isinstance(data["schema_version"], bool)):
            raise EvalledgerError(f"{where}: $.schema_version: expected 1, got {json.dumps(data['schema_version'])}")
        row = _import_line(number, where, text, data, seen)
        try:
            normalize(dict(row.fields))
        except RowError as exc:
            raise EvalledgerError(f"{where}: $.{exc.field}: {exc.problem}") from None
        yield row


def _import_line(number: int, where: str, text: str, data: dict, seen: dict[bytes, int]) -> ImportLine:
    """One line's row: its fields, a capture_key from its text and how often that text came before
    (when it has none), and an exported line's identity."""
    from .rows import COLUMNS

    exported = _exported_identity(where, data) if "id" in data or "created_at" in data else None
    fields = {k: v for k, v in data.items() if k in COLUMNS}
    if fields.get("capture_key") is None:
        digest = hashlib.sha256(text.encode("utf-8")).digest()
        seen[digest[:16]] = count = seen.get(digest[:16], 0) + 1
        fields["capture_key"] = uuid.uuid5(IMPORT_NAMESPACE, f"{digest.hex()}#{count}")
    return ImportLine(number, fields, exported)


def _batches(rows: Iterator[ImportLine], size: int) -> Iterator[list[ImportLine]]:
    batch: list[ImportLine] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def _exported_identity(where: str, data: dict) -> tuple[int, datetime]:
    """An exported line's (id, created_at): both, well formed, or an error naming the field."""
    for name in EXPORT_ONLY:
        if name not in data:
            raise EvalledgerError(f"{where}: $.{name}: missing (an exported line has both id and created_at)")
    if not isinstance(data["id"], int) or isinstance(data["id"], bool) or data["id"] < 1:
        raise EvalledgerError(f"{where}: $.id: expected a positive integer, got {json.dumps(data['id'])}")
    try:
        at = datetime.fromisoformat(str(data["created_at"]).replace("Z", "+00:00"))
    except ValueError:
        at = None
    if at is None or at.tzinfo is None:
        raise EvalledgerError(f"{where}: $.created_at: expected an ISO 8601 timestamp with its offset, "
                              f"got {json.dumps(data['created_at'])}")
    return data["id"], at


def _already_in_ledger(rows: list[ImportLine]) -> set[int]:
    """Line numbers of exported lines whose row is in this ledger already (an export imported back)."""
    from .writer import QUERIES

    exported = [r for r in rows if r.exported]
    if not exported:
        return set()
    with db.transaction("runner") as conn:
        present = {(i, at) for i, at in conn.execute(QUERIES["exported_present"], {
            "ids": [r.exported[0] for r in exported], "created": [r.exported[1] for r in exported]})}
    return {r.number for r in exported if r.exported in present}


@capture_group.command("import")
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--strict", is_flag=True,
              help="Stop at the first row the database refuses (exit 3, naming its line); rows before it stay written.")
@database_option
def capture_import(file, strict):
    """Ingest captured rows from FILE, an NDJSON log (- for stdin), through the capture path.

    One JSON object a line: seed 001's row fields (tool_name, query, retrieved_slugs, ...;
    schema_version 1 optional), as `capture_candidate` takes them or `export` writes them. Every
    line is checked first (a malformed line stops the import before anything is written, naming
    its line and field); rows are then scrubbed (unless eval.scrub_pii is false), written as
    evalledger_runner, and each row the database refuses is named on stderr by its line and
    recorded in eval_capture_failures like live capture. Importing the same log twice writes each
    row once, and so does importing an export back into the ledger it came from (its id and
    created_at identify the row).
    """
    from .failures import DatabaseDown
    from .settings import resolve_settings
    from .writer import CaptureWriter

    # Two passes over the log, streamed: every line is checked before anything is written, then
    # the rows are written a batch at a time. Standard input is spooled to a temporary file first.
    with contextlib.ExitStack() as stack:
        source = file
        if file == "-":
            source = stack.enter_context(tempfile.TemporaryFile())
            reader.copy_to_spool(sys.stdin.buffer, lambda: source)
        name = "<stdin>" if file == "-" else file
        checked = sum(1 for _ in parse_import(name, source, progress=True))
        if file == "-":
            source.seek(0)
        url = db.database_url()
        settings = resolve_settings()
        writer = CaptureWriter(url, scrub=settings.scrub_pii, background=False)
        present = 0
        try:
            try:
                writer.connection()  # which replays the spool first: reported apart from the file
            except DatabaseDown as exc:
                raise EvalledgerError(f"cannot reach the database at {db.describe(url)}: {exc}") from None
            replayed_first = replace(writer.stats.replay, failed=dict(writer.stats.replay.failed))
            if replayed_first.records:
                click.echo(replay_summary(replayed_first))
            step = 1 if strict else IMPORT_BATCH
            done = 0
            for batch in _batches(parse_import(name, source, checked=True), step):
                already = _already_in_ledger(batch)
                present += len(already)
                todo = [r for r in batch if r.number not in already]
                line_of = {str(r.fields["capture_key"]): r.number for r in todo}
                writer.write([r.fields for r in todo])
                done += len(batch)
                # Each refusal is named as it happens (and forgotten: memory stays flat). Only this
                # file's rows are here: what the spool's replays record is counted apart.
                for failure in writer.stats.refused:
                    where = f"{name}:{line_of.get(str(failure.capture_key), '?')}"
                    if strict:
                        raise EvalledgerError(
                            f"{where}: refused ({failure.reason}): {failure.detail}; --strict stopped there: "
                            f"{writer.stats.own_written} written before it, {checked - done} not imported")
                    click.echo(f"{where}: refused ({failure.reason}): {failure.detail}", err=True)
                writer.stats.refused.clear()
        finally:
            writer.close(0)
    stats = writer.stats
    replayed_later = _replayed_after(replayed_first, stats.replay)
    if replayed_later.records:  # the database came back mid-import and the spool was replayed then
        click.echo(replay_summary(replayed_later, "during the import"))
    failed = {reason: n for reason, n in stats.own_failed.items() if n}
    failed_text = f" ({', '.join(f'{r} {n}' for r, n in failed.items())})" if failed else ""
    kept_elsewhere = "".join(f", {n} {what}" for n, what in ((stats.spooled, "spooled"), (stats.dropped, "dropped"))
                             if n)
    click.echo(f"imported {name}: {plural(checked, 'row')}: {stats.own_written} written, "
               f"{stats.own_duplicates + present} already present, {sum(failed.values())} failed{failed_text}"
               f"{kept_elsewhere}")
    if stats.dropped:
        raise EvalledgerError(f"the database went away during the import and the spool {writer.spool.path} refused "
                              f"{plural(stats.dropped, 'row')} ({writer.last_spool_refusal}): import {name} again "
                              "once the database answers (nothing is written twice)")
    if stats.spooled and writer.spool.pending():
        raise EvalledgerError(f"the database went away during the import: {plural(stats.spooled, 'row')} of it "
                              f"wait in {writer.spool.path}; `evalledger capture replay` writes them")


def replay_summary(replay, when: str = "") -> str:
    """One line for what a replay of the spool did: its records are the rows written, those
    already present and the failures recorded (spooled ones, and rows refused now)."""
    failed = {reason: n for reason, n in replay.failed.items() if n}
    failed_text = (f", {plural(sum(failed.values()), 'failure')} recorded "
                   f"({', '.join(f'{r} {n}' for r, n in failed.items())})") if failed else ""
    return (f"replayed {plural(replay.records, 'spooled record')}{' ' + when if when else ''}: "
            f"{plural(replay.written, 'row')} written, {replay.duplicates} already present{failed_text}")


def _replayed_after(before, now):
    """What a replay did after `before` was taken."""
    return replace(now, records=now.records - before.records, written=now.written - before.written,
                   duplicates=now.duplicates - before.duplicates,
                   failed={r: n - before.failed[r] for r, n in now.failed.items()})


@capture_group.command("replay")
@database_option
def capture_replay():
    """Write the rows waiting in the local capture spool ($EVALLEDGER_HOME/capture) now."""
    from .writer import CaptureWriter

    url = db.database_url()
    writer = CaptureWriter(url, background=False)
    try:
        writer.replay_spool()
    finally:
        writer.close(0)
    left = writer.spool.pending()
    if left:
        raise EvalledgerError(f"cannot reach the database at {db.describe(url)}: {plural(left, 'spooled record')} "
                              f"still wait in {writer.spool.path}")
    click.echo(replay_summary(writer.stats.replay))


@capture_group.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON (schema: capture_status.v1).")
@database_option
def capture_status(as_json):
    """Show whether capture is on, why, whether queries are scrubbed, and the spool."""
    from .settings import resolve_settings, spool_path
    from .spool import Spool

    settings = resolve_settings()
    spool = Spool(spool_path())
    if as_json:
        click.echo(output.to_json({"schema_version": 1, "kind": "capture_status", "capture": settings.capture,
                                   "because": settings.source, "scrub_pii": settings.scrub_pii,
                                   "spool": {"path": str(spool.path), "records": spool.pending()}}), nl=False)
        return
    click.echo(f"capture: {'on' if settings.capture else 'off'} ({settings.source})")
    click.echo(f"scrub_pii: {'true' if settings.scrub_pii else 'false'}")
    click.echo(f"spool: {plural(spool.pending(), 'record')} waiting in {spool.path}")


@capture_group.command("failures")
@click.option("--since", type=When(), metavar="DUR|TS", help="Only failures since: 24h, 7d, or a timestamp.")
@click.option("--reason", type=click.Choice(["check_violation", "rls_reject", "db_down", "scrubber_exception", "other"]),
              help="Only failures of this reason.")
@click.option("--limit", type=LIMIT, default=50, show_default=True,
              help="At most N failures, newest first.")
@format_options
@database_option
def capture_failures(since, reason, limit, fmt):
    """List refused captures, newest first (as an auditor): when, why, the SQLSTATE and a detail that never holds the query."""
    from .writer import QUERIES

    echo_listing("auditor", QUERIES["list_failures"], {"since": since, "reason": reason, "limit": limit},
                 fmt=fmt, kind="capture_failures", empty="no capture failures match")


_since = window_bound("parse_since", "neither a duration (45s, 30m, 24h, 7d, 2w) nor an ISO 8601 timestamp")
_until = window_bound("parse_timestamp", "not an ISO 8601 timestamp")


@click.command("export")
@click.option("--since", callback=_since, metavar="DUR|TS",
              help="Inclusive lower bound: a duration back from now (45s, 30m, 24h, 7d, 2w) or a timestamp.")
@click.option("--until", callback=_until, metavar="TS",
              help="Exclusive upper bound (default and latest: now, as the database fixes it).")
@click.option("--limit", type=LIMIT, metavar="N", help="At most N rows (the newest).")
@click.option("--tool", type=click.Choice(["query", "search"]), help="Only rows of this tool.")
@click.option("--output", "-o", "output", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Write the rows to FILE atomically, then FILE.complete.json (rows, bytes, SHA-256, window), "
                   "which only a complete export writes. [default: stdout]")
@database_option
@read_url_option
def export_command(since, until, limit, tool, output):
    """Write captured rows as NDJSON (seed-001 row schema v1) to stdout, newest first.

    One object per line, schema_version first, ordered created_at DESC, id DESC. The window is
    [--since, --until) on created_at; stderr prints it with microseconds and ends with the
    --since that continues exactly where this export stopped (no row missed or repeated). A
    window with no time in it (--since not before --until, or not before now) is exit 3.
    With --read-url (or DATABASE_READ_URL) the rows are read from a standby: the window's bound
    is still the primary's, and the export waits until the standby has replayed up to it.
    """
    from .export import export_to_file, run_export

    if since is not None and since.at is not None and until is not None and since.at >= until:
        raise EvalledgerError(f"--since {since.at.isoformat()} is not before --until {until.isoformat()}: "
                              "the window [since, until) would be empty")
    note = lambda line: click.echo(f"export: {line}", err=True)  # noqa: E731
    if output is not None:
        export_to_file(output, since, until, limit, tool, note=note)
    else:
        run_export(since, until, limit, tool, note=note)


COMMANDS = (capture_group, export_command)
