"""Diagnostics beyond the score tables: the perception probe, world views, the fingerprint."""
