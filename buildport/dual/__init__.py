"""Dual build files (``migrate --keep-cuda``): each change of the port a branch of the ``GPU_RUNTIME`` switch,
the project's own text in the CUDA branch (:mod:`.cmake`, :mod:`.make`, from the port's regions grouped into
whole statements by :mod:`.groups`); and the compatibility folder the HIP build reads (:mod:`.compat`)."""
