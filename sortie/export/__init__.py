"""Training data from stored runs: SFT and DPO sets for planners, demonstrations for policies.

Every export replays the run's records on the embedded simulator (runs are deterministic), so
it has every observation the agent saw, images included, without ``--record-frames``; a step
that does not come out as recorded stops the export with the step named.
"""
