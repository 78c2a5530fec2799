"""Running episodes: the episode loop, recorders, and running a suite with an agent."""
