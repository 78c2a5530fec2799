"""Aerial missions (MissionBench): reporting, inspection, manipulation and patrol by multirotor."""
