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


def test_version_is_the_packages():
    """The version written into records and stores is the one the package is built with."""
    import tomllib
    from pathlib import Path

    pyproject = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    assert sortie.__version__ == pyproject["project"]["version"]
