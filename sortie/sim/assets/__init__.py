"""Procedural assets: functions that add recognisable objects to a ``WorldKit``."""
