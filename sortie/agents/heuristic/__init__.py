"""The ``heuristic`` aerial agent: keyword rules, semantic blobs, depth geometry and OCR."""

from sortie.agents.heuristic.agent import HeuristicAgent

__all__ = ["HeuristicAgent"]
