"""What a run chose: the same for every file of it (part of each cached result's key)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from buildport.rules.arch import DEFAULT_OFFLOAD_ARCH


@dataclass(frozen=True, slots=True)
class Options:
    """What the user chose; the same for every file of a run."""

    #: The AMD targets the user chose; empty: the defaults, narrowed at build time to those the HIP
    #: compiler knows (ROCm 5.2's clang has no gfx942).
    offload_arch: tuple[str, ...] = ()
    #: ROCm packages other files of the same run link (added where CUDA is found).
    extra_packages: tuple[str, ...] = ()
    #: A dual build (``migrate --keep-cuda``): the sources stay CUDA, the build picks the runtime.
    keep_cuda: bool = False

    @property
    def runtime_header(self) -> str:
        """The header a ported build has hipcc include in each HIP source, as nvcc includes cuda_runtime.h:
        HIP's runtime, or for a dual build its mapping header (found on the build's include path)."""
        if self.keep_cuda:
            from buildport.rules.dual import RUNTIME_MAPPING

            return RUNTIME_MAPPING
        return "hip/hip_runtime.h"

    @property
    def targets(self) -> tuple[str, ...]:
        """The AMD targets a ported build names: the user's, else the defaults."""
        return self.offload_arch or DEFAULT_OFFLOAD_ARCH

    @property
    def probe_targets(self) -> bool:
        """Whether the build keeps only the default targets its compiler knows (no user choice)."""
        return not self.offload_arch


@dataclass(slots=True)
class MakeFacts:
    """What the Makefiles of one run say about each other (a variable set in common.mk, used elsewhere)."""

    compiler_vars: set[str] = field(default_factory=lambda: {"NVCC"})
    arch_vars: set[str] = field(default_factory=set)
    flag_vars: set[str] = field(default_factory=set)
    host_links: bool = False
    #: variables named like a CUDA root (``CUDA_PATH``) that the project sets to a folder of its own
    #: (``CUDA_PATH = device``) and nowhere to a CUDA install: left as they are
    own_roots: set[str] = field(default_factory=set)

    def as_json(self) -> list[object]:
        """The facts as canonical JSON data (the sets sorted): part of cache keys, and kept in the cache."""
        return [sorted(self.compiler_vars), sorted(self.arch_vars), sorted(self.flag_vars), self.host_links,
                sorted(self.own_roots)]

    @classmethod
    def from_json(cls, data: Any) -> "MakeFacts":
        """The facts :meth:`as_json` gave; raises ``TypeError`` or ``ValueError`` on malformed data."""
        compilers, archs, flags, host_links, own_roots = data
        return cls(set(compilers), set(archs), set(flags), bool(host_links), set(own_roots))
