"""Benchmark scrub_pii throughput against an email-only regex baseline."""

import random
import re
import time

from evalledger.suites.capture.scrub import scrub_pii

CORPUS_BYTES = 20_000_000
MB = 1_000_000

WORDS = (
    "the model answer judge rubric score prompt response evaluation panel "
    "reasoning step final output token context window temperature sample "
    "baseline regression run ledger correct incorrect partial because "
    "therefore however user asked assistant replied with a an of to in on "
    "for is was it this that which not be are have has"
).split()


def filler(rng: random.Random) -> str:
    """Return a token that looks like PII to a careless scrubber but is not."""
    return rng.choice(
        [
            str(rng.randint(0, 999)),
            str(rng.choice([2024, 2025, 2026])),
            f"${rng.randint(1, 9999)}.{rng.randint(0, 99):02d}",
            f"#{rng.randint(100000, 999999)}",
            f"v{rng.randint(0, 12)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}",
            f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
            f"2026-11-30T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:52Z",
            f"{rng.random():.3f}",
            f"{rng.randint(10**12, 10**16)}",
        ]
    )


def pii(rng: random.Random) -> str:
    """Return one piece of PII or one credential."""
    return rng.choice(
        [
            f"jane.doe{rng.randint(1, 99)}@example.com",
            "(555) 123-4567",
            "+44 20 7946 0958",
            "123-45-6789",
            "4111 1111 1111 1111",
            "Bearer abc123def456ghi789",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl",
        ]
    )


def corpus(rng: random.Random) -> str:
    """Return ~CORPUS_BYTES of eval-log-like lines, about 1 token in 250 PII."""
    # Sampling from a pool of lines keeps generation to a second or two.
    pool = []
    for _ in range(5000):
        tokens = []
        for _ in range(rng.randint(8, 30)):
            r = rng.random()
            if r < 0.004:
                tokens.append(pii(rng))
            else:
                tokens.append(filler(rng) if r < 0.1 else rng.choice(WORDS))
        pool.append(" ".join(tokens) + rng.choice([".\n", ".\n", ", "]))
    average = sum(map(len, pool)) / len(pool)
    return "".join(rng.choices(pool, k=int(CORPUS_BYTES / average)))


ADVERSARIAL = {
    "letters": "a" * MB,
    "ats": "@" * MB,
    "dotted local part": "a." * (MB // 2) + "@",
    "digits and spaces": "1 " * (MB // 2),
    "digits and dashes": "1-" * (MB // 2),
    "4-digit groups": "1234 " * (MB // 5),
    "card-like segments": "1234 1234 1234 1234 1 " * (MB // 22),
    "base64 with dots": "eyJa." * (MB // 5),
    "base64 chunks": ("Ab9_-" * 3 + ".") * (MB // 16),
    "bearer repeated": "Bearer " * (MB // 7),
    "dense emails": "a@b.cc " * (MB // 7),
    "dense cards": "4111 1111 1111 1111 " * (MB // 20),
    "dense intl phones": "+1 2 3 4 5 6 7 8 " * (MB // 17),
}


def timed(fn, text: str) -> float:
    """Return the seconds fn(text) takes."""
    start = time.perf_counter()
    fn(text)
    return time.perf_counter() - start


def main() -> None:
    text = corpus(random.Random(20261130))
    size = len(text.encode()) / MB
    email_only = re.compile(r"[\w.+-]+@[\w-]+\.[\w.-]+")

    # Best of two runs, alternating, so a burst of load on a shared machine
    # does not skew one side of the ratio alone.
    scrub_s = base_s = float("inf")
    for _ in range(2):
        scrub_s = min(scrub_s, timed(scrub_pii, text))
        base_s = min(base_s, timed(lambda t: email_only.sub("[REDACTED]", t), text))
    print(f"corpus size MB: {size:.1f}")
    print(f"corpus scrub MB/s: {size / scrub_s:.1f}")
    print(f"corpus baseline (email-only re.sub) MB/s: {size / base_s:.1f}")
    print(f"corpus scrub/baseline time ratio: {scrub_s / base_s:.2f}")
    for name, adv in ADVERSARIAL.items():
        seconds = timed(scrub_pii, adv)
        print(f"adversarial {name} (1 MB) MB/s: {len(adv) / MB / seconds:.1f}")


if __name__ == "__main__":
    main()
