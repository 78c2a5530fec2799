"""Register sortie's gymnasium ids when gymnasium is imported, without importing it first.

``import sortie`` promises ``gymnasium.make("sortie/Rescue-v1")``, but importing gymnasium
(and numpy with it) would cost the command line and every worker a tenth of a second they
mostly do not need. So if gymnasium is already imported the ids are registered at once;
otherwise a finder waits on ``sys.meta_path`` for the first ``import gymnasium`` and registers
the ids right after gymnasium's own module has run, then steps aside. Gymnasium 1.x has no
plug-in entry point that would do this for us.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from importlib.machinery import ModuleSpec

GYMNASIUM = "gymnasium"


def register_with_gymnasium() -> None:
    """Register the ids now if gymnasium is imported, else as soon as it is."""
    if GYMNASIUM in sys.modules:
        _register()
    elif not any(isinstance(finder, _AfterGymnasium) for finder in sys.meta_path):
        sys.meta_path.insert(0, _AfterGymnasium())


def _register() -> None:
    from sortie.missions.gym_ids import register_envs

    register_envs()


class _AfterGymnasium:
    """Finds gymnasium as the other finders do, and registers sortie's ids once it has run.

    A meta path finder needs only ``find_spec`` (not subclassing ``importlib.abc``, whose
    import alone would cost more than the rest of ``import sortie``).
    """

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname != GYMNASIUM:
            return None
        sys.meta_path.remove(self)  # once only, and so the search below does not find us
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        run_module = spec.loader.exec_module

        def run_then_register(module: ModuleType) -> None:
            run_module(module)
            _register()

        spec.loader.exec_module = run_then_register  # type: ignore[method-assign]
        return spec
