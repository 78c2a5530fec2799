"""Rescue (RescueBench): find the casualty from clues, carry them back, hand them off."""
