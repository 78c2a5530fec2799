"""Contract suites and test doubles shipped with sortie, for its tests and plug-in authors."""

from sortie.testing.backend_contract import BackendContract
from sortie.testing.scripted import ScriptedBackend, glide

__all__ = ["BackendContract", "ScriptedBackend", "glide"]
