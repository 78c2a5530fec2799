import sortie


def test_public_api_is_pinned():
    """The names sortie exports are exactly these; changing them is a deliberate act."""
    assert sorted(sortie.__all__) == sorted(
        [
            "AGENTS",
            "BACKENDS",
            "FAMILIES",
            "WORDS",
            "WORLDS",
            "Action",
            "Agent",
            "Backend",
            "Brief",
            "ConfigError",
            "EpisodeSpec",
            "Event",
            "EventKind",
            "Family",
            "FamilyAction",
            "FamilySettings",
            "Fly",
            "Frames",
            "Interact",
            "InvalidAction",
            "MissionObservation",
            "MissionRuntime",
            "Move",
            "Observation",
            "Pose",
            "Registry",
            "SortieError",
            "StepOutcome",
            "StepPart",
            "StepRecord",
            "Trajectory",
            "Vocabulary",
            "WorldSpec",
            "__version__",
            "build_world",
            "load_suite",
            "read_trajectory",
            "run_episode",
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


def test_import_sortie_leaves_agents_and_runs_until_asked():
    """The agent and run contracts load on first use, so a served policy's import stays light."""
    import subprocess
    import sys

    code = (
        "import sys, sortie; before = sorted(m for m in sys.modules "
        "if m.startswith(('sortie.agents', 'sortie.run', 'sortie.missions.runtime'))); "
        "sortie.Agent, sortie.run_episode, sortie.MissionRuntime; print(before)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_each_lazy_name_is_its_modules_own():
    """``sortie.X`` and ``sortie.core.X`` are the very objects their modules define."""
    import importlib

    import sortie.core

    for package in (sortie, sortie.core):
        for module, names in package._HOME.items():
            for name in names.split():
                own = getattr(importlib.import_module(module), name)
                assert getattr(package, name) is own, f"{package.__name__}.{name}"
    assert sorted(sortie.core.__all__) == sorted(sortie.core._MODULE_OF)
