"""Which sources a CMake build uses, read as CMake reads its files (buildport.source.references)."""

from __future__ import annotations

from pathlib import Path

from buildport.source.references import SourceSet, cmake_sources


def _tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def _found(root: Path) -> set[str]:
    found = SourceSet()
    cmake_sources(root / "CMakeLists.txt", root, found)
    return {str(p.relative_to(root.resolve())) for p in found.sources}


def test_lists_set_in_an_included_module_are_relative_to_the_includer(tmp_path: Path) -> None:
    _tree(tmp_path, {
        "CMakeLists.txt": "set(CMAKE_MODULE_PATH ${PROJECT_SOURCE_DIR}/cmake)\ninclude(FileLists)\n"
                          "include(${PROJECT_SOURCE_DIR}/cmake/Setup.cmake)\n",
        "cmake/FileLists.cmake": "set(cudaSources src/gpu/a.cu)\nlist(APPEND cudaSources src/gpu/b.cu)\n",
        "cmake/Setup.cmake": "add_executable(app ${cudaSources})\n",
        "src/gpu/a.cu": "", "src/gpu/b.cu": "", "cmake/src/gpu/a.cu": "",
    })  # fmt: skip
    assert _found(tmp_path) == {"src/gpu/a.cu", "src/gpu/b.cu"}


def test_a_recursive_glob_matches_every_folder_below_without_double_stars(tmp_path: Path) -> None:
    _tree(tmp_path, {
        "CMakeLists.txt": "file(GLOB_RECURSE KERNELS CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/k/*.cu)\n"
                          "file(GLOB TOP RELATIVE ${CMAKE_CURRENT_SOURCE_DIR} t/*.cu)\n",
        "k/a.cu": "", "k/deep/er/b.cu": "", "k/c.cpp": "", "t/d.cu": "", "t/x/e.cu": "",
    })  # fmt: skip
    assert _found(tmp_path) == {"k/a.cu", "k/deep/er/b.cu", "t/d.cu"}


def test_a_subdirectory_sees_its_parents_variables_in_its_own_folder(tmp_path: Path) -> None:
    _tree(tmp_path, {
        "CMakeLists.txt": "set(KERNEL kernel.cu)\nadd_subdirectory(lib)\n",
        "lib/CMakeLists.txt": "add_library(l ${KERNEL} CACHE_ME)\nset(X y CACHE STRING \"doc\")\n",
        "lib/kernel.cu": "", "kernel.cu": "",
    })  # fmt: skip
    # (a file name in a set() counts where it is written too: a name is converted wherever it may be built)
    assert _found(tmp_path) == {"lib/kernel.cu", "kernel.cu"}


def test_an_include_cycle_ends(tmp_path: Path) -> None:
    _tree(tmp_path, {"CMakeLists.txt": "include(a.cmake)\n", "a.cmake": "include(b.cmake)\nset(S s.cu)\n",
                     "b.cmake": "include(a.cmake)\nadd_library(l ${S} t.cu)\n", "s.cu": "", "t.cu": ""})
    assert _found(tmp_path) == {"s.cu", "t.cu"}  # each file read once on the way, the cycle not followed


def test_headers_included_with_angle_brackets_are_found_in_the_projects_include_folders(tmp_path: Path) -> None:
    from buildport.source.references import add_headers

    _tree(tmp_path, {
        "CMakeLists.txt": "include_directories(include)\nadd_library(l src/a.cu)\n",
        "src/a.cu": "#include <mylib/api.cuh>\n#include <vector>\n#include <cuda_runtime.h>\n",
        "include/mylib/api.cuh": '#include "detail.cuh"\n', "include/mylib/detail.cuh": "",
        "src/vector": "",  # <vector> is not looked for beside the source
    })  # fmt: skip
    found = SourceSet()
    cmake_sources(tmp_path / "CMakeLists.txt", tmp_path, found)
    add_headers(found, tmp_path)
    assert {str(p.relative_to(tmp_path.resolve())) for p in found.headers} == {
        "include/mylib/api.cuh", "include/mylib/detail.cuh"}


def test_make_finds_sources_through_vpath_and_vpath_patterns(tmp_path: Path) -> None:
    from buildport.source.references import make_sources

    _tree(tmp_path, {
        "Makefile": "VPATH=./src/:./examples\nvpath %.cu kernels\nOBJDIR=./obj/\n"
                    "OBJ=gemm.o blas_kernels.o\nEXECOBJ=main.o\nOBJS = $(addprefix $(OBJDIR), $(OBJ))\n"
                    "$(OBJDIR)%.o: %.cu\n\tnvcc -c $< -o $@\n$(OBJDIR)%.o: %.c\n\tgcc -c $< -o $@\n"
                    "all: scale.cu\n",
        "src/gemm.c": "", "src/blas_kernels.cu": "", "examples/main.c": "", "kernels/scale.cu": "",
        "src/unused.cu": "",
    })  # fmt: skip
    found = SourceSet()
    make_sources(tmp_path / "Makefile", tmp_path, found)
    assert {str(p.relative_to(tmp_path.resolve())) for p in found.sources} == {
        "src/gemm.c", "src/blas_kernels.cu", "examples/main.c", "kernels/scale.cu"}


def test_make_objects_built_by_suffix_and_built_in_rules_bring_their_headers(tmp_path: Path) -> None:
    """``.c.o:`` (an old suffix rule) and make's built-in rules compile C and C++ objects: their sources, and
    the CUDA headers those include through -I folders, are the build's (FastEddy's fecuda_Device.h)."""
    from buildport.source.references import add_headers, make_sources

    _tree(tmp_path, {
        "main/Makefile": "INCLUDES = -I../dev\nOBJS = ../dev/fe.o ../dev/kern.o host.o\n"
                         "%.o: %.cu\n\tnvcc -dc $< -o $@\n.c.o:\n\tmpicc $(INCLUDES) -c $< -o $@\n",
        "dev/fe.c": "#include <fe_device.h>\n", "dev/fe_device.h": "#include <cuda_runtime.h>\n",
        "dev/kern.cu": "", "main/host.cpp": "", "dev/other.c": "",
    })  # fmt: skip
    found = SourceSet()
    make_sources(tmp_path / "main" / "Makefile", tmp_path, found)
    add_headers(found, tmp_path)
    assert {str(p.relative_to(tmp_path.resolve())) for p in found.all} == {
        "dev/fe.c", "dev/kern.cu", "main/host.cpp", "dev/fe_device.h"}


def test_a_project_header_named_like_cudas_is_kept_where_the_engine_renamed_it(tmp_path: Path) -> None:
    """darknet's own src/cuda.h: hipify renames every "cuda.h" to "hip/hip_runtime.h"; an include that finds the
    project's file is put back, one of the SDK's (<cuda.h> with no such file in the include folders) is not."""
    from buildport.migrate.plan import Plan, _own_headers_kept

    _tree(tmp_path, {"src/cuda.h": "#define OWN 1\n", "src/a.c": ""})
    plan = Plan(tmp_path)
    original = '#include "cuda.h"\n#include <cuda.h>\nint x;\n'
    engine = '#include "hip/hip_runtime.h"\n#include "hip/hip_runtime.h"\n#include <hip/hip_runtime.h>\nint x;\n'
    assert _own_headers_kept(plan, tmp_path / "src" / "a.c", original, engine) == (
        '#include "hip/hip_runtime.h"\n#include "cuda.h"\n#include <hip/hip_runtime.h>\nint x;\n', [0])
    # a vendored library's header renamed to ROCm's library stays renamed: the code names the ROCm library now
    _tree(tmp_path, {"third_party/cub/cub/cub.cuh": ""})
    plan.sources.include_dirs.add((tmp_path / "third_party" / "cub").resolve())
    assert _own_headers_kept(plan, tmp_path / "src" / "a.c", "#include <cub/cub.cuh>\n",
                             "#include <hipcub/hipcub.hpp>\n") == ("#include <hipcub/hipcub.hpp>\n", [])


def test_a_project_header_named_like_cudas_in_a_folder_of_its_own_is_kept(tmp_path: Path) -> None:
    """ggml: ``#include "vendors/cuda.h"`` (its own mapping header) became ``"vendors/hip/hip_runtime.h"``."""
    from buildport.migrate.plan import Plan, _own_headers_kept

    _tree(tmp_path, {"src/vendors/cuda.h": "#define OWN 1\n", "src/common.cuh": ""})
    original = '#include "vendors/cuda.h"\nint x;\n'
    engine = '#include "vendors/hip/hip_runtime.h"\nint x;\n'
    assert _own_headers_kept(Plan(tmp_path), tmp_path / "src" / "common.cuh", original, engine) == (original, [0])


def test_make_words_made_of_simple_variables_are_expanded(tmp_path: Path) -> None:
    """GPUSPH's helper program: LIST_CUDA_CC=$(SCRIPTSDIR)/list-cuda-cc, built from $(LIST_CUDA_CC).cc."""
    from buildport.source.references import make_sources

    _tree(tmp_path, {
        "Makefile": "SCRIPTSDIR = scripts\nLIST_CUDA_CC=$(SCRIPTSDIR)/list-cuda-cc\nSRC := a.cu\nSRC += b.cu\n"
                    "$(LIST_CUDA_CC): $(LIST_CUDA_CC).cc\n\tnvcc -o $@ $<\nall: $(SRC)\n",
        "scripts/list-cuda-cc.cc": "", "a.cu": "", "b.cu": "",
    })  # fmt: skip
    found = SourceSet()
    make_sources(tmp_path / "Makefile", tmp_path, found)
    assert {str(p.relative_to(tmp_path.resolve())) for p in found.sources} == {"scripts/list-cuda-cc.cc", "a.cu", "b.cu"}


def test_include_folders_given_to_the_build_only_are_the_builds(tmp_path: Path) -> None:
    """cuSZ writes target_include_directories(x PUBLIC $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>)."""
    _tree(tmp_path, {
        "CMakeLists.txt": "add_library(r r.cu)\ntarget_include_directories(r PUBLIC\n"
                          "  $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:include>)\n",
        "r.cu": "", "include/err.h": "",
    })  # fmt: skip
    found = SourceSet()
    cmake_sources(tmp_path / "CMakeLists.txt", tmp_path, found)
    assert found.include_dirs == {(tmp_path / "include").resolve()}


def test_source_names_written_with_cmake_escapes_are_the_files_they_name(tmp_path: Path) -> None:
    _tree(tmp_path, {
        "CMakeLists.txt": 'add_executable(app a\\ b.cu c\\$d.cu "e\\"f.cu" ${CMAKE_CURRENT_SOURCE_DIR}/g\\;h.cu)\n',
        "a b.cu": "", "c$d.cu": "", 'e"f.cu': "", "g;h.cu": "", "plain.cu": "",
    })  # fmt: skip
    assert _found(tmp_path) == {"a b.cu", "c$d.cu", 'e"f.cu', "g;h.cu"}


def test_paths_made_by_get_filename_component_are_followed(tmp_path: Path) -> None:
    _tree(tmp_path, {
        "CMakeLists.txt": "get_filename_component(ROOT ${CMAKE_CURRENT_SOURCE_DIR} REALPATH)\n"
                          "add_subdirectory(src)\n",
        "src/CMakeLists.txt": "get_filename_component(LIB_ROOT ${CMAKE_CURRENT_SOURCE_DIR}/.. REALPATH)\n"
                              "get_filename_component(KERNELS kernels ABSOLUTE)\n"
                              "get_filename_component(HERE ${LIB_ROOT}/src/lib/x.cu DIRECTORY)\n"
                              "get_filename_component(NAME ${LIB_ROOT}/src/lib/more.cu NAME_WE)\n"
                              "get_filename_component(UP ../other ABSOLUTE BASE_DIR ${ROOT}/src)\n"
                              "set(SRC ${LIB_ROOT}/src/lib/a.cu ${KERNELS}/k.cu ${HERE}/${NAME}.cu ${UP}/o.cu)\n"
                              "add_library(lib ${SRC})\n",
        "src/lib/a.cu": "", "src/kernels/k.cu": "", "src/lib/more.cu": "", "other/o.cu": "",
    })  # fmt: skip
    assert _found(tmp_path) == {"src/lib/a.cu", "src/kernels/k.cu", "src/lib/more.cu", "other/o.cu"}


def test_a_function_that_globs_from_its_parameter_hands_its_list_to_the_caller(tmp_path: Path) -> None:
    _tree(tmp_path, {
        "CMakeLists.txt": "list(APPEND CMAKE_MODULE_PATH ${PROJECT_SOURCE_DIR}/cmake)\ninclude(Sources)\n"
                          "add_subdirectory(src)\n",
        "cmake/Sources.cmake": "function(collect root)\n  file(GLOB_RECURSE cuda ${root}/src/*.cu)\n"
                               "  set(cuda ${cuda} PARENT_SCOPE)\nendfunction()\n",
        "src/CMakeLists.txt": "collect(${PROJECT_SOURCE_DIR})\nadd_library(l ${cuda})\n",
        "src/a.cu": "", "src/deep/b.cu": "", "other/c.cu": "",
    })  # fmt: skip
    assert _found(tmp_path) == {"src/a.cu", "src/deep/b.cu"}


def test_a_function_scope_ends_with_the_call_and_parent_scope_sets_the_callers_variable(tmp_path: Path) -> None:
    _tree(tmp_path, {
        "CMakeLists.txt": "function(pick out dir)\n  set(local ${dir})\n"
                          "  set(${out} ${CMAKE_CURRENT_SOURCE_DIR}/${dir}/y.cu PARENT_SCOPE)\nendfunction()\n"
                          "pick(chosen b)\nadd_library(l ${chosen} ${local}/x.cu)\n",
        "b/x.cu": "", "b/y.cu": "",
    })  # fmt: skip
    assert _found(tmp_path) == {"b/y.cu"}  # `local` was the function's own


def test_a_macro_binds_its_parameters_and_sets_in_the_callers_scope(tmp_path: Path) -> None:
    _tree(tmp_path, {
        "CMakeLists.txt": "macro(kernels_of dir)\n  file(GLOB found ${dir}/*.cu)\n  list(APPEND all ${found})\n"
                          "endmacro()\nkernels_of(one)\nkernels_of(${CMAKE_CURRENT_SOURCE_DIR}/two)\n"
                          "add_library(l ${all})\n",
        "one/a.cu": "", "two/b.cu": "", "three/c.cu": "",
    })  # fmt: skip
    assert _found(tmp_path) == {"one/a.cu", "two/b.cu"}


def test_parsed_arguments_and_argn_reach_a_functions_body(tmp_path: Path) -> None:
    _tree(tmp_path, {
        "CMakeLists.txt": "function(gpu_library name)\n  cmake_parse_arguments(ARG \"STATIC\" \"DIR\" \"GLOBS\" ${ARGN})\n"
                          "  foreach(g IN LISTS ARG_GLOBS)\n  endforeach()\n  file(GLOB srcs ${ARG_DIR}/${ARG_GLOBS})\n"
                          "  add_library(${name} ${srcs})\nendfunction()\n"
                          "function(forward)\n  gpu_library(${ARGN})\nendfunction()\n"
                          "forward(k STATIC DIR kern GLOBS *.cu)\n",
        "kern/a.cu": "", "kern/b.cpp": "", "else/c.cu": "",
    })  # fmt: skip
    assert _found(tmp_path) == {"kern/a.cu"}


def test_a_recursive_function_ends(tmp_path: Path) -> None:
    _tree(tmp_path, {"CMakeLists.txt": "function(f d)\n  f(${d}/x)\n  add_library(l ${d}/a.cu)\nendfunction()\nf(k)\n",
                     "k/a.cu": "", "k/x/a.cu": ""})
    assert _found(tmp_path) == {"k/a.cu"}  # f(k/x) inside f(k) is not read again


def test_what_a_function_hands_back_is_evaluated_where_it_is_set(tmp_path: Path) -> None:
    """``set(${out} ${dir} PARENT_SCOPE)``: the caller gets the value, not a reference to a parameter that is gone;
    ``set(S ${S} more PARENT_SCOPE)`` adds to the caller's list instead of naming itself."""
    _tree(tmp_path, {
        "CMakeLists.txt": "function(pick out dir)\n  set(${out} ${dir} PARENT_SCOPE)\nendfunction()\n"
                          "function(more)\n  set(S ${S} ${ARGN} PARENT_SCOPE)\nendfunction()\n"
                          "macro(choose var dir)\n  set(${var} ${dir})\nendmacro()\n"
                          "pick(chosen k)\nset(S m/b.cu)\nmore(m/c.cu)\nchoose(macro_dir n)\n"
                          "add_library(l ${chosen}/a.cu ${S} ${macro_dir}/d.cu)\n",
        "k/a.cu": "", "m/b.cu": "", "m/c.cu": "", "n/d.cu": "",
    })  # fmt: skip
    assert _found(tmp_path) == {"k/a.cu", "m/b.cu", "m/c.cu", "n/d.cu"}


def test_parsed_arguments_are_cmakes(tmp_path: Path) -> None:
    """A multi-value keyword given twice collects both; a keyword the call leaves out is unset (a macro called
    twice); what follows no keyword is in PREFIX_UNPARSED_ARGUMENTS."""
    _tree(tmp_path, {
        "CMakeLists.txt": "macro(lib name)\n  cmake_parse_arguments(A \"\" \"DIR\" \"SRC\" ${ARGN})\n"
                          "  add_library(${name} ${A_SRC} ${A_DIR}/${A_UNPARSED_ARGUMENTS}.cu)\nendmacro()\n"
                          "lib(one SRC a.cu SRC b.cu DIR k kern)\nlib(two x)\n",
        "a.cu": "", "b.cu": "", "k/kern.cu": "", "x.cu": "",
    })  # fmt: skip
    # the second call has no DIR: ${A_DIR}/x.cu is not k/x.cu (and not /x.cu), it is not known
    assert _found(tmp_path) == {"a.cu", "b.cu", "k/kern.cu"}


def test_a_glob_of_several_patterns_in_one_variable_globs_each(tmp_path: Path) -> None:
    _tree(tmp_path, {
        "CMakeLists.txt": "function(g out)\n  file(GLOB s ${ARGN})\n  set(${out} ${s} PARENT_SCOPE)\n"
                          "endfunction()\ng(S k/*.cu k/*.cpp)\nset(P j/*.cu j/*.cuh)\nfile(GLOB T ${P})\n",
        "k/a.cu": "", "k/b.cpp": "", "j/c.cu": "", "j/d.cuh": "",
    })  # fmt: skip
    assert _found(tmp_path) == {"k/a.cu", "k/b.cpp", "j/c.cu", "j/d.cuh"}


def test_a_recursive_glob_of_a_folder_never_walks_above_the_project(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    _tree(project, {"CMakeLists.txt": "file(GLOB_RECURSE X ${CMAKE_CURRENT_SOURCE_DIR})\n", "a.cu": ""})
    _tree(tmp_path, {"elsewhere/b.cu": ""})
    found = SourceSet()
    cmake_sources(project / "CMakeLists.txt", project, found)
    assert found.sources == set() and found.outside == {}


def test_wrappers_calling_wrappers_are_read_a_bounded_number_of_times(tmp_path: Path) -> None:
    """Eleven functions each calling the next three times: 3**11 bodies if every call were read; the reader
    reads at most its budget of them (and finds what the first calls reach)."""
    from buildport.source import references

    levels = "".join(f"function(f{i} d)\n" + f"  f{i + 1}(${{d}})\n" * 3 + "endfunction()\n" for i in range(11))
    _tree(tmp_path, {"CMakeLists.txt": levels + "function(f11 d)\n  add_library(l ${d}/a.cu)\nendfunction()\nf0(k)\n",
                     "k/a.cu": ""})
    found = SourceSet()
    reader = references._CMakeReader(tmp_path, found)
    reader.read(tmp_path / "CMakeLists.txt", tmp_path, {"CMAKE_CURRENT_SOURCE_DIR": [str(tmp_path)]}, 0)
    assert {str(p.relative_to(tmp_path.resolve())) for p in found.sources} == {"k/a.cu"}
    assert reader.calls_left == 0  # the budget was spent, not 3**11 reads
