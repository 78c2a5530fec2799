"""Running episodes: the episode loop and recorders, jobs, the local executor, the results store.

``run_episode`` plays one episode; ``run_suite`` plays a suite in this process; ``sortie run``
(``batch``) turns suites × repeats into jobs, runs them on ``executor`` and commits each
finished episode to the SQLite ``store``, so a killed run resumes where it stopped.
"""
