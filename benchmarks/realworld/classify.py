"""What stopped a compile, a link or a configure of a migrated project, read from the tool's output.

Every failure gets one of four causes, the first rule that matches deciding:

- ``build``: buildport's build output, or its choice of files to convert (an option the compiler
  refuses, a target list it rejects, nvcc still called, a CUDA header in a file that was not
  converted, a HIP header a host compile cannot find, a CMake error in a ported build file);
- ``source``: CUDA left in a converted source (what hipify and migrate's source fixes leave);
- ``rocm-library``: a ROCm library this machine does not have;
- ``environment``: anything else the machine lacks (MPI, OpenMP, OpenGL, a data file).

Failures no rule knows are ``unknown``: each one is a rule to write, or a defect to find.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CAUSES = ("build", "source", "rocm-library", "environment", "unknown")

#: ROCm libraries (headers and CMake packages) that may be missing here, by the names a build uses.
ROCM_LIBRARY_NAMES = (
    "hipcub", "rocthrust", "thrust", "cub", "hipblas", "hipblaslt", "rocblas", "hipfft", "rocfft", "rccl",
    "hipsolver", "rocsolver", "miopen", "hipdnn", "hiptensor", "rocwmma", "hipsparselt", "roctracer",
    "rocprofiler", "roctx", "hiprtc", "rocm_smi", "amd_smi", "hipfort", "rocalution", "hipmath",
)  # fmt: skip
#: One of them, as a whole word (``cub`` is not ``cublas``).
_ROCM_NAMES = "|".join(ROCM_LIBRARY_NAMES)
_ROCM = f"(?:{_ROCM_NAMES})(?![a-z0-9_])"

#: CUDA headers: included by a file that was not converted, they mean the file was not chosen. Not Thrust's:
#: rocThrust installs the same names, so a missing ``thrust/...`` is the library not installed, converted or not.
_CUDA_HEADER = (
    r"(?:cuda|cuda_runtime|cuda_runtime_api|cuda_fp16|cuda_bf16|cuda_profiler_api|cudaGL|cuda_gl_interop|"
    r"curand\w*|cusparse\w*|cublas\w*|cufft\w*|cusolver\w*|nvrtc|nvToolsExt|device_launch_parameters|"
    r"vector_types|vector_functions|driver_types|builtin_types|helper_cuda|helper_math|cooperative_groups|"
    r"nccl|cudnn|math_constants|sm_\d+_intrinsics|texture_fetch_functions|device_functions|"
    r"mma|cuda/\S+|cub/\S+|nvtx3/\S+)(?:\.h|\.hpp|\.cuh)?"
)

#: A CUDA API name as the compiler quotes it: ``cudaMalloc``, ``cuMemAlloc``, ``CUdevice``, ``CU_CTX_...``,
#: ``cublasCreate``... (not every word that starts with ``cu``: ``cursor``, ``current``).
_CUDA_NAME = (
    r"(?:cuda[A-Z_]\w*|cu[A-Z]\w*|CU[a-z_]\w*|CU_[A-Z]\w*|(?:cublas|curand|cusparse|cufft|cusolver|nvrtc|nvtx|"
    r"NVTX)\w*)"
)


@dataclass(frozen=True)
class Cause:
    cause: str
    reason: str


@dataclass(frozen=True)
class _Rule:
    cause: str
    reason: str
    pattern: re.Pattern[str]
    converted: bool | None = None  # only when the failing file was (True) or was not (False) converted


def _rule(cause: str, reason: str, pattern: str, converted: bool | None = None) -> _Rule:
    return _Rule(cause, reason, re.compile(pattern, re.MULTILINE), converted)


#: Compile and link failures, tried in order on the compiler's output.
COMPILE_RULES = (
    _rule("build", "nvcc called by the ported build", r"^nvcc: command not found|nvcc must not run"),
    _rule("build", "GPU target the compiler rejects", r"invalid target ID|[Uu]nsupported (?:CUDA|HIP) gpu architecture"),
    _rule("build", "option the compiler rejects",
          r"unknown argument|unsupported option|unknown option|unrecognized command[- ]line option|"
          r"unrecognized option|not allowed with '(?:C|C\+\+)'|invalid argument '-std=|"
          r"cannot specify -o when generating multiple output files"),
    _rule("build", "CUDA header in a file that was not converted",
          rf"fatal error: ['<\"]{_CUDA_HEADER}['>\"] file not found|fatal error: {_CUDA_HEADER}: No such file",
          converted=False),
    _rule("build", "CUDA name in a file that was not converted",
          rf"error: (?:use of undeclared identifier|unknown type name) '{_CUDA_NAME}'",
          converted=False),
    _rule("rocm-library", "ROCm library not installed",
          rf"fatal error: ['<\"](?:{_ROCM})[/.\w]*['>\"] file not found|fatal error: (?:{_ROCM})[/.\w]*: No such file|"
          rf"cannot find -l(?:{_ROCM})\b|unable to find library -l(?:{_ROCM})\b"),
    _rule("source", "CUDA header left in a converted file",
          rf"fatal error: ['<\"]{_CUDA_HEADER}['>\"] file not found|fatal error: {_CUDA_HEADER}: No such file"),
    _rule("build", "HIP platform not defined for a host compile",
          r"Must define exactly one of __HIP_PLATFORM_AMD__ or __HIP_PLATFORM_NVIDIA__|"
          r"__HIP_PLATFORM_(?:AMD|HCC)__.*not defined"),
    _rule("build", "HIP header not on a host compile's include path",
          r"fatal error: ['<\"]hip/[^'>\"]+['>\"] file not found|fatal error: hip/\S+: No such file"),
    _rule("build", "CUDA library still linked", r"cannot find -l(?:cuda|cudart|cudart_static|cublas\w*|curand|"
          r"cusparse|cufft\w*|cusolver|nvrtc|nvToolsExt|culibos|nvidia-ml)\b"),
    _rule("build", "device code linked without its relocatable device link",
          r"undefined (?:reference|symbol).*__hip_fatbin|undefined (?:reference|symbol).*__hip_(?:gpubin|cuid)"),
    _rule("environment", "system package not installed",
          r"fatal error: ['<\"](?:omp\.h|mpi\.h|mpi\w*\.h|GL/|GLFW/|glfw|GLUT/|gl\w*\.h|netcdf\w*\.h|png\.h|jpeglib\.h|"
          r"tiff\w*\.h|zlib\.h|hdf5\w*\.h|fftw3\w*\.h|boost/|Eigen/|eigen3/|gtest/|gmock/|benchmark/|"
          r"opencv\w*/|X11/|tbb/|python\w*\.h|Python\.h|pybind11/|lapacke?\w*\.h|cblas\.h|"
          r"FreeImage\.h|openjpeg\w*\.h|nvml\.h|cudnn\w*\.h|ImfRgbaFile\.h|OpenEXR/|tinyexr\.h)"
          r"|cannot find -l(?:mpi\w*|gomp|omp|netcdf\w*|GL\w*|glut|glfw\w*|X11|png|jpeg|z|hdf5\w*|fftw3\w*|"
          r"boost\w*|gtest\w*|tbb|openjp\w*|freeimage|FreeImage)\b|unable to find library -l(?:omp|gomp)"),
    _rule("source", "CUDA name left in a converted file",
          rf"'{_CUDA_NAME}'|'__(?:shfl\w*_sync|any_sync|all_sync|"
          r"ballot_sync|syncwarp|match_\w+_sync|activemask|reduce_\w+_sync)'"),
    _rule("rocm-library", "ROCm 5.2's rocRAND header does not compile as C (a C file includes hipRAND's)",
          r"rocrand/rocrand\.h:\d+:\d+: error: unknown type name ['‘]__half"),
    _rule("source", "code the HIP compiler refuses",
          r"error: (?:use of undeclared identifier|unknown type name|no matching function|no member named|"
          r"call to .* is ambiguous|no matching constructor|cannot initialize|invalid operands|"
          r"no viable conversion|redefinition of|expected|too (?:few|many) arguments|"
          r"reference to .* is ambiguous|static assertion failed|use of undeclared|"
          r"invalid output constraint|couldn't allocate|unknown register name|invalid (?:instruction|"
          r"operand)|explicit specialization|no type named|excess elements|"
          r"cannot take the address|functions that differ only|conflicting types|"
          r"non-(?:const|constant)|'\w+' is not a member|use of overloaded operator|"
          r"incomplete type|variable has incomplete type|__host__ __device__|"
          r"reference to __(?:host|device)__ function|calling a __(?:host|device)__ function)"),
    _rule("source", "an error in a converted source", r"error:", converted=True),
    _rule("build", "undefined symbols at link (objects left out of the build, or not linked)",
          r"undefined reference to|undefined symbol:"),
    _rule("environment", "a file the project does not have", r"fatal error: ['<\"][^'>\"]+['>\"] file not found"),
    _rule("environment", "a library the machine does not have", r"cannot find -l\w+|unable to find library"),
)  # fmt: skip

#: Configure failures (CMake's output), tried in order.
CONFIGURE_RULES = (
    _rule("build", "GPU target the compiler rejects", r"invalid target ID|[Uu]nsupported (?:CUDA|HIP) gpu architecture"),
    _rule("build", "HIP compiler test failed",
          r'The HIP compiler\s+"[^"]*"\s+is not able to compile a simple test program'),
    _rule("rocm-library", "ROCm library not installed",
          rf'(?:provided by|find a package configuration file provided by)\s+"(?i:{_ROCM})"|'
          rf"Could NOT find (?i:{_ROCM})\b|(?i:{_ROCM_NAMES})Config\.cmake"),
    _rule("build", "CUDA still required", r'provided by\s+"CUDA(?:Toolkit)?"|Could NOT find CUDA|'
          r"No CMAKE_CUDA_COMPILER could be found|Failed to find nvcc|CUDA_TOOLKIT_ROOT_DIR not found|"
          r"Compiling the CUDA compiler identification source file|CUDA_ARCHITECTURES is empty for target|"
          r"CMAKE_CUDA_CREATE_\w+"),
    _rule("rocm-library", "ROCm library not installed (its target is not defined)",
          rf'links to(?: target)?:?\s+"?(?:roc|hip)::(?:{_ROCM})"?\s+but the target was not found'),
    _rule("build", "target used that nothing defines",
          r'links to(?: target)?:?\s+"?(?:hip|roc|HIP|CUDA|cuda)::[^"\s]+"?\s+but the target was not found'),
    _rule("environment", "a target of the project's own dependency is missing (a submodule of another version)",
          r'links to(?: target)?:?\s+"?(?!CUDA::|cuda::|hip::|roc::|HIP::)[A-Za-z_][\w-]*::[^"\s]+"?\s+'
          r"but the target was not found"),
    _rule("build", "HIP package not found", r'provided by\s+"(?:hip|HIP|hip-lang)"'),
    _rule("environment", "system package not installed", r"Could NOT find \w+|Could not find a package configuration file"),
    _rule("environment", "a submodule the snapshot lacks", r"submodule"),
)  # fmt: skip

_ERROR_LINE = re.compile(r"\berror\b|\bError\b|undefined reference|No such file|not found", re.MULTILINE)
_LOCATION = re.compile(r"^(?P<path>[^\s:][^:\n]*):(?P<line>\d+):(?:\d+:)?\s*(?:fatal )?error:", re.MULTILINE)


def first_error(output: str) -> str:
    """The first line of ``output`` that reads as an error (else its first line), trimmed."""
    match = _ERROR_LINE.search(output)
    if match is None:
        return output.strip().splitlines()[0][:300] if output.strip() else ""
    start = output.rfind("\n", 0, match.start()) + 1
    end = output.find("\n", match.end())
    return output[start : end if end >= 0 else None].strip()[:300]


def error_file(output: str) -> str | None:
    """The file the first ``file:line: error:`` names, as written."""
    match = _LOCATION.search(output)
    return match.group("path") if match else None


def classify(output: str, rules: tuple[_Rule, ...], *, converted: bool | None = None) -> Cause:
    """The first rule matching ``output``; ``converted`` says whether the failing file was converted."""
    for rule in rules:
        if rule.converted is not None and converted is not None and rule.converted != converted:
            continue
        if rule.converted is not None and converted is None:
            continue
        if rule.pattern.search(output):
            return Cause(rule.cause, rule.reason)
    return Cause("unknown", "no rule matches")
