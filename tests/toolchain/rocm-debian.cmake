# CMake toolchain file: Debian 12's ROCm 5.2 (clang 15) as CMake's HIP compiler.
#
# For the test harness only. Everything here is a quirk of how Debian packages ROCm, not of the
# projects being built, so none of it belongs in a ported CMakeLists.txt:
#   - there is no unversioned clang++, the HIP compiler is clang++-15;
#   - clang looks for ROCm under /opt/rocm, Debian installs it under /usr (device libraries in the
#     multiarch directory), hence --rocm-path / --rocm-device-lib-path (and clang finds no HIP version
#     there, see the -D below);
#   - CMake (3.21-3.27) looks for <root>/lib/cmake/hip-lang, Debian has it in
#     /usr/lib/x86_64-linux-gnu/cmake, hence a small root of links (BUILDPORT_HIP_ROOT);
#   - the ROCm package configs (hip, hiprand, hipsparse, ...) also live there: CMAKE_PREFIX_PATH.
# The GPU target list is deliberately not set here: the project (or -DCMAKE_HIP_ARCHITECTURES) owns it.
# Set HIP_PLATFORM=amd in the environment too: with nvcc on PATH, hipcc/hipconfig pick NVIDIA otherwise.

set(_bp_multiarch "/usr/lib/x86_64-linux-gnu")

find_program(_bp_clang NAMES clang++-15 REQUIRED)
set(CMAKE_HIP_COMPILER "${_bp_clang}" CACHE FILEPATH "HIP compiler")
set(CMAKE_HIP_FLAGS_INIT "--rocm-path=/usr --rocm-device-lib-path=${_bp_multiarch}/amdgcn/bitcode")
# clang 15 finds no HIP version under /usr (it takes 3.5), so its runtime wrapper leaves the CUDA math
# declarations to HIP's header, which leaves them out of a -fopenmp compile ("call to 'fabs' is ambiguous");
# a ROCm installed where clang finds its version has them. HIP's own switch puts them back.
string(APPEND CMAKE_HIP_FLAGS_INIT " -D__HIP_ENABLE_CUDA_WRAPPER_FOR_OPENMP__")

# <root>/lib/cmake/hip-lang -> the multiarch hip-lang package. setup.sh makes the default one;
# BUILDPORT_HIP_ROOT (environment) points elsewhere, and is created here when missing.
if(DEFINED ENV{BUILDPORT_HIP_ROOT})
  set(_bp_hip_root "$ENV{BUILDPORT_HIP_ROOT}")
else()
  set(_bp_hip_root "/opt/buildport-tools/rocm-root")
endif()
if(NOT EXISTS "${_bp_hip_root}/lib/cmake/hip-lang/hip-lang-config.cmake")
  file(MAKE_DIRECTORY "${_bp_hip_root}/lib/cmake")
  file(CREATE_LINK "${_bp_multiarch}/cmake/hip-lang" "${_bp_hip_root}/lib/cmake/hip-lang" SYMBOLIC)
endif()
set(CMAKE_HIP_COMPILER_ROCM_ROOT "${_bp_hip_root}" CACHE PATH "Root holding lib/cmake/hip-lang")

list(APPEND CMAKE_PREFIX_PATH "${_bp_multiarch}/cmake")
