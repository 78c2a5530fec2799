"""The oracle and random agents play each family with the play that family names."""

import pytest

from sortie.agents.base import AGENTS, agent_families
from sortie.agents.baselines import ORACLES, RANDOMS, RandomOptions
from sortie.agents.oracle import OracleAgent
from sortie.agents.random_agent import RandomAgent
from sortie.core.actions import Move
from sortie.core.errors import UnknownNameError
from sortie.core.observation import Brief
from sortie.missions.registry import FAMILIES


class Still:
    """A play that stands still, for a family registered by a test."""

    def __init__(self, *given: object) -> None:
        self.given = given

    def act(self, observation: object) -> Move:
        return Move()


def brief(family: str) -> Brief:
    return Brief(family, "L1", "walk")


@pytest.mark.parametrize("name", FAMILIES.names())
def test_every_shipped_family_has_an_oracle_and_a_random_play(name):
    assert name in ORACLES and name in RANDOMS
    assert name in agent_families(AGENTS.get("oracle")) & agent_families(AGENTS.get("random"))


def test_a_family_that_names_its_plays_is_played_by_both_agents():
    """Registering the plays is all it takes: ``families`` follows the registries."""
    assert "pointgoal" not in agent_families(OracleAgent)
    with ORACLES.override("pointgoal", Still), RANDOMS.override("pointgoal", Still):
        assert "pointgoal" in agent_families(OracleAgent) & agent_families(RandomAgent)
        agent = RandomAgent(max_move=3.0)
        agent.reset(brief("pointgoal"), 7)
        assert agent.act(None) == Move()  # type: ignore[arg-type]
    play = agent._play
    assert isinstance(play, Still) and play.given[1:] == (7, RandomOptions(max_move=3.0))


def test_a_family_without_a_play_is_refused_naming_it():
    with pytest.raises(UnknownNameError, match=r"Unknown random play 'pointgoal'"):
        RandomAgent().reset(brief("pointgoal"), 0)


def test_the_oracle_passes_its_arguments_to_the_play():
    """The walking controller's settings reach the family's expert."""
    agent = OracleAgent(reach=1.2)
    agent.attach(object())  # type: ignore[arg-type]
    with ORACLES.override("pointgoal", Still):
        agent.reset(brief("pointgoal"), 0)
    play = agent._expert
    assert isinstance(play, Still) and play.given[2].reach == 1.2
