"""`run replay`: captured queries asked again of a brain version, and the drift the database decides.

A run is found again by what was asked (the brain version, the adapter, and the window's filters as
typed, or the file's digest): while one is open, running the same command again resumes it, over
the window it resolved when it started, and asks only the captured rows it has not recorded (a
query whose answer, decline or failure is recorded is never asked again). When none is open, a new
run resolves its window now (its end is the export bound, so ``--since`` set to the end a run
printed continues exactly where it stopped); the same brain, adapter and resolved window or file
replayed again reads that run back. While a runner works on a run it holds the run's claim
(core/claims.py): a second runner of the same run waits, then finds every query recorded.
"""

from __future__ import annotations

import json
import queue
import sys
import threading
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Callable

import psycopg

from evalledger.core import db, files
from evalledger.core.embedded import evalledger_home
from evalledger.core.errors import EXIT_FAIL, EXIT_INCONCLUSIVE, EXIT_OK, EvalledgerError
from evalledger.core.output import plural
from evalledger.core.windows import Since, iso

from . import adapters as adapting, captured as capturing, store

SUITE = store.SUITE
EXIT_CODES = {"pass": EXIT_OK, "fail": EXIT_FAIL, "inconclusive": EXIT_INCONCLUSIVE}


@dataclass
class ReplayOptions:
    """What `run replay` was asked for."""

    brain_version: str
    command: str | None = None
    url: str | None = None
    python: str | None = None
    from_file: Path | None = None
    since: Since | None = None
    since_text: str | None = None
    until: datetime | None = None
    until_text: str | None = None
    tool: str | None = None
    limit: int | None = None
    remote: bool = False
    timeout_s: float = 30.0
    concurrency: int = 4


@dataclass
class Outcome:
    """The run as the database decided it: the --json document, and where its receipt is."""

    document: dict
    path: Path | None = None
    already_recorded: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.document["decision"]]


def _check(opts: ReplayOptions) -> None:
    if not opts.brain_version.strip():
        raise EvalledgerError("--brain-version: a label naming what answered, not blank")
    if opts.from_file is not None:
        given = [name for name, value in (("--since", opts.since), ("--until", opts.until), ("--tool", opts.tool),
                                          ("--limit", opts.limit), ("--remote", opts.remote or None))
                 if value is not None]
        if given:
            raise EvalledgerError(f"{', '.join(given)}: a window of the ledger's captured rows, not of --from "
                                  f"{opts.from_file}")
    if opts.concurrency < 1:
        raise EvalledgerError(f"--concurrency must be at least 1, got {opts.concurrency}")


def _values(opts: ReplayOptions, adapter: adapting.Adapter, export: capturing.ExportFile | None) -> dict:
    """The run's columns but its resolved window."""
    if export is not None:
        request = {"from_sha256": export.sha256}
    else:
        request = {"since": opts.since_text, "until": opts.until_text, "tool": opts.tool, "limit": opts.limit,
                   "remote": True if opts.remote else None}
    return {"brain_version": opts.brain_version, "adapter_kind": adapter.kind, "adapter": adapter.identity,
            "source": "file" if export is not None else "ledger", "request": request,
            "since_at": None, "until_at": None, "tool": None if export else opts.tool,
            "remote": True if (opts.remote and export is None) else None,
            "max_rows": None if export else opts.limit,
            "file_sha256": export.sha256 if export else None, "planned": len(export.rows) if export else None}


def _find_or_start(conn, opts: ReplayOptions, values: dict, say) -> dict:
    """The open run of this request, else a new one over the window resolved now, else (that window
    replayed already by this brain and adapter) that run."""
    row, bound = store.open_run_and_bound(conn, values)
    if row is not None:
        return {**row, "created": False}
    if values["source"] == "ledger":
        until = min(opts.until, bound) if opts.until is not None else bound
        since = opts.since.resolve(bound) if opts.since is not None else None
        if since is not None and since >= until:
            raise EvalledgerError(f"--since {iso(since)} is not before the window's end {iso(until)}"
                                  f"{' (--until)' if opts.until is not None and opts.until <= bound else ' (now)'}: "
                                  "the window [since, until) would be empty")
        values = {**values, "since_at": since, "until_at": until}
    # A run of this request the runner left open past the hot tier is closed by the start (the
    # database says so in a notice, shown as it comes).
    def closed(diag) -> None:
        if (diag.message_primary or "").startswith("evalledger: "):
            say(diag.message_primary.removeprefix("evalledger: "))

    conn.add_notice_handler(closed)
    try:
        row = store.start_run(conn, values)
    finally:
        conn.remove_notice_handler(closed)
    if row is not None:
        return row
    row = store.open_run(conn, values) or store.same_window_run(conn, values)
    if row is None:
        # What is left: the same brain and adapter's run of the same window or file, recorded before
        # the tier this role reads (a run left open so long was closed by the start above).
        raise EvalledgerError(f"brain {opts.brain_version} through {values['adapter_kind']} {values['adapter']} "
                              "replayed this window (or file) in a run recorded before the hot tier this role "
                              "reads: it cannot be read back here (an auditor reads it); replay another window, "
                              "or name another --brain-version")
    return {**row, "created": False}


def run(opts: ReplayOptions, *, say: Callable[[str], None]) -> Outcome:
    """Replay end to end; `say` prints a progress line (or not)."""
    from evalledger.core import claims

    _check(opts)
    export = capturing.read_export(opts.from_file) if opts.from_file is not None else None
    adapter = adapting.adapter(opts.command, opts.url, opts.python, opts.timeout_s)
    values = _values(opts, adapter, export)
    # The claim's connection is opened (its session set for a claim) while this one finds or
    # starts the run: two connections' set-up (a server process each) paid at once, not one after
    # the other, before the first query.
    claim_conn = _Opening(claims.connect)
    conn = None
    try:
        conn = db.connect(role="runner", autocommit=True)
        run_row = _find_or_start(conn, opts, values, say)
        run_id = run_row["replay_run_id"]
        with claims.claimed(store.QUERIES["claim_run"], run_id, suite="replay", conn=claim_conn.get(),
                            waiting=lambda: say(f"replay run {run_id} is being replayed by another runner: "
                                                "waiting for it")):
            # What the run is, what it recorded and (a ledger window, fixed at its start) what it
            # replays, read once the claim is held: after any other runner of it is done.
            state, done, window = store.claimed_run(conn, run_id, run_row if export is None else None)
            if state["completed_at"] is not None:
                say(f"replay run {run_id} of this window was recorded earlier: reading it back, no query asked")
                return _outcome(conn, state, already=True)
            where = (f"{export.path} ({plural(len(export.rows), 'row')})" if export is not None else
                     f"the ledger's captured rows of [{iso(state['since_at'])}, {iso(state['until_at'])})")
            say(f"replay: {where}; brain {opts.brain_version} through {adapter.kind} {adapter.identity}; "
                f"run {run_id}")
            rows = export.rows if export is not None else [capturing.from_ledger(r) for r in window]
            todo = [r for r in rows if r.id not in done]
            if not run_row.get("created", False):
                say(f"replay run {run_id} was started earlier and is open: resuming it, "
                    f"{plural(len(todo), 'query', 'queries')} not asked yet")
            _ask_all(conn, run_id, adapter, todo, opts.concurrency, say)
            return _complete(conn, run_id)
    except psycopg.Error as exc:
        raise db.explain(exc, next_step="run the same command again: it resumes the run") from None
    finally:
        claim_conn.close()
        if conn is not None:
            conn.close()


class _Opening:
    """A connection being opened (by `opener`) in a thread of its own; get() waits for it (and
    raises what opening it raised), close() closes it unless get() handed it on."""

    def __init__(self, opener: Callable[[], psycopg.Connection]):
        self._opener = opener
        self._done = threading.Event()
        self._conn = None
        self._error: BaseException | None = None
        self._taken = False
        threading.Thread(target=self._open, daemon=True).start()

    def _open(self) -> None:
        try:
            self._conn = self._opener()
        except BaseException as exc:  # noqa: BLE001 - raised by get(), in the caller's thread
            self._error = exc
        finally:
            self._done.set()

    def get(self):
        self._done.wait()
        if self._error is not None:
            raise self._error
        self._taken = True
        return self._conn

    def close(self) -> None:
        self._done.wait()
        if self._conn is not None and not self._taken:
            self._conn.close()


RECORDERS = 4  # connections recording answers at once, so a fast brain is not kept waiting by one
BATCH = 50  # answers that arrived together are recorded in one transaction: one commit's wait, not 50
BACKLOG = 25  # answers waiting to be recorded that bring in one more recorder (up to RECORDERS)


def _ask_all(conn, run_id: int, adapter: adapting.Adapter, todo: list[capturing.Captured], concurrency: int,
             say: Callable[[str], None]) -> None:
    """Ask every row (at most `concurrency` at once) and record each answer as it comes, on up to
    RECORDERS connections: the run's own, and one more (opening its own connection) each time
    more than BACKLOG answers wait for the ones there are, so a database that keeps pace costs no
    connection's set-up (a server process, its caches) while the brain is asked, and one that
    falls behind gets help. Each recorder takes its share of what has arrived, up to BATCH
    answers, and records them in one transaction, their INSERTs sent in one pipeline, so a slow
    commit and a round trip are paid once for all of them. An answer is asked again only if it
    never reached the ledger (a kill before its commit). The first error stops the run (what was
    recorded stays, and the same command again resumes it)."""
    if not todo:
        return
    answers: queue.Queue = queue.Queue()
    done = object()
    errors: list[BaseException] = []

    def record_batch(connection, batch: list) -> None:
        for (row, reply), found in zip(batch, store.record_many(connection, run_id, batch)):
            if found is None:
                say(f"capture {row.id}: recorded already")
            elif found["status"] == "replayed":
                say(f"capture {row.id}: replayed, recall {float(found['recall']):.3f}")
            else:
                say(f"capture {row.id}: {found['status'].replace('_', ' ')}: {reply.error or 'another mode'}")

    opened: list = []

    def recorder(connection) -> None:
        try:
            if connection is None:  # another recorder's own, opened here while the brain is asked
                connection = db.connect(role="runner", autocommit=True)
                with lock:
                    opened.append(connection)
            while True:
                first = answers.get()
                if first is done:
                    answers.put(done)  # the others' signal too
                    return
                batch = [first]
                # What has arrived, shared among the recorders: the last answers of a wave are
                # recorded side by side, not one after another on one connection.
                share = min(BATCH, max(1, -(-(answers.qsize() + 1) // len(threads))))
                while len(batch) < share:
                    try:
                        more = answers.get_nowait()
                    except queue.Empty:
                        break
                    if more is done:
                        answers.put(done)  # the others' signal too
                        break
                    batch.append(more)
                record_batch(connection, batch)
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread, which raises it
            errors.append(exc)

    most = min(RECORDERS, concurrency, len(todo))
    lock = threading.Lock()
    threads: list[threading.Thread] = []

    def add_recorder(connection) -> None:
        threads.append(threading.Thread(target=recorder, args=(connection,), daemon=True))
        threads[-1].start()

    add_recorder(conn)
    asking = ThreadPoolExecutor(max_workers=min(concurrency, len(todo)))
    answered = False
    try:
        asked = {asking.submit(adapter.ask, row.request()): row for row in todo}
        for future in as_completed(asked):
            if errors:
                break
            answers.put((asked[future], future.result()))
            if len(threads) < most and answers.qsize() > BACKLOG:
                add_recorder(None)
        answered = not errors
    finally:
        answers.put(done)  # the recorders finish what they have now, while the askers' threads end
        # Every query answered: the askers' idle threads end on their own. Otherwise the queries
        # not started are cancelled and those asked are waited for, as before the error.
        asking.shutdown(wait=not answered, cancel_futures=True)
        for thread in threads:
            thread.join()
        for other in opened:
            other.close()
    if errors:
        raise errors[0]


def _number(value):
    return None if value is None else float(value)


def document(state: dict, queries: list[dict]) -> dict:
    """The --json document of a completed run (docs/replay.md)."""
    summary = state["summary"] or {}
    return {
        "replay_run_id": state["replay_run_id"], "decision": state["decision"], "rationale": state["rationale"],
        "brain_version": state["brain_version"], "adapter": f"{state['adapter_kind']}:{state['adapter']}",
        "rubric_version": state["rubric_version"],
        "window": {"source": state["source"], "since": iso(state["since_at"]) if state["since_at"] else None,
                   "until": iso(state["until_at"]) if state["until_at"] else None,
                   "next_since": iso(state["until_at"]) if state["until_at"] else None},
        "summary": {k: (_number(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v)
                    for k, v in summary.items() if k not in ("decision", "rationale")},
        "queries": [{"capture_id": q["capture_id"], "recall": q["recall"], "jaccard": q["jaccard"], "rbo": q["rbo"],
                     "sources_gained": q["sources_gained"], "sources_lost": q["sources_lost"],
                     "latency_ratio": q["latency_ratio"], "status": q["status"],
                     **({"error": q["error"]} if q["error"] else {})} for q in queries],
    }


def _outcome(conn, state: dict, already: bool = False) -> Outcome:
    doc = document(state, store.run_queries(conn, state["replay_run_id"]))
    return Outcome(doc, save(doc), already_recorded=already)


def _complete(conn, run_id: int) -> Outcome:
    """Complete the run and read it back in one transaction (one round trip), then commit it while
    its receipt is written beside its place and fsynced; the receipt takes its place (a rename, the
    folder fsynced) only once the completion is committed, so no receipt shows a decision the
    ledger does not hold, and both are durable before the command says done."""
    conn.autocommit = False
    state, queries = store.complete_run(conn, run_id)
    doc = document(state, queries)
    staging: dict = {}

    def stage() -> None:
        try:
            staging["file"] = _stage(doc)
        except BaseException as exc:  # noqa: BLE001 - raised by the caller's thread
            staging["error"] = exc

    writer = threading.Thread(target=stage, daemon=True)
    writer.start()
    try:
        conn.commit()
    except BaseException:
        writer.join()
        if staging.get("file") is not None:
            staging["file"].discard()
        raise
    writer.join()
    if "error" in staging:
        raise staging["error"]
    staged = staging["file"]
    try:
        if staged is not None:
            staged.publish()
    except OSError as exc:
        _cannot_write(staged.path, exc)
        staged = None
    return Outcome(doc, staged.path if staged is not None else None)


def receipts_dir() -> Path:
    """$EVALLEDGER_HOME/eval-receipts, where every suite's receipts go."""
    return evalledger_home() / "eval-receipts"


def _cannot_write(path: Path, exc: OSError) -> None:
    print(f"evalledger: warning: receipt {path}: cannot write it ({exc.strerror or exc})", file=sys.stderr)


def _stage(doc: dict) -> files.Staged | None:
    """The receipt replay-<run id>.json written and fsynced beside its place (publish() puts it
    there); None when it cannot be written."""
    path = receipts_dir() / f"{SUITE}-{doc['replay_run_id']}.json"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return files.Staged(path, json.dumps(doc, indent=2) + "\n")
    except OSError as exc:
        _cannot_write(path, exc)
        return None


def save(doc: dict) -> Path | None:
    """The receipt file replay-<run id>.json (the --json document); None when it cannot be written."""
    staged = _stage(doc)
    if staged is None:
        return None
    try:
        staged.publish()
    except OSError as exc:
        _cannot_write(staged.path, exc)
        return None
    return staged.path
