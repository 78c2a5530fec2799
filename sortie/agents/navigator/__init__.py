"""The learned rescue navigator: a small visuomotor policy with memory (trained by BC + DAgger)."""

from sortie.agents.navigator.agent import NavigatorAgent

__all__ = ["NavigatorAgent"]
