import pytest

SECRET = "sk-test-SECRET-a9f3e1c7b5d2"
"""A made-up API key: tests check that it reaches the server and nothing else."""


@pytest.fixture
def secret(monkeypatch) -> str:
    """Put the made-up key in the environment, as a user would."""
    monkeypatch.setenv("SORTIE_MODEL_API_KEY", SECRET)
    for name in ("SORTIE_MODEL_BASE_URL", "SORTIE_MODEL_NAME", "SORTIE_MODEL_CACHE"):
        monkeypatch.delenv(name, raising=False)
    return SECRET


FAST = {
    "backoff": "0.001",
    "backoff_max": "0.005",
    "timeout": "2",
    "max_retries": "3",
    "check_content": "false",
}
"""Client settings that keep retries in tests to milliseconds, and a run's preflight to the
server check (scripted answers are not spent on the content check, tested on its own)."""
