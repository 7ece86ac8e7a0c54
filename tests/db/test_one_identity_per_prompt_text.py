"""Issue 37, item 1: one identity per prompt text. AGT-902's prompt spelt differently (a trailing
space, CRLF line ends, a zero-width space, a no-break space) was registered as AGT-901's, and
AGT-902's own tuner was then admitted as the reviewer of its runs: independence compared exact
hashes. Tried as the owner's and the runner's own logins, with every normalisation step, a
paraphrase (the documented limit), and two sessions racing (docs/guards.md, section 29)."""

from __future__ import annotations

import unicodedata

import pytest
from psycopg import errors

from evalledger.suites.brain_eval import brains
from tests.builders import prompt_hash, run_fields, start_run
from tests.conftest import OTHER_REVIEWER_ROLE
from tests.db.insider_logins import in_thread, logins, refused, wait_until_waiting  # noqa: F401 (fixture)

MODEL = "anthropic:claude-sonnet-4-6"
PROMPT = "You are AGT-902, the action brain.\nPropose actions only from your levers: café.\n"
# Each spelling differs from PROMPT by one normalisation step alone.
SPELLINGS = {
    "a trailing space": PROMPT.replace("brain.\n", "brain. \n"),
    "a trailing tab": PROMPT.replace("brain.\n", "brain.\t\n"),
    "CRLF line ends": PROMPT.replace("\n", "\r\n"),
    "CR line ends": PROMPT.replace("\n", "\r"),
    "a zero-width space": PROMPT.replace("action", "ac\u200btion"),
    "a zero-width joiner": PROMPT.replace("action", "ac\u200dtion"),
    "a word joiner": PROMPT.replace("action", "ac\u2060tion"),
    "a byte-order mark": "\ufeff" + PROMPT,
    "a no-break space": PROMPT.replace("the action", "the\u00a0action"),
    "a narrow no-break space": PROMPT.replace("the action", "the\u202faction"),
    "an ideographic space": PROMPT.replace("the action", "the\u3000action"),
    "an em space": PROMPT.replace("the action", "the\u2003action"),
    "NFD": unicodedata.normalize("NFD", PROMPT),
}
REFUSAL = r"evalledger: AGT-901's system prompt is AGT-902's spelt differently \(the same once normalised\)"


@pytest.fixture
def agt_902(admin, logins, reviewers):
    """AGT-902's prompt registered, and its tuner (the other reviewer)."""
    brains.add(logins("owner"), "AGT-902", MODEL, PROMPT)
    tuner = reviewers[OTHER_REVIEWER_ROLE]
    admin.execute("INSERT INTO evalledger.prompt_tuner (target_id, user_id) VALUES ('AGT-902', %s)", (tuner,))
    return tuner


@pytest.mark.parametrize("step", sorted(SPELLINGS))
def test_agt_902s_prompt_spelt_differently_is_not_another_prompt(admin, logins, agt_902, step):
    """Refused as the owner's login, naming both brains; so no run of AGT-901 carries the spelling
    and AGT-902's tuner reviews none (the runner's login is told the prompt is not AGT-901's)."""
    spelling = SPELLINGS[step]
    assert spelling != PROMPT and prompt_hash(spelling) != prompt_hash(PROMPT)
    owner, runner = logins("owner"), logins("runner")
    with refused(admin, errors.CheckViolation, REFUSAL, "brain_version_one_spelling_per_prompt"):
        brains.add(owner, "AGT-901", MODEL, spelling)
    with refused(admin, errors.ForeignKeyViolation, r"evalledger: AGT-901 has no registered version .*",
                 "brain_eval_log_prompt_registered"):
        start_run(runner, registry=admin, question_count=3, reviewer_user_id=agt_902,
                  **run_fields("AGT-901", system_prompt_hash=prompt_hash(spelling)))
    # The database's normal form is the one each step is undone by.
    assert admin.execute("SELECT evalledger.prompt_normal_v1(%s) = evalledger.prompt_normal_v1(%s)",
                         (spelling, PROMPT)).fetchone()[0]


def test_the_other_way_round_and_the_same_text_and_the_brains_own_spellings(admin, logins, agt_902):
    """Whichever brain registered first, the other's spelling is refused; a brain may spell its own
    prompt anew while no other brain has it; the same text stays one prompt both brains own (its
    tuner then independent of neither label's runs, as before), and from then on neither brain adds
    a spelling the other lacks."""
    owner = logins("owner")
    brains.add(owner, "AGT-901", MODEL, "You are AGT-901.\n")
    assert brains.add(owner, "AGT-901", MODEL, "You are AGT-901. \r\n")[1]
    with refused(admin, errors.CheckViolation,
                 r"evalledger: AGT-902's system prompt is AGT-901's spelt differently \(the same once normalised\)",
                 "brain_version_one_spelling_per_prompt"):
        brains.add(owner, "AGT-902", MODEL, "You are AGT-901.\r\n")
    shared, added = brains.add(owner, "AGT-901", MODEL, PROMPT)
    assert added and shared.system_prompt_hash == prompt_hash(PROMPT)
    with refused(admin, errors.CheckViolation,
                 r"evalledger: AGT-902's system prompt is AGT-901's spelt differently \(the same once normalised\)",
                 "brain_version_one_spelling_per_prompt"):
        brains.add(owner, "AGT-902", MODEL, SPELLINGS["CRLF line ends"])
    with pytest.raises(errors.CheckViolation, match="is not independent of this run's system prompt"):
        start_run(logins("runner"), registry=admin, question_count=3, reviewer_user_id=agt_902,
                  **run_fields("AGT-901", system_prompt_hash=prompt_hash(PROMPT)))


def test_a_paraphrase_is_another_prompt_the_documented_limit(admin, logins, agt_902):
    """Normalisation makes one spelling of a text, not one meaning: a paraphrase, a homoglyph (a
    Cyrillic о for the Latin o) or a space added inside a line is a prompt of its own, and AGT-902's
    tuner is independent of it (docs/guards.md, section 29, says what the rule then relies on)."""
    owner = logins("owner")
    for other in ("You are AGT-902, the action brain.\nOnly propose actions from your levers: café.\n",
                  PROMPT.replace("You", "Y\u043eu"), PROMPT.replace("the action", "the  action")):
        assert brains.add(owner, "AGT-901", MODEL, other)[1]
    assert start_run(logins("runner"), registry=admin, question_count=3, reviewer_user_id=agt_902,
                     **run_fields("AGT-901", system_prompt_hash=prompt_hash(other)))


@pytest.mark.parametrize("isolation", ["read committed", "repeatable read"])
def test_two_brains_registering_two_spellings_at_once(admin, logins, isolation):
    """Two owner sessions register AGT-902's prompt and AGT-901's CRLF spelling of it at once: the
    second waits for the first and is refused (READ COMMITTED), or is refused for its isolation."""
    first, second = logins("owner", autocommit=False), logins("owner", autocommit=False)
    second.execute(f"SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL {isolation}")
    second.commit()  # the characteristics bind the transactions after this one
    brains.add(first, "AGT-902", MODEL, PROMPT)
    second.execute("SELECT 1")  # its snapshot, taken before the first commits
    thread, outcome = in_thread(lambda: brains.add(second, "AGT-901", MODEL, SPELLINGS["CRLF line ends"]))
    if isolation == "read committed":
        wait_until_waiting(admin, "evalledger_test17_owner")
    first.commit()
    thread.join(20)
    second.rollback()
    error = outcome.get("error")
    if isolation == "read committed":
        assert isinstance(error, errors.CheckViolation) and error.diag.constraint_name == \
            "brain_version_one_spelling_per_prompt", outcome
    else:
        assert isinstance(error, errors.InvalidTransactionState), outcome
    assert admin.execute("SELECT array_agg(target_id) FROM evalledger.brain_version").fetchone()[0] == ["AGT-902"]
