"""`evalledger ledger ...`: seal, digest, verify, proof, consistency (docs/ledger.md)."""

from __future__ import annotations

import contextlib
import sys
import uuid
from pathlib import Path

import click
import psycopg

from evalledger.core import db, output
from evalledger.core.errors import EXIT_FAIL, EXIT_OK, EvalledgerError
from evalledger.core.options import Number, database_option

from . import check, digest as digests, journal, proof as proofs, verify as verifying

WAIT_HELP = ("Wait up to SECONDS for transactions running now to finish, so their entries are sealed "
             "too (0: seal what is final at once).")


def installed(conn) -> None:
    """Refuse, in one line, a database the journal's migration has not reached."""
    if not conn.execute(journal.QUERIES["installed"]).fetchone()[0]:
        raise EvalledgerError("this database has no journal yet: run `evalledger db migrate`")


@contextlib.contextmanager
def reading(role: str):
    """A connection acting as role, set up to read rows as canon-v1 writes them."""
    conn = db.connect(role=role)
    try:
        installed(conn)
        journal.prepare(conn)
        conn.commit()
        yield conn
    except psycopg.Error as exc:
        raise db.explain(exc) from None
    except check.NotCanonical as exc:  # a table with a column canon-v1 has no form for (doctor names it too)
        raise EvalledgerError(f"{exc}: the journal cannot cover it (evalledger doctor)") from None
    finally:
        conn.close()


def seal_after(role: str, wait_seconds: float = digests.WAIT_SECONDS) -> None:
    """Seal right after what a command committed (a completion, a purge); say what still waits, if anything."""
    note = digests.held_back(digests.seal_after(role, wait_seconds))
    if note:
        click.echo(f"evalledger: note: {note}", err=True)


def _write(text: str, out: Path | None) -> None:
    if out is None:
        click.echo(text, nl=False)
        return
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise EvalledgerError(f"{out}: cannot write: {exc.strerror}") from None


@click.group("ledger")
def ledger_group():
    """Tamper evidence: seal the journal into blocks, keep digests outside, verify, prove a run offline.

    Every ledger row version has a journal entry written by the database; `seal` closes a block of
    them (an RFC 6962 Merkle tree, chained to the block before); `digest` prints what to keep where
    the database's superuser cannot reach; `verify` recomputes it all outside the database. See
    docs/ledger.md for what that proves and what it cannot.
    """


@ledger_group.command("seal")
@click.option("--wait", "wait_seconds", type=Number(0), default=digests.WAIT_SECONDS, show_default=True,
              metavar="SECONDS", help=WAIT_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print what was sealed as JSON.")
@database_option
def seal_command(wait_seconds, as_json):
    """Seal a block over the journal entries not sealed yet (as the owner).

    Completions, `retention apply` and `ledger digest` seal on their own; run this from a scheduler
    for everything else (doctor warns when no block was sealed for a day). Writers never wait for it.
    """
    with db.transaction("owner") as conn:
        installed(conn)
        sealed = digests.seal(conn, wait_seconds)
    if as_json:
        click.echo(output.to_json({"schema_version": 1, "kind": "ledger_seal", **sealed}), nl=False)
        return
    if sealed["block"]:
        click.echo(f"sealed block {sealed['block']}: {output.plural(sealed['entries'], 'entry', 'entries')} "
                   f"({sealed['first_entry']}-{sealed['last_entry']}), hash {sealed['block_hash']}")
    else:
        click.echo("nothing to seal: every final journal entry is in a block")
    note = digests.held_back(sealed)
    if note:
        click.echo(note)


@ledger_group.command("digest")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Write the digest to FILE (and say so) instead of printing it.")
@click.option("--wait", "wait_seconds", type=Number(0), default=digests.WAIT_SECONDS, show_default=True,
              metavar="SECONDS", help=WAIT_HELP)
@click.option("--json", "as_json", is_flag=True, help="With --out, print the digest as JSON too.")
@database_option
def digest_command(out, wait_seconds, as_json):
    """Seal, then print the digest of the newest block (as an auditor): keep it outside the database.

    A digest names the ledger, its newest block and that block's hash, the ledger root over every
    block hash (the Merkle tree `consistency` proofs are about), how many entries it covers and
    when. It is signed by nobody and worth what its keeping place is: a file the auditor keeps, a
    git repository, object storage, anywhere the database's superuser cannot rewrite it.
    """
    url = db.database_url()
    database = psycopg.conninfo.conninfo_to_dict(url).get("dbname") or ""
    with db.transaction("auditor") as conn:
        installed(conn)
        taken, waiting = digests.take(conn, database, wait_seconds)
    text = digests.dump(taken)
    if out is None or as_json:
        click.echo(text, nl=False)
    if out is not None:
        _write(text, out)
        if not as_json:
            click.echo(f"digest of block {taken['block']} ({output.plural(taken['entries'], 'entry', 'entries')}, "
                       f"ledger root {taken['ledger_root']}, code {taken['code_fingerprint']}) written to {out}: keep "
                       "it where the database's superuser cannot reach")
    note = digests.held_back(waiting)
    if note:
        click.echo(f"evalledger: note: {note}", err=True)


@ledger_group.command("verify")
@click.option("--digest", "digest_files", multiple=True, type=click.Path(dir_okay=False, path_type=Path),
              metavar="FILE", help="A digest kept outside; every block it holds must still be so (repeat for more).")
@click.option("--recompute", is_flag=True,
              help="Also re-derive every computed column of every completed run from its inputs, with the "
                   "package's own decision functions (the files the triggers run), installed in a temporary schema.")
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON.")
@database_option
def verify_command(digest_files, recompute, as_json):
    """Recompute every row's hash, every block and the chain outside the database, and check the digests.

    Each finding is one line naming the table and key (or the block) and what differs: a row changed
    since its journal entry (and which columns), a row with no journal entry, a row gone with no entry
    that deleted it, a deletion the retention policy did not allow then (too young, or under a legal
    hold, whatever the purge log says), an UPDATE the ledger's rules never allow, a journal entry that
    is not what its block sealed, a block whose hash or link breaks, a block that disagrees with a
    held digest, a definition of the ledger's code changed since a digest, a table or journal trigger
    the catalog lacks. What to check comes from the package, never from the database. Reads as the
    owner role (the one application role that reads every ledger table) in one read-only snapshot.

    Exit 0 verified, 1 tampering found, 3 error.
    """
    held = [(str(path), digests.load(path)) for path in digest_files]
    with reading("owner") as conn:
        report = verifying.verify(conn, held, recompute=recompute)
    if as_json:
        click.echo(output.to_json({
            "schema_version": 1, "kind": "ledger_verify", "verified": report.verified, "ledger_id": report.ledger_id,
            "checked": {"rows": report.rows, "entries": report.entries, "blocks": report.blocks,
                        "digests": report.digests, "recomputed": report.recomputed},
            "unsealed_entries": report.unsealed, "seconds": round(report.seconds, 3),
            "findings": [f.as_json() for f in report.findings]}), nl=False)
    else:
        for finding in report.findings:
            click.echo(finding.line())
        checked = (f"{output.plural(report.rows, 'row')}, {output.plural(report.entries, 'journal entry', 'journal entries')} "
                   f"in {output.plural(report.blocks, 'block')}, {output.plural(report.digests, 'digest')}"
                   + (", every decision recomputed" if report.recomputed else ""))
        if report.verified:
            click.echo(f"{output.verdict('ok', 'verified')}: {checked}; {report.unsealed} entries not sealed yet "
                       f"({report.seconds:.1f} s)")
        else:
            click.echo(f"{output.verdict('fail', 'tampering')}: "
                       f"{output.plural(len(report.findings), 'finding')} ({checked})")
    sys.exit(EXIT_OK if report.verified else EXIT_FAIL)


@ledger_group.command("proof")
@click.argument("run_id")
@click.option("--digest", "digest_file", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Prove against the ledger this digest holds (default: the newest block).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Write the proof to FILE instead of printing it.")
@database_option
def proof_command(run_id, digest_file, out):
    """Print the proof that brain-eval run RUN_ID's rows are in the ledger (as an auditor).

    For each row of the run (the run, its question rows, review trail, sign-off, harness records,
    analyses and rubric): its canonical form, its journal entry, the Merkle audit path to its
    block's root, and each block's header and audit path in the ledger tree a digest holds. Check it
    anywhere with `python -m evalledger.ledger.check proof.json digest.json` (standard library only).
    """
    try:
        run = uuid.UUID(run_id)
    except ValueError:
        raise EvalledgerError(f"RUN_ID {run_id!r} is not a run id (a UUID)") from None
    held = digests.load(digest_file) if digest_file else None
    with reading("auditor") as conn:
        made = proofs.make(conn, run, held)
    _write(digests.dump(made), out)
    if out is not None:
        click.echo(f"proof of {output.plural(len(made['rows']), 'row')} of run {run} in the ledger of "
                   f"{output.plural(made['ledger']['size'], 'block')} written to {out}")


@ledger_group.command("consistency")
@click.argument("old", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("new", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Write the consistency proof to FILE (check it with `python -m evalledger.ledger.check FILE OLD NEW`).")
@click.option("--json", "as_json", is_flag=True, help="Print the consistency proof as JSON.")
@database_option
def consistency_command(old, new, out, as_json):
    """Show that the ledger of digest NEW extends that of digest OLD unchanged (RFC 6962 consistency proof).

    Exit 0 when it does, 1 when the ledger no longer holds OLD's blocks as they were, 3 on error.
    """
    older, newer = digests.load(old), digests.load(new)
    with reading("auditor") as conn:
        made, problems = proofs.consistency(conn, older, newer)
    if out is not None:
        _write(digests.dump(made), out)
    if as_json:
        click.echo(output.to_json({**made, "consistent": not problems, "problems": problems}), nl=False)
    elif problems:
        for problem in problems:
            click.echo(f"inconsistent: {problem}")
    else:
        click.echo(f"{output.verdict('ok', 'consistent')}: the ledger of {output.plural(newer['ledger_size'], 'block')} "
                   f"extends the ledger of {output.plural(older['ledger_size'], 'block')} unchanged")
    sys.exit(EXIT_FAIL if problems else EXIT_OK)


COMMANDS = [ledger_group]
