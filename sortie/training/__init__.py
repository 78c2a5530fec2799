"""Training planners on sortie's own data, and scoring them: EMMOE's loop, end to end.

``sortie train homiebot`` (``sortie.training.loop``) exports the oracle's rounds on the train
split, fine-tunes a base model with TRL, serves it with ``transformers serve`` on loopback,
and scores ``homiebot`` with it and with the untrained base on the held-out test split.
"""
