"""Digests kept outside: signed with an SSH key, appended to a folder or committed to a git repository of the
auditor's (`ledger digest --sign`, `ledger publish`, `ledger watch`; docs/ledger.md, "Keeping digests outside")."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from evalledger.core.errors import EvalledgerError

from . import check

NAME = re.compile(r"digest-(\d{8,})-(\d{8}T\d{12}Z)(?:-\d+)?\.json")


def _ssh_keygen() -> str:
    found = shutil.which("ssh-keygen")
    if found is None:
        raise EvalledgerError("ssh-keygen (OpenSSH) is not installed: it signs the digests")
    return found


def sign(path: Path, key: Path) -> Path:
    """Sign the digest file's bytes with the SSH key (`ssh-keygen -Y sign`, check.SIGNATURE_NAMESPACE): PATH.sig."""
    signature = path.with_name(path.name + ".sig")
    signature.unlink(missing_ok=True)  # ssh-keygen will not overwrite one
    done = subprocess.run([_ssh_keygen(), "-q", "-Y", "sign", "-f", str(key), "-n", check.SIGNATURE_NAMESPACE,
                           str(path)], capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)
    if done.returncode != 0 or not signature.exists():
        reason = (done.stderr.strip().splitlines() or ["ssh-keygen failed"])[-1]
        raise EvalledgerError(f"--sign {key}: cannot sign {path}: {reason}")
    return signature


def _git(folder: Path) -> bool:
    """Whether folder is the work tree of a git repository (its top)."""
    return (folder / ".git").exists()


def newest(folder: Path) -> tuple[Path, dict] | None:
    """The newest digest published in folder (the most blocks; of those, the latest taken), checked for shape."""
    best = None
    for path in folder.iterdir() if folder.is_dir() else ():
        match = NAME.fullmatch(path.name)
        if not match:
            continue
        order = (int(match.group(1)), match.group(2), path.name)
        if best is None or order > best[0]:
            best = (order, path)
    if best is None:
        return None
    path = best[1]
    try:
        return path, check.parse_digest(path.read_text(encoding="utf-8"))
    except check.MisshapenDigest as exc:
        raise EvalledgerError(f"{path}: {exc}") from None
    except (OSError, ValueError) as exc:
        raise EvalledgerError(f"{path}: the newest digest published cannot be read: {exc}") from None


def publish(folder: Path, text: str, digest: dict, key: Path | None) -> list[Path]:
    """Append the digest (and its signature) to folder, never replacing a file; commit them when folder is a
    git repository. The files written."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise EvalledgerError(f"{folder}: cannot make the folder to publish digests to: {exc.strerror}") from None
    stamp = digest["taken_at"].replace("-", "").replace(":", "").replace(".", "")
    base = f"digest-{digest['block']:08d}-{stamp[:8]}T{stamp[9:21]}Z"
    path, n = folder / f"{base}.json", 1
    while path.exists():
        n += 1
        path = folder / f"{base}-{n}.json"
    try:
        with path.open("x", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        raise EvalledgerError(f"{path}: cannot write: {exc.strerror}") from None
    written = [path] + ([sign(path, key)] if key is not None else [])
    if _git(folder):
        for command in (["add", "--", *[p.name for p in written]],
                        ["commit", "-q", "-m", f"evalledger digest of block {digest['block']} of ledger "
                                               f"{digest['ledger_id']}", "--", *[p.name for p in written]]):
            done = subprocess.run(["git", "-C", str(folder), *command], capture_output=True, text=True, timeout=120)
            if done.returncode != 0:
                reason = (done.stderr.strip().splitlines() or ["git failed"])[-1]
                raise EvalledgerError(f"{folder}: git {command[0]} of {path.name} failed: {reason}")
    return written


def every(text: str) -> float:
    """A period such as 30s, 10m, 2h or 1d, in seconds (at least one second)."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhd])\s*", text or "")
    if not match or float(match.group(1)) * {"s": 1, "m": 60, "h": 3600, "d": 86400}[match.group(2)] < 1:
        raise EvalledgerError(f"--every {text!r} is not a period such as 30s, 10m, 2h or 1d (one second at least)")
    return float(match.group(1)) * {"s": 1, "m": 60, "h": 3600, "d": 86400}[match.group(2)]
