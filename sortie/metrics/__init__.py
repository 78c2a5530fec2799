"""Metrics: pure functions over finished trajectories and their numbers; no live objects."""
