"""Bench: what the journal costs its writers, and how long verify and the seal take at scale.

Two databases on the same server, migrated alike; in one the journal's triggers are dropped (its
superuser lifts the DDL guard for that), so the same writes run with and without the journal, in
the same run, alternating:

  runner's writes   a brain-eval run's whole write lifecycle as bench/ledger_writes.py writes it
                    (analyses, run, question rows; the reviewer's UPDATEs, which each add review
                    trail rows, and sign-off; completion), as the runner and the reviewer
  capture writer    CaptureWriter batches of 1000 (scrub_pii on), one INSERT per batch, whose journal
                    is one entry per batch and partition (and one for the capture keys)

and, in the journalled database alone:

  verify            `ledger verify` over RUNS completed runs of 30 questions (runs, question rows and
                    analyses bulk-written with the journal and the manifests on, sealed block by block), as
                    the owner role, recomputing every row's and entry's hash and every block outside the
                    database; against baselines in the same run: verify without its manifest check (how
                    much holding each run to its manifest costs), and `verify --recompute`
  seal              one seal over ENTRIES new journal entries (one transaction's analyses)
  manifest          what a completion's manifest costs (brain_eval_manifest_v1 over a run of 30 questions), and
                    completion's rate in a third database, journalled but without the manifest trigger
  reader            the check every reader makes before it reads (ledger/remember.py: the block hashes read,
                    the ledger tree of the blocks it saw and of them all hashed), on a ledger of READER_BLOCKS
                    blocks (one per completion, as completions seal), against a baseline measured in the
                    same run: a `report` built as the auditor (aim: the check under 50 ms at 10,000 runs)

Figures: rows/s per path and the ratio (journal / none: 1.0 = the journal costs nothing; aim >= 0.9),
and, where the server runs on this machine, the CPU its sessions spent (a machine shared with other
work swings the wall clock, not the CPU a statement needs; the ratio is none / journal);
verify's seconds and rows/s (aim < 30 s at 10,000 runs); the seal's seconds. No assertions.
It starts its own databases: DATABASE_URL's server when set, else a throwaway embedded server.

    .venv/bin/python bench/journal.py [--runs 60] [--capture-rows 30000] [--verify-runs 10000] [--seal-entries 100000]
                                      [--reader-blocks 10000]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import psycopg
from psycopg import sql

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "runner"))
sys.path.insert(0, str(ROOT / "bench"))

import ledger_writes  # noqa: E402  (bench/ledger_writes.py: the runner's write lifecycle)
from capture import row as capture_row  # noqa: E402  (bench/capture.py: a captured query)

from evalledger.core import scratch  # noqa: E402
from evalledger.ledger import digest, journal, remember, verify  # noqa: E402
from evalledger.suites.capture.writer import CaptureWriter  # noqa: E402

WARMUP = 5
RUNS_PER_BLOCK = 100


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def backend_cpu(*conns: psycopg.Connection) -> float | None:
    """CPU seconds the server processes behind conns have used so far (None: not a server on this machine).
    On a machine shared with other work, wall-clock rates swing with the load; CPU spent does not."""
    total = 0.0
    for conn in conns:
        stat = Path(f"/proc/{conn.info.backend_pid}/stat")
        if not stat.exists():
            return None
        fields = stat.read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def drop_journal(dsn: str, manifest_only: bool = False) -> None:
    """The journal's triggers gone from this database (its event triggers lifted meanwhile); or only the
    manifest's (manifest_only: every row still journalled, no completion journals a manifest)."""
    journal_too = "" if manifest_only else "t.tgname LIKE '%\\_90\\_journal%' OR "
    with psycopg.connect(dsn, autocommit=True) as admin:
        names = admin.execute("SELECT format('DROP TRIGGER %I ON %s', t.tgname, t.tgrelid::regclass) FROM pg_trigger t "
                              f"WHERE ({journal_too}t.tgname LIKE '%\\_95\\_manifest%') "
                              "AND NOT t.tgisinternal").fetchall()
        with admin.transaction():
            admin.execute("ALTER EVENT TRIGGER evalledger_drop_guard_v1 DISABLE")
            for (statement,) in names:
                admin.execute(statement)
            admin.execute("ALTER EVENT TRIGGER evalledger_drop_guard_v1 ENABLE ALWAYS")


def runner_writes(dsns: dict[str, str], runs: int) -> tuple[dict[str, ledger_writes.WritePath], dict]:
    """The paths, and the server CPU seconds each spent on the counted runs."""
    paths = {}
    for name, dsn in dsns.items():
        paths[name] = ledger_writes.WritePath(name, dsn, ledger_writes.GUARDED, ledger_writes.prepare(dsn), "on")
    order = list(paths.values())
    cpu = {}
    for n in range(runs + WARMUP):
        if n == WARMUP:
            cpu = {p.name: backend_cpu(p.runner, p.reviewer) for p in order}
        for path in (order if n % 2 == 0 else order[::-1]):
            path.one_run(count=n >= WARMUP)
    spent = {p.name: (None if cpu.get(p.name) is None else backend_cpu(p.runner, p.reviewer) - cpu[p.name])
             for p in order}
    for path in order:
        path.close()
    return paths, spent


def capture_writes(dsns: dict[str, str], rows: int, home: Path) -> tuple[dict[str, float], dict]:
    """Rows/s of each database's writer, and the server CPU seconds each spent on the counted batches."""
    batch = [capture_row(i) for i in range(1000)]
    writers = {name: CaptureWriter(dsn, home=home / name, background=False) for name, dsn in dsns.items()}
    seconds = dict.fromkeys(dsns, 0.0)
    cpu: dict = {}
    names = list(dsns)
    for n in range(rows // 1000 + 2):
        if n == 2:  # after two warm-up batches each
            cpu = {name: backend_cpu(writers[name]._conn) for name in names}
        for name in (names if n % 2 == 0 else names[::-1]):
            t0 = time.perf_counter()
            writers[name].write([dict(r) for r in batch])
            if n >= 2:
                seconds[name] += time.perf_counter() - t0
    spent = {name: (None if cpu.get(name) is None else backend_cpu(writers[name]._conn) - cpu[name]) for name in names}
    for writer in writers.values():
        writer.close(0)
    return {name: (rows // 1000) * 1000 / s for name, s in seconds.items()}, spent


@contextlib.contextmanager
def guards_lifted(admin, tables: list[str]):
    """The guards of tables lifted (the journal's triggers and the manifest's left on), so rows can be written
    in bulk with their computed columns supplied: every row written is still journalled, every run completed
    has its manifest."""
    names = [f"evalledger.{t}" for t in tables]
    admin.execute("UPDATE pg_catalog.pg_trigger SET tgenabled = 'D' WHERE tgrelid = ANY(%s::regclass[]) "
                  "AND NOT tgisinternal AND tgname NOT LIKE '%%\\_90\\_journal%%' "
                  "AND tgname NOT LIKE '%%\\_95\\_manifest%%'", (names,))
    admin.execute("UPDATE pg_catalog.pg_class SET relhastriggers = true WHERE oid = ANY(%s::regclass[])", (names,))
    try:
        yield
    finally:
        admin.execute("UPDATE pg_catalog.pg_trigger SET tgenabled = 'A' WHERE tgrelid = ANY(%s::regclass[]) "
                      "AND NOT tgisinternal", (names,))
        admin.execute("UPDATE pg_catalog.pg_class SET relhastriggers = true WHERE oid = ANY(%s::regclass[])", (names,))


BULK = """
WITH runs AS (
    INSERT INTO evalledger.brain_eval_log (eval_run_id, run_trigger, brain_under_test, model_id, system_prompt_hash,
        brain_view_contracts_hash, question_catalog_version, question_count, started_at, completed_at,
        reviewer_user_id, reviewer_independence_verified, aggregated_scores, hard_criteria_passed,
        soft_criteria_passed_count, decision, decision_rationale, token_cost_usd, reviewer_hours_spent, rubric_id)
    SELECT gen_random_uuid(), 'quarterly', 'AGT-901', 'claude-sonnet-4-6', %(hash)s, repeat('b', 64), 'v28-2026Q2', 30,
           now(), now(), %(reviewer)s, true,
           '{"citation_rate": 1, "hallucination_rate": 0, "staleness_recognition_rate": 1, "diagnosis_accuracy_mean": 1,
             "lever_mapping_correctness": null, "confidence_calibration_in_band": 1, "narrative_coherence_mean": 5}',
           true, 4, 'pass', 'Pass: all hard criteria passed; all 4 soft criteria within threshold.', 0.3750, 2.50,
           %(rubric)s
      FROM generate_series(1, %(runs)s)
    RETURNING eval_run_id, created_at),
analyses AS (
    INSERT INTO evalledger.brain_analysis_log (analysis_id, brain, model_id, system_prompt_hash, question_id, question,
        output, token_cost_usd)
    SELECT gen_random_uuid(), 'AGT-901', 'claude-sonnet-4-6', %(hash)s, 'Q' || q, 'question ' || q,
           'the answer to question ' || q || ' of run ' || r.eval_run_id, 0.0125
      FROM runs r CROSS JOIN generate_series(1, 30) q
    RETURNING analysis_id, question_id, substring(output FROM ' of run (.*)$')::uuid AS eval_run_id)
INSERT INTO evalledger.brain_eval_question_score (eval_run_id, question_id, brain_analysis_id, question_type,
    uses_stale_fixture, citation_rate, hallucinations_detected, total_claims, diagnosis_accuracy_score,
    confidence_distribution, narrative_coherence_rating, question_passed, run_created_at, run_reviewer_user_id)
SELECT a.eval_run_id, a.question_id, a.analysis_id, 'plan_diagnosis', false, 1, 0, 10, 1.0,
       '{"high_confidence_pct": 60, "multi_source_pct": 50, "inference_pct": 30, "speculation_pct": 5}', 5, true,
       r.created_at, %(reviewer)s
  FROM analyses a JOIN runs r USING (eval_run_id)
"""
BULK_TABLES = ["brain_eval_log", "brain_analysis_log", "brain_eval_question_score"]


def bulk_runs(dsn: str, runs: int) -> tuple[int, float]:
    """runs completed 30-question runs written with the journal on, sealed every RUNS_PER_BLOCK; blocks, seconds."""
    with psycopg.connect(dsn, autocommit=True) as admin:
        reviewer = admin.execute("SELECT reviewer_user_id FROM evalledger.reviewer LIMIT 1").fetchone()[0]
        rubric = admin.execute("SELECT rubric_id FROM evalledger.rubric WHERE suite = 'brain-eval'").fetchone()[0]
        started = time.perf_counter()
        with guards_lifted(admin, BULK_TABLES):
            for done in range(0, runs, RUNS_PER_BLOCK):
                with admin.transaction():
                    admin.execute(BULK, {"hash": ledger_writes.PROMPT_HASH, "reviewer": reviewer, "rubric": rubric,
                                         "runs": min(RUNS_PER_BLOCK, runs - done)})
                digest.seal(admin)
        blocks = admin.execute("SELECT count(*) FROM evalledger.ledger_block").fetchone()[0]
    return blocks, time.perf_counter() - started


def timed_verify(dsn: str, recompute: bool = False, manifests: bool = True) -> tuple[verify.Report, float, float | None]:
    """verify as the owner role (with --recompute; without its manifest check, as a baseline); its report, the
    CPU seconds this process spent, and its server session's."""
    from evalledger.ledger import manifests as checking

    kept = checking.Runs.manifest, checking.Runs.row, checking.Runs.findings
    if not manifests:
        checking.Runs.manifest = checking.Runs.row = lambda *_: None
        checking.Runs.findings = lambda *_: []
    try:
        with psycopg.connect(dsn) as conn:
            conn.execute("SET ROLE evalledger_owner")
            journal.prepare(conn)
            conn.commit()
            client, server = time.process_time(), backend_cpu(conn)
            report = verify.verify(conn, [], recompute=recompute)
            return report, time.process_time() - client, None if server is None else backend_cpu(conn) - server
    finally:
        checking.Runs.manifest, checking.Runs.row, checking.Runs.findings = kept


def timed_seal(dsn: str, entries: int) -> tuple[dict, float]:
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute("INSERT INTO evalledger.target (target_id, kind, display_name) VALUES ('AGT-SEAL', 'bot', 'seal')")
        with admin.transaction():
            admin.execute("INSERT INTO evalledger.brain_analysis_log (brain, origin, model_id, system_prompt_hash, "
                          "question, output, token_cost_usd) SELECT 'AGT-SEAL', 'production', 'm', repeat('a', 64), "
                          "'q ' || g, 'a ' || g, 0 FROM generate_series(1, %s) g", (entries,))
        started = time.perf_counter()
        sealed = digest.seal(admin)
        return sealed, time.perf_counter() - started


def manifest_cost(dsn: str, rounds: int = 5) -> tuple[int, float]:
    """The completed runs of the runner's writes, and the milliseconds a manifest of one takes to compute (the
    median of `rounds` rounds over every run, each round's mean: a completion's session has it planned)."""
    with psycopg.connect(dsn) as conn:
        runs = [r[0] for r in conn.execute("SELECT eval_run_id FROM evalledger.brain_eval_log "
                                           "WHERE completed_at IS NOT NULL AND question_count = 30")]
        means = []
        for _ in range(rounds):
            started = time.perf_counter()
            for run in runs:
                conn.execute("SELECT row_count FROM evalledger.brain_eval_manifest_v1(%s)", (run,)).fetchone()
            means.append((time.perf_counter() - started) / max(len(runs), 1) * 1000)
        return len(runs), median(means)


def grow_blocks(dsn: str, wanted: int) -> int:
    """Seal blocks until the ledger has `wanted` (each over one journalled row, as a completion's block would be)."""
    with psycopg.connect(dsn, autocommit=True) as admin:
        have = admin.execute("SELECT count(*) FROM evalledger.ledger_block").fetchone()[0]
        for n in range(have, wanted):
            admin.execute("INSERT INTO evalledger.target (target_id, kind, display_name) VALUES (%s, 'bot', 'reader')",
                          (f"AGT-R{n}",))
            digest.seal(admin, 0)
        return admin.execute("SELECT count(*) FROM evalledger.ledger_block").fetchone()[0]


def median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def timed_reader(dsn: str, home: Path, rounds: int = 15) -> tuple[float, float, float]:
    """Milliseconds (medians) of the reader's check with a digest remembered one block back, of the same when
    nothing new was sealed, and of a `report` built as the auditor (the baseline), on one connection."""
    from evalledger.bi import report
    from evalledger.bi.filters import Filters

    os.environ["EVALLEDGER_HOME"] = str(home / "reader")
    grown, same, built = [], [], []
    with psycopg.connect(dsn) as conn:
        conn.execute("SET ROLE evalledger_auditor")
        conn.commit()
        for _ in range(rounds):
            seen = remember.check_reader(conn, remember=True)
            conn.commit()
            # As if the reader had read one block ago: the digest, hashes and compact range of all blocks but one.
            joined = remember.heads(conn)[1][:-32]
            conn.commit()
            frontier = remember._grow([], remember.split(joined))
            behind = {**seen, "ledger_size": len(joined) // 32, "block": len(joined) // 32,
                      "block_hash": joined[-32:].hex(), "ledger_root": remember._root(frontier).hex(),
                      "frontier": [[size, node.hex()] for size, node in frontier]}
            remember._write(remember.seen_path(seen["ledger_id"], conn), behind, joined)
            t0 = time.perf_counter()
            remember.check_reader(conn, remember=True)
            conn.commit()
            grown.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            remember.check_reader(conn, remember=True)
            conn.commit()
            same.append(time.perf_counter() - t0)
        for _ in range(3):
            t0 = time.perf_counter()
            filters = Filters.parse(None, None, None, None, [])
            report.build(conn, filters, "evalledger_auditor", "bench")
            conn.rollback()
            built.append(time.perf_counter() - t0)
    return median(grown) * 1000, median(same) * 1000, median(built) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=60, help="runs through the write lifecycle on each database")
    parser.add_argument("--capture-rows", type=int, default=30_000, help="captured rows written on each database")
    parser.add_argument("--verify-runs", type=int, default=10_000, help="completed 30-question runs verify reads")
    parser.add_argument("--seal-entries", type=int, default=100_000, help="journal entries one seal closes")
    parser.add_argument("--reader-blocks", type=int, default=10_000,
                        help="blocks in the ledger the reader's check reads (one per completed run)")
    args = parser.parse_args()
    started = time.perf_counter()
    home = Path(tempfile.mkdtemp(prefix="evalledger-bench-journal-"))
    with scratch.server() as url, scratch.migrated_database(url, "evalledger_bench_journal") as journalled, \
            scratch.migrated_database(url, "evalledger_bench_unjournalled") as unjournalled, \
            scratch.migrated_database(url, "evalledger_bench_unmanifested") as unmanifested:
        try:
            drop_journal(unjournalled)
            drop_journal(unmanifested, manifest_only=True)
            dsns = {"journal": journalled, "none": unjournalled, "no manifest": unmanifested}
            with psycopg.connect(journalled) as conn:
                version = conn.execute("SHOW server_version").fetchone()[0]
            print(f"journal bench: PostgreSQL {version}; load average at start {load()}")

            paths, cpu = runner_writes(dsns, args.runs)
            # The lifecycle's steps as bench/ledger_writes.py names and times them (one definition).
            steps = {**ledger_writes.LIFECYCLE, "whole lifecycle": ledger_writes.WritePath.STEPS}
            print(f"runner's writes: {args.runs} runs x 30 questions on each database, alternating "
                  f"(+{WARMUP} warm-up runs each); load {load()}")
            print(f"  {'runs/s':46}{'journal':>10}{'none':>10}{'ratio':>8}")
            for label, names in steps.items():
                rate = {n: p.runs / p.step_s(*names) for n, p in paths.items()}
                print(f"  {label:46}{rate['journal']:>10.1f}{rate['none']:>10.1f}{rate['journal'] / rate['none']:>8.2f}")
            if cpu["journal"] is not None:
                per_run = {n: cpu[n] / args.runs * 1000 for n in cpu}
                label = "server CPU ms per run (runner + reviewer)"
                print(f"  {label:46}{per_run['journal']:>10.1f}{per_run['none']:>10.1f}"
                      f"{per_run['none'] / per_run['journal']:>8.2f}")

            runs, per_manifest = manifest_cost(journalled)
            print(f"manifest: {per_manifest:.2f} ms to compute one (over the {runs} runs of 30 questions above)")
            completion = ledger_writes.LIFECYCLE["completion (runner)"]
            with_, without = (paths[n].runs / paths[n].step_s(*completion) for n in ("journal", "no manifest"))
            print(f"  completion (its COMMIT, where the manifest is journalled): {with_:.1f} runs/s with the manifest, "
                  f"{without:.1f} without (journalled alike): ratio {with_ / without:.2f}, "
                  f"{(1 / with_ - 1 / without) * 1000:+.2f} ms per completion")

            rates, cpu = capture_writes({n: dsns[n] for n in ("journal", "none")}, args.capture_rows, home)
            print(f"capture writer: {args.capture_rows} rows in batches of 1000 on each database; load {load()}")
            print(f"  rows/s  journal {rates['journal']:,.0f}  none {rates['none']:,.0f}  "
                  f"ratio {rates['journal'] / rates['none']:.2f}")
            if cpu["journal"] is not None:
                per_row = {n: cpu[n] / args.capture_rows * 1e6 for n in cpu}
                print(f"  server CPU us per row  journal {per_row['journal']:.1f}  none {per_row['none']:.1f}  "
                      f"ratio {per_row['none'] / per_row['journal']:.2f}")

            blocks, built = bulk_runs(journalled, args.verify_runs)
            report, client_cpu, server_cpu = timed_verify(journalled)
            print(f"verify: {args.verify_runs} completed runs x 30 questions (+ the runs above), {report.rows:,} rows, "
                  f"{report.entries:,} journal entries in {blocks} blocks (written in {built:.0f} s); load {load()}")
            print(f"  {report.seconds:.1f} s = {report.rows / report.seconds:,.0f} rows/s, "
                  f"{report.entries / report.seconds:,.0f} entries/s; verified {report.verified}"
                  f"{'' if report.verified else ' (' + report.findings[0].line() + ')'}")
            print(f"  CPU: verify's process {client_cpu:.1f} s"
                  + ("" if server_cpu is None else f", its server session {server_cpu:.1f} s")
                  + " (the wall clock above is what a machine this loaded gave them)")
            bare, bare_cpu, _ = timed_verify(journalled, manifests=False)
            print(f"  without the manifest check (baseline): {bare.seconds:.1f} s = {bare.rows / bare.seconds:,.0f} rows/s, "
                  f"CPU {bare_cpu:.1f} s; with it / without: wall {report.seconds / bare.seconds:.2f}, "
                  f"CPU {client_cpu / bare_cpu:.2f}")
            again, _, again_server = timed_verify(journalled, recompute=True)
            # The bulk runs' decisions are written, not decided (no sign-off, a staleness rate of no stale question):
            # the recompute names their columns, which costs it nothing to speak of; it re-derives every run either way.
            named = sum(f.kind == "recomputed" for f in again.findings)
            print(f"verify --recompute: {again.seconds:.1f} s = {again.rows / again.seconds:,.0f} rows/s "
                  f"({named:,} computed columns of the bulk runs named, written rather than decided); "
                  f"/ verify: {again.seconds / report.seconds:.2f}"
                  + ("" if again_server is None else f"; its server session's CPU {again_server:.1f} s")
                  + f"; load {load()}")

            sealed, seconds = timed_seal(journalled, args.seal_entries)
            print(f"seal: one block of {sealed['entries']:,} entries in {seconds:.2f} s "
                  f"({sealed['entries'] / seconds:,.0f} entries/s); load {load()}")
            blocks = grow_blocks(journalled, args.reader_blocks)
            grown, same, baseline = timed_reader(journalled, home)
            print(f"reader: the check before a read, on a ledger of {blocks:,} blocks; load {load()}")
            print(f"  {grown:.1f} ms with one block new since the digest it remembers, {same:.1f} ms with none "
                  f"(aim < 50); a report as the auditor {baseline:.0f} ms: ratio check / report "
                  f"{grown / baseline:.3f}")
            print(f"  wall time {time.perf_counter() - started:.0f} s")
        finally:
            shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
