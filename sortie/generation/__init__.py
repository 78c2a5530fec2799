"""Seeded episode generation: rescue episodes per level, clues, oracle validation, suites."""

from sortie.generation.rescue import (
    GENERATOR,
    GENERATOR_VERSION,
    generate_episode,
    generate_rescue,
    parse_level,
)

__all__ = ["GENERATOR", "GENERATOR_VERSION", "generate_episode", "generate_rescue", "parse_level"]
