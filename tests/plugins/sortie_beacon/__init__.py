"""A mission family from outside sortie, for tests: find the beacon and ping it (``beacon``)."""
