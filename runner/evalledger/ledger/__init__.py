"""Tamper evidence: the journal's seal, digests, verify and proofs (check.py needs nothing but Python)."""
