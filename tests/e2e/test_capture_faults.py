"""The capture client when the disk refuses, as a user meets it: a spool on a full filesystem or on a
read-only home, a torn line left by a killed process, and an import after an outage. Acknowledged
means stored or spooled: what is in neither place is counted as dropped, and flush() says False."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import time
import uuid

import psycopg
import pytest

from evalledger.suites.capture import api as capture
from evalledger.suites.capture.cli import parse_import
from evalledger.suites.capture.spool import Spool, read_records
from evalledger.suites.capture.writer import CaptureWriter
from tests.cli import run_cli
from tests.outages import mounted, unreachable, wait_until  # noqa: F401 (mounted: a fixture)

ROW = {"tool_name": "query", "query": "hello", "vector_enabled": True, "latency_ms": 3, "remote": False}
REFUSES = "refuses writes"
KEPT_AGAIN = "are kept again"


def count(admin, table="eval_candidates") -> int:
    return admin.execute(f"SELECT count(*) FROM evalledger.{table}").fetchone()[0]


def lines_of(caplog, text: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "evalledger.capture" and text in r.getMessage()]


def test_a_spool_on_a_full_disk_keeps_only_whole_records_and_flush_says_what_was_dropped(
        dsn, admin, tmp_path, mounted, caplog):
    """A 64 KiB tmpfs fills while the database is down: each batch is spooled whole or not at all,
    the rows refused are dropped (counted, flush False, one log line for the outage), nothing is
    in the spool that was not acknowledged, and the replay writes every spooled row."""
    home = mounted(tmp_path / "home", "size=64k")
    caplog.set_level(logging.INFO, logger="evalledger.capture")
    capture.configure(enabled=True, dsn=unreachable(tmp_path), home=home, batch_size=50, flush_interval=0.01)
    before = capture.counts()
    try:
        for i in range(2000):
            capture.capture_candidate("query", f"question {i:04} " + "x" * 200, vector_enabled=True, latency_ms=1,
                                      remote=False)
        assert capture.flush(60) is False
        counts = capture.counts()
    finally:
        assert capture.close(10) is False
    written, spooled, dropped = (counts.written - before.written, counts.spooled - before.spooled,
                                 counts.dropped - before.dropped)
    assert written == 0 and spooled > 0 and dropped > 0
    assert spooled + dropped == 2000
    assert len(lines_of(caplog, REFUSES)) == 1, lines_of(caplog, REFUSES)
    # Every line of the spool is whole, and its rows are exactly those acknowledged as spooled.
    data = (home / "capture" / "spool.ndjson").read_bytes()
    assert data.endswith(b"\n")
    records = [json.loads(line) for line in data.splitlines()]
    assert sum(r["kind"] == "candidate" for r in records) == spooled
    # The count beside the spool says it to another process: doctor.
    env = {"DATABASE_URL": dsn, "EVALLEDGER_HOME": str(home)}
    doctor = run_cli("doctor", env=env)
    assert doctor.code == 0, doctor.out + doctor.err
    [line] = [line for line in doctor.out.splitlines() if "capture dropped" in line]
    assert line.startswith(f"warn  capture dropped: {dropped} captured rows were neither stored nor spooled, from ")
    assert "(the spool refused them: No space left on device (ENOSPC)); they are lost" in line
    replay = run_cli("capture", "replay", env=env)
    assert replay.code == 0, replay.err
    assert replay.out.startswith(f"replayed {len(records)} spooled records: {spooled} rows written, 0 already present")
    assert count(admin) == spooled


def test_the_spool_says_once_when_it_refuses_and_once_when_it_takes_rows_again(tmp_path, mounted, caplog):
    home = mounted(tmp_path / "home", "size=64k")
    caplog.set_level(logging.INFO, logger="evalledger.capture")
    writer = CaptureWriter(unreachable(tmp_path), home=home, background=False)
    for i in range(40):
        writer.write([dict(ROW, query=f"{i} " + "y" * 4000)])
    assert writer.stats.dropped > 0 and writer.stats.spooled > 0
    assert len(lines_of(caplog, REFUSES)) == 1 and lines_of(caplog, KEPT_AGAIN) == []
    # One page more: a small row fits, the large ones still do not. The same outage, not a new one.
    disk = os.statvfs(home)
    subprocess.run(["mount", "-o", f"remount,size={(disk.f_blocks - disk.f_bfree + 1) * disk.f_frsize}",
                    str(home)], check=True)
    spooled = writer.stats.spooled
    writer.write([dict(ROW, query="small")])
    assert writer.stats.spooled == spooled + 1
    writer.write([dict(ROW, query="large " + "y" * 4000)])
    assert writer.stats.spooled == spooled + 1
    assert len(lines_of(caplog, REFUSES)) == 1 and lines_of(caplog, KEPT_AGAIN) == []
    subprocess.run(["mount", "-o", "remount,size=1m", str(home)], check=True)
    for i in range(5):
        writer.write([dict(ROW, query=f"later {i}")])
    [again] = lines_of(caplog, KEPT_AGAIN)
    assert f"; {writer.stats.dropped} were dropped while the spool" in again
    assert len(lines_of(caplog, REFUSES)) == 1
    assert writer.flush(1) is False  # the rows lost before still count: True never hides them
    writer.close(0)


def test_an_outage_that_refused_a_write_larger_than_the_disk_ends_once_the_disk_is_no_longer_nearly_full(
        tmp_path, mounted, caplog):
    """A write larger than the whole filesystem is never taken: its outage ends when the spool takes
    rows on a disk at least half free, and a later outage is said again."""
    home = mounted(tmp_path / "home", "size=64k")
    caplog.set_level(logging.INFO, logger="evalledger.capture")
    writer = CaptureWriter(unreachable(tmp_path), home=home, background=False)
    writer.write([dict(ROW, query=f"{i} " + "y" * 4000) for i in range(20)])  # about 80 KB at once
    assert writer.stats.dropped == 20 and writer.stats.spooled == 0
    assert len(lines_of(caplog, REFUSES)) == 1
    writer.write([dict(ROW, query="small")])
    assert writer.stats.spooled == 1
    [again] = lines_of(caplog, KEPT_AGAIN)
    assert "(the spool takes them); 20 were dropped while the spool" in again
    for i in range(40):  # the disk fills: a second outage, said once
        writer.write([dict(ROW, query=f"again {i:02} " + "y" * 4000)])
    assert writer.stats.dropped > 20
    assert len(lines_of(caplog, REFUSES)) == 2 and len(lines_of(caplog, KEPT_AGAIN)) == 1
    writer.close(0)


@pytest.fixture
def ext4(tmp_path):
    """A 4 MB ext4 filesystem whose half is reserved for root, loop-mounted; unmounted after the test."""
    if os.geteuid() != 0:
        pytest.skip("mounting an ext4 image needs root (CI runs as root)")
    if shutil.which("mkfs.ext4") is None:
        pytest.skip("mkfs.ext4 is not installed (e2fsprogs)")
    image, home = tmp_path / "ext4.img", tmp_path / "home"
    home.mkdir()
    with open(image, "wb") as out:
        out.truncate(4 << 20)
    subprocess.run(["mkfs.ext4", "-q", "-F", "-m", "50", str(image)], check=True, capture_output=True)
    mount = subprocess.run(["mount", "-o", "loop", str(image), str(home)], capture_output=True, text=True)
    if mount.returncode != 0:
        pytest.skip(f"cannot loop-mount an ext4 image here: {mount.stderr.strip()}")
    try:
        yield home
    finally:
        if subprocess.run(["umount", str(home)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(home)], check=False)


def test_a_root_writer_ends_its_outage_in_the_blocks_reserved_for_root(tmp_path, ext4, caplog):
    """Root writes into the blocks ext4 reserves for it, where f_bavail still says 0 bytes free: a
    writer running as root that takes rows again there ends its outage, and says so once."""
    caplog.set_level(logging.INFO, logger="evalledger.capture")
    writer = CaptureWriter(unreachable(tmp_path), home=ext4, background=False)
    try:
        writer.write([dict(ROW, query="first")])  # the spool and the count beside it exist
        filler = ext4 / "filler"
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
        try:  # root fills every block, the reserved ones too
            while True:
                os.write(fd, b"\0" * 4096)
        except OSError:
            pass
        finally:
            os.close(fd)
        os.sync()
        writer.write([dict(ROW, query=f"{i} " + "y" * 4000) for i in range(2)])
        assert writer.stats.dropped == 2 and len(lines_of(caplog, REFUSES)) == 1
        os.truncate(filler, os.path.getsize(filler) - (256 << 10))
        disk = os.statvfs(ext4)
        assert disk.f_bavail == 0 < disk.f_bfree, "the room freed is all in the blocks reserved for root"
        spooled = writer.stats.spooled
        for i in range(5):
            writer.write([dict(ROW, query=f"later {i} " + "y" * 4000)])
        assert writer.stats.spooled == spooled + 5
        [again] = lines_of(caplog, KEPT_AGAIN)
        assert "(the spool takes them); 2 were dropped while the spool" in again
    finally:
        writer.close(0)


def test_a_read_only_home_drops_rows_and_the_ledger_hears_of_it_when_it_answers(dsn, admin, tmp_path, mounted,
                                                                              caplog):
    """Nothing can be written under a read-only EVALLEDGER_HOME, not even the count: the rows are
    dropped, flush() says so, and once the database answers the writer records them there, where
    doctor sees them from any process."""
    home = mounted(tmp_path / "home", "size=1m")
    subprocess.run(["mount", "-o", "remount,ro", str(home)], check=True)
    caplog.set_level(logging.INFO, logger="evalledger.capture")
    writer = capture.configure(enabled=True, dsn=unreachable(tmp_path), home=home, flush_interval=0.01)
    before = capture.counts()
    try:
        for i in range(30):
            capture.capture_candidate("query", f"q{i}", vector_enabled=True, latency_ms=1, remote=False)
        assert capture.flush(30) is False
        assert capture.counts().dropped - before.dropped == 30
        assert capture.counts().spooled == before.spooled
        [refused] = lines_of(caplog, REFUSES)
        assert "Read-only file system (EROFS)" in refused
        writer.dsn = dsn  # the database answers again: the writer reconnects and records the loss
        wait_until(lambda: count(admin, "eval_capture_failures") == 1)
        capture.capture_candidate("query", "after", vector_enabled=True, latency_ms=1, remote=False)
        wait_until(lambda: count(admin) == 1)
        assert capture.flush(10) is False
    finally:
        capture.close(10)
    [(reason, detail)] = admin.execute("SELECT reason, detail FROM evalledger.eval_capture_failures").fetchall()
    assert (reason, detail) == ("other", "30 captured rows dropped: the local spool refused them "
                                         "(Read-only file system (EROFS))")
    doctor = run_cli("doctor", env={"DATABASE_URL": dsn, "EVALLEDGER_HOME": str(home)})
    assert "warn  capture failures: 1 in the last 24 hours (other 1)" in doctor.out
    assert "capture dropped" not in doctor.out  # the home could not hold the count
    assert len(lines_of(caplog, KEPT_AGAIN)) == 1


def test_flush_is_false_with_the_rows_counted_when_the_spool_cannot_be_made(tmp_path):
    """No root needed: a home that is a file refuses the spool's folder."""
    home = tmp_path / "home"
    home.write_text("not a folder")
    writer = CaptureWriter(unreachable(tmp_path), home=home, background=False)
    writer.submit(dict(ROW))
    writer.submit(dict(ROW, query="second"))
    assert writer.flush(1) is False
    assert writer.counts() == type(writer.counts())(written=0, spooled=0, dropped=2)
    assert writer.close(0) is False
    assert home.read_text() == "not a folder"


COUNTING = r'''
import sys
from pathlib import Path
from evalledger.suites.capture.spool import DroppedCount
count = DroppedCount(Path(sys.argv[1]))
for _ in range(50):
    count.add(1, "No space left on device (ENOSPC)")
'''


@pytest.mark.processes
def test_the_dropped_count_adds_up_across_processes_and_doctor_reads_it(tmp_path, monkeypatch):
    """No root needed: four processes count at once into one home; doctor, another process, reads
    the sum; an unreadable count is a warning, not silence."""
    from evalledger.ops.doctor import _capture_dropped

    monkeypatch.setenv("EVALLEDGER_HOME", str(tmp_path))
    assert _capture_dropped() == []
    path = Spool(tmp_path / "capture" / "spool.ndjson").dropped.path
    path.parent.mkdir(mode=0o700)
    counting = [subprocess.Popen([sys.executable, "-c", COUNTING, str(path)]) for _ in range(4)]
    assert [p.wait(60) for p in counting] == [0] * 4
    [finding] = _capture_dropped()
    assert (finding.level, finding.check) == ("warn", "capture dropped")
    assert finding.detail.startswith("200 captured rows were neither stored nor spooled, from ")
    assert finding.detail.endswith(f"(the spool refused them: No space left on device (ENOSPC)); they are lost. "
                                   f"Once the disk is fixed, delete {path} to clear this")
    assert path.stat().st_size == 512
    path.write_text("{not json")
    [finding] = _capture_dropped()
    assert finding.level == "warn" and finding.detail.startswith(f"{path} is unreadable (")
    path.unlink()
    assert _capture_dropped() == []


SPOOLING = r'''
import os, signal, sys
from pathlib import Path
from evalledger.suites.capture.writer import CaptureWriter
writer = CaptureWriter(sys.argv[2], home=Path(sys.argv[1]), background=False)
writer.write([{"tool_name": "query", "query": q, "vector_enabled": True, "latency_ms": 1, "remote": False}
              for q in sys.argv[4:]])
if sys.argv[3] == "killed mid-append":
    fd = os.open(writer.spool.path, os.O_WRONLY | os.O_APPEND)
    os.write(fd, b'{"kind":"candidate","row":{"tool_name":"query","query":"torn')
    os.kill(os.getpid(), signal.SIGKILL)
assert writer.close(0)
'''


@pytest.mark.processes
def test_a_torn_line_from_a_killed_process_costs_a_later_append_nothing(dsn, admin, tmp_path):
    """A process killed mid-append leaves a torn last line; the next process's append starts a new
    line, so `capture replay` skips the torn record only and writes every later row."""
    spool = tmp_path / "capture" / "spool.ndjson"
    down = unreachable(tmp_path)
    killed = subprocess.run([sys.executable, "-c", SPOOLING, str(tmp_path), down, "killed mid-append", "before"],
                            capture_output=True, text=True)
    assert killed.returncode == -9, killed.stderr
    assert not spool.read_bytes().endswith(b"\n")
    later = subprocess.run([sys.executable, "-c", SPOOLING, str(tmp_path), down, "closed", "later 0", "later 1"],
                           capture_output=True, text=True)
    assert later.returncode == 0, later.stderr
    lines = spool.read_bytes().split(b"\n")
    assert lines[2] == b'{"kind":"candidate","row":{"tool_name":"query","query":"torn'
    later_records = [json.loads(line) for line in lines[3:] if line]  # the first is the later outage's db_down
    assert [(r["kind"], r.get("row", {}).get("query")) for r in later_records] == [
        ("failure", None), ("candidate", "later 0"), ("candidate", "later 1")]
    result = run_cli("capture", "replay", env={"DATABASE_URL": dsn, "EVALLEDGER_HOME": str(tmp_path)})
    assert result.code == 0, result.err
    assert sorted(r[0] for r in admin.execute("SELECT query FROM evalledger.eval_candidates")) == [
        "before", "later 0", "later 1"]


def test_a_record_an_older_writer_glued_onto_a_torn_line_is_still_read(tmp_path, caplog):
    """A spool left by a release whose appends did not start a new line after a tear."""
    glued = json.dumps({"kind": "candidate", "row": {"query": "kept"}}, separators=(",", ":")).encode()
    data = b'{"kind":"failure"}\n{"kind":"candidate","row":{"tool_name":"query","query":"to' + glued + b'\n{"n":2}\n'
    caplog.set_level(logging.WARNING, logger="evalledger.capture")
    assert read_records(data) == [{"kind": "failure"}, json.loads(glued), {"n": 2}]
    assert lines_of(caplog, "skipping a torn record on spool line 2")
    assert read_records(b'{"kind":"candidate","row":{"query":"to\n') == []


def test_an_append_the_disk_refuses_leaves_the_spool_as_it_was(tmp_path, mounted):
    home = mounted(tmp_path / "home", "size=8k")
    spool = Spool(home / "spool.ndjson")
    spool.append([{"n": 1}])
    before = spool.path.read_bytes()
    with pytest.raises(OSError):
        spool.append([{"n": 2, "pad": "z" * 6000}, {"n": 3, "pad": "z" * 6000}])
    assert spool.path.read_bytes() == before


# -- summaries that add up -------------------------------------------------------------------


def test_an_import_after_an_outage_reports_the_spool_apart_from_the_file(dsn, admin, tmp_path):
    """An earlier import stored the log's first rows and spooled the rest when the database went
    away; importing the log again replays the spool first, on a line of its own, and the file's
    counts are the file's: every row already present, no spooled record blamed on a line."""
    rows = [dict(ROW, query=f"row {i}") for i in range(6)]
    log = tmp_path / "capture.ndjson"
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    head = tmp_path / "head.ndjson"
    head.write_text("".join(json.dumps(r) + "\n" for r in rows[:2]))
    env = {"DATABASE_URL": dsn, "EVALLEDGER_HOME": str(tmp_path)}
    assert run_cli("capture", "import", str(head), env=env).code == 0
    down = CaptureWriter(unreachable(tmp_path), home=tmp_path, background=False)
    down.write([line.fields for line in parse_import(str(log), str(log))][2:])
    down.close(0)
    result = run_cli("capture", "import", str(log), env=env)
    assert (result.code, result.err) == (0, "")
    assert result.out == ("replayed 5 spooled records: 4 rows written, 0 already present, 1 failure recorded "
                          "(db_down 1)\n"
                          f"imported {log}: 6 rows: 0 written, 6 already present, 0 failed\n")
    assert count(admin) == 6 and count(admin, "eval_capture_failures") == 1


def test_an_import_with_a_spool_of_other_rows_counts_only_the_file(dsn, admin, tmp_path):
    down = CaptureWriter(unreachable(tmp_path), home=tmp_path, background=False)
    down.write([dict(ROW, query="app 1"), dict(ROW, query="app 2", capture_key=uuid.uuid4())])
    down.close(0)
    log = tmp_path / "capture.ndjson"
    log.write_text(json.dumps(dict(ROW, query="from the log")) + "\n" + json.dumps(dict(ROW, query="x" * 51201)) + "\n")
    result = run_cli("capture", "import", str(log), env={"DATABASE_URL": dsn, "EVALLEDGER_HOME": str(tmp_path)})
    assert result.code == 0, result.err
    assert result.out == ("replayed 3 spooled records: 2 rows written, 0 already present, 1 failure recorded "
                          "(db_down 1)\n"
                          f"imported {log}: 2 rows: 1 written, 0 already present, 1 failed (check_violation 1)\n")
    assert result.err.startswith(f"{log}:2: refused (check_violation): ") and result.err.count("\n") == 1
    assert count(admin) == 3


def test_a_spool_that_cannot_be_replayed_is_said_once_while_rows_are_written(dsn, admin, tmp_path, caplog):
    """The writer tries the spool again at every batch; a spool it cannot open (here a folder in
    its place) is one error line, not one a batch, and costs the live rows nothing."""
    (tmp_path / "capture" / "spool.ndjson").mkdir(parents=True)
    caplog.set_level(logging.INFO, logger="evalledger.capture")
    writer = CaptureWriter(dsn, home=tmp_path, flush_interval=0.01)
    for i in range(5):
        writer.submit(dict(ROW, query=f"live {i}"))
        assert writer.flush(10)
    writer.close(10)
    assert count(admin) == 5
    assert len(lines_of(caplog, "cannot replay")) == 1, lines_of(caplog, "cannot replay")


def test_an_import_whose_database_goes_away_on_a_read_only_home_says_what_was_dropped(dsn, admin, tmp_path,
                                                                                      mounted):
    """The import's connection is killed mid-import and its home is read-only: the rows it could
    neither store nor spool are counted as dropped in a summary that adds up to the file (exit 3,
    import again), and importing again writes exactly them."""
    import threading

    home = mounted(tmp_path / "home", "size=1m")
    subprocess.run(["mount", "-o", "remount,ro", str(home)], check=True)
    total = 1500
    log = tmp_path / "capture.ndjson"
    log.write_text("".join(json.dumps(dict(ROW, query=f"row {i}")) + "\n" for i in range(total)))
    killed = threading.Event()

    def kill_the_import_midway():
        with psycopg.connect(dsn, autocommit=True) as watcher:
            deadline = time.monotonic() + 60
            while count(watcher) < 100 and time.monotonic() < deadline:
                time.sleep(0.01)
            watcher.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = "
                            "current_database() AND pid <> ALL(%s)", ([watcher.info.backend_pid,
                                                                      admin.info.backend_pid],))
            killed.set()

    watcher = threading.Thread(target=kill_the_import_midway)
    watcher.start()
    env = {"DATABASE_URL": dsn, "EVALLEDGER_HOME": str(home)}
    try:
        first = run_cli("capture", "import", str(log), "--strict", env=env)
    finally:
        watcher.join(60)
    assert killed.is_set()
    written = count(admin)
    dropped = total - written
    assert 0 < written < total, "the import ended before its connection was killed"
    assert first.code == 3, first.out + first.err
    assert first.out == f"imported {log}: {total} rows: {written} written, 0 already present, 0 failed, {dropped} dropped\n"
    assert first.err == (f"evalledger: error: the database went away during the import and the spool "
                         f"{home / 'capture' / 'spool.ndjson'} refused {dropped} rows (Read-only file system (EROFS)): "
                         f"import {log} again once the database answers (nothing is written twice)\n")
    again = run_cli("capture", "import", str(log), env=env)
    assert (again.code, again.err) == (0, "")
    assert again.out == f"imported {log}: {total} rows: {dropped} written, {written} already present, 0 failed\n"
    assert count(admin) == total
