import sortie


def test_public_api_is_pinned():
    """The names sortie exports are exactly these; changing them is a deliberate act."""
    assert sorted(sortie.__all__) == sorted(
        [
            "BACKENDS",
            "WORLDS",
            "Action",
            "Backend",
            "ConfigError",
            "EpisodeSpec",
            "Event",
            "EventKind",
            "Fly",
            "Frames",
            "Interact",
            "Move",
            "Observation",
            "Pose",
            "Registry",
            "SortieError",
            "StepOutcome",
            "WorldSpec",
            "__version__",
            "build_world",
            "load_suite",
        ]
    )
    for name in sortie.__all__:
        assert hasattr(sortie, name), name
