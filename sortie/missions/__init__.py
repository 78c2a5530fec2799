"""Missions: the rules of each family as data plus named stages, and their gymnasium envs.

Missions drive a backend through its protocol only; they never import a simulator.
"""
