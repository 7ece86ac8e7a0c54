"""ops/manifest.py, pg_verifybackup's checks in Python: each way a backup can differ from its
manifest is caught, and named. The WAL step runs the wheel's pg_waldump over a backup with no WAL
ranges here (tests/e2e/test_backup.py checks real backups, WAL included)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from evalledger.core.embedded import wheel_bin
from evalledger.ops.manifest import Damaged, check

SYSTEM = 7714265523656549264


def write_backup(folder: Path, files: dict[str, bytes], algorithm: str = "SHA256", wal: list | None = None) -> None:
    """A backup folder with files and a manifest made the way pg_basebackup makes one."""
    for name, data in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    entries = []
    for name, data in files.items():
        entry = {"Path": name, "Size": len(data), "Last-Modified": "2026-06-30 12:00:00 GMT"}
        if algorithm != "NONE":
            entry.update({"Checksum-Algorithm": algorithm,
                          "Checksum": hashlib.new(algorithm.lower(), data).hexdigest() if algorithm != "CRC32C"
                          else "3a93ca56"})
        entries.append(json.dumps(entry))
    text = ('{ "PostgreSQL-Backup-Manifest-Version": 2,\n'
            f'"System-Identifier": {SYSTEM},\n"Files": [\n' + ",\n".join(entries) + "\n],\n"
            f'"WAL-Ranges": {json.dumps(wal or [])},\n')
    digest = hashlib.sha256(text.encode()).hexdigest()
    (folder / "backup_manifest").write_text(text + f'"Manifest-Checksum": "{digest}"}}\n')


def files() -> dict[str, bytes]:
    return {"PG_VERSION": b"18\n", "global/pg_control": SYSTEM.to_bytes(8, "little") + b"\0" * 56,
            "base/1/1259": bytes(range(256)) * 32}


def verify(folder: Path) -> int:
    return check(folder, wheel_bin("pg_waldump"), ignore=("evalledger-backup.json",))


def test_a_backup_that_is_its_manifest_passes(tmp_path):
    write_backup(tmp_path, files())
    (tmp_path / "pg_wal").mkdir()
    (tmp_path / "evalledger-backup.json").write_text("{}")  # named by the caller: not the manifest's
    assert verify(tmp_path) == 3


@pytest.mark.parametrize("bend, message", [
    (lambda f: (f / "base/1/1259").write_bytes(bytes(range(256)) * 31 + bytes(range(255, -1, -1))),
     "base/1/1259 does not match its SHA256 checksum"),
    (lambda f: (f / "PG_VERSION").write_bytes(b"18\n\n"), "PG_VERSION has 4 bytes, the manifest says 3"),
    (lambda f: (f / "base/1/1259").unlink(), "base/1/1259 is in the manifest but not in the backup"),
    (lambda f: (f / "base/1/2619").write_bytes(b"planted"), "base/1/2619 is in the backup but not in its manifest"),
    (lambda f: (f / "postgresql.auto.conf").write_text("archive_command = 'x'\n"),
     "postgresql.auto.conf is in the backup but not in its manifest"),
    (lambda f: (f / "backup_manifest").write_text((f / "backup_manifest").read_text().replace('"Size": 3', '"Size": 4')),
     "backup_manifest does not match its own checksum"),
    (lambda f: (f / "global/pg_control").write_bytes((SYSTEM + 1).to_bytes(8, "little") + b"\0" * 56),
     f"global/pg_control is of system {SYSTEM + 1}, the manifest of {SYSTEM}"),
])
def test_every_difference_from_the_manifest_is_named(tmp_path, bend, message):
    write_backup(tmp_path, files())
    bend(tmp_path)
    with pytest.raises(Damaged) as refused:
        verify(tmp_path)
    assert str(refused.value) == message


def test_a_checksum_it_cannot_compute_is_refused_not_skipped(tmp_path):
    write_backup(tmp_path, files(), algorithm="CRC32C")
    with pytest.raises(Damaged, match="checksums of CRC32C are not checked here: back up with SHA256 manifests"):
        verify(tmp_path)


def test_wal_the_backup_needs_but_lacks_is_refused(tmp_path):
    write_backup(tmp_path, files(), wal=[{"Timeline": 1, "Start-LSN": "0/4000028", "End-LSN": "0/4000120"}])
    (tmp_path / "pg_wal").mkdir()
    with pytest.raises(Damaged, match=r"^the WAL from 0/4000028 to 0/4000120 does not parse: "):
        verify(tmp_path)
