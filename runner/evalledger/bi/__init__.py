"""The readers' side of the ledger: the dashboards' panels with their filters, server-rendered
charts, the judges' agreement with reviewers, and the self-contained HTML report."""
