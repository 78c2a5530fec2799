"""The embedded simulator: scene graph, procedural worlds, renderer, navigation, bodies.

It knows nothing of missions or scoring.
"""
