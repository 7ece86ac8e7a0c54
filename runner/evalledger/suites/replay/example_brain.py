"""A scripted brain for `run replay`'s worked example (docs/replay.md): a keyword search over a
small fixed corpus, answering the replay's JSON contract.

As a command adapter, one query per process::

    evalledger run replay --brain-version v1 --command 'python -m evalledger.suites.replay.example_brain'

or in-process (``--python evalledger.suites.replay.example_brain:answer``). It answers in the mode
it is asked for (``vector_enabled`` as the request says: this brain has only a keyword path, so
both modes retrieve alike), and deterministically: the same query retrieves the same pages in the
same order with the same latency. ``EXAMPLE_BRAIN_DROP_SOURCE=S`` (or ``--drop-source S``) plays
a brain version that lost source S: its pages are no longer retrieved (``without_wiki``: one that
lost the wiki). ``EXAMPLE_BRAIN_KEYWORD_ONLY=1``
plays a brain that cannot answer in vector mode: it declines the rows captured with vector search.
"""

from __future__ import annotations

import json
import os
import re
import sys

# slug -> (source, chunk ids, keywords)
CORPUS = {
    "accounts/acme": ("crm", [101, 102], {"acme", "renewal", "renewals", "account", "risk"}),
    "accounts/globex": ("crm", [111, 112], {"globex", "renewal", "renewals", "account", "churn"}),
    "playbooks/renewal-risk": ("wiki", [201, 202, 203], {"renewal", "renewals", "risk", "playbook", "churn"}),
    "playbooks/onboarding": ("wiki", [211], {"onboarding", "playbook", "setup", "account"}),
    "tickets/4411": ("support", [301], {"api", "authorization", "token", "fail", "fails", "error"}),
    "tickets/4420": ("support", [311, 312], {"api", "rate", "limit", "error", "429"}),
    "docs/api-auth": ("wiki", [221, 222], {"api", "authorization", "bearer", "token", "auth"}),
    "docs/pricing": ("wiki", [231], {"pricing", "price", "plan", "discount", "renewal"}),
}
MAX_RESULTS = 4


def answer(request: dict, drop_source: str | None = None) -> dict:
    """The reply to one replay request (docs/replay.md, "The adapter contract")."""
    drop_source = drop_source if drop_source is not None else os.environ.get("EXAMPLE_BRAIN_DROP_SOURCE") or None
    if request.get("vector_enabled") and os.environ.get("EXAMPLE_BRAIN_KEYWORD_ONLY") == "1":
        return {"replayable": False, "reason": "this brain version has no vector path"}
    words = set(re.findall(r"[a-z0-9]+", str(request.get("query", "")).lower()))
    scored = sorted(((len(words & keywords), slug) for slug, (source, _, keywords) in CORPUS.items()
                     if source != drop_source and words & keywords),
                    key=lambda hit: (-hit[0], hit[1]))[:MAX_RESULTS]
    slugs = [slug for _, slug in scored]
    chunks = [chunk for slug in slugs for chunk in CORPUS[slug][1]]
    sources = list(dict.fromkeys(CORPUS[slug][0] for slug in slugs))
    return {"retrieved_slugs": slugs, "retrieved_chunk_ids": chunks, "source_ids": sources,
            "vector_enabled": bool(request.get("vector_enabled")), "expansion_applied": False,
            "detail_resolved": request.get("detail") or "medium", "latency_ms": 40 + 10 * len(slugs)}


def without_wiki(request: dict) -> dict:
    """The reply of a brain version that lost its wiki source (docs/replay.md's failing example)."""
    return answer(request, drop_source="wiki")


def main(argv: list[str] | None = None) -> int:
    """Read one request object on stdin, print its reply on stdout."""
    args = list(sys.argv[1:] if argv is None else argv)
    drop = None
    if args[:1] == ["--drop-source"] and len(args) == 2:
        drop = args[1]
    elif args:
        print("usage: python -m evalledger.suites.replay.example_brain [--drop-source SOURCE]", file=sys.stderr)
        return 2
    try:
        request = json.load(sys.stdin)
    except json.JSONDecodeError as exc:
        print(f"example_brain: the request is not JSON: {exc.msg}", file=sys.stderr)
        return 1
    json.dump(answer(request, drop), sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
