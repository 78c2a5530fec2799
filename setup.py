"""Build the optional Embree packet extension; the rest of the package is in pyproject.toml.

``sortie/sim/_packets.c`` needs a C compiler and Python's headers, nothing from Embree at build
time (it opens the library embreex ships when first used). ``optional=True``: without a
compiler the install still succeeds and ray casting stays on embreex (``sortie.sim.packets``).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "sortie.sim._packets",
            ["sortie/sim/_packets.c"],
            libraries=["dl", "m"],
            extra_compile_args=["-O2", "-ffp-contract=off"],
            optional=True,
        ),
        Extension(
            "sortie.sim._raster",
            ["sortie/sim/_raster.c"],
            libraries=["m"],
            extra_compile_args=["-O2", "-ffp-contract=off"],
            optional=True,
        ),
    ]
)
