"""Agents driven by a multimodal chat model over the OpenAI-compatible client.

``mllm-rescue`` walks a rescue mission with discrete commands (RescueBench-style);
``mllm-aerial`` flies with structured primitives (MissionBench-style); ``homiebot`` plans
household tasks subtask by subtask (EMMOE-style).
"""

from sortie.agents.mllm.aerial import MllmAerialAgent
from sortie.agents.mllm.household import HomieBotAgent
from sortie.agents.mllm.rescue import MllmRescueAgent

__all__ = ["HomieBotAgent", "MllmAerialAgent", "MllmRescueAgent"]
