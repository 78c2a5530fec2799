"""The household family: a planner names subtasks, an executor runs them with skills."""
