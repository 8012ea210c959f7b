"""Inline cases per rule: small before/after pairs, and look-alikes that must not change."""

from __future__ import annotations

import pytest

from buildport.engine import port_cmake
from buildport.findings import Severity
from buildport.passes.base import Options
from buildport.rules.cmake import CMAKE_DEFAULT_STANDARD

OPTS = Options(("gfx90a",))

NOOP = [
    # names that only look like CUDA ones
    'set(MY_CUDA_FLAG_DOC "see CMAKE_CUDA_FLAGS")\n',
    "set(CMAKE_CUDA_FLAGS_DOC x)\n",
    "set(CUDA_ARCH_LIST_DOC 80)\n",
    "if(MY_CUDA_FOUND)\nendif()\n",
    "add_library(cuda_utils utils.cpp)\n",
    "add_library(cublas_wrapper wrap.cpp)\n",
    "target_link_libraries(app cublas_wrapper)\n",
    "target_link_libraries(app MyCUDA::cublas)\n",
    "add_executable(a a.cuh.in.cpp)\n",
    "add_executable(a cu)\n",
    "set(SOURCES main.cu.txt)\n",
    # flags outside a flag context
    "execute_process(COMMAND ${CMAKE_COMMAND} -G Ninja -x cu .)\n",
    "add_custom_command(OUTPUT x COMMAND tool -G -lineinfo -code=1)\n",
    'message(STATUS "pass --use_fast_math to get speed")\n',
    "set(MY_OPTIONS -G -O0)\n",
    # text that is not code
    "# project(x LANGUAGES CUDA)\n",
    "#[[ enable_language(CUDA) ]]\n",
    "set(DOC [[CUDA::cublas $ENV{CUDA_HOME} /usr/local/cuda]])\n",
    # paths that are not the CUDA root
    "include_directories(/usr/local/cudaext/include /opt/cudart-docs)\n",
    "set(P $ENV{CUDA_HOME_DOC})\n",
    # languages that are not CUDA
    "project(x LANGUAGES C CXX Fortran)\n",
    "enable_language(ASM)\n",
    "check_language(Fortran)\n",
    "target_compile_features(a PUBLIC cxx_std_17)\n",
    "set_source_files_properties(a.cpp PROPERTIES LANGUAGE CXX)\n",
    "target_compile_options(a PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wall>)\n",
    # already HIP
    "set_source_files_properties(k.cu PROPERTIES LANGUAGE HIP)\nadd_executable(k k.cu)\n",
    "target_link_libraries(a roc::hipblas hip::host)\n",
    "find_package(hipblas REQUIRED)\n",
]


@pytest.mark.parametrize("text", NOOP)
def test_look_alikes_stay(text: str) -> None:
    assert port_cmake(text, options=OPTS).text == text


#: Before HIP is enabled where the file names no CUDA standard: nvcc's default dialect.
STANDARD = CMAKE_DEFAULT_STANDARD + "\n"

CHANGES = [
    ("project(x CUDA)\n",
     'set(CMAKE_HIP_ARCHITECTURES "gfx90a" CACHE STRING "AMD GPU targets to compile for")\n' + STANDARD
     + "project(x CXX HIP)\nfind_package(hip REQUIRED)\n"),
    ("project(x LANGUAGES CUDA CXX)\n",
     'set(CMAKE_HIP_ARCHITECTURES "gfx90a" CACHE STRING "AMD GPU targets to compile for")\n' + STANDARD
     + "project(x LANGUAGES HIP CXX)\nfind_package(hip REQUIRED)\n"),
    ("cmake_minimum_required(VERSION 3.10...3.28)\nproject(x CXX CUDA)\n",
     'cmake_minimum_required(VERSION 3.21...3.28)\nset(CMAKE_HIP_ARCHITECTURES "gfx90a" CACHE STRING '
     '"AMD GPU targets to compile for")\n' + STANDARD + "project(x CXX HIP)\n"
     "find_package(hip REQUIRED)\n"),
    # a standard the project names stays the one it names
    ("set(CMAKE_CUDA_STANDARD 14)\nproject(x CUDA)\n",
     'set(CMAKE_HIP_STANDARD 14)\nset(CMAKE_HIP_ARCHITECTURES "gfx90a" CACHE STRING "AMD GPU targets to compile '
     'for")\nproject(x CXX HIP)\nfind_package(hip REQUIRED)\n'),
    ("target_link_libraries(app PRIVATE CUDA::cufft)\n", "target_link_libraries(app PRIVATE hip::hipfft)\n"),
    ("target_link_libraries(app PRIVATE CUDA::cublasLt_static)\n",
     "target_link_libraries(app PRIVATE roc::hipblaslt)\n"),
    ("target_link_libraries(app PRIVATE CUDA::nvrtc)\n",
     "target_link_libraries(app PRIVATE $<TARGET_NAME_IF_EXISTS:hiprtc::hiprtc>)\n"),  # in amdhip64 before 6.0
    ("find_package(CUDAToolkit REQUIRED)\nadd_executable(app app.cpp)\n"
     "target_link_libraries(app CUDA::nvrtc CUDA::cuda_driver)\n",
     "find_package(hip REQUIRED)\nfind_package(hiprtc QUIET)\nadd_executable(app app.cpp)\n"  # no hiprtc package in 5.x
     "target_link_libraries(app $<TARGET_NAME_IF_EXISTS:hiprtc::hiprtc> hip::host)\n"),
    ("target_link_libraries(app ${CUDA_curand_LIBRARY})\n", "target_link_libraries(app hip::hiprand)\n"),
    ("target_link_libraries(app $<BUILD_INTERFACE:CUDA::cusparse>)\n",
     "target_link_libraries(app $<BUILD_INTERFACE:roc::hipsparse>)\n"),
    ("set(LIBS CUDA::cusolver ${CUDA_LIBRARIES})\n", "set(LIBS roc::hipsolver hip::host)\n"),
    ("target_link_libraries(a CUDA::cudart CUDA::cuda_driver)\n", "target_link_libraries(a hip::host)\n"),
    ("target_compile_features(a PUBLIC cuda_std_20)\n", "target_compile_features(a PUBLIC hip_std_20)\n"),
    ("set_source_files_properties(x.cu PROPERTIES LANGUAGE CUDA)\n",
     "set_source_files_properties(x.cu PROPERTIES LANGUAGE HIP)\n"),
    ('set(CMAKE_CUDA_FLAGS "-Xcompiler -fopenmp,-pthread")\n', 'set(CMAKE_HIP_FLAGS "-fopenmp -pthread")\n'),
    ('set(CMAKE_CUDA_FLAGS "--generate-code=arch=compute_80,code=[sm_80,compute_80] -O2")\n',
     'set(CMAKE_HIP_FLAGS "-O2")\n'),
    ("set(X --expt-relaxed-constexpr -O2)\n", "set(X -O2)\n"),
    ("target_compile_options(a PRIVATE --default-stream=per-thread)\n",
     "target_compile_options(a PRIVATE -fgpu-default-stream=per-thread)\n"),
    ("target_compile_options(a PRIVATE -rdc=true -ccbin=/usr/bin/g++-12)\n",
     "target_compile_options(a PRIVATE -fgpu-rdc)\n"),
    ("if(DEFINED ENV{CUDA_HOME})\nendif()\n", "if(DEFINED ENV{ROCM_PATH})\nendif()\n"),
    ("if(CMAKE_CUDA_COMPILER_ID STREQUAL NVIDIA)\nendif()\n", "if(CMAKE_HIP_COMPILER_ID STREQUAL NVIDIA)\nendif()\n"),
]


@pytest.mark.parametrize("before,after", CHANGES)
def test_rewrites(before: str, after: str) -> None:
    result = port_cmake(before, options=OPTS)
    assert result.text == after
    assert port_cmake(after, options=OPTS).text == after


@pytest.mark.parametrize("path", ["cmake/FindCUDA.cmake", "CMake/cuda/FindCUDA/run_nvcc.cmake",
                                  "cmake/FindCUDAToolkit.cmake", "cmake/select_compute_arch.cmake"])
def test_copies_of_cmakes_cuda_modules_are_left_as_they_are(path: str) -> None:
    """A project's own copy of FindCUDA serves find_package(CUDA), which the port replaces: porting it would
    half rename CMake's module (CUDA_NVCC_EXECUTABLE, cuda_wrap_srcs...) into a file that no longer works."""
    text = ('set(CUDA_NVCC_FLAGS "" CACHE STRING "")\nfind_program(CUDA_NVCC_EXECUTABLE nvcc)\n'
            "macro(CUDA_ADD_LIBRARY name)\n  cuda_wrap_srcs(${name} OBJ _generated_files ${ARGN})\nendmacro()\n")
    result = port_cmake(text, path, options=OPTS)
    assert result.text == text
    assert [f.rule for f in result.findings] == ["cmake-cuda-module"]


@pytest.mark.parametrize(("path", "package"), [("cmake/modules/FindNccl.cmake", "rccl"),
                                               ("CMakeModules/FindcuDNN.cmake", "miopen"),
                                               ("cmake/FindThrust.cmake", "rocthrust")])
def test_the_projects_find_module_of_a_replaced_package_is_left_as_it_is(path: str, package: str) -> None:
    """find_package(NCCL) becomes find_package(rccl), which never reads the project's FindNCCL.cmake: porting
    it made its own variable a target name (``IS_DIRECTORY "rccl::rccl"``) and defined ROCm's targets itself."""
    text = ('find_library(NCCL_LIBRARY NAMES nccl)\nif(IS_DIRECTORY "${NCCL_LIBRARY}")\n  message(FATAL_ERROR x)\n'
            "endif()\nadd_library(nccl::nccl UNKNOWN IMPORTED)\n")
    result = port_cmake(text, path, options=OPTS)
    assert result.text == text
    assert [f.rule for f in result.findings] == ["cmake-cuda-module"]
    assert f"find_package({package})" in result.findings[0].message


@pytest.mark.parametrize("path", ["cmake/FindNVTX.cmake", "cmake/FindTensorRT.cmake", "FindNCCL.txt"])
def test_a_find_module_of_a_package_the_port_keeps_is_ported(path: str) -> None:
    """find_package(NVTX) stays: the project's module is still what finds it, and its CUDA names are ported."""
    text = "find_library(NVTX_LIBRARY nvToolsExt)\nset(NVTX_LIBS ${CUDA_CUDART_LIBRARY})\n"
    result = port_cmake(text, path, options=OPTS)
    assert result.text != text and "cmake-cuda-module" not in [f.rule for f in result.findings]


def test_a_file_that_picks_rocm_itself_is_left_as_it_is() -> None:
    """faiss's folders: ``if(FAISS_ENABLE_ROCM)`` links hip::host, ``else()`` CUDA::cudart (its root enables HIP
    or CUDA). Porting the CUDA branch made both branches ROCm's: the CUDA build lost its runtime."""
    text = ("if(FAISS_ENABLE_ROCM)\n  target_link_libraries(faiss_c PUBLIC hip::host roc::hipblas)\nelse()\n"
            "  find_package(CUDAToolkit REQUIRED)\n  target_link_libraries(faiss_c PUBLIC CUDA::cudart CUDA::cublas)\n"
            "endif()\n")
    result = port_cmake(text, "c_api/gpu/CMakeLists.txt", options=OPTS)
    assert result.text == text
    assert [f.rule for f in result.findings] == ["cmake-hip-present"] and result.findings[0].line == 1


@pytest.mark.parametrize("condition", ["CMAKE_HIP_COMPILER", "NOT DEFINED ROCM_PATH", "HIP_DEFAULT_ARCHITECTURES",
                                       "TARGET roc::rocprim_hip", "USE_GPU", "CHIP_ID EQUAL 3", "HIPCC",
                                       "ROCM_PATH_FOUND", "HIP_INCLUDE_DIRS"])
def test_a_condition_that_is_no_rocm_switch_of_the_project_leaves_the_file_ported(condition: str) -> None:
    """CMake's own HIP variables, and the conditions a port writes, say nothing of a ROCm build the project has."""
    text = (f"if({condition})\n  target_link_libraries(app hip::host)\nendif()\n"
            "target_link_libraries(app CUDA::cublas)\n")
    result = port_cmake(text, "CMakeLists.txt", options=OPTS)
    assert "roc::hipblas" in result.text and "cmake-hip-present" not in [f.rule for f in result.findings]


@pytest.mark.parametrize("switch", ["Kokkos_ENABLE_HIP", "USE_ROCm", "GPU_BACKEND STREQUAL HIP"])
def test_rocm_switches_in_other_spellings_pick_the_runtime(switch: str) -> None:
    text = f"if({switch})\n  target_link_libraries(app hip::host)\nelse()\n  target_link_libraries(app CUDA::cudart)\nendif()\n"
    result = port_cmake(text, "CMakeLists.txt", options=OPTS)
    assert result.text == text and [f.rule for f in result.findings] == ["cmake-hip-present"]


def test_hip_targets_named_in_a_comment_only_are_no_rocm_build() -> None:
    text = ("# on AMD this links hip::host\nif(USE_ROCM)\n  message(STATUS rocm)\nendif()\n"
            "target_link_libraries(app CUDA::cublas)\n")
    assert "roc::hipblas" in port_cmake(text, "CMakeLists.txt", options=OPTS).text


def test_cu_files_a_list_gets_from_another_file_are_marked_from_the_targets_sources() -> None:
    """caffe: ``list(APPEND srcs ${cuda_objs} ${cuda})`` with ``cuda`` set by a function of another file: the
    target built of ``srcs`` gets its .cu files marked HIP where CMake has them."""
    text = ("pick_sources(${PROJECT_SOURCE_DIR})\nfind_package(CUDA)\nlist(APPEND srcs ${cuda})\n"
            "add_library(core ${srcs})\n")
    result = port_cmake(text, "src/CMakeLists.txt", options=OPTS)
    assert "get_target_property(hip_cu_sources core SOURCES)" in result.text


def test_a_glob_pattern_handed_to_a_function_is_no_source_to_mark() -> None:
    text = 'find_package(CUDA)\nmy_source_group("Cuda" GLOB "${root}/src/*.cu")\n'
    result = port_cmake(text, "CMakeLists.txt", options=OPTS)
    assert "set_source_files_properties" not in result.text


@pytest.mark.parametrize("command", ["get_filename_component(dir ${CUDA_CUDART_LIBRARY} PATH)",
                                     "cmake_path(GET CUDA_curand_LIBRARY PARENT_PATH dir)"])
def test_a_library_path_in_a_path_command_is_kept_not_made_a_target(command: str) -> None:
    result = port_cmake(f"find_package(CUDA)\n{command}\n", "CMakeLists.txt", options=OPTS)
    line = next(line for line in result.text.splitlines() if line.startswith(command.split("(")[0]))
    assert "::" not in line and "CUDA" in line


def test_a_library_path_the_toolkit_no_longer_sets_stays_one_argument() -> None:
    """Without CUDA's toolkit ``${CUDA_CUDART_LIBRARY}`` is empty: unquoted, get_filename_component would be
    called with an argument too few (a configure error); quoted, it is an empty path."""
    result = port_cmake("find_package(CUDA)\nget_filename_component(dir ${CUDA_CUDART_LIBRARY} PATH)\n",
                        "CMakeLists.txt", options=OPTS)
    assert 'get_filename_component(dir "${CUDA_CUDART_LIBRARY}" PATH)' in result.text
    assert "cmake-library-path" in [f.rule for f in result.findings]


def test_findcudas_own_library_lookup_goes() -> None:
    result = port_cmake("find_package(CUDA)\nfind_cuda_helper_libs(curand)\nfind_cuda_helper_libs(nppc)\n"
                        "target_link_libraries(app ${CUDA_curand_LIBRARY})\n", "CMakeLists.txt", options=OPTS)
    assert "find_cuda_helper_libs" not in result.text and "hip::hiprand" in result.text
    rules = [(f.rule, f.severity) for f in result.findings if "find_cuda_helper_libs" in f.message]
    assert rules == [("cmake-legacy-command", Severity.INFO), ("cmake-library-unported", Severity.WARNING)]


def test_cuda_compile_makes_its_sources_hip_and_names_them_for_the_target() -> None:
    text = ("find_package(CUDA)\nlist(APPEND CUDA_NVCC_FLAGS -Xcompiler -fPIC)\nset(CUDA_NVCC_FLAGS_RELEASE -O3)\n"
            'cuda_compile(objs a.cu "b c.cu" SHARED OPTIONS --use_fast_math DEBUG -G RELEASE -lineinfo)\n'
            "add_library(l ${objs} host.cpp)\n")
    result = port_cmake(text, "CMakeLists.txt", options=OPTS)
    assert ('set_source_files_properties(a.cu "b c.cu" PROPERTIES LANGUAGE HIP)\n'
            'set_property(SOURCE a.cu "b c.cu" APPEND PROPERTY COMPILE_OPTIONS ${HIP_COMPILE_OPTIONS} '
            '"$<$<CONFIG:Release>:${HIP_COMPILE_OPTIONS_RELEASE}>" -ffast-math $<$<CONFIG:Debug>:-g> '
            '$<$<CONFIG:Debug>:-O0> $<$<CONFIG:Release>:-gline-tables-only>)\n') in result.text
    # FindCUDA's OUT held the objects' full paths: a target in another folder finds the sources by them
    assert ('set(objs)\nforeach(hip_source IN ITEMS a.cu "b c.cu")\n'
            '  get_filename_component(hip_source "${hip_source}" ABSOLUTE)\n  list(APPEND objs "${hip_source}")\n'
            'endforeach()\n') in result.text


def test_configuration_keywords_among_a_legacy_targets_options_pick_the_configuration() -> None:
    text = "find_package(CUDA)\ncuda_add_library(k k.cu OPTIONS -O2 DEBUG -G)\n"
    result = port_cmake(text, "CMakeLists.txt", options=OPTS)
    assert ('target_compile_options(k PRIVATE "$<$<COMPILE_LANGUAGE:HIP>:-O2;$<$<CONFIG:Debug>:-g>;'
            '$<$<CONFIG:Debug>:-O0>>")') in result.text


@pytest.mark.parametrize("platform", ["x86_64-linux", "sbsa-linux", "aarch64-linux", "ppc64le-linux"])
def test_a_cuda_target_platforms_folders_are_rocms_include_and_lib(platform: str) -> None:
    text = (f"find_package(CUDAToolkit)\ninclude_directories(${{CUDAToolkit_ROOT}}/targets/{platform}/include)\n"
            f"link_directories(/usr/local/cuda/targets/{platform}/lib)\n")
    result = port_cmake(text, "CMakeLists.txt", options=OPTS)
    assert "include_directories(${ROCM_PATH}/include)" in result.text
    assert "link_directories(${ROCM_PATH}/lib)" in result.text


def test_a_file_with_its_own_rocm_build_says_which_switch_builds_it() -> None:
    """CTranslate2: ``elseif(WITH_HIP)`` around ``enable_language(HIP)``; the finding names the switch."""
    text = ("if(WITH_CUDA)\n  find_package(CUDA REQUIRED)\n  cuda_add_library(ct2 a.cu)\nelseif(WITH_HIP)\n"
            "  if(WITH_TP)\n    message(FATAL_ERROR no)\n  endif()\n  enable_language(HIP)\n"
            "  add_library(ct2 a.cu)\nendif()\n")
    result = port_cmake(text, "CMakeLists.txt", options=OPTS)
    [finding] = result.findings
    assert result.text == text and finding.rule == "cmake-hip-present" and finding.line == 8
    assert "`elseif(WITH_HIP)`" in finding.message and "-DWITH_HIP=ON" in finding.suggestion


@pytest.mark.parametrize(("condition", "setting"), [("GPU_BACKEND STREQUAL \"HIP\"", "-DGPU_BACKEND=HIP"),
                                                    ("USE_ROCM AND NOT APPLE", "-DUSE_ROCM=ON"),
                                                    ("NOT WITH_HIP", None)])
def test_the_switch_of_a_rocm_branch_is_said_as_it_is_set(condition: str, setting: str | None) -> None:
    text = f"if({condition})\n  enable_language(HIP)\nelse()\n  enable_language(CUDA)\n  add_library(a a.cu)\nendif()\n"
    [finding] = port_cmake(text, "CMakeLists.txt", options=OPTS).findings
    assert finding.rule == "cmake-hip-present"
    assert (f"`{setting}`" in finding.suggestion) if setting else "-D" not in finding.suggestion


def test_cu_files_added_to_a_target_another_folder_made_are_marked_where_it_is() -> None:
    """UppASD: source/gpu_files adds its .cu files to ${UppASD_LIB}, made by the root; a source's LANGUAGE is
    its directory's, so marked here the root's target never compiled them."""
    text = "enable_language(CUDA)\ntarget_sources(${LIB} PRIVATE a.cu b.cpp)\n"
    assert ("set_source_files_properties(a.cu TARGET_DIRECTORY ${LIB} PROPERTIES LANGUAGE HIP)"
            in port_cmake(text, "gpu/CMakeLists.txt", options=OPTS).text)
    here = "enable_language(CUDA)\nadd_library(l STATIC b.cpp)\ntarget_sources(l PRIVATE a.cu)\n"
    assert "set_source_files_properties(a.cu PROPERTIES LANGUAGE HIP)" in port_cmake(here, "CMakeLists.txt",
                                                                                     options=OPTS).text


@pytest.mark.parametrize(("line", "expected"), [
    ('set(CMAKE_CXX_FLAGS "${CMAKE_CXX_FLAGS} -I${CMAKE_CUDA_TOOLKIT_INCLUDE_DIRECTORIES} -DDEBUG")',
     'set(CMAKE_CXX_FLAGS "${CMAKE_CXX_FLAGS} -I${HIP_INCLUDE_DIRS} -DDEBUG -D__HIP_PLATFORM_AMD__")'),
    ('string(APPEND CMAKE_C_FLAGS " -isystem ${CUDAToolkit_INCLUDE_DIRS}")',
     'string(APPEND CMAKE_C_FLAGS " -isystem ${HIP_INCLUDE_DIRS} -D__HIP_PLATFORM_AMD__")'),
    ("add_compile_options(-I${CUDA_INCLUDE_DIRS})", "add_compile_options(-I${HIP_INCLUDE_DIRS} -D__HIP_PLATFORM_AMD__)"),
    ('add_compile_options("-I${CUDA_INCLUDE_DIRS}")',
     'add_compile_options("-I${HIP_INCLUDE_DIRS}" -D__HIP_PLATFORM_AMD__)'),
])
def test_cudas_headers_given_to_cxx_files_by_a_flag_bring_hips_platform(line: str, expected: str) -> None:
    """UppASD: ``-I${CMAKE_CUDA_TOOLKIT_INCLUDE_DIRECTORIES}`` in CMAKE_CXX_FLAGS; g++ stopped at hip_runtime.h's
    ``#error`` (no __HIP_PLATFORM_AMD__)."""
    result = port_cmake(f"enable_language(CUDA)\n{line}\n", "CMakeLists.txt", options=OPTS)
    assert expected in result.text
    assert port_cmake(result.text, "CMakeLists.txt", options=OPTS).text == result.text


def test_cuda_flags_with_cudas_headers_get_no_host_platform() -> None:
    text = 'enable_language(CUDA)\nset(CMAKE_CUDA_FLAGS "${CMAKE_CUDA_FLAGS} -I${CMAKE_CUDA_TOOLKIT_INCLUDE_DIRECTORIES}")\n'
    assert "__HIP_PLATFORM_AMD__" not in port_cmake(text, "CMakeLists.txt", options=OPTS).text


def test_a_cu_file_of_a_target_here_and_of_one_elsewhere_is_marked_in_both_directories() -> None:
    text = "enable_language(CUDA)\nadd_library(local STATIC k.cu)\ntarget_sources(${PARENT_LIB} PRIVATE k.cu)\n"
    result = port_cmake(text, "gpu/CMakeLists.txt", options=OPTS).text
    assert "set_source_files_properties(k.cu PROPERTIES LANGUAGE HIP)" in result
    assert "set_source_files_properties(k.cu TARGET_DIRECTORY ${PARENT_LIB} PROPERTIES LANGUAGE HIP)" in result
    assert port_cmake(result, "gpu/CMakeLists.txt", options=OPTS).text == result


def test_globbed_cu_files_given_to_a_target_elsewhere_are_marked_in_its_directory() -> None:
    text = ("enable_language(CUDA)\nfile(GLOB GPU_SRC ${CMAKE_CURRENT_SOURCE_DIR}/*.cu ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)\n"
            "target_sources(${PARENT_LIB} PRIVATE ${GPU_SRC})\n")
    result = port_cmake(text, "gpu/CMakeLists.txt", options=OPTS).text
    assert ("set_source_files_properties(${hip_cu_sources} TARGET_DIRECTORY ${PARENT_LIB} PROPERTIES LANGUAGE HIP)"
            in result)


@pytest.mark.parametrize(("line", "expected"), [
    ("add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-I${CUDAToolkit_INCLUDE_DIRS}>)",
     "add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-I${HIP_INCLUDE_DIRS}>)"),
    ('string(APPEND CMAKE_CXX_FLAGS " " -I${CUDA_INCLUDE_DIRS})',
     'string(APPEND CMAKE_CXX_FLAGS " " -I${HIP_INCLUDE_DIRS} " -D__HIP_PLATFORM_AMD__")'),
    ("add_compile_options(-I${CUDA_INCLUDE_DIRS}/extra)",
     "add_compile_options(-I${HIP_INCLUDE_DIRS}/extra -D__HIP_PLATFORM_AMD__)"),
])
def test_the_platform_definition_never_splits_an_argument(line: str, expected: str) -> None:
    """A generator expression is left (a blank would make it two arguments); string(APPEND) joins its arguments
    with nothing between, so the definition is an argument of its own with its blank."""
    assert expected in port_cmake(f"enable_language(CUDA)\n{line}\n", "CMakeLists.txt", options=OPTS).text


@pytest.mark.parametrize("condition", ["HIP_FOUND", "DEFINED ENV{HIP_PATH}", "EXISTS ${HIP_ROOT_DIR}",
                                       "ROCM_VERSION VERSION_GREATER 5"])
def test_no_switch_is_made_up_for_a_condition_that_is_not_one(condition: str) -> None:
    text = f"if({condition})\n  enable_language(HIP)\nelse()\n  enable_language(CUDA)\n  add_library(a a.cu)\nendif()\n"
    [finding] = port_cmake(text, "CMakeLists.txt", options=OPTS).findings
    assert finding.rule == "cmake-hip-present" and "-D" not in finding.suggestion


def test_a_list_a_condition_looks_in_is_the_switch() -> None:
    text = ("if(HIP IN_LIST GPU_BACKENDS)\n  enable_language(HIP)\nelse()\n  enable_language(CUDA)\n"
            "  add_library(a a.cu)\nendif()\n")
    [finding] = port_cmake(text, "CMakeLists.txt", options=OPTS).findings
    assert "`-DGPU_BACKENDS=HIP`" in finding.suggestion
