"""work-quality evidence: a file, a directory, a real git range, stdin; the size cap is visible."""

from __future__ import annotations

import io
import subprocess
from pathlib import Path

import pytest

from evalledger.suites.work_quality import evidence
from evalledger.suites.work_quality.evidence import EvidenceError, gather


def test_a_file_is_its_text_with_counts(tmp_path):
    path = tmp_path / "report.md"
    path.write_text("# Findings\nThe bug is in parse().\n")
    ev = gather(str(path))
    assert ev.text == "# Findings\nThe bug is in parse().\n" and not ev.truncated
    assert ev.digest == "file report.md: 2 lines, 34 characters"


def test_a_directory_is_every_text_file_in_path_order_with_headers(tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "z.py").write_text("z = 1\n")
    (tmp_path / "a.txt").write_text("alpha")
    (tmp_path / "c.bin").write_bytes(b"\x00\x01")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref")
    ev = gather(str(tmp_path))
    assert ev.text == "=== a.txt ===\nalpha\n=== b/z.py ===\nz = 1\n"
    assert ev.digest.endswith(": 2 text files, 4 lines, 41 characters (1 binary or special file left out)")


def test_a_directory_without_text_is_an_error(tmp_path):
    (tmp_path / "x.bin").write_bytes(b"\x00")
    with pytest.raises(EvidenceError, match="no text files"):
        gather(str(tmp_path))


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
                               "GIT_COMMITTER_EMAIL": "t@example.org", "HOME": str(repo), "PATH": "/usr/bin:/bin"}
                          ).stdout.strip()


@pytest.fixture
def repo(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "app.py").write_text("def add(a, b):\n    return a - b\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "one")
    (repo / "app.py").write_text("def add(a, b):\n    return a + b\n")
    git(repo, "commit", "-qam", "fix add")
    return repo


def test_a_git_range_is_the_real_diff_with_its_diffstat(repo):
    ev = gather("git:HEAD~1..HEAD", repo=repo)
    assert "-    return a - b\n+    return a + b" in ev.text
    assert ev.text.startswith("$ git diff --stat HEAD~1..HEAD\n app.py | 2 +-\n")
    assert ev.digest == "git diff HEAD~1..HEAD: 1 file changed, 1 insertion(+), 1 deletion(-)\n app.py | 2 +-"


@pytest.mark.parametrize("spec, message", [
    ("git:HEAD", "expected git:A..B"), ("git:..HEAD", "expected git:A..B"),
    ("git:HEAD...HEAD~1", "expected git:A..B"),
    ("git:nope..HEAD", "git rev-parse --verify in .*repo"), ("git:HEAD..HEAD", "the range has no changes"),
])
def test_bad_git_ranges_are_named(repo, spec, message):
    with pytest.raises(EvidenceError, match=message):
        gather(spec, repo=repo)


def test_a_git_range_outside_a_repository_is_named(tmp_path):
    with pytest.raises(EvidenceError, match=f"git rev-parse --verify in {tmp_path}"):
        gather("git:A..B", repo=tmp_path)


def test_stdin_with_an_excerpt():
    ev = gather("-", stdin=io.StringIO("created issue #12: login fails\nand more\n"))
    assert ev.text.startswith("created issue #12") and ev.source == "-"
    assert ev.digest == "stdin: 2 lines, 40 characters; begins: created issue #12: login fails"


def test_empty_stdin_is_an_error():
    with pytest.raises(EvidenceError, match="standard input was empty"):
        gather("-", stdin=io.StringIO("  \n"))


def test_past_the_cap_the_text_is_cut_at_a_line_with_a_visible_marker(tmp_path):
    path = tmp_path / "big.log"
    path.write_text("".join(f"line {i:04d}\n" for i in range(100)))  # 1000 characters
    ev = gather(str(path), limit=95)
    assert ev.truncated and ev.total_chars == 1000
    assert ev.text == "".join(f"line {i:04d}\n" for i in range(9)) + \
        "[... evalledger truncated the work product here: 89 of 1000 characters shown ...]\n"
    assert ev.digest == "file big.log: 100 lines, 1000 characters; truncated for the judges at 95 of 1000 characters"


def test_the_documented_cap_is_the_default(tmp_path):
    path = tmp_path / "big.txt"
    path.write_text("x" * (evidence.MAX_CHARS + 1))
    ev = gather(str(path))
    assert ev.truncated and ev.text.startswith("x" * evidence.MAX_CHARS)  # one long line: cut mid-line
    assert ev.text.endswith(f"{evidence.MAX_CHARS} of {evidence.MAX_CHARS + 1} characters shown ...]\n")


@pytest.mark.parametrize("make, message", [
    (lambda p: str(p / "absent"), "absent: no such file or directory"),
    (lambda p: (p / "b.bin").write_bytes(b"\xff\xfe") and str(p / "b.bin"),
     r"b.bin:1: not text the judges can read \(byte 0xFF, not UTF-8 at column 1\)"),
    (lambda p: (p / "l.txt").write_bytes("ok\nun caf\xe9\n".encode("latin-1")) and str(p / "l.txt"),
     r"l.txt:2: not text the judges can read \(byte 0xE9, not UTF-8 at column 7\)"),
    (lambda p: (p / "n.txt").write_bytes(b"a\nb\nc\x00d") and str(p / "n.txt"),
     r"n.txt:3: not text the judges can read \(a NUL byte at column 2\)"),
    (lambda p: (p / "c.txt").write_bytes(b"ok\n\xc3") and str(p / "c.txt"),
     r"c.txt:2: not text the judges can read \(byte 0xC3, not UTF-8 at column 1\)"),
])
def test_unreadable_work_products_are_named(tmp_path, make, message):
    with pytest.raises(EvidenceError, match=message):
        gather(make(tmp_path))


def test_repo_without_a_git_range_is_an_error(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(EvidenceError, match="--repo goes with a git:A..B"):
        gather(str(tmp_path / "f"), repo=tmp_path)


def test_a_large_file_is_streamed_and_counted_whole_multibyte_characters_across_chunks(tmp_path):
    path = tmp_path / "big.txt"
    text = "é" * 40_000 + "\n" + "ß" * 40_000  # 160 kB: UTF-8 sequences straddle the 64 KiB reads
    path.write_text(text)
    ev = gather(str(path), limit=1000)
    assert ev.total_chars == len(text) == 80_001
    assert ev.digest == "file big.txt: 2 lines, 80001 characters; truncated for the judges at 1000 of 80001 characters"
    assert ev.text == "é" * 1000 + "\n" + evidence.truncation_marker(1000, 80_001) + "\n"


def test_a_directory_past_the_cap_is_counted_whole_and_cut_visibly(tmp_path):
    for name in ("a.txt", "b.txt", "c.txt"):
        (tmp_path / name).write_text("x" * 50 + "\n")
    whole = gather(str(tmp_path))  # under the cap: the whole text
    ev = gather(str(tmp_path), limit=100)
    assert ev.total_chars == whole.total_chars == len(whole.text) == 3 * (len("=== a.txt ===\n") + 51)
    assert ev.text == whole.text[:whole.text.rfind("\n", 0, 100)] + "\n" + \
        evidence.truncation_marker(whole.text.rfind("\n", 0, 100), whole.total_chars) + "\n"
    assert ev.digest.endswith(f"3 text files, 6 lines, {whole.total_chars} characters; truncated for the judges at "
                              f"100 of {whole.total_chars} characters")


def test_binary_stdin_is_refused_and_text_stdin_is_read_as_bytes():
    with pytest.raises(EvidenceError, match=r"^--work-product -: standard input, line 1: not text the judges can "
                                            r"read \(a NUL byte at column 3\)$"):
        gather("-", stdin=io.TextIOWrapper(io.BytesIO(b"\xff\xfe\x00")))
    with pytest.raises(EvidenceError, match=r"standard input, line 2: .*\(byte 0xE9, not UTF-8 at column 4\)$"):
        gather("-", stdin=io.TextIOWrapper(io.BytesIO("x\ncaf\xe9".encode("latin-1"))))
    ev = gather("-", stdin=io.TextIOWrapper(io.BytesIO("créé\n".encode())))
    assert ev.text == "créé\n" and ev.total_chars == 5
