"""Camera views drawn over a scene, shared by the frame tests."""

import numpy as np

from sortie.sim.scene import Scene


def random_views(scene: Scene, seed: int, count: int) -> list:
    """Eyes drawn over the scene at walking and flying heights, any yaw, pitched up or down."""
    rng = np.random.default_rng(seed)
    xmin, ymin, xmax, ymax = scene.bounds
    return [
        (
            (
                float(rng.uniform(xmin, xmax)),
                float(rng.uniform(ymin, ymax)),
                float(rng.choice([0.4, 1.6, 6.0])),
            ),
            float(rng.uniform(0, 360)),
            float(rng.uniform(-60, 30)),
        )
        for _ in range(count)
    ]
