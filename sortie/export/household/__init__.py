"""The household family's exports: planner rounds as SFT rows and DPO pairs, EMMOE's folders.

``planner.py`` replays a stored run's rounds as the planner's requests and answers,
``rows.py`` makes the SFT rows and DPO pairs of them, ``examples.py`` the in-context examples
``homiebot`` shows, and ``emmoe.py`` writes a run in EMMOE's own folders.
"""
