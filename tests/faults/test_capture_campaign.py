"""The fault campaign's capture part: `capture import`, the capture client's flush and spool and
`capture replay`, each SIGKILLed at moments the campaign's seed draws, and the client's spool on a
64 KiB disk and on a read-only home. After each fault the same command again resumes, and counts in
SQL prove every row stored once and every acknowledged row present."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import threading
import time
import uuid

import pytest

from tests.cli import SCRIPT, run_cli
from tests.faults.conftest import assert_verified, one
from tests.outages import killed_when, unreachable

pytestmark = [pytest.mark.faults]

KEYS = uuid.UUID("0f6a3a52-52d4-4a43-9c1e-6a4e1b0d5c11")


def stored(admin) -> tuple[int, int, int]:
    """Rows, distinct capture keys and distinct queries in the ledger."""
    return admin.execute("SELECT count(*), count(DISTINCT capture_key), count(DISTINCT query) "
                         "FROM evalledger.eval_candidates").fetchone()


def rows(admin) -> int:
    return one(admin, "SELECT count(*) FROM evalledger.eval_candidates")


# -- capture import ----------------------------------------------------------------------------


def test_capture_import_killed_at_random_resumes_and_stores_every_line_once(dsn, admin, tmp_path, faults):
    total = faults.randint(5000, 9000)
    log = tmp_path / "capture.ndjson"
    log.write_text("".join(json.dumps({"tool_name": faults.choice(["query", "search"]), "query": f"line {i} of the log",
                                       "vector_enabled": True, "latency_ms": i % 97, "remote": False}) + "\n"
                           for i in range(total)))
    env = {"DATABASE_URL": dsn, "EVALLEDGER_HOME": str(tmp_path)}
    argv = [str(SCRIPT), "capture", "import", str(log)]
    kills = 0
    for _ in range(faults.randint(2, 4)):
        before = rows(admin)
        if faults.random() < 0.3:  # while it checks the file, or at the first batch
            after = time.monotonic() + faults.uniform(0.1, 1.2)
            when = lambda: time.monotonic() >= after  # noqa: E731
        else:
            at = before + faults.randint(1, max(1, total - before - 2000))
            when = lambda: rows(admin) >= at  # noqa: E731
        kills += killed_when(argv, env, when)
        assert stored(admin) == (rows(admin),) * 3, "a row stored twice"
    print(f"{kills} kills; {rows(admin)} of {total} rows stored before the last import")
    before = rows(admin)
    again = run_cli("capture", "import", str(log), env=env)
    assert (again.code, again.err) == (0, ""), again.out + again.err
    assert again.out == (f"imported {log}: {total} rows: {total - before} written, {before} already present, "
                         "0 failed\n")
    assert stored(admin) == (total, total, total)
    assert one(admin, "SELECT count(*) FROM evalledger.eval_capture_failures") == 0
    assert_verified(env)


# -- the capture client: flush and spool ----------------------------------------------------

# An application: captures rows start..stop-1 (each with a key of its own), flushing after every
# batch, and prints after each flush which rows it has captured and whether flush() said they are
# all stored or spooled.
CLIENT = r'''
import json, sys, uuid
from pathlib import Path
from evalledger import capture
dsn, home, start, stop, batch, pad = sys.argv[1], Path(sys.argv[2]), *map(int, sys.argv[3:7])
keys = uuid.UUID(sys.argv[7])
capture.configure(enabled=True, dsn=dsn, home=home, batch_size=batch, flush_interval=0.01)
for lo in range(start, stop, batch):
    hi = min(lo + batch, stop)
    for i in range(lo, hi):
        capture.capture_candidate("query", f"client row {i} " + "p" * (i * 7919 % (pad + 1)), vector_enabled=True,
                                  latency_ms=1, remote=False, capture_key=uuid.uuid5(keys, str(i)))
    print(json.dumps({"upto": hi, "ok": capture.flush(30)}), flush=True)
ok = capture.close(30)
print(json.dumps({"closed": ok, **capture.counts().__dict__}), flush=True)
'''


class Client:
    """The application above as a process; acknowledged: the rows below the last `upto` whose
    flush, and every flush before it, said True."""

    def __init__(self, home, total: int, pad: int = 40):
        self.home, self.total, self.pad = home, total, pad
        self.acknowledged = 0
        self.closed: dict | None = None

    def argv(self, dsn: str, start: int, batch: int) -> list[str]:
        return [sys.executable, "-c", CLIENT, dsn, str(self.home), str(start), str(self.total), str(batch),
                str(self.pad), str(KEYS)]

    def run(self, dsn: str, start: int, batch: int, kill_after_acks: int | None = None,
            kill_after_s: float | None = None) -> bool:
        """Run it from row start; SIGKILL it after that many acknowledgements or seconds. True when killed."""
        errors = tempfile.TemporaryFile("w+")
        process = subprocess.Popen(self.argv(dsn, start, batch), stdout=subprocess.PIPE, stderr=errors, text=True)
        timer = threading.Timer(kill_after_s, process.kill) if kill_after_s is not None else None
        if timer:
            timer.start()
        acks, trusted = 0, True
        try:
            for line in process.stdout:
                said = json.loads(line)
                if "closed" in said:
                    self.closed = said
                    continue
                trusted = trusted and said["ok"]
                if trusted:
                    self.acknowledged = max(self.acknowledged, said["upto"])
                acks += 1
                if kill_after_acks is not None and acks >= kill_after_acks:
                    process.kill()
                    break
        finally:
            if timer:
                timer.cancel()
            code = process.wait(60)
        errors.seek(0)
        assert code in (0, -9), errors.read()
        errors.close()
        return code == -9


def queries_present(admin, below: int) -> int:
    """How many of the client's rows 0..below-1 are in the ledger."""
    return one(admin, "SELECT count(DISTINCT capture_key) FROM evalledger.eval_candidates "
                      "WHERE capture_key = ANY(%s)", [uuid.uuid5(KEYS, str(i)) for i in range(below)])


def test_the_capture_client_killed_while_it_writes_or_spools_loses_no_acknowledged_row(
        dsn, admin, tmp_path, faults):
    """Rounds of the application with the database up (it writes) or down (it spools), each killed
    after a drawn number of flushes or a drawn time (mid-insert, mid-append: a torn spool line);
    then `capture replay` and the application once more, unkilled."""
    total = faults.randint(1500, 3000)
    client = Client(tmp_path, total)
    down = unreachable(tmp_path)
    env = {"DATABASE_URL": dsn, "EVALLEDGER_HOME": str(tmp_path)}
    start = 0
    for round_ in range(faults.randint(3, 5)):
        up = faults.random() < 0.4
        batch = faults.choice([1, 7, 50, 200])
        if faults.random() < 0.5:
            killed = client.run(dsn if up else down, start, batch, kill_after_acks=faults.randint(1, 12))
        else:
            killed = client.run(dsn if up else down, start, batch, kill_after_s=faults.uniform(0.2, 1.5))
        print(f"round {round_}: database {'up' if up else 'down'}, batches of {batch}, killed {killed}, "
              f"{client.acknowledged} acknowledged")
        start = client.acknowledged if faults.random() < 0.7 else faults.randint(0, client.acknowledged)
    replay = run_cli("capture", "replay", env=env)
    assert replay.code == 0, replay.out + replay.err
    assert queries_present(admin, client.acknowledged) == client.acknowledged, "an acknowledged row is lost"
    assert stored(admin) == (rows(admin),) * 3, "a row stored twice"
    client.run(dsn, 0, 100)
    assert client.closed is not None and client.closed["closed"] is True, client.closed
    assert stored(admin) == (total, total, total)
    assert_verified(env)


def test_capture_replay_killed_at_random_writes_every_spooled_row_once(dsn, admin, tmp_path, faults):
    total = faults.randint(4000, 7000)
    client = Client(tmp_path, total)
    client.run(unreachable(tmp_path), 0, 1000)
    assert client.closed["spooled"] == total, client.closed
    env = {"DATABASE_URL": dsn, "EVALLEDGER_HOME": str(tmp_path)}
    argv = [str(SCRIPT), "capture", "replay"]
    for _ in range(faults.randint(2, 4)):
        if faults.random() < 0.3:
            after = time.monotonic() + faults.uniform(0.1, 1.0)
            when = lambda: time.monotonic() >= after  # noqa: E731
        else:
            at = rows(admin) + faults.randint(1, max(1, total - rows(admin) - 1500))
            when = lambda: rows(admin) >= at  # noqa: E731
        killed_when(argv, env, when)
        assert stored(admin) == (rows(admin),) * 3, "a row stored twice"
    before = rows(admin)
    again = run_cli("capture", "replay", env=env)
    assert again.code == 0, again.out + again.err
    if before < total:
        assert f": {total - before} rows written, {before} already present" in again.out, again.out
    assert stored(admin) == (total, total, total)
    assert "spool: 0 records waiting" in run_cli("capture", "status", env=env).out
    assert_verified(env)


# -- the spool's disk refuses ---------------------------------------------------------------


def test_a_spool_on_a_64k_disk_acknowledges_only_what_it_kept(dsn, admin, tmp_path, mounted, faults):
    """The database is down and the spool's disk is 64 KiB: flush() says True only while every row
    is spooled; a kill lands at a drawn moment; what was acknowledged is replayed, and the
    application run again with the database up stores every row once."""
    home = mounted(tmp_path / "home", "size=64k")
    total = faults.randint(1500, 2500)
    client = Client(home, total, pad=faults.choice([40, 200, 400]))
    down = unreachable(tmp_path)
    batch = faults.choice([5, 20, 100])
    if faults.random() < 0.5:
        client.run(down, 0, batch, kill_after_acks=faults.randint(1, total // batch))
    else:
        client.run(down, 0, batch)
        assert client.closed["closed"] is False and client.closed["dropped"] > 0, client.closed
    print(f"batches of {batch}, {client.acknowledged} acknowledged, closed: {client.closed}")
    env = {"DATABASE_URL": dsn, "EVALLEDGER_HOME": str(home)}
    replay = run_cli("capture", "replay", env=env)
    assert replay.code == 0, replay.out + replay.err
    assert queries_present(admin, client.acknowledged) == client.acknowledged, "an acknowledged row is lost"
    assert stored(admin) == (rows(admin),) * 3
    client.run(dsn, 0, 100)
    assert client.closed["closed"] is True, client.closed
    assert stored(admin) == (total, total, total)
    assert_verified(env)


def test_a_read_only_home_acknowledges_nothing_while_the_database_is_down(dsn, admin, tmp_path, mounted, faults):
    home = mounted(tmp_path / "home", "size=1m")
    subprocess.run(["mount", "-o", "remount,ro", str(home)], check=True)
    total = faults.randint(200, 600)
    client = Client(home, total)
    client.run(unreachable(tmp_path), 0, faults.choice([1, 10, 100]))
    assert client.acknowledged == 0 and client.closed == {"closed": False, "written": 0, "spooled": 0,
                                                          "dropped": total}
    client.run(dsn, 0, faults.choice([10, 100]))
    assert client.closed["closed"] is True and client.acknowledged == total, client.closed
    assert stored(admin) == (total, total, total)
