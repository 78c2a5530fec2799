"""``sortie train navigator``: the learned rescue navigator, by behaviour cloning and DAgger.

``pipeline`` runs the phases in order (training episodes disjoint from the committed suites,
the oracle's run, its demos export, BC, DAgger rounds, the evaluation run) and ``phases``
times them; ``episodes`` generates and checks the training episodes; ``data`` reads the demos
into sequences; ``learning`` fits the network; ``dagger`` plays the learner and has the
oracle label what it visits.
"""
