"""The evidence a work-quality panel judges: the run's real work product, never its own claims.

`--work-product` is one of:
- a file: its text;
- a directory: every text file under it, in path order, each after a `=== path ===` header
  (binary or non-UTF-8 files, `.git` and other dot-directories are left out and counted);
- `git:A..B`: the real `git diff A..B` in `--repo` (default: the current directory), after its
  diffstat;
- `-`: standard input.

The judges see at most MAX_CHARS characters of it (about 15k tokens: room for the rubric and a
reply in every panel model's context, at a bounded price). Past that the text is cut at a line
boundary and ends with a visible marker saying how much was left out, and the snapshot's
`evidence_digest` says so too. Files and stdin are streamed: whatever their size, only the part
the judges see is held in memory, while the counts cover all of it. The digest is short on purpose (it is stored in every snapshot):
the diffstat for a git range, counts for a file, directory or stdin, plus an excerpt for stdin.
"""

from __future__ import annotations

import codecs
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, TextIO

MAX_CHARS = 60_000
DIGEST_MAX_CHARS = 2_000
EXCERPT_CHARS = 200
_CHUNK = 1 << 16


class EvidenceError(ValueError):
    """Evidence that cannot be gathered; the message names the path or the range."""


@dataclass(frozen=True)
class Evidence:
    """What the judges read (text) and what the snapshot keeps of it (digest)."""

    text: str
    digest: str
    truncated: bool
    total_chars: int
    source: str


@dataclass(frozen=True)
class _Read:
    """A text read with bounded memory: its first characters (head), and its whole size."""

    head: str
    chars: int
    lines: int
    ends_with_newline: bool


def truncation_marker(shown: int, total: int) -> str:
    return f"[... evalledger truncated the work product here: {shown} of {total} characters shown ...]"


def _lines(text: str) -> int:
    return text.count("\n") + (0 if text.endswith("\n") or not text else 1)


def _counts(read: _Read) -> str:
    return f"{read.lines} line{'s' if read.lines != 1 else ''}, {read.chars} characters"


def _in_memory(text: str, keep: int) -> _Read:
    return _Read(text[:keep], len(text), _lines(text), text.endswith("\n"))


@dataclass(frozen=True)
class _NotText:
    """Where a stream stopped being text the judges can read (a NUL byte, or not UTF-8)."""

    line: int
    what: str

    def __str__(self) -> str:
        return f"not text the judges can read ({self.what})"


def _not_text(done: int, data: bytes, at: int, what: str) -> _NotText:
    """Byte `at` of this chunk, `done` newlines read before it: its line, and its column in what."""
    before = data[:at]
    start = before.rfind(b"\n") + 1
    column = len(before[start:].decode("utf-8", "replace")) + 1
    return _NotText(done + before.count(b"\n") + 1, f"{what} at column {column}")


def _read_stream(handle: BinaryIO, keep: int) -> _Read | _NotText:
    """UTF-8 text from a binary stream, holding only its first `keep` characters but counting all
    of it; for what looks binary (a NUL byte, or not UTF-8), where it stopped being text."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    head: list[str] = []
    kept = chars = newlines = 0
    last = ""
    previous, done_before = b"", 0  # the chunk before, for a sequence it began and the end cut short
    while True:
        data = handle.read(_CHUNK)
        if b"\x00" in data:
            return _not_text(newlines, data, data.index(b"\x00"), "a NUL byte")
        pending = len(decoder.getstate()[0])
        try:
            text = decoder.decode(data, final=not data)
        except UnicodeDecodeError as exc:
            chunk, done, at = data, newlines, exc.start - pending
            if at < 0:  # the bad sequence began in the chunk before
                chunk, done, at = previous, done_before, len(previous) + at
            return _not_text(done, chunk, at, f"byte 0x{chunk[at]:02X}, not UTF-8")
        previous, done_before = data, newlines
        if text:
            chars += len(text)
            newlines += text.count("\n")
            last = text[-1]
            if kept < keep:
                head.append(text[: keep - kept])
                kept += len(head[-1])
        if not data:
            break
    return _Read("".join(head), chars, newlines + (1 if chars and last != "\n" else 0), last == "\n")


def _cap(read: _Read, limit: int) -> tuple[str, bool]:
    """The head, cut to at most limit characters at a line end when one is near, with the marker
    when anything was left out."""
    if read.chars <= limit:
        return read.head, False
    cut = read.head.rfind("\n", 0, limit)
    if cut < limit // 2:  # no line end in the second half: cut mid-line rather than lose half
        cut = min(limit, len(read.head))
    return read.head[:cut].rstrip("\n") + "\n" + truncation_marker(cut, read.chars) + "\n", True


def _finish(read: _Read, digest: str, source: str, limit: int) -> Evidence:
    shown, truncated = _cap(read, limit)
    if truncated:
        digest += f"; truncated for the judges at {limit} of {read.chars} characters"
    if len(digest) > DIGEST_MAX_CHARS:
        digest = digest[: DIGEST_MAX_CHARS - 1] + "…"
    return Evidence(shown, digest, truncated, read.chars, source)


def _open_read(path: Path, keep: int) -> _Read | _NotText:
    try:
        with path.open("rb") as handle:
            return _read_stream(handle, keep)
    except OSError as exc:
        raise EvidenceError(f"{path}: cannot read: {exc.strerror or exc}") from None


def _from_file(path: Path, limit: int) -> Evidence:
    read = _open_read(path, limit)
    if isinstance(read, _NotText):
        raise EvidenceError(f"{path}:{read.line}: {read}")
    return _finish(read, f"file {path.name}: {_counts(read)}", str(path), limit)


def _from_directory(root: Path, limit: int) -> Evidence:
    head: list[str] = []
    kept = chars = lines = files = skipped = 0
    paths = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        paths += [Path(dirpath) / f for f in filenames]
    for path in sorted(paths, key=lambda p: p.relative_to(root).as_posix()):
        if path.is_symlink() or not path.is_file():
            skipped += 1
            continue
        read = _open_read(path, max(limit - kept, 0))
        if isinstance(read, _NotText):
            skipped += 1
            continue
        files += 1
        # The file's part of the whole text: a header line, all of the file, a newline closing it.
        header = f"=== {path.relative_to(root).as_posix()} ===\n"
        closing = "" if read.ends_with_newline or not read.chars else "\n"
        chars += len(header) + read.chars + len(closing)
        lines += 1 + read.lines
        if kept < limit:
            whole_file = read.chars == len(read.head)
            head.append((header + read.head + (closing if whole_file else ""))[: limit - kept])
            kept += len(head[-1])
    if files == 0:
        raise EvidenceError(f"{root}: no text files in this directory")
    whole = _Read("".join(head), chars, lines, True)
    digest = f"directory {root.name or root}: {files} text file{'s' if files != 1 else ''}, {_counts(whole)}"
    if skipped:
        digest += f" ({skipped} binary or special file{'s' if skipped != 1 else ''} left out)"
    return _finish(whole, digest, str(root), limit)


def _git(repo: Path, *args: str) -> str:
    try:
        done = subprocess.run(["git", "-C", str(repo), "-c", "core.quotepath=off", *args],
                              capture_output=True, check=False, timeout=120)
    except FileNotFoundError:
        raise EvidenceError("git: not installed (needed for a git:A..B work product)") from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise EvidenceError(f"git {' '.join(args[:2])} in {repo}: {message[0] if message else 'failed'}")
    return done.stdout.decode("utf-8", "surrogateescape")


def _from_git(spec: str, repo: Path | None, limit: int) -> Evidence:
    rng = spec[len("git:"):]
    a, sep, b = rng.partition("..")
    if not sep or not a or not b or b.startswith("."):
        raise EvidenceError(f"--work-product {spec}: expected git:A..B (two revisions)")
    repo = repo or Path.cwd()
    if not repo.is_dir():
        raise EvidenceError(f"--repo {repo}: no such directory")
    for rev in (a, b):
        _git(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}")
    # --no-ext-diff and --no-color: the diff as git stores it, whatever the user's config says.
    stat = _git(repo, "diff", "--no-color", "--no-ext-diff", "--stat=200", "--end-of-options", f"{a}..{b}")
    diff = _git(repo, "diff", "--no-color", "--no-ext-diff", "--end-of-options", f"{a}..{b}")
    if not diff.strip():
        raise EvidenceError(f"--work-product {spec}: the range has no changes in {repo}")
    text = f"$ git diff --stat {a}..{b}\n{stat}\n$ git diff {a}..{b}\n{diff}"
    summary = [line for line in stat.rstrip().splitlines() if line.strip()]
    digest = f"git diff {a}..{b}: " + (summary[-1].strip() if summary else "no changes")
    if len(summary) > 1:
        digest += "\n" + "\n".join(line.rstrip() for line in summary[:-1])
    return _finish(_in_memory(text, limit), digest, spec, limit)


def _from_stdin(stream: TextIO, limit: int) -> Evidence:
    raw = getattr(stream, "buffer", None)
    read = _read_stream(raw, limit) if raw is not None else _in_memory(stream.read(), limit)
    if isinstance(read, _NotText):
        raise EvidenceError(f"--work-product -: standard input, line {read.line}: {read}")
    if not read.head.strip():
        raise EvidenceError("--work-product -: standard input was empty")
    first = read.head.strip().splitlines()[0]
    excerpt = first if len(first) <= EXCERPT_CHARS else first[: EXCERPT_CHARS - 1] + "…"
    return _finish(read, f"stdin: {_counts(read)}; begins: {excerpt}", "-", limit)


def gather(spec: str, *, repo: Path | None = None, stdin: TextIO | None = None,
           limit: int = MAX_CHARS) -> Evidence:
    """The evidence `--work-product spec` names."""
    if spec == "-":
        return _from_stdin(stdin or sys.stdin, limit)
    if spec.startswith("git:"):
        return _from_git(spec, repo, limit)
    if repo is not None:
        raise EvidenceError("--repo goes with a git:A..B work product")
    path = Path(spec)
    if path.is_dir():
        return _from_directory(path, limit)
    if not path.exists():
        raise EvidenceError(f"{spec}: no such file or directory")
    return _from_file(path, limit)
