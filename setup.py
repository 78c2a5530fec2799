"""Build the optional C extensions; the rest of the package is in pyproject.toml.

``sortie/sim/_packets.c`` (Embree packets) and ``sortie/sim/_raster.c`` (the camera's
rasteriser) need a C compiler and Python's headers, nothing from Embree at build time (the
packet tracer opens the library embreex ships when first used); both measure hits with
``sortie/sim/_exact.h``. ``sortie/sim/navigation/_grid.c`` runs two neighbour loops of a graph
build. ``optional=True``: without a compiler the install still succeeds, ray casting stays on
embreex (``sortie.sim.packets``), every camera pixel is cast (``sortie.sim.raster``) and
graph builds use numpy (``sortie.sim.navigation.kernels``), with the same results.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "sortie.sim._packets",
            ["sortie/sim/_packets.c"],
            depends=["sortie/sim/_exact.h"],
            libraries=["dl", "m"],
            extra_compile_args=["-O2", "-ffp-contract=off"],
            optional=True,
        ),
        Extension(
            "sortie.sim.navigation._grid",
            ["sortie/sim/navigation/_grid.c"],
            libraries=["m"],
            extra_compile_args=["-O2", "-ffp-contract=off"],
            optional=True,
        ),
        Extension(
            "sortie.sim._raster",
            ["sortie/sim/_raster.c"],
            depends=["sortie/sim/_exact.h"],
            libraries=["m"],
            # -O3 draws frames 9-12 % faster in suburb and the forest (docs/benchmarks.md); the
            # other two gained nothing from it. No flag here lets the compiler reorder or fuse
            # floating-point operations, so every level gives the same bits. No -mavx2 either:
            # the AVX2 pixel loops are compiled per function and chosen at run time, so one
            # build runs on every x86-64 CPU, with the same frames.
            extra_compile_args=["-O3", "-ffp-contract=off"],
            optional=True,
        ),
    ]
)
