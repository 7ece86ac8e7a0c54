"""Tests for evalledger (a package so `tests.standin` imports from the repo root)."""
