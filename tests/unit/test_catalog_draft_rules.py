"""The draft's documented rules (docs/replay.md, "How the draft picks"), held to their examples:
the normalisation, the trigram similarity and its threshold, source ids from slugs, and the
round-robin pick over strata with near-duplicates folded."""

from __future__ import annotations

import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from evalledger.suites.brain_eval import drafting
from evalledger.suites.brain_eval.drafting import normalise, similarity, trigrams


def general(text: str) -> str:
    """The normalisation as documented, without the ASCII shortcut."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    bare = "".join(c for c in unicodedata.normalize("NFKD", folded) if not unicodedata.combining(c))
    return " ".join(drafting._TOKEN.findall(bare))


def test_the_documented_examples():
    assert normalise("  Rénewals at RISK for Acme?! ") == "renewals at risk for acme"
    assert normalise("API calls fail: Bearer [REDACTED]") == "api calls fail bearer redacted"
    assert normalise("snake_case-and.dots") == "snake case and dots"
    assert normalise("?!  ...") == ""
    assert normalise("Straße ＡＢＣ １２") == "strasse abc 12"
    assert trigrams("ab") == {" ab", "ab "}
    assert round(similarity("renewals at risk for acme", "renewal at risk for acme"), 2) == 0.81
    assert similarity("renewals at risk for acme", "renewals at risk for globex") < drafting.SIMILAR_AT
    assert drafting.SIMILAR_AT == 0.75 and drafting.MAX_CAPTURES == 100


@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_the_ascii_shortcut_is_the_rule(text):
    assert normalise(text) == general(text)


@given(st.text())
def test_normalising_twice_changes_nothing(text):
    assert normalise(normalise(text)) == normalise(text)


def test_source_ids_from_slugs():
    assert drafting.source_id("accounts/acme") == "accounts:acme"
    assert drafting.source_id("wiki/Pricing Page (v2)") == "wiki:Pricing-Page--v2-"
    assert drafting.source_id("/leading") == "s:leading"
    assert len(drafting.source_id("x" * 100)) == 64


def rows(*specs):
    """draft_candidates' lines of captured rows (id, text, tool, detail, remote, flagged), one per
    text (lower ids are newer), packed as the query packs them."""
    by_text: dict[str, list] = {}
    for cid, text, tool, detail, remote, flagged in specs:
        by_text.setdefault(text, []).append((cid, f"2026-12-01T00:00:{99 - cid:02d}.000000Z", tool, detail, remote,
                                             flagged))
    lines = []
    for text, found in sorted(by_text.items()):
        packed = max(f"{int(f)}{int(r)}{at}{cid:020d} {tool} {detail or '-'}" for cid, at, tool, detail, r, f in found)
        newest = [f"{at} {cid}" for cid, at, *_ in sorted(found, key=lambda x: (x[1], x[0]), reverse=True)]
        lines.append((text, len(found), packed, newest))
    return lines


def test_round_robin_over_strata_prefers_flagged_then_remote_then_the_most_asked():
    groups, read, textless = drafting.gather(rows(
        (1, "acme renewals", "query", None, False, False),
        (2, "ACME renewals!", "query", None, True, False),      # the same question, asked remotely
        (3, "globex churn", "query", None, True, False),
        (4, "initech pricing", "query", None, True, True),       # flagged by replay
        (5, "hooli tickets", "search", None, False, False),
        (6, "wonka expansion", "search", None, False, False),
        (7, "acme renewal", "search", None, False, False),       # a near-duplicate of 1-2
        (8, "...", "search", None, False, False)))
    assert (read, textless, len(groups)) == (8, 1, 6)
    assert groups["acme renewals"].count == 2 and groups["acme renewals"].rep[3] == 2
    picked = drafting.pick(groups, 4)
    # Round 1: query/none/remote offers the flagged one, search/none/local its newest (lower ids are
    # newer here); round 2 the most asked remote one, then the local one.
    assert [q.candidate.key for q in picked] == ["initech pricing", "hooli tickets", "acme renewals",
                                                 "wonka expansion"]
    total, listed = drafting.provenance(picked[2])
    assert total == 3 and [i for _, i in listed] == [2, 1, 7]   # its own row, then the newest folded in
    assert all(similarity(a.candidate.key, b.candidate.key) < drafting.SIMILAR_AT
               for a in picked for b in picked if a is not b)
