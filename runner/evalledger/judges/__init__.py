"""The judge layer every judged suite shares: model specs, providers, pricing and money, the call
options, JSON repair, and the one entry point a suite's run uses: panel.Panel.

Import order has no cycles: specs <- pricing <- money <- context <- limits <- sdks <- providers <- options,
panel; repair stands alone. It imports nothing of evalledger but core. Only sdks imports the provider SDKs (slow to import), and only when a run first calls their
provider, so importing any of these modules is cheap.
"""

# Where a judge's reply comes from: a live call, or the replies recorded with evalledger.
LIVE, RECORDED = "live", "recorded"
JUDGE_MODES = ("auto", LIVE, RECORDED)

# How long a call keeps retrying 429s and 5xx, from its first attempt (--deadline).
DEFAULT_DEADLINE_S = 600
