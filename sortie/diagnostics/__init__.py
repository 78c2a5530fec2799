"""Diagnostics beyond the score tables: the perception probe."""
