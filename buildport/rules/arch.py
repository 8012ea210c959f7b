"""GPU architectures.

There is no mapping from NVIDIA ``sm_XX`` to AMD ``gfxNNN``: the AMD target list
comes from ``--offload-arch`` and defaults to the data-centre GPUs below. hipcc
without a target builds for gfx803 (measured), and CMake 3.25's HIP language
defaults to the same, so an explicit, overridable list is always written.
"""

from __future__ import annotations

#: gfx90a: MI200 series (CDNA2); gfx942: MI300 series (CDNA3).
DEFAULT_OFFLOAD_ARCH: tuple[str, ...] = ("gfx90a", "gfx942")

#: Help string of the cache variable that holds the list in CMake.
CACHE_HELP = "AMD GPU targets to compile for"
