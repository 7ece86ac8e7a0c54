"""Redact PII and credentials from free text, in linear time.

Rules, in the order they are applied (each match becomes ``[REDACTED]``):

1. Email: ``local@domain``. Local: 1-64 chars of ``[\\w.%+-]``, the whole run
   of such chars before the ``@`` (a longer run is not an email), or the
   part of it after an email it is glued to. Domain: dot-separated labels
   of ``[\\w-]``, the last one starting with a letter, so ``pkg@1.2.3``
   survives.
2. Bearer: ``bearer`` (any case, not inside a word or token), spaces/tabs,
   then an RFC 6750 token ``[A-Za-z0-9._~+/-]+=*``. Only the token is
   replaced; the word and spacing are kept as written, and trailing dots are
   kept as punctuation. A token of letters only must be 16+ chars, so prose
   like "the bearer of bad news" survives.
3. JWT: ``eyJ`` starting a base64url run, then ``.payload.signature``
   (base64url; the signature may be empty, as with ``alg: none``).
4. International phone: ``+`` (not after a word char or ``+``), then digit
   groups joined by one space, dot or dash, any of them possibly in
   parentheses as in ``+44 (0)20``; 8-15 digits. Groups past the 15th digit
   are left alone.
5. Card: 13-19 digits passing Luhn, either ungrouped or as groups joined by
   single spaces or dashes: first group 4 digits, the others 3-6. Groups are
   atomic (never split). In a longer run of 3-6-digit groups a card must
   start within 3 groups of the run's start (or of the previous card) or end
   within 3 groups of its end; this keeps long runs of numbers linear.
6. SSN: ``ddd-dd-dddd`` or ``ddd dd dddd``.
7. US phone: ``ddd-ddd-dddd``, ``ddd.ddd.dddd`` or ``(ddd) ddd-dddd`` (after
   the parenthesis any one of space, dot or dash, or nothing), optionally
   after ``1`` and the same kind of separator. Three space-separated numbers
   are not taken for a phone: prose and tables are full of them.

Digit boundaries (rules 4-7): a match never touches another ASCII digit and
never continues a number across a dot (nor a dash, for SSN and US phone), so
part of a longer digit run, decimal, version or date is never redacted.
A comma is a plain delimiter, as in CSV. Only ASCII digits count.
"""

import re
from itertools import accumulate

REDACTED = "[REDACTED]"

# Every pattern opens with a literal or a single character class and puts its
# boundary lookbehinds after that first item (stepping back over it with "."):
# sre only skips through non-candidate text in C when the first item is a
# literal or a class, which makes these passes several times faster.

_BEARER = re.compile(
    r"([Bb](?<![\w.~+/-].)[Ee][Aa][Rr][Ee][Rr][ \t]+)"
    # Stops "Bearer Bearer <tok>" from spending the second keyword as the
    # first one's (non-qualifying) token.
    r"(?![Bb][Ee][Aa][Rr][Ee][Rr][ \t])"
    r"([A-Za-z0-9._~+/-]+=*)"
)

_JWT = re.compile(
    r"eyJ(?<![A-Za-z0-9_-]eyJ)[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*"
)

# Emails are found from the "@" outwards: scanning for a literal is far cheaper
# than trying a local part at every word start, and a flood of "@" that never
# forms a domain is rejected in C without reaching Python.
_EMAIL_DOMAIN = re.compile(r"@(?:[\w-]{1,63}\.){1,32}[^\W\d_][\w-]{0,62}")
# Searched with pos/endpos so the lookbehind still sees text before the
# window: a local-part run longer than 64 chars is left whole rather than
# having its tail redacted.
_EMAIL_LOCAL = re.compile(r"(?<![\w.%+-])[\w.%+-]{1,64}\Z")
_EMAIL_LOCAL_RUN = re.compile(r"[\w.%+-]{1,64}")

_INTL_PHONE = re.compile(
    r"\+(?<![\w+].)"
    # Cheap filter so "+1", "+5%" and the like never reach the callback.
    r"(?=(?:[ .()-]{0,2}[0-9]){8})"
    r"[0-9]{1,15}"
    r"(?:[ .-]?\([0-9]{1,6}\)[0-9]{0,15}|[ .-][0-9]{1,15}){0,14}"
    r"(?![0-9])"
)

_CARD = re.compile(
    r"[0-9](?<![0-9].)(?<![0-9]\..)"
    # Cheap filter so years, prices and short IDs never reach the callback.
    r"(?=[0-9 -]{12})"
    # Possessive, so a long run of groups is one pass with no backtracking
    # bookkeeping; the callback checks how the run ends instead.
    r"[0-9]{0,18}+(?:[ -][0-9]{1,19}+)*+"
)
# After a card run: the last group is cut from a longer digit run, or is the
# integer part of a decimal.
_NUMBER_GOES_ON = re.compile(r"\.?[0-9]")

# SSNs and US phones share their boundaries and are never replaced through a
# callback, so one pattern (one scan of digit-heavy text) serves both.
_SSN_OR_US_PHONE = re.compile(
    r"[0-9(](?<![0-9+].)(?<![0-9][.-].)"
    # The first char is consumed above, so each branch checks it with a
    # lookbehind: "(" opens an area code, "1" may be a country prefix, any
    # digit may start an SSN or an area code.
    r"(?:(?<=[0-9])[0-9]{2}(?:-[0-9]{2}-| [0-9]{2} )"
    r"|(?<=\()[0-9]{3}\)[ .-]?[0-9]{3}[ .-]"
    r"|(?<=1)[ .-]?\([0-9]{3}\)[ .-]?[0-9]{3}[ .-]"
    r"|(?<=1)[.-][0-9]{3}[.-][0-9]{3}[.-]"
    r"|(?<=[0-9])[0-9]{2}[.-][0-9]{3}[.-])"
    r"[0-9]{4}"
    r"(?![0-9])(?![.-][0-9])"
)

_DIGIT = re.compile(r"[0-9]")
_DIGIT_RUN = re.compile(r"[0-9]+")
_CARD_SEP = re.compile(r"[ -]")
# Every card contains a group of at least 4 digits; runs like "1 2 3 ..." are
# dismissed without splitting them.
_CARD_GROUP = re.compile(r"[0-9]{4}")
_DOUBLED = bytes.maketrans(b"0123456789", b"0246813579")
# Over the byte string of group lengths: a group that can be a card by
# itself, and a segment of groups that can be part of a grouped card (at
# least 3 groups, since two groups of at most 6 digits fall short of 13).
_LONG_GROUP = re.compile(rb"[\x0d-\x13]")
_SEGMENT = re.compile(rb"[\x03-\x06]{3,}")
# How many leading or trailing groups of a segment a grouped card may skip.
_EDGE_SKIP = 3


def _luhn_ok(digits: str) -> bool:
    """Return whether an ASCII digit string passes the Luhn check."""
    # Summing bytes keeps the per-digit work in C; 48 is ord("0").
    b = digits.encode()
    total = sum(b[-1::-2]) + sum(b[-2::-2].translate(_DOUBLED)) - 48 * len(b)
    return total % 10 == 0


def _bearer(m: re.Match) -> str:
    """Redact the token after a bearer keyword if it looks like a credential."""
    token = m.group(2)
    stripped = token.rstrip(".")
    if not stripped or (len(stripped) < 16 and stripped.isalpha()):
        return m.group(0)
    return m.group(1) + REDACTED + token[len(stripped):]


def _intl_phone(m: re.Match) -> str:
    """Redact a +CC number of 8-15 digits, trimming trailing groups past 15."""
    s = m.group(0)
    count = len(s) - sum(map(s.count, "+ .-()"))
    if count <= 15:
        return REDACTED if count >= 8 else s
    count = 0
    cut = 0
    for run in _DIGIT_RUN.finditer(s):
        n = len(run.group())
        if count + n > 15:
            break
        count += n
        cut = run.end()
    return REDACTED + s[cut:] if count >= 8 else s


def _segment_cards(digits: str, lens: bytes, at: list, lo: int, hi: int) -> list:
    """Return (start, end) group spans of cards found at the ends of a segment."""
    # Only windows near either end are tried: scanning every offset of a long
    # run of 4-digit groups would cost a Python-level Luhn check per group.
    spans = []
    found = True
    while found:
        found = None
        for i in range(lo, min(lo + _EDGE_SKIP + 1, hi)):
            a = at[i]
            if at[hi] - a < 13:
                break
            if lens[i] != 4:
                continue
            # Longest window first, so a 19-digit card is not cut to 16.
            for j in range(min(hi, i + 6), i + 2, -1):
                n = at[j] - a
                if n < 13:
                    break
                if n <= 19 and _luhn_ok(digits[a:at[j]]):
                    found = (i, j)
                    break
            if found:
                spans.append(found)
                lo = found[1]
                break
    # The left search above already tried every start up to here.
    first = lo + _EDGE_SKIP + 1
    tail = []
    found = True
    while found:
        found = None
        for j in range(hi, max(first + 2, hi - _EDGE_SKIP - 1), -1):
            b = at[j]
            if b - at[first] < 13:
                break
            for i in range(max(first, j - 6), j - 2):
                n = b - at[i]
                if n < 13:
                    break
                if n <= 19 and lens[i] == 4 and _luhn_ok(digits[at[i]:b]):
                    found = (i, j)
                    break
            if found:
                tail.append(found)
                hi = found[0]
                break
    spans.extend(reversed(tail))
    return spans


def _card(m: re.Match) -> str:
    """Redact the cards in a matched run, leaving a group the number continues past."""
    s = m.group(0)
    tail = ""
    if _NUMBER_GOES_ON.match(m.string, m.end()):
        cut = max(s.rfind(" "), s.rfind("-"))
        if cut < 0:
            return s
        s, tail = s[:cut], s[cut:]
    return _cards_in_run(s) + tail


def _cards_in_run(s: str) -> str:
    """Redact the Luhn-valid cards made of whole groups in a run of digit groups."""
    if _CARD_GROUP.search(s) is None:
        return s
    groups = _CARD_SEP.split(s)
    if len(groups) == 1:
        return REDACTED if len(s) >= 13 and _luhn_ok(s) else s
    # The pattern caps groups at 19 digits, so each length fits in a byte and
    # the run's shape can be searched with a regex instead of a Python loop.
    lens = bytes(map(len, groups))
    spans = [
        (g.start(), g.end())
        for g in _LONG_GROUP.finditer(lens)
        if _luhn_ok(groups[g.start()])
    ]
    segments = [g.span() for g in _SEGMENT.finditer(lens)]
    if not spans and not segments:
        return s
    # Digit offset of groups[i]; its char offset in s is at[i] + i because
    # every separator is one char.
    at = list(accumulate(lens, initial=0))
    digits = "".join(groups)
    for lo, hi in segments:
        spans.extend(_segment_cards(digits, lens, at, lo, hi))
    if not spans:
        return s
    spans.sort()
    out = []
    last = 0
    for i, j in spans:
        out.append(s[last:at[i] + i])
        out.append(REDACTED)
        last = at[j] + j - 1
    out.append(s[last:])
    return "".join(out)


def _redact_emails(text: str) -> str:
    """Redact each email, found by its domain and then its local part."""
    out = []
    last = 0
    find_local = _EMAIL_LOCAL.search
    for m in _EMAIL_DOMAIN.finditer(text):
        at = m.start()
        local = find_local(text, at - 64 if at - 64 > last else last, at)
        if local is None:
            # Glued to the previous email ("a@b.com+c@d.com"): its run of
            # local chars began inside that email, so start where it ended.
            local = _EMAIL_LOCAL_RUN.fullmatch(text, last, at) if last else None
            if local is None:
                continue
        out.append(text[last:local.start()])
        out.append(REDACTED)
        last = m.end()
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


def scrub_pii(text: str) -> str:
    """Return text with emails, phones, SSNs, cards, JWTs and bearer tokens redacted."""
    # Emails first: no token can contain "@", while an email's local part can
    # look like the start of a JWT or follow a bearer keyword.
    if "@" in text:
        text = _redact_emails(text)
    text = _BEARER.sub(_bearer, text)
    if "eyJ" in text:
        text = _JWT.sub(REDACTED, text)
    if _DIGIT.search(text) is None:
        return text
    if "+" in text:
        text = _INTL_PHONE.sub(_intl_phone, text)
    text = _CARD.sub(_card, text)
    return _SSN_OR_US_PHONE.sub(REDACTED, text)
