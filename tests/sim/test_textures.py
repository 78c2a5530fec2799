"""Text textures: drawn once per process, each call an image of its own."""

import numpy as np

from sortie.sim.textures import text_texture


def test_a_text_asked_twice_gives_equal_images_that_are_not_shared():
    """The second call draws nothing new but returns its own read-only copy."""
    first = text_texture("BAKERY", 256, 64, ink=(10, 20, 30))
    second = text_texture("BAKERY", 256, 64, ink=(10, 20, 30))
    assert np.array_equal(first, second) and first is not second
    assert not np.shares_memory(first, second) and not second.flags.writeable


def test_texts_differing_in_a_colour_are_drawn_apart():
    """A kept image is reused only for the same text, size and colours."""
    plain = text_texture("42", 64, 48)
    bordered = text_texture("42", 64, 48, border=(30, 30, 30))
    assert not np.array_equal(plain, bordered)
