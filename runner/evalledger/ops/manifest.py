"""pg_verifybackup's checks of a plain-format base backup, in Python (stdlib, and pg_waldump for the WAL).

The wheel's own pg_verifybackup does not start (its loader crashes before main), so evalledger
checks a backup_manifest (format 1 or 2) itself, the way pg_verifybackup does:

1. the manifest's own SHA-256 ("Manifest-Checksum") over its text up to the line holding that key;
2. the System-Identifier it names is the one in global/pg_control (its first 8 bytes);
3. every file it lists exists with its size and checksum (SHA-224/256/384/512, or none), and no
   other file is there, except what pg_verifybackup ignores too (pg_wal/, backup_manifest,
   recovery.signal, standby.signal) and what the caller names; postgresql.auto.conf, which
   pg_verifybackup leaves out because `pg_basebackup -R` rewrites it, is checked (`db backup`
   never writes one);
4. pg_waldump reads every WAL range it lists, from pg_wal/, without error.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

IGNORED = ("pg_wal", "backup_manifest", "recovery.signal", "standby.signal")
ALGORITHMS = {"SHA224": "sha224", "SHA256": "sha256", "SHA384": "sha384", "SHA512": "sha512"}


class Damaged(Exception):
    """The backup is not what its manifest says: the message names the first difference."""


def check(folder: Path, waldump: Path, ignore: tuple[str, ...] = ()) -> int:
    """Check the backup in folder against its manifest; the number of files checked."""
    text = (folder / "backup_manifest").read_bytes()
    try:
        manifest = json.loads(text)
        key = text.rindex(b'"Manifest-Checksum"')
    except ValueError:
        raise Damaged("backup_manifest is not a backup manifest") from None
    covered = text[:text.rindex(b"\n", 0, key) + 1]
    if hashlib.sha256(covered).hexdigest() != manifest.get("Manifest-Checksum"):
        raise Damaged("backup_manifest does not match its own checksum")
    control = folder / "global" / "pg_control"
    if "System-Identifier" in manifest and control.is_file():
        found = int.from_bytes(control.read_bytes()[:8], "little")
        if found != manifest["System-Identifier"]:
            raise Damaged(f"global/pg_control is of system {found}, the manifest of {manifest['System-Identifier']}")
    skipped = (*IGNORED, *ignore)
    listed = {}
    for entry in manifest.get("Files", []):
        path = entry["Path"] if "Path" in entry else bytes.fromhex(entry["Encoded-Path"]).decode("utf-8", "surrogateescape")
        listed[path] = entry
    for path, entry in listed.items():
        if _skipped(path, skipped):
            continue
        _check_file(folder, path, entry)
    for found in folder.rglob("*"):
        relative = found.relative_to(folder).as_posix()
        if found.is_file() and relative not in listed and not _skipped(relative, skipped):
            raise Damaged(f"{relative} is in the backup but not in its manifest")
    for wal in manifest.get("WAL-Ranges", []):
        result = subprocess.run(
            [str(waldump), "--quiet", f"--path={folder / 'pg_wal'}", f"--timeline={wal['Timeline']}",
             f"--start={wal['Start-LSN']}", f"--end={wal['End-LSN']}"], capture_output=True, text=True)
        if result.returncode != 0:
            lines = [line for line in result.stderr.splitlines() if line.strip()]
            raise Damaged(f"the WAL from {wal['Start-LSN']} to {wal['End-LSN']} does not parse: "
                          f"{lines[-1] if lines else 'pg_waldump failed'}")
    return len(listed)


def _skipped(path: str, skipped: tuple[str, ...]) -> bool:
    return any(path == s or path.startswith(s + "/") for s in skipped)


def _check_file(folder: Path, path: str, entry: dict) -> None:
    file = folder / path
    if not file.is_file():
        raise Damaged(f"{path} is in the manifest but not in the backup")
    if file.stat().st_size != entry["Size"]:
        raise Damaged(f"{path} has {file.stat().st_size} bytes, the manifest says {entry['Size']}")
    algorithm = entry.get("Checksum-Algorithm", "NONE")
    if algorithm == "NONE":
        return
    if algorithm not in ALGORITHMS:
        raise Damaged(f"{path}: checksums of {algorithm} are not checked here: back up with SHA256 manifests")
    digest = hashlib.new(ALGORITHMS[algorithm])
    with open(file, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    if digest.hexdigest() != entry["Checksum"]:
        raise Damaged(f"{path} does not match its {algorithm} checksum")
