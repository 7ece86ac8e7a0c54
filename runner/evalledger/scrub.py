"""Redact PII and credentials from free text before it is stored or shown.

Every match becomes ``[REDACTED]``. Passes run in this order, each on the
output of the previous one:

1. Bearer token: the word ``bearer`` (any case, at a word start), spaces or
   tabs, then an RFC 6750 token ``[A-Za-z0-9._~+/-]+=*``. Only the token is
   replaced; the word and the spaces are kept as written. Trailing ``.`` is
   treated as sentence punctuation. The token must contain a non-letter or be
   at least 16 characters long, so prose ("the bearer of bad news") survives.
2. JWT: ``eyJ`` at the start of a base64url run, then ``.payload.signature``
   (base64url segments; the signature may be empty, as in ``alg: none``).
3. Email: a local part of 1-64 chars from ``[\\w.%+-]`` that starts a run of
   such chars, ``@``, one or more dot-terminated labels ``[\\w-]{1,63}``, and a
   final label that starts with a letter (so ``pkg@1.2.3`` survives).
4. International phone: ``+`` (not after a word char or ``+``), then digit
   groups joined by single space, dot or dash, one group optionally in
   parentheses; 8-15 digits in all. A longer run is cut back to its first
   groups holding at most 15 digits.
5. Card: a run of 13-19 digits, or groups joined by single spaces or dashes
   whose first group has 4 digits and the rest 3-6 digits, 13-19 digits in
   all; the digits must pass Luhn. Groups are atomic: a window of whole groups
   inside a longer grouped run may be redacted, never part of a group.
6. SSN: ``ddd-dd-dddd`` or ``ddd dd dddd``.
7. US phone: optional ``1`` prefix, ``(ddd)`` or ``ddd`` plus separator, then
   ``ddd``, a separator (space, dot or dash) and ``dddd``.

Digit boundaries (passes 4-7): a match never touches another ASCII digit, and
never continues a number across ``.``/``,`` (or ``-`` for SSN and phone), so
nothing inside a longer digit run, a decimal, a version string or a date is
ever half-redacted. Only ASCII digits count as digits.

Every pattern is a single scan whose quantifiers are bounded or separated by
disjoint delimiters, so running time is linear in the input length.
"""

import re

REDACTED = "[REDACTED]"

_BEARER = re.compile(
    # The lookahead stops "Bearer Bearer <tok>" from spending the second
    # keyword as the first one's (non-qualifying) token.
    r"\b([Bb][Ee][Aa][Rr][Ee][Rr][ \t]+)"
    r"(?![Bb][Ee][Aa][Rr][Ee][Rr]\b)"
    r"([A-Za-z0-9._~+/-]+=*)"
)

# Starting with the literal lets sre jump between "eyJ" occurrences in C; the
# lookbehind then rejects an "eyJ" glued to a longer base64url run.
_JWT = re.compile(
    r"eyJ(?<![A-Za-z0-9_-]eyJ)[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*"
)

# The lookbehind pins the start to the beginning of a local-part run, so a run
# longer than 64 chars is left whole instead of having its tail redacted, and
# each run is tried once rather than from every position inside it.
_EMAIL = re.compile(
    r"(?<![\w.%+-])[\w.%+-]{1,64}@(?:[\w-]{1,63}\.){1,32}[^\W\d_][\w-]{0,62}"
)

_INTL_PHONE = re.compile(
    r"(?<![\w+])\+[0-9]{1,15}"
    r"(?:[ .-]?\([0-9]{1,6}\)[0-9]{0,15}|[ .-][0-9]{1,15}){0,14}"
    r"(?![0-9])"
)

# The 13-char lookahead is a cheap filter: years, prices and short IDs never
# reach the Python callback.
_CARD = re.compile(
    r"(?<![0-9])(?<![0-9][.,])(?=[0-9 -]{13})"
    r"[0-9]{1,19}(?:[ -][0-9]{1,19})*"
    r"(?![0-9])(?![.,][0-9])"
)

_SSN = re.compile(
    r"(?<![0-9+])(?<![0-9][.,-])"
    r"[0-9]{3}(?:-[0-9]{2}-| [0-9]{2} )[0-9]{4}"
    r"(?![0-9])(?![.,-][0-9])"
)

_US_PHONE = re.compile(
    r"(?<![0-9+])(?<![0-9][.,-])"
    r"(?:1[ .-]?)?(?:\([0-9]{3}\)[ .-]?|[0-9]{3}[ .-])[0-9]{3}[ .-][0-9]{4}"
    r"(?![0-9])(?![.,-][0-9])"
)

_DIGIT = re.compile(r"[0-9]")
_DIGIT_RUN = re.compile(r"[0-9]+")
_CARD_SEP = re.compile(r"[ -]")
_DOUBLED = str.maketrans("0123456789", "0246813579")


def _luhn_ok(digits: str) -> bool:
    """Return whether an ASCII digit string passes the Luhn check."""
    # Summing bytes keeps the per-digit work in C; 48 is ord("0").
    total = (
        sum(digits[-1::-2].encode())
        + sum(digits[-2::-2].translate(_DOUBLED).encode())
        - 48 * len(digits)
    )
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
    count = 0
    cut = 0
    for run in _DIGIT_RUN.finditer(s):
        n = len(run.group())
        if count + n > 15:
            break
        count += n
        cut = run.end()
    if count < 8:
        return s
    return REDACTED + s[cut:]


def _card(m: re.Match) -> str:
    """Redact every Luhn-valid 13-19 digit window of whole groups in the run."""
    s = m.group(0)
    groups = _CARD_SEP.split(s)
    n = len(groups)
    if n == 1:
        return REDACTED if 13 <= len(s) <= 19 and _luhn_ok(s) else s
    out = []
    last = 0  # offset in s up to which text has been copied to out
    off = 0  # offset in s where groups[i] starts
    i = 0
    while i < n:
        g = groups[i]
        size = len(g)
        end = 0  # index past the last group of the redacted window, if any
        if 13 <= size <= 19:
            if _luhn_ok(g):
                end = i + 1
        elif size == 4:
            total = 4
            j = i + 1
            candidates = []
            while j < n and 3 <= len(groups[j]) <= 6:
                total += len(groups[j])
                j += 1
                if total > 19:
                    break
                if total >= 13:
                    candidates.append(j)
            for j in reversed(candidates):
                if _luhn_ok("".join(groups[i:j])):
                    end = j
                    break
        if end:
            stop = off + sum(len(x) for x in groups[i:end]) + (end - i - 1)
            out.append(s[last:off])
            out.append(REDACTED)
            last = stop
            off = stop + 1
            i = end
        else:
            off += size + 1
            i += 1
    if not out:
        return s
    out.append(s[last:])
    return "".join(out)


def scrub_pii(text: str) -> str:
    """Return text with emails, phones, SSNs, cards, JWTs and bearer tokens redacted."""
    text = _BEARER.sub(_bearer, text)
    if "eyJ" in text:
        text = _JWT.sub(REDACTED, text)
    if "@" in text:
        text = _EMAIL.sub(REDACTED, text)
    if _DIGIT.search(text) is None:
        return text
    if "+" in text:
        text = _INTL_PHONE.sub(_intl_phone, text)
    text = _CARD.sub(_card, text)
    text = _SSN.sub(REDACTED, text)
    text = _US_PHONE.sub(REDACTED, text)
    return text
