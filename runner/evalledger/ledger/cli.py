"""`evalledger ledger ...`: seal, digest, verify, proof, consistency (docs/ledger.md)."""

from __future__ import annotations

import contextlib
import sys
import time
import uuid
from pathlib import Path

import click
import psycopg

from evalledger.core import db, output
from evalledger.core.errors import EXIT_FAIL, EXIT_OK, EvalledgerError
from evalledger.core.options import Number, database_option, no_remember_option

from . import check, digest as digests, journal, proof as proofs, publish as publishing, remember, verify as verifying

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


SIGN_HELP = ("Sign the digest with this SSH private key (ssh-keygen -Y sign, namespace "
             f"{check.SIGNATURE_NAMESPACE}): FILE.sig beside it, which `python -m evalledger.ledger.check "
             "--allowed-signers SIGNERS FILE` verifies.")
HEADERS_ONLY = ("a digest certifies the block headers (each block's root over its entries, the chain, the ledger "
                "tree); `evalledger ledger verify --digest` checks the entries and rows they seal")


def _take(wait_seconds) -> tuple[dict, str, dict]:
    """Seal and take a digest as the auditor: the digest, its text, and what the seal could not include."""
    url = db.database_url()
    database = psycopg.conninfo.conninfo_to_dict(url).get("dbname") or ""
    with db.transaction("auditor") as conn:
        installed(conn)
        taken, waiting = digests.take(conn, database, wait_seconds)
    return taken, digests.dump(taken), waiting


@ledger_group.command("digest")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Write the digest to FILE (and say so) instead of printing it.")
@click.option("--sign", "key", type=click.Path(dir_okay=False, exists=True, path_type=Path), metavar="KEY",
              help=SIGN_HELP + " Needs --out.")
@click.option("--wait", "wait_seconds", type=Number(0), default=digests.WAIT_SECONDS, show_default=True,
              metavar="SECONDS", help=WAIT_HELP)
@click.option("--json", "as_json", is_flag=True, help="With --out, print the digest as JSON too.")
@database_option
def digest_command(out, key, wait_seconds, as_json):
    """Seal, then print the digest of the newest block (as an auditor): keep it outside the database.

    A digest names the ledger, its newest block and that block's hash, the ledger root over every
    block hash (the Merkle tree `consistency` proofs are about), how many entries it covers and
    when. It certifies block headers: `ledger verify --digest` checks the entries and rows they
    seal. Signed with --sign (an SSH key), it is worth what its keeping place is: a file the auditor
    keeps, a git repository (`ledger publish`), object storage with a retention lock, anywhere the
    database's superuser cannot rewrite it.
    """
    if key is not None and out is None:
        raise EvalledgerError("--sign writes the signature beside the digest: give --out FILE too")
    taken, text, waiting = _take(wait_seconds)
    if out is None or as_json:
        click.echo(text, nl=False)
    if out is not None:
        _write(text, out)
        signature = publishing.sign(out, key) if key is not None else None
        if not as_json:
            click.echo(f"digest of block {taken['block']} ({output.plural(taken['entries'], 'entry', 'entries')}, "
                       f"ledger root {taken['ledger_root']}, code {taken['code_fingerprint']}) written to {out}"
                       + (f", signed in {signature}" if signature else "")
                       + ": keep it where the database's superuser cannot reach")
    click.echo(f"evalledger: note: {HEADERS_ONLY}", err=True)
    note = digests.held_back(waiting)
    if note:
        click.echo(f"evalledger: note: {note}", err=True)


def _publish_once(dest: Path, key: Path | None, wait_seconds) -> tuple[list[str], str]:
    """Take a digest, check the ledger extends the newest one dest holds, and publish it there: the problems
    (a rollback or fork: nothing published), and the line to print."""
    taken, text, _ = _take(wait_seconds)
    before = publishing.newest(dest)
    if before is not None:
        with reading("auditor") as conn:
            _, problems, _ = proofs.consistency(conn, before[1], taken)
        if problems:
            return [f"{problem} ({before[0]}: {before[1]['ledger_size']} blocks; this ledger's newest digest: "
                    f"{taken['ledger_size']} blocks)" for problem in problems], ""
    written = publishing.publish(dest, text, taken, key)
    return [], (f"published the digest of block {taken['block']} "
                f"({output.plural(taken['entries'], 'entry', 'entries')}) to {', '.join(map(str, written))}"
                + (f", extending {before[0].name}" if before else ""))


@ledger_group.command("publish")
@click.argument("dest", type=click.Path(file_okay=False, path_type=Path))
@click.option("--sign", "key", type=click.Path(dir_okay=False, exists=True, path_type=Path), metavar="KEY",
              help=SIGN_HELP)
@click.option("--wait", "wait_seconds", type=Number(0), default=digests.WAIT_SECONDS, show_default=True,
              metavar="SECONDS", help=WAIT_HELP)
@database_option
def publish_command(dest, key, wait_seconds):
    """Seal, take a digest and append it to DEST, after checking the ledger extends the newest one there.

    DEST is a folder (made if missing), or the work tree of a git repository of the auditor's (each
    digest is committed); a file is never replaced. In production keep them in object storage with a retention lock
    (docs/ledger.md). Exit 0 published, 1 the ledger was rolled back or forked since the newest digest
    in DEST (nothing published), 3 error.
    """
    problems, line = _publish_once(dest, key, wait_seconds)
    for problem in problems:
        click.echo(f"inconsistent: {problem}")
    if line:
        click.echo(line)
    sys.exit(EXIT_FAIL if problems else EXIT_OK)


@ledger_group.command("watch")
@click.argument("dest", type=click.Path(file_okay=False, path_type=Path))
@click.option("--every", "period", default="10m", show_default=True, metavar="PERIOD",
              help="How often: 30s, 10m, 2h, 1d.")
@click.option("--times", type=click.IntRange(0), default=0, show_default=True, metavar="N",
              help="Stop after N rounds (0: run until stopped, or until the ledger is inconsistent).")
@click.option("--sign", "key", type=click.Path(dir_okay=False, exists=True, path_type=Path), metavar="KEY",
              help=SIGN_HELP)
@click.option("--wait", "wait_seconds", type=Number(0), default=digests.WAIT_SECONDS, show_default=True,
              metavar="SECONDS", help=WAIT_HELP)
@database_option
def watch_command(dest, period, times, key, wait_seconds):
    """A monitor: every PERIOD seal, take a digest, sign it and publish it to DEST (as `ledger publish`).

    Exits 1 at the first round that finds the ledger rolled back or forked since the newest digest in
    DEST (naming both sizes); 0 after --times rounds; 3 on error.
    """
    seconds = publishing.every(period)
    done = 0
    while True:
        problems, line = _publish_once(dest, key, wait_seconds)
        for problem in problems:
            click.echo(f"inconsistent: {problem}")
        if problems:
            sys.exit(EXIT_FAIL)
        click.echo(line)
        done += 1
        if times and done >= times:
            sys.exit(EXIT_OK)
        time.sleep(seconds)


@ledger_group.command("verify")
@click.option("--digest", "digest_files", multiple=True, type=click.Path(dir_okay=False, path_type=Path),
              metavar="FILE", help="A digest kept outside; every block it holds must still be so (repeat for more).")
@click.option("--recompute", is_flag=True,
              help="Also re-derive every computed column of every completed run from its inputs, with the "
                   "package's own decision functions (the files the triggers run), installed in a temporary schema.")
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON.")
@no_remember_option
@database_option
def verify_command(digest_files, recompute, as_json, no_remember):
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
        remember.check_reader(conn, remember=not no_remember, database=conn.info.dbname)
        conn.commit()
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

    The digests may come in either order (the smaller ledger is taken as the older). It certifies block
    headers only, as digests do: `ledger verify` checks the entries and rows the blocks seal.

    Exit 0 when it does, 1 when the ledger was rolled back or forked (no longer holds either digest's
    blocks as they were), 3 on error.
    """
    first, second = digests.load(old), digests.load(new)
    with reading("auditor") as conn:
        made, problems, swapped = proofs.consistency(conn, first, second)
    if swapped:
        old, new = new, old
        first, second = second, first
    if out is not None and made is not None:
        _write(digests.dump(made), out)
    if as_json:
        click.echo(output.to_json({**(made or {}), "consistent": not problems, "problems": problems,
                                   "older": str(old), "newer": str(new)}), nl=False)
    elif problems:
        for problem in problems:
            click.echo(f"inconsistent: {problem} ({old}: {first['ledger_size']} blocks, {new}: "
                       f"{second['ledger_size']} blocks)")
    else:
        click.echo(f"{output.verdict('ok', 'consistent')}: the ledger of {output.plural(second['ledger_size'], 'block')} "
                   f"({new}) extends the ledger of {output.plural(first['ledger_size'], 'block')} ({old}) unchanged "
                   "(block headers: `ledger verify` checks their contents)")
    sys.exit(EXIT_FAIL if problems else EXIT_OK)


COMMANDS = [ledger_group]
