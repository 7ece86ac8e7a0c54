"""`evalledger catalog draft --from-capture`: a question catalog drafted from captured traffic.

The database hands over the candidates (draft_candidates, one line per distinct query text: the captured rows of a window whose
brain retrieved something, never one whose scrubbing failed, each marked when a replay run flagged
it); this module folds near-duplicates, stratifies, picks and writes the draft. Everything here is
deterministic: the same rows give the same file, byte for byte. docs/replay.md ("A catalog from
production traffic") describes the rules precisely enough to re-implement them:

- **Normalisation** (`normalise`): NFKC, casefold, NFKD with every combining mark dropped (accents
  go), then the text's tokens, the maximal runs of letters and digits (Unicode categories L and N;
  everything else, punctuation, symbols, spaces and underscores, separates), joined by one space.
  Rows whose normalised texts are equal are one candidate ("exact fold"); a text with no token is
  no question.
- **Similarity** (`similarity`): the Jaccard index of the two normalised texts' sets of character
  trigrams, each text padded with one space at either end. Two candidates are near-duplicates when
  it is at least SIMILAR_AT.
- **A candidate's representative** is its row that replay flagged, then that a remote caller asked,
  then the newest (created_at, then id); the candidate's stratum is its representative's (tool,
  detail, remote or local).
- **Priority** within a stratum: flagged by replay first, then remote, then how many captured rows
  the candidate stands for, then its representative's newness (created_at, id), descending.
- **Picking** is round-robin over the strata: each round, every stratum with a candidate left
  offers its best one that is no near-duplicate of a question already picked (a near-duplicate is
  folded into the picked question it is most similar to, ties to the earlier), the offers taken in
  priority order, until --questions are picked or no stratum has any left. So no stratum has more
  than one question more than another, unless it ran out.
- **Folding**: after picking, every candidate left is folded into the picked question it
  near-duplicates, if any. A question's provenance is every captured row it stands for: its
  count, and the first MAX_CAPTURES of them (its representative, then the newest).
"""

from __future__ import annotations

import hashlib
import heapq
import json
import re
import unicodedata
from itertools import chain
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime

import psycopg

from evalledger.core.errors import EvalledgerError
from evalledger.core.queries import Queries
from evalledger.core import windows
from evalledger.core.windows import Since, iso

QUERIES = Queries(__package__)

NORMALISATION = "catalog-draft-v1"
SIMILAR_AT = 0.75
MAX_CAPTURES = 100
MAX_QUESTIONS = 999
# The mark of a field a person must write: `catalog load` refuses a document holding any.
BLANK = "FILL IN"
QUESTION_TYPES_TEXT = ("plan_diagnosis, coverage_gap, play_retrospective, forecast_bias, churn_diagnosis, "
                       "expansion_qualification, handoff_briefing or qbr_narrative")
FETCH = 20_000

_TOKEN = re.compile(r"[^\W_]+")
_SOURCE_ID_BAD = re.compile(r"[^A-Za-z0-9._:@-]")


def normalise(text: str) -> str:
    """The normalised text of a query (see the module docstring); '' when it has no letter or digit."""
    if text.isascii():  # the same result, faster: ASCII is its own NFKC and NFKD, casefold is lower()
        return " ".join(_TOKEN.findall(text.lower()))
    folded = unicodedata.normalize("NFKC", text).casefold()
    bare = "".join(c for c in unicodedata.normalize("NFKD", folded) if not unicodedata.combining(c))
    return " ".join(_TOKEN.findall(bare))


def trigrams(key: str) -> frozenset[str]:
    """The character trigrams of a normalised text, padded with a space at either end."""
    padded = f" {key} "
    return frozenset({padded[i:i + 3] for i in range(len(padded) - 2)})


def similarity(a: str, b: str) -> float:
    """Jaccard of the trigram sets of two normalised texts."""
    x, y = trigrams(a), trigrams(b)
    return len(x & y) / len(x | y) if x or y else 1.0


def source_id(slug: str) -> str:
    """A catalog source id for a retrieved slug: every character a source id may not hold becomes
    '-' ('/' becomes ':'), one leading 's' when it does not start with a letter or digit, at most 64."""
    sid = _SOURCE_ID_BAD.sub("-", slug.replace("/", ":"))
    if not sid or not sid[0].isascii() or not sid[0].isalnum():
        sid = "s" + sid
    return sid[:64]


@dataclass
class Candidate:
    """Captured rows with one normalised text: how many, the newest MAX_CAPTURES, the representative."""

    key: str
    count: int = 0
    members: list = field(default_factory=list)  # (created_at text, id), newest first
    rep: tuple = ()  # (flagged, remote, created_at, id, tool_name, detail, query, packed)

    def rank(self) -> tuple:
        flagged, remote, at, cid = self.rep[:4]
        return (flagged, remote, self.count, at, cid)

    def stratum(self) -> tuple:
        return (self.rep[4], self.rep[5] or "none", "remote" if self.rep[1] else "local")


@dataclass
class Question:
    """A picked candidate, with the candidates folded into it."""

    candidate: Candidate
    grams: frozenset
    folded: list = field(default_factory=list)


@dataclass(frozen=True)
class Window:
    """What the draft was asked to read."""

    since: Since | None
    until: datetime | None
    tool: str | None
    remote: bool | None
    limit: int | None


def gather(rows: Iterable[tuple]) -> tuple[dict[str, Candidate], int, int]:
    """draft_candidates' lines (query, rows, representative, newest rows), one per distinct text,
    folded by normalised text; with how many captured rows they hold and how many of those have no
    letter or digit. A representative is packed as text that sorts as (flagged, remote, created_at,
    id) does: flag digit, remote digit, created_at (27 characters), id (20 digits), then ' tool detail'."""
    groups: dict[str, Candidate] = {}
    read = textless = 0
    for query, count, packed, newest in rows:
        read += count
        key = normalise(query)
        if not key:
            textless += count
            continue
        members = [(m[:27], int(m[28:])) for m in newest]
        group = groups.get(key)
        if group is None:
            group = groups[key] = Candidate(key)
            group.members = members
        else:
            group.members = list(heapq.merge(group.members, members, reverse=True))[:MAX_CAPTURES]
        group.count += count
        if not group.rep or packed > group.rep[7]:
            tool, detail = packed[50:].split(" ")
            group.rep = (packed[0] == "1", packed[1] == "1", packed[2:29], int(packed[29:49]), tool,
                         None if detail == "-" else detail, query, packed)
    return groups, read, textless


class Picker:
    """The picked questions, and an index of their trigrams to find which one a candidate
    near-duplicates without comparing it with each."""

    def __init__(self) -> None:
        self.questions: list[Question] = []
        self.index: dict[str, list[int]] = {}

    def nearest(self, grams: frozenset) -> int | None:
        """The picked question most similar to grams at SIMILAR_AT or more (the earlier on a tie).
        Only a question sharing at least SIMILAR_AT * |grams| trigrams can be (|A & B| >= t |A | B|)."""
        shared = Counter(chain.from_iterable(filter(None, map(self.index.get, grams))))
        need = SIMILAR_AT * len(grams)
        best, best_at = None, SIMILAR_AT
        for i in sorted(i for i, common in shared.items() if common >= need):
            common = shared[i]
            score = common / (len(grams) + len(self.questions[i].grams) - common)
            if score >= best_at and (best is None or score > best_at):
                best, best_at = i, score
        return best

    def add(self, candidate: Candidate, grams: frozenset) -> None:
        at = len(self.questions)
        self.questions.append(Question(candidate, grams))
        for gram in grams:
            self.index.setdefault(gram, []).append(at)


def pick(groups: dict[str, Candidate], wanted: int) -> list[Question]:
    """Round-robin over the strata, best first, near-duplicates folded (see the module docstring)."""
    strata: dict[tuple, list[Candidate]] = {}
    for group in groups.values():
        strata.setdefault(group.stratum(), []).append(group)
    for members in strata.values():
        members.sort(key=Candidate.rank, reverse=True)
    at = dict.fromkeys(strata, 0)
    seen: set[str] = set()
    picker = Picker()

    def fresh(stratum: tuple) -> Candidate | None:
        members = strata[stratum]
        while at[stratum] < len(members):
            head = members[at[stratum]]
            grams = trigrams(head.key)
            near = picker.nearest(grams)
            if near is None:
                return head
            picker.questions[near].folded.append(head)
            seen.add(head.key)
            at[stratum] += 1
        return None

    while len(picker.questions) < wanted:
        offers = [(head.rank(), stratum) for stratum in sorted(strata) if (head := fresh(stratum)) is not None]
        if not offers:
            break
        offers.sort(reverse=True)
        for _, stratum in offers:
            if len(picker.questions) >= wanted:
                break
            head = fresh(stratum)
            if head is None:
                continue
            picker.add(head, trigrams(head.key))
            seen.add(head.key)
            at[stratum] += 1
    # Every candidate left folds into the question it near-duplicates.
    if picker.questions:
        for key, group in groups.items():
            if key not in seen:
                near = picker.nearest(trigrams(key))
                if near is not None:
                    picker.questions[near].folded.append(group)
    return picker.questions


def provenance(question: Question) -> tuple[int, list[tuple]]:
    """How many captured rows a question stands for, and the first MAX_CAPTURES: its representative,
    then the newest (created_at, id) of every candidate folded into it."""
    rep = question.candidate.rep
    first = (rep[2], rep[3])
    streams = [question.candidate.members] + [c.members for c in question.folded]
    total = question.candidate.count + sum(c.count for c in question.folded)
    merged = heapq.merge(*streams, reverse=True)
    listed = [first]
    for member in merged:
        if len(listed) >= MAX_CAPTURES:
            break
        if member != first:
            listed.append(member)
    return total, listed


def blank(what: str) -> str:
    return f"{BLANK}: {what}"


def document(questions: list[Question], retrieved: dict[int, tuple], window: dict, version: str | None) -> dict:
    """The draft catalog document (the catalog's own format, schema_version 1)."""
    width = max(3, len(str(len(questions))))
    drafted = []
    strata: dict[str, int] = {}
    for n, question in enumerate(questions, 1):
        rep = question.candidate.rep
        flagged, remote, at, cid, tool, detail, query = rep[:7]
        slugs, chunk_ids, source_ids = retrieved[cid]
        total, listed = provenance(question)
        stratum = "/".join(question.candidate.stratum())
        strata[stratum] = strata.get(stratum, 0) + 1
        sources, used = [], set()
        for rank, slug in enumerate(slugs, 1):
            sid = source_id(slug)
            base, k = sid, 2
            while sid in used:
                suffix = f"-{k}"
                sid, k = base[:64 - len(suffix)] + suffix, k + 1
            used.add(sid)
            sources.append({"id": sid, "title": slug, "as_of": at[:10],
                            "data": {"retrieved_slug": slug, "rank": rank}})
        drafted.append({
            "id": f"CAP-Q{n:0{width}d}",
            "type": blank(f"one of {QUESTION_TYPES_TEXT}"),
            "text": query,
            "uses_stale_fixture": False,
            "sources": sources,
            "pass_criteria": {
                "max_hallucinations": blank("the most unsupported claims a passing answer may make (a whole number, 0 or more)"),
                "min_citation_rate": blank("the least share of numerical claims cited (a number from 0 to 1)"),
                "expected_findings": [blank("what a right answer identifies (one string per finding)")],
            },
            "provenance": {
                "captures": [{"id": i, "created_at": t} for t, i in listed],
                "captured": total,
                "tool_name": tool, "detail": detail, "remote": remote,
                "flagged_by_replay": flagged,
                "source_ids": list(source_ids),
                "retrieved_chunk_ids": list(chunk_ids),
            },
        })
    picked = [q["provenance"]["captures"][0]["id"] for q in drafted]
    if version is None:
        version = "draft-" + hashlib.sha256(json.dumps(picked, separators=(",", ":")).encode()).hexdigest()[:8]
    return {"schema_version": 1, "version": version,
            "title": f"Drafted from {window['rows']} captured rows: fill every {BLANK} before loading",
            "drafted_from": {**window, "questions": len(drafted), "strata": dict(sorted(strata.items())),
                             "normalisation": NORMALISATION, "similar_at": SIMILAR_AT,
                             "captures_listed_at_most": MAX_CAPTURES},
            "questions": drafted}


def render(doc: dict) -> str:
    """The draft's text: two-space indented JSON, keys in the order written, one newline at the end."""
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


@dataclass(frozen=True)
class Draft:
    """A drafted catalog and what it was drafted from."""

    document: dict
    rows: int
    candidates: int
    since: datetime | None
    until: datetime


def draft(conn: psycopg.Connection, window: Window, wanted: int, version: str | None,
          note: Callable[[str], None] = lambda _line: None) -> Draft:
    """Read the window's candidates (the runner's connection, autocommit) and draft the catalog."""
    if not 1 <= wanted <= MAX_QUESTIONS:
        raise EvalledgerError(f"--questions {wanted}: between 1 and {MAX_QUESTIONS}")
    bound = windows.capture_bound(conn)
    upper = min(window.until, bound) if window.until is not None else bound
    lower = window.since.resolve(bound) if window.since is not None else None
    if lower is not None and lower >= upper:
        raise EvalledgerError(f"--since {iso(lower)} is not before the window's end {iso(upper)}: the window "
                              "[since, until) would be empty")
    params = {"since": lower, "until": upper, "tool": window.tool, "remote": window.remote, "max_rows": window.limit}
    with conn.transaction(), conn.cursor(name="catalog_draft") as cur:
        conn.execute(QUERIES["draft_whole_plan"])
        cur.itersize = FETCH
        cur.execute(QUERIES["draft_candidates"], params)
        groups, read, textless = gather(cur)
    note(f"read {read} captured rows, {len(groups)} distinct after normalising"
         + (f" ({textless} with no letter or digit left out)" if textless else ""))
    if not groups:
        raise EvalledgerError(f"no captured row to draft from in created_at >= {iso(lower)} and < {iso(upper)}"
                              if lower else f"no captured row to draft from before {iso(upper)}")
    questions = pick(groups, wanted)
    reps = [q.candidate.rep for q in questions]
    retrieved = {cid: (slugs, chunks, sources) for cid, slugs, chunks, sources in conn.execute(
        QUERIES["draft_retrieved"], {"ids": [r[3] for r in reps], "created": [r[2] for r in reps]})}
    described = {"kind": "capture", "since": iso(lower) if lower else None, "until": iso(upper),
                 "tool": window.tool, "remote": window.remote, "limit": window.limit, "rows": read}
    return Draft(document(questions, retrieved, described, version), read, len(groups), lower, upper)


# -- the blanks a person fills -------------------------------------------------------------------

def blanks(value, path: tuple = ()) -> Iterable[tuple[tuple, str]]:
    """Every (JSON path, text) of a string in value that is a blank still to fill, in document order."""
    if isinstance(value, str):
        if value.startswith(BLANK):
            yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from blanks(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from blanks(item, (*path, i))
