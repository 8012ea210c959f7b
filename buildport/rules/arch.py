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

#: Before HIP is enabled: the default targets, unless the configure names its own. CMake's HIP compiler
#: check compiles for CMAKE_HIP_ARCHITECTURES, so a target the compiler does not know must not be in it yet.
CMAKE_DEFAULT_TARGETS = """if(NOT DEFINED CMAKE_HIP_ARCHITECTURES)
  set(HIP_DEFAULT_ARCHITECTURES {targets})
endif()"""

#: After HIP is enabled: of the default targets, those the HIP compiler knows (ROCm 5.2's clang has no gfx942;
#: rocm-cmake's rocm_check_target_ids asks the compiler the same way), as the cache list a configure keeps.
#: Each is tried alone (a try_compile builds for CMAKE_HIP_ARCHITECTURES), with no HIP header; where it knows none
#: of them, CMake's own choice stays.
CMAKE_KNOWN_TARGETS = f"""if(HIP_DEFAULT_ARCHITECTURES)
  include(CheckSourceCompiles)
  set(hip_known_architectures "")
  foreach(CMAKE_HIP_ARCHITECTURES IN LISTS HIP_DEFAULT_ARCHITECTURES)
    check_source_compiles(HIP "int main() {{ return 0; }}" HIP_KNOWS_${{CMAKE_HIP_ARCHITECTURES}})
    if(HIP_KNOWS_${{CMAKE_HIP_ARCHITECTURES}})
      list(APPEND hip_known_architectures ${{CMAKE_HIP_ARCHITECTURES}})
    endif()
  endforeach()
  unset(CMAKE_HIP_ARCHITECTURES)
  if(hip_known_architectures)
    set(CMAKE_HIP_ARCHITECTURES "${{hip_known_architectures}}" CACHE STRING "{CACHE_HELP}" FORCE)
  endif()
endif()"""

#: A Makefile's default targets, those the compiler knows: worked out once, when make reads the file, unless
#: the command line or the environment sets HIP_OFFLOAD_ARCH (all of them when the compiler cannot be asked).
MAKE_KNOWN_TARGETS = """ifeq ($(origin HIP_OFFLOAD_ARCH),undefined)
HIP_OFFLOAD_ARCH := $(or $(strip $(foreach arch,{targets},$(if $(shell $(or $(HIPCC),hipcc) -x hip --offload-arch=$(arch) \\
  -nogpulib -nogpuinc -fsyntax-only /dev/null 2>/dev/null && echo y),$(arch)))),{targets})
endif"""
