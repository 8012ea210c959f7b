"""CUDA libraries and their ROCm counterparts: one table for CMake and make.

Imported-target and package names are those the ROCm packages install
(``<pkg>-config.cmake``); checked against Debian's ROCm 5.2 packages where
Debian ships the library, otherwise against AMD's ROCm documentation.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Library:
    """One CUDA library and what replaces it.

    ``rocm_target`` empty means there is no ROCm equivalent: uses are reported,
    never dropped. ``runtime`` marks the CUDA runtime/driver itself, which HIP
    targets get implicitly and C++ targets get through ``hip::host``.
    """

    name: str
    cmake_targets: tuple[str, ...]
    link_names: tuple[str, ...]
    legacy_vars: tuple[str, ...]
    rocm_package: str = ""
    rocm_target: str = ""
    rocm_link: str = ""
    include_subdir: str = ""  # headers under <prefix>/include/<subdir>; hipify writes bare <x.h>
    runtime: bool = False
    note: str = ""
    #: In the HIP runtime itself in older ROCm, which installs no package for it: found QUIET and linked
    #: where it exists (``$<TARGET_NAME_IF_EXISTS:...>``), the runtime providing it elsewhere.
    in_runtime_before: str = ""
    #: Its ROCm target links ``hip::device`` (through ``roc::rocprim_hip``), whose options are for C++ that
    #: clang compiles as HIP (``-x hip``, ``--offload-arch``): the C++ compiler of a HIP-language build refuses
    #: them, so the port links ``hip::host`` there instead.
    links_hip_device: bool = False

    @property
    def cmake_link(self) -> str:
        """What a CMake link list names for it."""
        if self.in_runtime_before and self.rocm_target:
            return f"$<TARGET_NAME_IF_EXISTS:{self.rocm_target}>"
        return self.rocm_target


LIBRARIES: tuple[Library, ...] = (
    Library(
        "cudart",
        ("CUDA::cudart", "CUDA::cudart_static"),
        ("cudart", "cudart_static"),
        ("CUDA_LIBRARIES", "CUDA_CUDART_LIBRARY", "CUDA_cudart_LIBRARY", "CUDA_cudart_static_LIBRARY"),
        "hip", "hip::host", "amdhip64", runtime=True,
        note="HIP runtime: libamdhip64; hip-config.cmake exports hip::host (C++ targets)",
    ),
    Library(
        "cuda_driver",
        ("CUDA::cuda_driver",),
        ("cuda",),
        ("CUDA_CUDA_LIBRARY", "CUDA_cuda_driver_LIBRARY"),
        "hip", "hip::host", "amdhip64", runtime=True,
        note="the driver API (cu*) is part of the HIP runtime (hipModule*, hipCtx*)",
    ),
    Library(
        "cublas", ("CUDA::cublas", "CUDA::cublas_static"), ("cublas", "cublas_static"),
        ("CUDA_CUBLAS_LIBRARIES", "CUDA_cublas_LIBRARY", "CUDA_cublas_static_LIBRARY"),
        "hipblas", "roc::hipblas", "hipblas", "hipblas", note="hipBLAS: hipblas-config.cmake",
    ),
    Library(
        "cublasLt", ("CUDA::cublasLt", "CUDA::cublasLt_static"), ("cublasLt", "cublasLt_static"),
        ("CUDA_cublasLt_LIBRARY", "CUDA_cublasLt_static_LIBRARY"),
        "hipblaslt", "roc::hipblaslt", "hipblaslt", "hipblaslt", note="hipBLASLt: hipblaslt-config.cmake",
    ),
    Library(
        "cufft", ("CUDA::cufft", "CUDA::cufft_static"), ("cufft", "cufft_static"),
        ("CUDA_CUFFT_LIBRARIES", "CUDA_cufft_LIBRARY", "CUDA_cufft_static_LIBRARY"),
        "hipfft", "hip::hipfft", "hipfft", "hipfft", note="hipFFT: hipfft-config.cmake exports hip::hipfft",
    ),
    Library(
        "curand", ("CUDA::curand", "CUDA::curand_static"), ("curand", "curand_static"),
        ("CUDA_curand_LIBRARY", "CUDA_curand_static_LIBRARY"),
        "hiprand", "hip::hiprand", "hiprand", "hiprand",
        note="hipRAND: hiprand-config.cmake exports hip::hiprand (not roc::); Debian libhiprand-dev",
    ),
    Library(
        "cusparse", ("CUDA::cusparse", "CUDA::cusparse_static"), ("cusparse", "cusparse_static"),
        ("CUDA_cusparse_LIBRARY", "CUDA_cusparse_static_LIBRARY"),
        "hipsparse", "roc::hipsparse", "hipsparse", "hipsparse",
        note="hipSPARSE: hipsparse-config.cmake exports roc::hipsparse; Debian libhipsparse-dev",
    ),
    Library(
        "cusolver", ("CUDA::cusolver", "CUDA::cusolver_static"), ("cusolver", "cusolver_static"),
        ("CUDA_cusolver_LIBRARY", "CUDA_cusolver_static_LIBRARY"),
        "hipsolver", "roc::hipsolver", "hipsolver", "hipsolver", note="hipSOLVER: hipsolver-config.cmake",
    ),
    Library(
        "nvrtc", ("CUDA::nvrtc", "CUDA::nvrtc_static"), ("nvrtc", "nvrtc_static"),
        ("CUDA_nvrtc_LIBRARY",),
        "hiprtc", "hiprtc::hiprtc", "hiprtc", note="hipRTC: hiprtc-config.cmake exports hiprtc::hiprtc",
        in_runtime_before="6.0",  # ROCm 5.x: hiprtc* are in libamdhip64, and there is no hiprtc package
    ),
    Library(
        "nvToolsExt", ("CUDA::nvToolsExt", "CUDA::nvtx3"), ("nvToolsExt", "nvtx3interop"),
        ("CUDA_nvToolsExt_LIBRARY",),
        "", "roctx64", "roctx64", "roctracer",
        note="ROCTX markers live in libroctx64 (roctracer); linked by name from ${ROCM_PATH}/lib",
    ),
    Library(
        "cudnn", ("CUDNN::cudnn", "cudnn::cudnn", "CUDA::cudnn"), ("cudnn",), ("CUDNN_LIBRARY", "CUDNN_LIBRARIES"),
        "miopen", "MIOpen", "MIOpen", note="MIOpen replaces cuDNN with a different API: sources need porting",
    ),
    Library(
        "nccl", ("NCCL::NCCL", "nccl::nccl", "CUDA::nccl"), ("nccl", "nccl_static"), ("NCCL_LIBRARY", "NCCL_LIBRARIES"),
        "rccl", "rccl::rccl", "rccl", "rccl", note="RCCL keeps the NCCL API; rccl-config.cmake exports rccl::rccl",
    ),
    Library(
        "thrust", ("Thrust::Thrust", "CCCL::Thrust", "thrust::thrust"), (), (),
        "rocthrust", "roc::rocthrust", "", note="rocThrust: rocthrust-config.cmake exports roc::rocthrust",
        links_hip_device=True,
    ),
    Library(
        "cub", ("CUB::CUB", "CCCL::CUB", "cub::cub"), (), (),
        "hipcub", "hip::hipcub", "", note="hipCUB: hipcub-config.cmake exports hip::hipcub",
        links_hip_device=True,
    ),
    Library(
        "npp", tuple(f"CUDA::{n}" for n in (
            "nppc", "nppial", "nppicc", "nppidei", "nppif", "nppig", "nppim", "nppist", "nppisu", "nppitc", "npps",
            "nppc_static", "nppial_static", "nppicc_static", "nppidei_static", "nppif_static", "nppig_static",
            "nppim_static", "nppist_static", "nppisu_static", "nppitc_static", "npps_static",
        )),
        ("nppc", "nppial", "nppicc", "nppidei", "nppif", "nppig", "nppim", "nppist", "nppisu", "nppitc", "npps"),
        ("CUDA_npp_LIBRARY", "CUDA_nppc_LIBRARY", "CUDA_nppi_LIBRARY", "CUDA_npps_LIBRARY"),
        note="NPP has no ROCm equivalent (rocAL/MIVisionX cover parts of it)",
    ),
    Library("nvjpeg", ("CUDA::nvjpeg", "CUDA::nvjpeg_static"), ("nvjpeg",), ("CUDA_nvjpeg_LIBRARY",),
            note="nvJPEG has no ROCm equivalent (rocJPEG is a different API)"),
    Library("cufile", ("CUDA::cuFile", "CUDA::cuFile_static", "CUDA::cuFile_rdma"), ("cufile",), ("CUDA_cuFile_LIBRARY",),
            note="GPUDirect Storage (cuFile) has no ROCm equivalent"),
    Library("cupti", ("CUDA::cupti", "CUDA::cupti_static"), ("cupti",), ("CUDA_cupti_LIBRARY", "CUDA_CUPTI_LIBRARY"),
            note="CUPTI has no drop-in ROCm equivalent (rocprofiler/roctracer have other APIs)"),
    Library("nvml", ("CUDA::nvml",), ("nvidia-ml",), ("CUDA_nvml_LIBRARY",),
            note="NVML: use rocm-smi-lib (different API)"),
    Library("cufftw", ("CUDA::cufftw", "CUDA::cufftw_static"), ("cufftw",), ("CUDA_cufftw_LIBRARY",),
            note="cuFFTW (FFTW interface) has no ROCm equivalent"),
    Library("nvcuvid", ("CUDA::nvcuvid",), ("nvcuvid",), ("CUDA_nvcuvid_LIBRARY",),
            note="NVDEC (nvcuvid) has no ROCm equivalent (rocDecode is a different API)"),
    Library("cudadevrt", ("CUDA::cudadevrt",), ("cudadevrt",), ("CUDA_cudadevrt_LIBRARY",),
            "hip", "", "", runtime=True,
            note="device runtime for separable compilation; clang's -fgpu-rdc needs no library"),
    Library("culibos", ("CUDA::culibos",), ("culibos",), ("CUDA_culibos_LIBRARY",), "hip", "", "", runtime=True,
            note="the static CUDA runtime's OS layer; the HIP runtime needs none"),
)

BY_TARGET: dict[str, Library] = {t.lower(): lib for lib in LIBRARIES for t in lib.cmake_targets}
BY_LINK_NAME: dict[str, Library] = {n: lib for lib in LIBRARIES for n in lib.link_names}
BY_LEGACY_VAR: dict[str, Library] = {v: lib for lib in LIBRARIES for v in lib.legacy_vars}
BY_ROCM_TARGET: dict[str, Library] = {lib.rocm_target: lib for lib in LIBRARIES if lib.rocm_target}


def named(name: str) -> Library:
    """The built-in row called ``name`` (a ``CUDA_PACKAGES`` kind, the library a legacy link helper links)."""
    return next(lib for lib in LIBRARIES if lib.name == name)


def extend(rows: list[Library]) -> None:
    """Add user rows; they take precedence over the built-in ones."""
    for lib in rows:
        for t in lib.cmake_targets:
            BY_TARGET[t.lower()] = lib
        for n in lib.link_names:
            BY_LINK_NAME[n] = lib
        for v in lib.legacy_vars:
            BY_LEGACY_VAR[v] = lib
        if lib.rocm_target:
            BY_ROCM_TARGET[lib.rocm_target] = lib


#: Words inside build-file arguments and flags that name CUDA as a library's backend (CMake and make alike):
#: CUDA's → HIP's.
WORD_RENAMES: dict[str, str] = {
    "THRUST_DEVICE_SYSTEM_CUDA": "THRUST_DEVICE_SYSTEM_HIP",  # rocThrust's device system
}
