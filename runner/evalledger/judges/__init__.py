"""The judge layer every judged suite shares: model specs, providers, pricing, the panel, JSON repair.

Import order has no cycles: specs <- pricing <- context <- providers <- panel; repair stands alone. Only
providers and panel import the provider SDKs (slow to import), so commands import them late.
"""

# Where a judge's reply comes from: a live call, or the replies recorded with evalledger.
LIVE, RECORDED = "live", "recorded"
JUDGE_MODES = ("auto", LIVE, RECORDED)
