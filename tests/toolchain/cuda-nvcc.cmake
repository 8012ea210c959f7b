# CMake toolchain file: the machine's nvcc (CUDA 13) plus the CUDA math libraries that setup.sh
# installs from NVIDIA's wheels, for building the *original* test projects. Test harness only.
#
#   - nvcc on PATH may be a wrapper script; CMake and FindCUDA derive the toolkit root from the
#     compiler's location, so the real binary is used;
#   - the wheels put cuRAND/cuSPARSE/nvJitLink under <cuda-libs>/nvidia/cu13/{include,lib}, outside the
#     toolkit: their headers go on every CUDA/C++ compile, their libraries on find_library's path
#     (FindCUDAToolkit's CUDA::curand / CUDA::cusparse and FindCUDA both use find_library).
# BUILDPORT_CUDA_LIBS (environment) overrides the default /opt/buildport-tools/cuda-libs.

find_program(_bp_nvcc NAMES nvcc REQUIRED)
# The wrapper scripts exec the real nvcc; take the path from the toolkit symlink when present.
if(EXISTS "/usr/local/cuda/bin/nvcc")
  set(_bp_nvcc "/usr/local/cuda/bin/nvcc")
endif()
get_filename_component(_bp_nvcc "${_bp_nvcc}" REALPATH)
get_filename_component(_bp_cuda_root "${_bp_nvcc}" DIRECTORY)
get_filename_component(_bp_cuda_root "${_bp_cuda_root}" DIRECTORY)

set(CMAKE_CUDA_COMPILER "${_bp_nvcc}" CACHE FILEPATH "CUDA compiler")
set(CUDAToolkit_ROOT "${_bp_cuda_root}")
set(CUDA_TOOLKIT_ROOT_DIR "${_bp_cuda_root}" CACHE PATH "CUDA toolkit root (FindCUDA)")
# The toolkit's own CMake packages (Thrust, CUB, libcu++ in lib64/cmake): found through the toolkit's bin
# folder on PATH on a user's machine; nvcc here is reached through a wrapper elsewhere.
list(APPEND CMAKE_PREFIX_PATH "${_bp_cuda_root}")

if(DEFINED ENV{BUILDPORT_CUDA_LIBS})
  set(_bp_cuda_libs "$ENV{BUILDPORT_CUDA_LIBS}/nvidia/cu13")
else()
  set(_bp_cuda_libs "/opt/buildport-tools/cuda-libs/nvidia/cu13")
endif()
if(EXISTS "${_bp_cuda_libs}/include")
  list(APPEND CMAKE_CUDA_STANDARD_INCLUDE_DIRECTORIES "${_bp_cuda_libs}/include")
  list(APPEND CMAKE_CXX_STANDARD_INCLUDE_DIRECTORIES "${_bp_cuda_libs}/include")
  list(APPEND CMAKE_LIBRARY_PATH "${_bp_cuda_libs}/lib")
endif()
