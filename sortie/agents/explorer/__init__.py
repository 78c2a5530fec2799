"""The classical explorer baseline: occupancy map, frontiers, semantic recognition, memory."""

from sortie.agents.explorer.agent import ExplorerAgent, NoMemoryExplorer

__all__ = ["ExplorerAgent", "NoMemoryExplorer"]
