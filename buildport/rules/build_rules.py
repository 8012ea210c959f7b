"""What ``buildport audit`` reports in build files: the rule catalogue, as data.

Most build rules are the rule ids the CMake and make engines already use for
their findings (:mod:`buildport.passes`): a fixable finding is a rewrite
``buildport cmake``/``buildport make`` performs, the others need a human. The
``build-*`` rules are the audit's own: CUDA text (``nvcc``, install paths,
``sm_XX``, CUDA libraries, CUDA-named variables) on a line no engine finding
covers, found by the patterns in :data:`RESIDUE_PATTERNS`. They are fixable
when the rewrite changes that text anyway, and need a human when it survives.

Each rule's ``severity`` is its default (SARIF ``defaultConfiguration``); a single
finding may carry another one (a surviving ``build-*`` text is a warning, the same
text rewritten is info). Facts come from the engines' tables under
:mod:`buildport.rules` and the CMake, nvcc and HIP documentation, as noted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping

from buildport.findings import Severity
from buildport.rules.libraries import BY_LINK_NAME
from buildport.rules.make import ROOT_VARIABLES
from buildport.rules.paths import CUDA_ENV_VARS, CUDA_ROOT_LITERAL
from buildport.passes.wordtrie import bounded_trie, trie_pattern

ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO


@dataclass(frozen=True, slots=True)
class BuildRule:
    """One kind of CUDA dependency in a build file.

    ``kind`` says where it is reported: ``cmake``, ``make``, ``python`` (``setup.py``) or ``build`` (any).
    ``fixable`` is ``yes`` (every finding is a rewrite), ``no`` (never) or
    ``varies``. ``source`` is a short note of where the fact comes from.
    """

    id: str
    title: str
    severity: Severity
    kind: str
    fixable: str
    rationale: str
    source: str


RULES: tuple[BuildRule, ...] = (
    # --- CMake engine ------------------------------------------------------------------------
    BuildRule("cmake-language", "CUDA language enabled", INFO, "cmake", "yes",
              "`project(... CUDA)` and `enable_language(CUDA)` make CMake look for nvcc; the port enables HIP "
              "(and CXX) instead.", "CMake HIP language, CMake >= 3.21"),
    BuildRule("cmake-minimum-version", "CMake minimum below 3.21", INFO, "cmake", "yes",
              "The HIP language exists from CMake 3.21 on; an older minimum is raised.", "CMake 3.21 release notes"),
    BuildRule("cmake-find-package", "CUDA package lookup", INFO, "cmake", "yes",
              "`find_package(CUDAToolkit)`/`find_package(CUDA)` and CUDA library packages are replaced by "
              "`find_package(hip)` and the ROCm library packages.", "ROCm <pkg>-config.cmake files"),
    BuildRule("cmake-legacy-command", "FindCUDA command", INFO, "cmake", "yes",
              "`cuda_add_executable`, `cuda_add_library` and friends come from the deprecated FindCUDA module; "
              "they become the plain CMake commands.", "CMake FindCUDA documentation"),
    BuildRule("cmake-manual-command", "FindCUDA command without HIP form", WARNING, "cmake", "no",
              "Some FindCUDA helpers (`cuda_compile_ptx`, `cuda_wrap_srcs`, ...) have no HIP counterpart and must "
              "be rewritten by hand.", "CMake FindCUDA documentation"),
    BuildRule("cmake-cu-language", ".cu sources compiled as HIP", INFO, "cmake", "yes",
              "CMake compiles `.cu` files as CUDA; the port marks them `LANGUAGE HIP`.",
              "CMake source file property LANGUAGE"),
    BuildRule("cmake-host-headers", "Target given CUDA's include directories", INFO, "cmake", "yes",
              "A target given `${CUDAToolkit_INCLUDE_DIRS}` has C++ files that include the CUDA runtime's headers; "
              "once they include HIP's, g++ needs `__HIP_PLATFORM_AMD__` and the runtime, which `hip::host` "
              "carries (CMake's CUDA language linked cudart for the target by itself). The port links it.",
              "hip-config.cmake (hip::host); hip/hip_runtime.h (#error without a platform macro)"),
    BuildRule("cmake-custom-compile", "CUDA compiler run by a custom command", INFO, "cmake", "yes",
              "A custom command that runs `${CMAKE_CUDA_COMPILER}` (a module for the driver API, built with "
              "`-fatbin`) gets nvcc's command line; clang needs `-x hip` for a `.cu` file, the runtime header nvcc "
              "included by itself, and the AMD targets, which CMake passes only to its own compiles. The port "
              "adds them (`--offload-arch=$<JOIN:${CMAKE_HIP_ARCHITECTURES},$<COMMA>>`) and translates the "
              "flags (`-fatbin` → `--cuda-device-only`: a bundle of code objects `hipModuleLoad` reads).",
              "clang HIP options; HIP module API (hipModuleLoad)"),
    BuildRule("cmake-configure-compile", "CUDA compiler run while CMake configures", WARNING, "cmake", "no",
              "`execute_process` compiling device code evaluates no generator expressions, so the port cannot "
              "give it `CMAKE_HIP_ARCHITECTURES`: the command needs `--offload-arch` written in.",
              "CMake execute_process"),
    BuildRule("cmake-cuda-glob", "Glob mixing .cu and other sources", WARNING, "cmake", "no",
              "A `file(GLOB)` that collects `.cu` files together with others cannot be marked HIP as a whole; "
              "where a target is made of it, its `.cu` sources are marked from the target's list, and where "
              "a user function takes it, this is reported.",
              "CMake file(GLOB)"),
    BuildRule("cmake-library", "CUDA library linked", INFO, "cmake", "yes",
              "`CUDA::*` targets and FindCUDA library variables map to ROCm targets (or to nothing for the CUDA "
              "runtime on HIP targets).", "buildport.rules.libraries"),
    BuildRule("cmake-library-unported", "CUDA library without ROCm counterpart", WARNING, "cmake", "no",
              "The library has no ROCm equivalent buildport can link (cuDNN → MIOpen, NPP, nvJPEG, ...); the code "
              "that uses it needs porting.", "buildport.rules.libraries"),
    BuildRule("cmake-property", "CUDA target property", INFO, "cmake", "yes",
              "`CUDA_STANDARD`, `CUDA_ARCHITECTURES`, `CUDA_SEPARABLE_COMPILATION` and other CUDA properties map "
              "to HIP properties or flags, or are dropped.", "CMake target properties"),
    BuildRule("cmake-architectures", "CUDA architecture list", INFO, "cmake", "varies",
              "`CMAKE_CUDA_ARCHITECTURES` names NVIDIA GPUs; the port writes an overridable "
              "`CMAKE_HIP_ARCHITECTURES` cache list of AMD targets. Where the project's own function is given "
              "the NVIDIA list to fill, the list keeps its name and a person decides (a warning).",
              "CMake CMAKE_HIP_ARCHITECTURES"),
    BuildRule("cmake-arch-flag", "NVIDIA architecture in flags", INFO, "cmake", "yes",
              "`-arch=sm_XX`/`-gencode` in compile flags are dropped; `CMAKE_HIP_ARCHITECTURES` chooses the AMD "
              "targets.", "nvcc documentation, GPU code generation options"),
    BuildRule("cmake-nvcc-flag", "nvcc flag", INFO, "cmake", "yes",
              "nvcc-only flags (`--use_fast_math`, `-Xcompiler`, `-rdc`, `--expt-*`, ...) become clang flags or "
              "are removed.", "buildport.rules.flags"),
    BuildRule("cmake-name", "CUDA name, path or generator expression", INFO, "cmake", "yes",
              "`CMAKE_CUDA_*` variables, `$<COMPILE_LANGUAGE:CUDA>`, `$ENV{CUDA_HOME}`, `/usr/local/cuda` and "
              "similar become their HIP/ROCm forms.", "buildport.rules.cmake"),
    BuildRule("cmake-library-path", "CUDA library path in an imported target", WARNING, "cmake", "no",
              "`IMPORTED_LOCATION` takes a file's path; the variable that held CUDA's library file is kept (a "
              "ROCm target name is no path) and reported.", "the issue's NCCL find modules"),
    BuildRule("cmake-thrust-target", "thrust_create_target()", INFO, "cmake", "yes",
              "Thrust's package makes a target of the chosen systems; rocThrust has no such function and exports "
              "`roc::rocthrust`: the target becomes an interface library linking it.", "rocThrust's CMake package"),
    BuildRule("cmake-cuda-variable", "CUDA variable without HIP form", WARNING, "cmake", "no",
              "A CUDA variable (for example `CUDA_VERSION`) whose value has no ROCm equivalent; its uses need a "
              "decision.", "buildport.rules.cmake"),
    BuildRule("cmake-legacy-variable", "nvcc-only switch variable", INFO, "cmake", "yes",
              "Variables that only steer nvcc (`CUDA_PROPAGATE_HOST_FLAGS`, ...) are removed.",
              "CMake FindCUDA documentation"),
    BuildRule("cmake-rdc", "Directory-wide separable compilation", INFO, "cmake", "yes",
              "`CMAKE_CUDA_SEPARABLE_COMPILATION ON` becomes `-fgpu-rdc` for every HIP source and link.",
              "HIP programming guide, relocatable device code"),
    BuildRule("cmake-compiler", "CUDA compiler set in the project", WARNING, "cmake", "no",
              "A hard-coded `CMAKE_CUDA_COMPILER` is removed by the rewrite, but the HIP compiler must then be "
              "chosen when configuring (`-DCMAKE_HIP_COMPILER`).",
              "CMake CMAKE_<LANG>_COMPILER"),
    BuildRule("cmake-hip-present", "HIP support already present", WARNING, "cmake", "no",
              "The file already enables HIP, picks its GPU language through a variable, or tests a ROCm switch "
              "of the project's own (`if(USE_ROCM)`) where its commands link HIP's targets; buildport leaves it "
              "as it is and its CUDA branch needs review.", "buildport engine"),
    BuildRule("dual-branch-unported", "A change the dual build could not branch", WARNING, "build", "no",
              "`migrate --keep-cuda` writes each change of the port as a branch of the GPU_RUNTIME switch; where "
              "no whole block holds the change in both spellings, the line stays as the project wrote it (for "
              "CUDA), and the HIP spelling is given in the finding.", "buildport engine"),
    BuildRule("cmake-cuda-module", "Find module the port no longer reads", INFO, "cmake", "no",
              "A project's own copy of FindCUDA (or of its helpers) serves find_package(CUDA), which the port "
              "replaces with find_package(hip); a find module of its own for an NVIDIA library the port "
              "replaces (FindNCCL.cmake, FindcuDNN.cmake) serves a find_package() that becomes the ROCm "
              "package's. Neither is read once ported: each is left as it is rather than half renamed.",
              "CMake's FindCUDA module; buildport.rules.cmake.CUDA_PACKAGES"),
    # --- make engine -------------------------------------------------------------------------
    BuildRule("make-compiler", "nvcc as the compiler", INFO, "make", "yes",
              "Recipes and compiler variables that run nvcc run `$(HIPCC)` instead.", "buildport.rules.make"),
    BuildRule("make-path", "CUDA install root variable", INFO, "make", "varies",
              "`CUDA_PATH`, `CUDA_HOME` and similar roots become `ROCM_PATH ?= /opt/rocm`; one the project sets "
              "to a folder of its own (`CUDA_PATH = device`) is left as it is, and said.",
              "ROCm installation layout"),
    BuildRule("make-arch", "NVIDIA architecture list", INFO, "make", "yes",
              "`SMS`-style architecture lists and per-architecture `-gencode` loops become AMD targets and "
              "`--offload-arch` flags.", "nvcc documentation, GPU code generation options"),
    BuildRule("make-nvcc-flag", "nvcc flags", INFO, "make", "yes",
              "nvcc-only flags in a flag variable or recipe become hipcc flags or are removed.",
              "buildport.rules.flags"),
    BuildRule("make-device-link", "nvcc's separate device-link step", INFO, "make", "yes",
              "`nvcc -dlink a.o b.o -o dlink.o`, whose object a host compiler (`mpicc`, `g++`) then links with "
              "`a.o b.o`: clang links device code only where it links a program, so the step links one from the "
              "same objects with `$(HIP_DEVICE_LINK)` (host symbols left unresolved) and `hip_device_object` "
              "makes `dlink.o` of its device code (`objcopy`, `nm` and `as` from binutils).",
              "clang-15 and hipcc from ROCm 5.2, measured (FastEddy)"),
    BuildRule("make-library", "CUDA library linked", INFO, "make", "yes",
              "`-lcudart`, `-lcublas`, ... become the ROCm libraries; hipcc links the HIP runtime itself.",
              "buildport.rules.libraries"),
    BuildRule("make-library-unported", "CUDA library without ROCm counterpart", WARNING, "make", "no",
              "The library has no ROCm equivalent buildport can link; the code that uses it needs porting.",
              "buildport.rules.libraries"),
    BuildRule("make-platform", "NVIDIA platform detection", WARNING, "make", "no",
              "`TARGET_ARCH`/`TARGET_OS` detection and `findcudalib.mk` serve NVIDIA's platforms (Tegra, "
              "ppc64le, sbsa); they are kept and need review.", "CUDA samples build system"),
    BuildRule("make-c-source", ".c file compiled by nvcc", INFO, "make", "yes",
              "nvcc compiles `.c` files as C, and so does hipcc, but it defines no HIP platform for C: HIP's "
              "headers then refuse to compile, so the port adds `-D__HIP_PLATFORM_AMD__` to `HIPCC`. Reported "
              "where nvcc or hipcc builds one: the rule's recipe, a pattern or suffix rule for `.c` files, or "
              "make's built-in rule when `CC` is nvcc.", "hipcc 5.2 (`-x c` for .c files), measured"),
    BuildRule("make-host-compile", "host code of a build that links the CUDA runtime", INFO, "make", "yes",
              "Where a build links `-lcudart` by name (nvcc links it by itself), the host code calls the CUDA "
              "runtime; hipified, it includes HIP's headers, which a host compiler (`g++`, `mpicc`, `$(CXX)`) "
              "reads only with `-D__HIP_PLATFORM_AMD__`: each recipe compiling C or C++ with one gets it.",
              "clang-15 and g++ with hip_runtime.h from ROCm 5.2, measured"),
    BuildRule("make-nvhpc-path", "NVIDIA HPC SDK path", WARNING, "make", "varies",
              "A path into NVIDIA's HPC SDK (`/opt/nvidia/hpc_sdk/...`, or `$(NVHPC_SDK)/comm_libs/...` in a "
              "file that names it): a ROCm machine has no such folder. Its MPI's programs (`.../bin/mpirun`) "
              "become those on PATH, its MPI's root the machine's Open MPI (from `mpicc --showme:incdirs`; the "
              "SDK's MPI is an Open MPI too), its CUDA and math libraries ROCm's root; another path is reported.",
              "HeCBench allreduce, miniWeather, measured"),
    BuildRule("make-c-source-std", ".c file compiled by nvcc beside a C++ -std flag", WARNING, "make", "varies",
              "A file that compiles `.c` files with nvcc also names a C++ standard (`-std=c++17`): nvcc gave it "
              "to its C++ compiles only, clang refuses it for a C file (`not allowed with 'C'`). The commands "
              "of the rule that compiles the `.c` files read each variable without C++ standards "
              "(`$(filter-out -std=c++% -std=gnu++%,$(CFLAGS))`), and drop one written there; one in the compiler's "
              "own variable is reported.",
              "clang, measured; HeCBench frna"),
    # --- setup.py engine: PyTorch C++/CUDA extensions ---------------------------------------------
    BuildRule("setup-py-nvcc-flag", "nvcc flag of a CUDAExtension", INFO, "python", "yes",
              "On ROCm, PyTorch hands `extra_compile_args[\"nvcc\"]` to hipcc, which rejects nvcc's own flags; "
              "the port translates the list's words with the nvcc flag table.",
              "torch.utils.cpp_extension; buildport.rules.flags"),
    BuildRule("setup-py-arch", "NVIDIA architecture flag of a CUDAExtension", INFO, "python", "yes",
              "`-gencode`/`-arch` name NVIDIA GPUs: they become `--offload-arch` for the targets the run names, "
              "or are dropped so that PyTorch adds its own (`PYTORCH_ROCM_ARCH`, else those it was built for).",
              "torch.utils.cpp_extension (_get_rocm_arch_flags)"),
    BuildRule("setup-py-library", "CUDA library of a CUDAExtension", INFO, "python", "yes",
              "`libraries=` names CUDA libraries; the port names the ROCm ones of the library table.",
              "buildport.rules.libraries"),
    BuildRule("setup-py-library-unported", "CUDA library without ROCm counterpart", WARNING, "python", "no",
              "A CUDA library in `libraries=` that ROCm has no counterpart of; left as it is.",
              "buildport.rules.libraries"),
    BuildRule("setup-py-dynamic", "nvcc flags buildport cannot read", WARNING, "python", "no",
              "An f-string, a variable, a call or an unpacked list among the nvcc flags or libraries, or "
              "`extra_compile_args` built where the port does not follow it: left as it is, for a person.",
              "buildport"),
    BuildRule("setup-py-build-ext", "Custom build_ext class", WARNING, "python", "no",
              "A subclass of `BuildExtension` or `build_ext` may set compilers, flags or CUDA paths of its own.",
              "torch.utils.cpp_extension"),
    BuildRule("setup-py-cuda-home", "CUDA install root probed", WARNING, "python", "no",
              "`CUDA_HOME` is None on ROCm (`ROCM_HOME` is set): a build that tests it or runs its `bin/nvcc` "
              "stops or skips the extension.", "torch.utils.cpp_extension"),
    BuildRule("setup-py-arch-env", "NVIDIA architectures from the environment or the GPU", WARNING, "python", "no",
              "`TORCH_CUDA_ARCH_LIST` and `torch.cuda.get_device_capability()` give NVIDIA architectures; on ROCm "
              "PyTorch reads `PYTORCH_ROCM_ARCH`.", "torch.utils.cpp_extension"),
    # --- nvcc flag translation (both engines) -------------------------------------------------
    BuildRule("nvcc-flag", "nvcc flag value not translated", WARNING, "build", "no",
              "An nvcc flag whose value buildport does not know is left as it is; hipcc will reject or "
              "misread it.", "buildport.rules.flags"),
    BuildRule("nvcc-phase", "nvcc compilation phase flag", WARNING, "build", "no",
              "nvcc phase options (`-ptx`, `-cubin`, `-fatbin`, ...) produce NVIDIA-only artefacts.",
              "nvcc documentation, compilation phases"),
    # --- NVIDIA's profilers, debugger and sanitizers (both engines, buildport.rules.tools) ----------
    BuildRule("gpu-tool", "NVIDIA profiler or debugger run", INFO, "build", "yes",
              "A recipe, variable, custom command, test or `find_program` runs `nvprof`, `nsys profile` or "
              "`cuda-gdb`: it runs `rocprof --stats`, `rocprof --stats --hip-trace` or `rocgdb` instead.",
              "buildport.rules.tools; rocprof --help (ROCm 5.2)"),
    BuildRule("gpu-tool-option", "NVIDIA tool option", WARNING, "build", "varies",
              "An option of a ported tool call: mapped (`--print-gpu-trace` → `--hip-trace`), dropped where "
              "rocprof has no such switch (`--stats=true`, `-t cuda,nvtx`), or an output that changes format "
              "(`-o x.nvvp` → `-o x.csv`: rocprof writes CSV); an option the table does not know, or one with no "
              "ROCm form (`--metrics`), leaves the call as it is, to port by hand.",
              "buildport.rules.tools; nvprof, nsys and rocprof --help"),
    BuildRule("gpu-tool-unported", "NVIDIA tool without ROCm equivalent", WARNING, "build", "no",
              "`ncu` (kernel analysis: rocprof-compute, ROCm 6.2 and later), `compute-sanitizer` and "
              "`cuda-memcheck` (nearest practice: an AddressSanitizer build for xnack+ targets) and nsys's report "
              "commands have no ROCm 5.2 equivalent; the call is left as it is.",
              "buildport.rules.tools; ROCm AddressSanitizer documentation"),
    # --- the audit's own: CUDA text no engine finding covers --------------------------------------
    BuildRule("build-nvcc", "nvcc named", WARNING, "build", "varies",
              "A build file names the nvcc executable on a line the rewrite does not report.",
              "nvcc documentation"),
    BuildRule("build-cuda-path", "CUDA install path", WARNING, "build", "varies",
              "`/usr/local/cuda`, `CUDA_PATH`, `CUDA_HOME` or another CUDA root; a ROCm build finds nothing "
              "there.", "buildport.rules.paths"),
    BuildRule("build-cuda-arch", "NVIDIA architecture name", WARNING, "build", "varies",
              "`sm_XX`/`compute_XX` name NVIDIA GPUs; AMD targets are `gfx` names.",
              "nvcc documentation, GPU code generation options"),
    BuildRule("build-cuda-library", "CUDA library named", WARNING, "build", "varies",
              "A CUDA library (`-lcudart`, `libcublas.so`, `CUDA::cufft`, ...) named where the rewrite does not "
              "map it.", "buildport.rules.libraries"),
    BuildRule("build-cuda-name", "CUDA-named variable or option", INFO, "build", "varies",
              "A name containing CUDA (`USE_CUDA`, `CUDA_FOUND`, `CUDAToolkit_ROOT`); the logic behind it may "
              "select the CUDA build.", "buildport audit"),
)

BY_ID: Mapping[str, BuildRule] = MappingProxyType({rule.id: rule for rule in RULES})

_LIBRARY_NAMES = trie_pattern(BY_LINK_NAME)
_ROOT_WORDS = set(CUDA_ENV_VARS) | set(ROOT_VARIABLES)

#: (rule id, pattern) for CUDA text in build-file code, tried in this order; a
#: stretch of text belongs to the first pattern that matches it.
#: Each begins with the text it looks for and looks behind only where that text starts (see
#: wordtrie.bounded_trie): ``(?<![\w])(?:sm|compute|lto)_...`` would test the look-behind at every
#: position of every file, several times slower.
_WORD = r"[\w]"
_ROOTS = bounded_trie(_ROOT_WORDS, _WORD)
_NVCC = bounded_trie(["nvcc"], r"[\w.-]")
_ARCHES = bounded_trie(["sm", "compute", "lto"], _WORD)
_LIBRARY_LEAD = bounded_trie(["-l", "lib"], _WORD)
RESIDUE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("build-cuda-path", CUDA_ROOT_LITERAL),
    ("build-cuda-path", re.compile(rf"(?:{_ROOTS})(?![\w])")),
    ("build-nvcc", re.compile(rf"(?:{_NVCC})(?![\w.-])")),
    ("build-cuda-arch", re.compile(rf"(?:{_ARCHES})_\d{{2,3}}[a-z]?(?![\w])")),
    ("build-cuda-library", re.compile(rf"(?:{_LIBRARY_LEAD})(?:{_LIBRARY_NAMES})(?![\w-])|CUDA::\w+")),
    ("build-cuda-name", re.compile(r"[A-Za-z_]\w*")),  # kept only when the word says CUDA or NVCC
)

#: Words the last pattern keeps: they name CUDA in capitals (``USE_CUDA``, ``CUDA_FOUND``,
#: ``CUDAToolkit_ROOT``); lower-case ``cuda_*`` words count only as command calls.
CUDA_WORD = re.compile(r"CUDA")
