"""CMake names: CUDA variables, properties, commands and what replaces them.

Facts: cmake-variables(7), cmake-properties(7) and cmake-compile-features(7) for
the HIP language (CMake ≥ 3.21), FindCUDA and FindCUDAToolkit for the CUDA
names. ``""`` as a replacement means the name has no HIP meaning: its ``set()``
is removed and other uses are reported.
"""

from __future__ import annotations

#: First CMake release with the HIP language.
HIP_MIN_VERSION = (3, 21)

#: The C++ dialect nvcc compiles by default (CUDA 12 and later: C++17, as the host compiler's default is), where
#: clang's HIP, as ROCm 5.2 ships it, compiles C++11 (measured; rocPRIM, rocThrust and hipCUB need C++14): put
#: before HIP is enabled, so that a project's own CMAKE_CUDA_STANDARD (renamed) still decides.
NVCC_DEFAULT_STANDARD = 17
CMAKE_DEFAULT_STANDARD = f"""# nvcc compiles C++{NVCC_DEFAULT_STANDARD} unless told otherwise; clang's HIP before ROCm 6 compiles C++11
if(NOT DEFINED CMAKE_HIP_STANDARD)
  set(CMAKE_HIP_STANDARD {NVCC_DEFAULT_STANDARD})
endif()"""

#: What find_package(CUDA) / find_package(CUDAToolkit) becomes (as REQUIRED or QUIET as it was; then the ROCm
#: packages the file links).
FIND_HIP = "find_package(hip"
#: find_package() names (lower-cased) that pull in CUDA, and which library of :mod:`buildport.rules.libraries`
#: each stands for ("" = the toolkit): the port finds the ROCm package instead.
CUDA_PACKAGES: dict[str, str] = {
    "cuda": "", "cudatoolkit": "", "thrust": "thrust", "cub": "cub", "cccl": "thrust",
    "cudnn": "cudnn", "nccl": "nccl",
}
#: find_package()'s keywords (cmake find_package(1)): a second argument that is none of them is a version.
FIND_PACKAGE_KEYWORDS: frozenset[str] = frozenset("""
    EXACT QUIET MODULE CONFIG NO_MODULE REQUIRED COMPONENTS OPTIONAL_COMPONENTS REGISTRY_VIEW GLOBAL
    NO_POLICY_SCOPE BYPASS_PROVIDER UNWIND_INCLUDE NAMES CONFIGS HINTS PATHS PATH_SUFFIXES NO_DEFAULT_PATH
    NO_PACKAGE_ROOT_PATH NO_CMAKE_PATH NO_CMAKE_ENVIRONMENT_PATH NO_SYSTEM_ENVIRONMENT_PATH
    NO_CMAKE_PACKAGE_REGISTRY NO_CMAKE_BUILDS_PATH NO_CMAKE_SYSTEM_PATH NO_CMAKE_INSTALL_PREFIX
    NO_CMAKE_SYSTEM_PACKAGE_REGISTRY CMAKE_FIND_ROOT_PATH_BOTH ONLY_CMAKE_FIND_ROOT_PATH NO_CMAKE_FIND_ROOT_PATH
    TARGETS
""".split())

_CONFIGS = ("", "_DEBUG", "_RELEASE", "_RELWITHDEBINFO", "_MINSIZEREL", "_INIT")

#: Variable → replacement, applied to ``${NAME}`` references and to bare words
#: that name the variable (``set(NAME ...)``, ``if(NAME)``, ``string(APPEND NAME``).
VARIABLES: dict[str, str] = {
    **{f"CMAKE_CUDA_FLAGS{c}": f"CMAKE_HIP_FLAGS{c}" for c in _CONFIGS},
    "CMAKE_CUDA_STANDARD": "CMAKE_HIP_STANDARD",
    "CMAKE_CUDA_STANDARD_REQUIRED": "CMAKE_HIP_STANDARD_REQUIRED",
    "CMAKE_CUDA_EXTENSIONS": "CMAKE_HIP_EXTENSIONS",
    "CMAKE_CUDA_COMPILER": "CMAKE_HIP_COMPILER",
    "CMAKE_CUDA_COMPILER_ID": "CMAKE_HIP_COMPILER_ID",
    "CMAKE_CUDA_COMPILER_LOADED": "CMAKE_HIP_COMPILER_LOADED",
    "CMAKE_CUDA_COMPILER_VERSION": "CMAKE_HIP_COMPILER_VERSION",
    "CMAKE_CUDA_VISIBILITY_PRESET": "CMAKE_HIP_VISIBILITY_PRESET",
    "CMAKE_CUDA_ARCHITECTURES": "CMAKE_HIP_ARCHITECTURES",
    "CMAKE_CUDA_COMPILER_LAUNCHER": "CMAKE_HIP_COMPILER_LAUNCHER",
    "CMAKE_CUDA_CLANG_TIDY": "CMAKE_HIP_CLANG_TIDY",
    "CMAKE_CUDA_OUTPUT_EXTENSION": "CMAKE_HIP_OUTPUT_EXTENSION",
    "CMAKE_CUDA_SOURCE_FILE_EXTENSIONS": "CMAKE_HIP_SOURCE_FILE_EXTENSIONS",
    "CMAKE_CUDA_HOST_COMPILER": "",
    "CMAKE_CUDA_RESOLVE_DEVICE_SYMBOLS": "",
    "CMAKE_CUDA_RUNTIME_LIBRARY": "",
    "CUDA_NVCC_FLAGS": "HIP_COMPILE_OPTIONS",
    **{f"CUDA_NVCC_FLAGS{c}": f"HIP_COMPILE_OPTIONS{c}" for c in _CONFIGS[1:5]},
    "CUDA_FOUND": "hip_FOUND",
    "CUDAToolkit_FOUND": "hip_FOUND",
    "CUDA_INCLUDE_DIRS": "HIP_INCLUDE_DIRS",
    "CUDAToolkit_INCLUDE_DIRS": "HIP_INCLUDE_DIRS",
    "CUDA_TOOLKIT_INCLUDE": "HIP_INCLUDE_DIRS",
    "CMAKE_CUDA_TOOLKIT_INCLUDE_DIRECTORIES": "HIP_INCLUDE_DIRS",
    "CUDA_TOOLKIT_ROOT_DIR": "ROCM_PATH",
    "CUDAToolkit_ROOT": "ROCM_PATH",
    "CUDAToolkit_TARGET_DIR": "ROCM_PATH",
    "CUDAToolkit_ROOT_DIR": "ROCM_PATH",
    "CUDA_PATH": "ROCM_PATH",
    "CUDA_HOME": "ROCM_PATH",
    "CUDA_DIR": "ROCM_PATH",
    "CUDA_SDK_ROOT_DIR": "ROCM_PATH",
    "CUDAToolkit_LIBRARY_DIR": "HIP_LIB_INSTALL_DIR",  # hip-config.cmake defines these
    "CUDAToolkit_BIN_DIR": "HIP_BIN_INSTALL_DIR",
    # where CMake's CUDA language found the toolkit (CMakeDetermineCUDACompiler): HIP's is the ROCm root
    "CMAKE_CUDA_COMPILER_TOOLKIT_ROOT": "ROCM_PATH",
    "CMAKE_CUDA_COMPILER_TOOLKIT_LIBRARY_ROOT": "ROCM_PATH",
    "CMAKE_CUDA_COMPILER_LIBRARY_ROOT": "ROCM_PATH",
}

#: CMake's variables of a language (cmake-variables(7), ``CMAKE_<LANG>_<X>``) that mean for HIP what they mean
#: for CUDA: ``CMAKE_CUDA_<X>`` → ``CMAKE_HIP_<X>`` (``find_library(... ${CMAKE_CUDA_IMPLICIT_LINK_DIRECTORIES})``
#: searches where the HIP compiler links from; the CUDA name is empty once CUDA is not enabled). Left out: the
#: rule variables (``CMAKE_CUDA_COMPILE_OBJECT``, ``_LINK_EXECUTABLE``, ``_CREATE_*``: how nvcc is run, which
#: HIP's compiler must not be), the host compiler's (nvcc's own) and the device link's.
LANGUAGE_VARIABLE_SUFFIXES: tuple[str, ...] = tuple("""
    BYTE_ORDER COMPILER_ABI COMPILER_AR COMPILER_ARCHITECTURE_ID COMPILER_FRONTEND_VARIANT COMPILER_RANLIB
    COMPILER_TARGET CPPCHECK CPPLINT EXTENSIONS_DEFAULT IMPLICIT_INCLUDE_DIRECTORIES IMPLICIT_LINK_DIRECTORIES
    IMPLICIT_LINK_FRAMEWORK_DIRECTORIES IMPLICIT_LINK_LIBRARIES INCLUDE_WHAT_YOU_USE LIBRARY_ARCHITECTURE
    LINKER_LAUNCHER LINKER_PREFERENCE LINK_FLAGS PLATFORM_ID SIMULATE_ID SIMULATE_VERSION SIZEOF_DATA_PTR
    STANDARD_DEFAULT STANDARD_INCLUDE_DIRECTORIES STANDARD_LIBRARIES STANDARD_LINK_DIRECTORIES
""".split())
VARIABLES.update({f"CMAKE_CUDA_{x}": f"CMAKE_HIP_{x}" for x in LANGUAGE_VARIABLE_SUFFIXES
                  if f"CMAKE_CUDA_{x}" not in VARIABLES})

#: Legacy FindCUDA switches that only steer nvcc: their ``set()`` is removed.
LEGACY_SWITCHES: frozenset[str] = frozenset({
    "CUDA_PROPAGATE_HOST_FLAGS", "CUDA_HOST_COMPILER", "CUDA_VERBOSE_BUILD", "CUDA_64_BIT_DEVICE_CODE",
    "CUDA_ATTACH_VS_BUILD_RULE_TO_CUDA_FILE", "CUDA_GENERATED_OUTPUT_DIR", "CUDA_HOST_COMPILATION_CPP",
    "CUDA_BUILD_CUBIN", "CUDA_BUILD_EMULATION", "CUDA_USE_STATIC_CUDA_RUNTIME", "CUDA_LINK_LIBRARIES_KEYWORD",
    "CMAKE_CUDA_HOST_COMPILER", "CMAKE_CUDA_RESOLVE_DEVICE_SYMBOLS", "CMAKE_CUDA_RUNTIME_LIBRARY",
})

#: Variables whose uses need a human: (name, why).
REPORTED_VARIABLES: dict[str, str] = {
    "CUDA_VERSION": "CUDA version numbers have no HIP meaning; compare hip_VERSION instead",
    "CUDAToolkit_VERSION": "CUDA version numbers have no HIP meaning; compare hip_VERSION instead",
    "CUDAToolkit_VERSION_MAJOR": "CUDA version numbers have no HIP meaning",
    "CUDA_VERSION_MAJOR": "CUDA version numbers have no HIP meaning",
    "CUDA_NVCC_EXECUTABLE": "there is no nvcc in ROCm; hipcc or CMAKE_HIP_COMPILER builds HIP",
    "CUDAToolkit_NVCC_EXECUTABLE": "there is no nvcc in ROCm; hipcc or CMAKE_HIP_COMPILER builds HIP",
    "CUDA_SEPARABLE_COMPILATION": "handled where a legacy target is created; check other uses",
    "CMAKE_CUDA_COMPILER_TOOLKIT_VERSION": "CUDA version numbers have no HIP meaning; compare hip_VERSION instead",
}

#: Properties whose value names a language: CUDA there becomes HIP (a target linked as CUDA needs CUDA enabled).
LANGUAGE_PROPERTIES = frozenset(("LANGUAGE", "LINKER_LANGUAGE"))

#: Target/source properties: CUDA name → HIP name ("" removes the property).
PROPERTIES: dict[str, str] = {
    "CUDA_STANDARD": "HIP_STANDARD",
    "CUDA_STANDARD_REQUIRED": "HIP_STANDARD_REQUIRED",
    "CUDA_EXTENSIONS": "HIP_EXTENSIONS",
    "CUDA_ARCHITECTURES": "HIP_ARCHITECTURES",
    "CUDA_RESOLVE_DEVICE_SYMBOLS": "",
    "CUDA_RUNTIME_LIBRARY": "",
    "CUDA_PTX_COMPILATION": "",
    "CUDA_CUBIN_COMPILATION": "",
    "CUDA_FATBIN_COMPILATION": "",
    "CUDA_SEPARABLE_COMPILATION": "",  # becomes -fgpu-rdc options, see the passes
}

#: Legacy commands with a direct modern replacement.
LEGACY_COMMANDS: dict[str, str] = {
    "cuda_add_executable": "add_executable",
    "cuda_add_library": "add_library",
    "cuda_include_directories": "include_directories",
}

#: FindCUDA helpers that add one library to a target.
LEGACY_LINK_HELPERS: dict[str, str] = {
    "cuda_add_cublas_to_target": "cublas",
    "cuda_add_cufft_to_target": "cufft",
}

#: FindCUDA commands that compile sources into objects, ``cuda_compile(OUT sources... [STATIC|SHARED|MODULE]
#: [OPTIONS flags...])``: the sources become HIP sources, and OUT names them, so that the targets that list
#: OUT compile them (CMake lists a source once in a target that names it twice).
LEGACY_OBJECT_COMMANDS: frozenset[str] = frozenset({"cuda_compile"})
#: FindCUDA's own library lookups, which projects call too (``find_cuda_helper_libs(curand)``): no command of
#: that name exists without FindCUDA, and the port finds the ROCm packages itself.
LEGACY_LOOKUPS: frozenset[str] = frozenset({"find_cuda_helper_libs"})

#: Commands with no automatic translation: name → what a human must do.
MANUAL_COMMANDS: dict[str, str] = {
    "cuda_select_nvcc_arch_flags": "NVIDIA architecture detection; set CMAKE_HIP_ARCHITECTURES instead",
    "cuda_detect_installed_gpus": "NVIDIA GPU detection; CMake detects AMD GPUs with rocm_agent_enumerator",
    "cuda_compile_ptx": "PTX output has no AMD counterpart; compile the sources as HIP objects",
    "cuda_compile_fatbin": "fatbin output has no AMD counterpart; use --genco code objects",
    "cuda_compile_cubin": "cubin output has no AMD counterpart; use --genco code objects",
    "cuda_wrap_srcs": "FindCUDA internals; add the sources to a target with LANGUAGE HIP",
    "cuda_link_separable_compilation_objects": "device linking is done by clang with -fgpu-rdc --hip-link",
    "cuda_compute_separable_compilation_object_file_name": "device linking is done by clang with -fgpu-rdc --hip-link",
    "cuda_build_clean_target": "FindCUDA internals; nothing to clean with the HIP language",
}

#: Copies of CMake's own CUDA modules a project may carry (FindCUDA and its helpers): they serve
#: find_package(CUDA), which the port replaces, so they are left as they are, not half renamed.
CUDA_MODULE_FILES: frozenset[str] = frozenset({
    "FindCUDA.cmake", "FindCUDAToolkit.cmake", "run_nvcc.cmake", "make2cmake.cmake", "parse_cubin.cmake",
    "select_compute_arch.cmake", "CMakeDetermineCUDACompiler.cmake", "CMakeCUDAInformation.cmake",
    "CMakeTestCUDACompiler.cmake", "CMakeCUDACompiler.cmake.in",
})
#: ... and the folder CMake keeps FindCUDA's helpers in.
CUDA_MODULE_FOLDER = "FindCUDA"

#: Generator-expression heads that name a language.
LANGUAGE_GENEX = ("COMPILE_LANGUAGE", "LINK_LANGUAGE", "COMPILE_LANG_AND_ID", "LINK_LANG_AND_ID")
#: Generator expressions about the CUDA compiler → HIP ones.
GENEX_RENAMES: dict[str, str] = {
    "CUDA_COMPILER_ID": "HIP_COMPILER_ID",
    "CUDA_COMPILER_VERSION": "HIP_COMPILER_VERSION",
}
#: Compiler ids: NVIDIA's compiler → clang, which compiles HIP.
COMPILER_IDS: dict[str, str] = {"NVIDIA": "Clang"}

#: Commands whose arguments are compiler options (after the target and scope keywords).
FLAG_COMMANDS: frozenset[str] = frozenset({
    "target_compile_options", "add_compile_options", "target_link_options", "add_link_options",
})
#: Variable families: every name that begins with a key, whatever follows (a configuration the project names
#: itself, ``CUDA_NVCC_FLAGS_PROFILE``; a reference that computes it, ``${CUDA_NVCC_FLAGS_${CONFIG}}``), is
#: renamed with the value in the key's place, so that the family stays one (FindCUDA read
#: ``CUDA_NVCC_FLAGS_<CONFIG>`` for every configuration). Its members hold nvcc flags.
VARIABLE_FAMILIES: dict[str, str] = {"CUDA_NVCC_FLAGS_": "HIP_COMPILE_OPTIONS_"}

#: Variables that hold nvcc flags (string or list); also every member of :data:`VARIABLE_FAMILIES`.
FLAG_VARIABLES: frozenset[str] = frozenset(
    {f"CMAKE_CUDA_FLAGS{c}" for c in _CONFIGS} | {f"CUDA_NVCC_FLAGS{c}" for c in _CONFIGS[:5]}
    | {f"CMAKE_HIP_FLAGS{c}" for c in _CONFIGS} | {f"HIP_COMPILE_OPTIONS{c}" for c in _CONFIGS[:5]}
)

#: Target-creating commands and the number of leading non-source keywords.
TARGET_COMMANDS: frozenset[str] = frozenset({"add_executable", "add_library", "cuda_add_executable", "cuda_add_library"})
TARGET_KEYWORDS: frozenset[str] = frozenset({
    "STATIC", "SHARED", "MODULE", "OBJECT", "INTERFACE", "UNKNOWN", "IMPORTED", "ALIAS", "GLOBAL",
    "WIN32", "MACOSX_BUNDLE", "EXCLUDE_FROM_ALL", "OPTIONS", "PRIVATE", "PUBLIC", "FILE_SET", "TYPE",
    "BASE_DIRS", "FILES", "HEADERS", "CXX_MODULES",
})

#: Suffixes of CUDA sources, which must be compiled as HIP.
CUDA_SUFFIXES = (".cu",)

#: CMake's own commands (cmake-commands(7)). A call to any other command is a user
#: function or macro: ``.cu`` files among its arguments are sources it compiles.
BUILTIN_COMMANDS: frozenset[str] = frozenset("""
block break cmake_host_system_information cmake_language cmake_minimum_required cmake_parse_arguments
cmake_path cmake_pkg_config cmake_policy configure_file continue else elseif endblock endforeach
endfunction endif endmacro endwhile execute_process file find_file find_library find_package find_path
find_program foreach function get_cmake_property get_directory_property get_filename_component
get_property if include include_guard list macro mark_as_advanced math message option return
separate_arguments set set_directory_properties set_property site_name string unset variable_watch while
add_compile_definitions add_compile_options add_custom_command add_custom_target add_definitions
add_dependencies add_executable add_library add_link_options add_subdirectory add_test aux_source_directory
build_command create_test_sourcelist define_property enable_language enable_testing export fltk_wrap_ui
get_source_file_property get_target_property get_test_property include_directories include_external_msproject
include_regular_expression install link_directories link_libraries load_cache project remove_definitions
set_source_files_properties set_target_properties set_tests_properties source_group target_compile_definitions
target_compile_features target_compile_options target_include_directories target_link_directories
target_link_libraries target_link_options target_precompile_headers target_sources try_compile try_run
ctest_build ctest_configure ctest_coverage ctest_empty_binary_directory ctest_memcheck ctest_read_custom_files
ctest_run_script ctest_sleep ctest_start ctest_submit ctest_test ctest_update ctest_upload
build_name exec_program export_library_dependencies install_files install_programs install_targets
load_command make_directory output_required_files qt_wrap_cpp qt_wrap_ui remove subdir_depends subdirs
use_mangled_mesa utility_source variable_requires write_file check_language
""".split())
