"""Household planners: the privileged oracle, a random planner, and the plans they share."""
