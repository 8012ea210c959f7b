"""Dual build files (``migrate --keep-cuda``): each change of the port a branch of the ``GPU_RUNTIME`` switch,
the project's own text in the CUDA branch (:mod:`.cmake`, :mod:`.make`, from the port's regions grouped into
whole statements by :mod:`.groups`); and the compatibility folder the HIP build reads (:mod:`.compat`)."""

from buildport.rules.dual import RUNTIME_VARIABLE


def is_dual(text: str, kind: str) -> bool:
    """Whether a build file (``kind`` ``cmake`` or ``make``) picks its GPU runtime with the switch
    ``migrate --keep-cuda`` writes: both builds are written in it, and a port leaves it as it is."""
    if RUNTIME_VARIABLE not in text:
        return False
    from buildport.dual import cmake, make

    return (cmake.is_dual if kind == "cmake" else make.is_dual)(text)
