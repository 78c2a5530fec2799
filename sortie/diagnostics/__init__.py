"""Diagnostics beyond the score tables: the perception probe, world views and stepping speed."""
