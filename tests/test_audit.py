"""``buildport audit``: build rules at exact positions, look-alikes, suppression, filters, exit codes.

Positions are asserted exactly: each positive case names the text (``needle``)
the finding must point at, and :func:`where` turns it into a 1-based line and column.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from buildport.audit import CMAKE, MAKE, PYTHON, RuleFilter, UsageError, audit, audit_text, code_only
from buildport.engine import port_cmake, port_make, port_setup_py
from buildport.findings import Severity
from buildport.rules.build_rules import BY_ID, RULES

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "fixtures" / "audit" / "mixed"


#: The import that makes a Python file a PyTorch extension build.
_EXT = "from torch.utils.cpp_extension import *\n"


def where(text: str, needle: str, occurrence: int = 1) -> tuple[int, int]:
    at = -1
    for _ in range(occurrence):
        at = text.index(needle, at + 1)
    return text.count("\n", 0, at) + 1, at - (text.rfind("\n", 0, at) + 1) + 1


def found(text: str, kind: str, rule: str) -> list[tuple[int, int]]:
    audited = audit_text(text, "t", kind)
    assert audited is not None
    return [(f.line, f.col) for f in audited.findings if f.rule == rule]


# (rule, kind, snippet, needle, fixable): the rule must fire at the needle.
POSITIVE = [
    ("cmake-language", CMAKE, "project(p LANGUAGES CXX CUDA)\n", "CUDA", True),
    ("cmake-minimum-version", CMAKE, "cmake_minimum_required(VERSION 3.10)\nproject(p CUDA)\n", "3.10", True),
    ("cmake-find-package", CMAKE, "find_package(CUDAToolkit REQUIRED)\nadd_library(k k.cu)\n", "find_package", True),
    ("cmake-legacy-command", CMAKE, "find_package(CUDA)\ncuda_add_executable(a a.cu)\n", "cuda_add_executable", True),
    ("cmake-manual-command", CMAKE, "cuda_compile_ptx(out k.cu)\n", "cuda_compile_ptx", False),
    ("cmake-cu-language", CMAKE, "add_executable(a a.cu)\n", "add_executable", True),
    ("cmake-custom-compile", CMAKE, "add_custom_command(OUTPUT k.fatbin COMMAND ${CMAKE_CUDA_COMPILER} -fatbin k.cu)\n",
     "${CMAKE_CUDA_COMPILER}", True),
    ("cmake-configure-compile", CMAKE, "execute_process(COMMAND ${CMAKE_CUDA_COMPILER} -c p.cu)\n",
     "${CMAKE_CUDA_COMPILER}", False),
    ("cmake-host-headers", CMAKE, "add_executable(a a.cu main.cpp)\n"
                                  "target_include_directories(a PRIVATE ${CUDAToolkit_INCLUDE_DIRS})\n",
     "target_include_directories", True),
    ("cmake-library", CMAKE, "add_executable(a a.cpp)\ntarget_link_libraries(a CUDA::cublas)\n", "CUDA::cublas",
     True),
    ("cmake-library-unported", CMAKE, "target_link_libraries(a CUDA::nppc)\n", "CUDA::nppc", False),
    ("cmake-property", CMAKE, "set_target_properties(a PROPERTIES CUDA_STANDARD 17)\n", "CUDA_STANDARD", True),
    ("cmake-architectures", CMAKE, "project(p CUDA)\nset(CMAKE_CUDA_ARCHITECTURES 70 80)\n",
     "set(CMAKE_CUDA_ARCHITECTURES", True),
    ("cmake-name", CMAKE, 'set(CMAKE_CUDA_FLAGS "-O2")\n', "CMAKE_CUDA_FLAGS", True),
    ("cmake-nvcc-flag", CMAKE, 'set(CMAKE_CUDA_FLAGS "--use_fast_math")\n', '"--use_fast_math"', True),
    ("cmake-cuda-variable", CMAKE, 'message(STATUS "${CUDAToolkit_VERSION}")\n', '"${CUDAToolkit_VERSION}"', False),
    ("cmake-legacy-variable", CMAKE, "set(CUDA_PROPAGATE_HOST_FLAGS OFF)\n", "set", True),
    ("cmake-rdc", CMAKE, "set(CMAKE_CUDA_SEPARABLE_COMPILATION ON)\n", "set", True),
    ("cmake-compiler", CMAKE, "set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)\n", "set", False),
    ("cmake-hip-present", CMAKE, "project(p CXX)\nenable_language(HIP)\nenable_language(CUDA)\n",
     "enable_language(HIP)", False),
    ("cmake-arch-flag", CMAKE, 'set(CMAKE_CUDA_FLAGS "-arch=sm_80")\n', '"-arch=sm_80"', True),
    ("cmake-cuda-glob", CMAKE, "file(GLOB SRC *.cu *.cpp)\nmy_add_app(a ${SRC})\n", "${SRC}", False),
    ("make-compiler", MAKE, "a: a.cu\n\tnvcc -o a a.cu\n", "nvcc", True),
    ("make-path", MAKE, "CUDA_PATH ?= /usr/local/cuda\n", "CUDA_PATH", True),
    ("make-arch", MAKE, "SMS := sm_70 sm_80\n", "sm_70", True),
    ("make-nvcc-flag", MAKE, "NVCCFLAGS := -O2 --use_fast_math\n", "--use_fast_math", True),
    ("make-library", MAKE, "LIBS := -lcublas\n", "-lcublas", True),
    ("make-library-unported", MAKE, "LIBS := -lnppc\n", "-lnppc", False),
    ("make-platform", MAKE, "include ./findcudalib.mk\n", "include", False),
    ("make-c-source", MAKE, "NVCC := nvcc\nx.o: x.c\n\t$(NVCC) -c x.c\n", "x.o", True),
    ("make-c-source", MAKE, "CC := nvcc\nx.o: x.c x.h\n", "x.o", True),  # make's built-in rule runs $(CC)
    ("make-c-source", MAKE, "NVCC := nvcc\nx.o: x.c\n.c.o:\n\t$(NVCC) -c $<\n", ".c.o", True),
    ("make-c-source", MAKE, "NVCC := nvcc\nx.o: x.c ; $(NVCC) -c x.c\n", "x.o", True),
    ("make-c-source", MAKE, "x.o: x.c\n# built by\n\n\t@$(HIPCC) -c x.c\n", "x.o", True),
    ("cmake-library-path", CMAKE, "set_target_properties(n PROPERTIES IMPORTED_LOCATION ${CUDA_cublas_LIBRARY})\n",
     "${CUDA_cublas_LIBRARY}", False),
    ("cmake-thrust-target", CMAKE, "find_package(Thrust REQUIRED)\nthrust_create_target(Thrust)\n",
     "thrust_create_target", True),
    ("make-host-compile", MAKE, "app: a.o k.o\n\t$(CXX) -o app a.o k.o -lcudart\na.o: a.cpp\n\t$(CXX) -c a.cpp\n",
     "$(CXX) -c", True),
    ("make-device-link", MAKE, "dl.o: a.o b.o\n\tnvcc -dlink a.o b.o -o $@\n", "-dlink", True),
    ("make-nvhpc-path", MAKE, "MPI_ROOT = /opt/nvidia/hpc_sdk/Linux_x86_64/24.5/comm_libs/openmpi4\n",
     "/opt/nvidia", True),
    ("make-nvhpc-path", MAKE, "NVCXX = /opt/nvidia/hpc_sdk/Linux_x86_64/24.5/compilers/bin/nvc++\n",
     "/opt/nvidia", False),
    ("make-c-source-std", MAKE, "NVCC := nvcc -std=c++17\nx.o: x.c\n\t$(NVCC) -c x.c\n", "x.o", False),
    ("make-c-source-std", MAKE, "FLAGS := -std=c++17\nx.o: x.c\n\tnvcc $(FLAGS) -c x.c\n", "x.o", True),
    ("nvcc-flag", MAKE, "NVCCFLAGS := -O2 --default-stream bogus\n", "--default-stream", False),
    ("nvcc-phase", MAKE, "NVCCFLAGS := -ptx\n", "-ptx", False),
    ("gpu-tool", MAKE, "profile: app\n\tnsys profile --stats=true ./app\n", "nsys", True),
    ("gpu-tool", CMAKE, "add_custom_target(gdb COMMAND cuda-gdb --args $<TARGET_FILE:app>)\n", "cuda-gdb", True),
    ("gpu-tool-option", MAKE, "profile: app\n\tnvprof -o app.nvvp ./app\n", "-o", True),
    ("gpu-tool-option", MAKE, "profile: app\n\tnvprof --metrics ipc ./app\n", "--metrics", False),
    ("gpu-tool-unported", MAKE, "check: app\n\tcompute-sanitizer --tool racecheck ./app\n", "compute-sanitizer",
     False),
    ("gpu-tool-unported", CMAKE, "add_test(NAME k COMMAND ncu --set full $<TARGET_FILE:app>)\n", "ncu", False),
    ("build-nvcc", CMAKE, "execute_process(COMMAND nvcc --version)\n", "nvcc", False),
    ("build-cuda-path", CMAKE, "enable_language(HIP)\ninclude_directories(SYSTEM /opt/cuda/include)\n", "/opt/cuda",
     False),
    ("make-path", MAKE, "CFLAGS += -I/usr/local/cuda/include\n", "-I/usr/local/cuda", True),
    ("build-cuda-arch", CMAKE, "set(MY_ARCH sm_80)\n", "sm_80", False),
    ("build-cuda-library", CMAKE, "set(EXTRA libcudart.so)\n", "libcudart", False),
    ("build-cuda-name", CMAKE, "option(USE_CUDA \"gpu\" ON)\n", "USE_CUDA", False),
    ("build-cuda-name", CMAKE, "cuda_add_cublas_to_target(t)\n", "cuda_add_cublas_to_target", True),
    ("build-cuda-name", CMAKE, "set(V ${WITH_CUDA}.0 lib/${WITH_CUDA}/x)\n", "WITH_CUDA", False),
    ("build-cuda-name", MAKE, "X := $(WITH_CUDA).$(EXT)\n", "WITH_CUDA", False),
    ("setup-py-nvcc-flag", PYTHON, _EXT + 'CUDAExtension("e", ["e.cu"], extra_compile_args={"nvcc": ["-O3", "--use_fast_math"]})\n',
     '"--use_fast_math"', True),
    ("setup-py-arch", PYTHON, _EXT + 'CUDAExtension("e", ["e.cu"], extra_compile_args={"nvcc": ["-arch=sm_80"]})\n',
     '"-arch', True),
    ("setup-py-library", PYTHON, _EXT + 'CUDAExtension("e", ["e.cu"], libraries=["cublas"])\n', '"cublas"', True),
    ("setup-py-library-unported", PYTHON, _EXT + 'CUDAExtension("e", ["e.cu"], libraries=["nvjpeg"])\n', '"nvjpeg"',
     False),
    ("setup-py-dynamic", PYTHON, _EXT + 'CUDAExtension("e", ["e.cu"], extra_compile_args={"nvcc": [f"-O{n}"]})\n',
     'f"-O', False),
    ("setup-py-build-ext", PYTHON, _EXT + "class Build(BuildExtension):\n    pass\n", "class", False),
    ("setup-py-cuda-home", PYTHON, _EXT + "if CUDA_HOME is None:\n    raise SystemExit\n", "CUDA_HOME", False),
    ("setup-py-arch-env", PYTHON, _EXT + 'os.environ["TORCH_CUDA_ARCH_LIST"] = "8.0"\n', '"TORCH', False),
]

# (rule, kind, snippet): look-alikes that must not produce the rule.
NOOP = [
    ("setup-py-nvcc-flag", PYTHON, 'CUDAExtension("e", ["e.cu"], extra_compile_args={"nvcc": ["--use_fast_math"]})\n'),
    ("setup-py-nvcc-flag", PYTHON, _EXT + 'CUDAExtension("e", ["e.cu"], extra_compile_args={"cxx": ["-G"]})\n'),
    ("setup-py-library", PYTHON, _EXT + 'CppExtension("e", ["e.cpp"], libraries=["cublas"])\n'),
    ("setup-py-cuda-home", PYTHON, _EXT + "ROCM_HOME = None\n"),
    ("cmake-language", CMAKE, "project(p LANGUAGES CXX)\n"),
    ("cmake-library", CMAKE, "target_link_libraries(a MyCUDA::thing)\n"),
    ("gpu-tool", MAKE, "app: a.o\n\techo nsys nvprof\n"),  # an argument, not the program run
    ("gpu-tool", MAKE, "NSYS_DOC = see nsys\n"),
    ("gpu-tool", MAKE, "profile:\n\trocprof --stats ./app\n"),  # what a port writes
    ("gpu-tool", CMAKE, 'message(STATUS "run nsys profile")\n'),
    ("gpu-tool", CMAKE, "add_custom_target(doc COMMAND echo nvprof)\n"),
    ("gpu-tool-unported", MAKE, "ncu_opts.o: ncu_opts.c\n\tgcc -c ncu_opts.c\n"),
    ("build-nvcc", CMAKE, "# nvcc is not used here\nadd_library(a a.cpp)\n"),
    ("build-nvcc", CMAKE, 'message(STATUS "no nvcc needed")\n'),
    ("build-nvcc", CMAKE, "set(DOC [=[nvcc docs]=])\n"),
    ("build-nvcc", CMAKE, "#[[\nnvcc\n]]\nadd_library(a a.cpp)\n"),
    ("build-nvcc", MAKE, "TOOL := mynvcc-wrapper\n"),
    # what make prints is prose (llm.c): $(info ...), ${warning ...}, $(error ...), nested references included
    ("build-nvcc", MAKE, "ifeq ($(GPU),)\n    $(info nvcc not found, skipping the GPU build)\nendif\n"),
    ("build-cuda-arch", MAKE, "X := 1\n${warning built for sm_80 with $(notdir $(CC))}\n"),
    ("build-nvcc", MAKE, "$(error nvcc (the CUDA compiler) is needed: $(CUDA_HOME)/bin/nvcc)\n"),
    ("build-cuda-path", CMAKE, "set(P /usr/local/cudax)\n"),
    ("build-cuda-arch", CMAKE, "set(X ism_80 sm_8)\n"),
    ("build-cuda-library", MAKE, "LIBS := -lcudaimage\n"),
    ("build-cuda-name", CMAKE, "add_library(cuda_utils a.cpp)\n"),
    ("build-cuda-name", MAKE, "NVCCFLAGS := -O2\n"),
    # the project's own files and folders named with CUDA (FLAMEGPU2's source lists)
    ("build-cuda-name", CMAKE, "set(H ${ROOT}/include/detail/CUDAScatter.cuh src/CUDA/k.cpp CUDAAgent.h)\n"),
    ("build-cuda-name", CMAKE, "include(${ROOT}/cmake/CUDAArchitectures.cmake)\n"),
    ("build-cuda-name", MAKE, "OBJS := obj/CUDAKernels.o\n"),
    ("make-library", MAKE, "LIBS := -lm -lpthread\n"),
    ("make-compiler", MAKE, "a: a.c\n\tgcc -o a a.c\n"),
    ("make-c-source", MAKE, "x.o: x.c\n\tgcc -c x.c\n"),  # no GPU compiler anywhere
    ("make-host-compile", MAKE, "app: a.o\n\t$(NVCC) -o app a.o -lm\na.o: a.cpp\n\t$(CXX) -c a.cpp\n"),  # no runtime
    ("make-c-source", MAKE, "NVCC := nvcc\nx.o: x.c\n\t$(CC) -c x.c\nk.o: k.cu\n\t$(NVCC) -c k.cu\n"),
    ("make-c-source", MAKE, "NVCC := nvcc\nCC := nvcc\nx.o: x.c\n%.o: %.c\n\tgcc -c $<\n"),
]


@pytest.mark.parametrize("rule, kind, text, needle, fixable", POSITIVE, ids=[f"{c[0]}-{i}" for i, c in enumerate(POSITIVE)])
def test_rule_fires_at_needle(rule: str, kind: str, text: str, needle: str, fixable: bool) -> None:
    audited = audit_text(text, "t", kind)
    assert audited is not None
    hits = [f for f in audited.findings if f.rule == rule and (f.line, f.col) == where(text, needle)]
    assert hits, [(f.rule, f.line, f.col) for f in audited.findings]
    assert hits[0].fixable is fixable


@pytest.mark.parametrize("rule, kind, text", NOOP, ids=[f"{c[0]}-{i}" for i, c in enumerate(NOOP)])
def test_lookalike_is_quiet(rule: str, kind: str, text: str) -> None:
    assert found(text, kind, rule) == []


def test_a_c_file_a_pattern_rule_builds_is_reported_at_the_pattern_rule_alone() -> None:
    text = "NVCC := nvcc\nx.o: x.c x.h\ny.o: y.c\n$(OBJS): %.o: %.c\n\t$(NVCC) -c $<\n"
    audited = audit_text(text, "t", MAKE)
    assert audited is not None
    assert [(f.line, f.col) for f in audited.findings if f.rule == "make-c-source"] == [(4, 1)]


#: Rules a file's name decides, tested with their own names below.
BY_NAME = {"cmake-cuda-module"}
#: Rules only ``migrate --keep-cuda`` reports (tests/test_dual.py).
DUAL_ONLY = {"dual-branch-unported"}


def test_every_build_rule_has_a_positive_case() -> None:
    assert {r.id for r in RULES} - BY_NAME - DUAL_ONLY <= {case[0] for case in POSITIVE}


def test_a_copy_of_findcuda_is_reported_by_its_name_and_left() -> None:
    text = "find_program(CUDA_NVCC_EXECUTABLE nvcc)\nset(CUDA_NVCC_FLAGS -O2)\n"
    audited = audit_text(text, "cmake/FindCUDA.cmake", CMAKE)
    assert audited is not None
    assert [(f.rule, f.fixable) for f in audited.findings] == [("cmake-cuda-module", False)]


def test_catalogue_covers_what_the_engines_report() -> None:
    """Every rule id the engines report over their fixtures is in the catalogue, fixable as it says."""
    for folder, port in (("cmake", port_cmake), ("make", port_make), ("python", port_setup_py)):
        for case in sorted((ROOT / "fixtures" / folder).iterdir()):
            for source in case.glob("input.*"):
                for f in port(source.read_text(encoding="utf-8", errors="surrogateescape"), str(source)).findings:
                    assert f.rule in BY_ID, f"{source}: {f.rule} is not in build_rules"
                    expected = BY_ID[f.rule].fixable
                    assert expected == "varies" or (expected == "yes") == f.fixable, (source, f)


def test_a_tool_call_is_one_finding_the_residue_check_does_not_repeat() -> None:
    text = "check: app\n\t/usr/local/cuda/bin/cuda-memcheck ./app\n\tcuda-gdb ./app\n"
    audited = audit_text(text, "t", MAKE)
    assert audited is not None
    assert [(f.line, f.rule, f.fixable) for f in audited.findings] == [
        (2, "gpu-tool-unported", False), (3, "gpu-tool", True)]
    text = "add_test(NAME t COMMAND /usr/local/cuda/bin/compute-sanitizer $<TARGET_FILE:app>)\n"
    audited = audit_text(text, "t", CMAKE)
    assert audited is not None
    assert [(f.rule, f.fixable) for f in audited.findings] == [("gpu-tool-unported", False)]


def test_fixable_findings_carry_the_engine_replacement() -> None:
    text = "add_executable(a a.cpp)\ntarget_link_libraries(a CUDA::cublas)\n"
    audited = audit_text(text, "t", CMAKE)
    assert audited is not None
    [lib] = [f for f in audited.findings if f.rule == "cmake-library"]
    assert lib.replacement == "roc::hipblas" and lib not in audited.line_scoped


def test_make_findings_get_the_rewritten_line() -> None:
    audited = audit_text("LIBS := -lcublas\n", "t", MAKE)
    assert audited is not None
    [lib] = [f for f in audited.findings if f.rule == "make-library"]
    assert lib.replacement == "-lhipblas" and lib not in audited.line_scoped


def test_code_only_keeps_offsets() -> None:
    text = 'set(A "x#y") # nvcc\n#[[ a\nb ]] set(B 1)\n'
    masked = code_only(text, CMAKE)
    assert len(masked) == len(text) and masked.count("\n") == 3
    assert "nvcc" not in masked and '"x#y"' in masked and "set(B 1)" in masked


# --- suppression comments -----------------------------------------------------------------------

def test_suppression_same_line_and_line_before() -> None:
    same = "LIBS := -lcublas # buildport: ignore[make-library]\n"
    before = "# buildport: ignore[make-library]\nLIBS := -lcublas\n"
    assert found(same, MAKE, "make-library") == [] and found(before, MAKE, "make-library") == []


def test_suppression_names_only_its_rules() -> None:
    text = "LIBS := -lcublas -lnppc # buildport: ignore[make-library]\n"
    assert found(text, MAKE, "make-library") == []
    assert found(text, MAKE, "make-library-unported") == [where(text, "-lnppc")]


def test_bare_suppression_silences_everything_and_reaches_one_line() -> None:
    text = "# buildport: ignore\nLIBS := -lnppc\n\nMORE := -lnppc\n"
    assert found(text, MAKE, "make-library-unported") == [where(text, "-lnppc", 2)]


def test_source_suppression_through_scan_source(tmp_path: Path) -> None:
    (tmp_path / "k.cu").write_text("int lane = threadIdx.x % 32; // buildport: ignore[warp-size-literal]\n")
    assert audit([str(tmp_path)]).findings == []


# --- select / ignore ----------------------------------------------------------------------------

def test_select_and_ignore_by_id_and_prefix() -> None:
    both = RuleFilter.parse("make-,warp-", "make-library-unported")
    assert both.wants("make-library") and both.wants("warp-mask-32bit")
    assert not both.wants("make-library-unported") and not both.wants("cmake-library")
    assert RuleFilter.parse().wants("anything")


def test_unknown_rule_is_a_usage_error() -> None:
    with pytest.raises(UsageError):
        RuleFilter.parse("no-such-rule")


def test_filter_applies_to_the_tree() -> None:
    report = audit([str(FIXTURE / "tree")], RuleFilter.parse("", "build-,cmake-,make-"))
    assert {f.rule for f in report.findings} == {"cuda-api-left", "pinned-memory", "warp-size-literal"}


# --- the command line ---------------------------------------------------------------------------

def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "buildport", "audit", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=120)


def test_fixture_tree_text_output_is_byte_exact() -> None:
    out = run("--no-color", ".", cwd=FIXTURE / "tree")
    assert out.stdout == (FIXTURE / "expected.txt").read_text(encoding="utf-8")
    assert "\x1b[" not in out.stdout and out.returncode == 1


def test_audit_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "CMakeLists.txt").write_text("project(p CUDA)\nadd_executable(a a.cu)\n")
    before = {p: p.read_bytes() for p in tmp_path.rglob("*")}
    run(str(tmp_path))
    assert {p: p.read_bytes() for p in tmp_path.rglob("*")} == before


@pytest.mark.parametrize("fail_on, code", [("info", 1), ("warning", 1), ("error", 0)])
def test_fail_on_threshold(fail_on: str, code: int) -> None:
    assert run("--fail-on", fail_on, "--no-color", str(FIXTURE / "tree")).returncode == code


def test_exit_0_without_findings_at_threshold(tmp_path: Path) -> None:
    (tmp_path / "k.cu").write_text("__global__ void k() {}\nvoid go() { k<<<1, 1>>>(); }\n")  # info only
    assert run(str(tmp_path)).returncode == 0
    assert run("--fail-on", "info", str(tmp_path)).returncode == 1


def test_cuda_left_in_a_build_file_fails_the_default_gate(tmp_path: Path) -> None:
    """A finding the port would fix (info: a hard-coded nvcc, -lcublas) is CUDA left in the build: the
    default gate fails on it, as on a warning; only --fail-on error looks past it."""
    (tmp_path / "Makefile").write_text("app: app.cu\n\tnvcc -o app app.cu -lcublas\n")
    assert run(str(tmp_path)).returncode == 1
    assert run("--fail-on", "error", str(tmp_path)).returncode == 0
    ported = port_make((tmp_path / "Makefile").read_text(), "Makefile").text
    (tmp_path / "Makefile").write_text(ported)
    assert "nvcc" not in ported and run(str(tmp_path)).returncode == 0


def test_exit_2_for_usage_and_input_errors(tmp_path: Path) -> None:
    assert run("--select", "nope", ".").returncode == 2
    assert run(str(tmp_path / "missing")).returncode == 2
    bad = tmp_path / "CMakeLists.txt"
    bad.write_text("project(p CUDA\n")
    out = run(str(bad))
    assert out.returncode == 2 and "CMakeLists.txt:" in out.stderr


def test_files_as_given_unknown_kinds_skipped(tmp_path: Path) -> None:
    """The pre-commit hook passes file names: build files and sources are audited, others skipped."""
    (tmp_path / "README.md").write_text("nvcc\n")
    (tmp_path / "k.cu").write_text("int lane = threadIdx.x % 32;\n")
    out = run("--no-color", "--format", "json", str(tmp_path / "README.md"), str(tmp_path / "k.cu"))
    assert out.returncode == 1 and '"warp-size-literal"' in out.stdout and "README" not in out.stdout


def test_colour_only_when_asked() -> None:
    assert "\x1b[" in run("--color", str(FIXTURE / "tree")).stdout
    assert "\x1b[" not in run(str(FIXTURE / "tree")).stdout  # not a terminal


def test_severity_of_engine_findings_kept() -> None:
    report = audit([str(FIXTURE / "tree")])
    unported = [f for f in report.findings if f.rule == "cmake-library-unported"]
    assert unported and all(f.severity is Severity.WARNING for f in unported)


def _pair_by_every_ratio(old: list[str], i1: int, i2: int, new: list[str], j1: int, j2: int) -> list[tuple[int, str | None]]:
    """The pairing as first written: every ratio computed."""
    import difflib

    if i2 - i1 == j2 - j1:
        return [(i1 + k + 1, new[j1 + k].rstrip("\r\n")) for k in range(i2 - i1)]
    picks: dict[int, int] = {}
    j = j1
    for i in range(i1, i2):
        scored = [(difflib.SequenceMatcher(None, old[i], new[k], autojunk=False).ratio(), -k) for k in range(j, j2)]
        best = max(scored, default=(0.0, 0))
        if best[0] >= 0.5:
            picks[i] = j = -best[1]
            j += 1
    return [(i + 1, new[picks[i]].rstrip("\r\n") if i in picks else None) for i in range(i1, i2)]


_LINES = st.lists(st.text(alphabet="ab( )$\n", max_size=12), max_size=7)


@settings(max_examples=400, deadline=None)
@given(_LINES, _LINES)
def test_line_pairing_with_bounds_picks_what_every_ratio_picks(old: list[str], new: list[str]) -> None:
    from buildport.audit.residue import _pair

    assert list(_pair(old, 0, len(old), new, 0, len(new))) == _pair_by_every_ratio(old, 0, len(old), new, 0, len(new))


def test_line_changes_name_each_changed_line_once() -> None:
    from buildport.audit import line_changes

    text = "project(p CUDA)\nadd_executable(a a.cu)\nset_target_properties(a PROPERTIES\n  CUDA_ARCHITECTURES 80)\n"
    result = port_cmake(text, "CMakeLists.txt")
    assert result.regions
    changes = line_changes(result)
    assert set(changes) == {1, 4}, changes
    assert changes[1] == "project(p CXX HIP)" and "HIP_ARCHITECTURES" in (changes[4] or "")
    result.regions = None  # as for a result read back from the cache: the whole file is compared
    assert line_changes(result) == changes


def _code_only_by_character(text: str, kind: str) -> str:
    """code_only as first written: one character at a time."""
    import re

    out = list(text)

    def blank(start: int, end: int) -> int:
        for j in range(start, end):
            if out[j] not in "\r\n":
                out[j] = " "
        return end

    def bracket_end(at: int) -> int:
        m = re.compile(r"\[(=*)\[").match(text, at)
        assert m is not None
        close = text.find(f"]{m.group(1)}]", m.end())
        return len(text) if close < 0 else close + len(m.group(1)) + 2

    i, quoted = 0, False
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == '"' and kind == CMAKE:
            quoted = not quoted
        elif c == "[" and kind == CMAKE and not quoted and re.match(r"\[=*\[", text[i:]):
            i = blank(i, bracket_end(i))
            continue
        elif c == "#" and not quoted:
            if kind == CMAKE and re.match(r"\[=*\[", text[i + 1:]):
                i = blank(i, bracket_end(i + 1))
            else:
                end = text.find("\n", i)
                i = blank(i, len(text) if end < 0 else end)
            continue
        i += 1
    if kind == CMAKE:
        for m in re.finditer(r"(?im)^[ \t]*message[ \t]*\(", text):
            depth, quoted, j = 1, False, m.end()
            while j < len(text):
                c = text[j]
                if c == "\\":
                    j += 1
                elif c == '"':
                    quoted = not quoted
                elif not quoted and c in "()":
                    depth += 1 if c == "(" else -1
                    if depth == 0:
                        break
                j += 1
            blank(m.end(), min(j, len(text)))
    return "".join(out)


_CODE = st.lists(st.sampled_from(['#', '"', '[', ']', '=', '\\', '(', ')', '\n', '\r', ' ', 'a', 'message(', '#[[',
                                  ']]', 'nvcc']), max_size=40).map("".join)


@settings(max_examples=600, deadline=None)
@given(_CODE, st.sampled_from([CMAKE, MAKE]))
def test_code_only_blanks_what_a_character_scan_blanks(text: str, kind: str) -> None:
    assert code_only(text, kind) == _code_only_by_character(text, kind)


def test_suppression_markers_stay_on_their_line() -> None:
    from buildport.audit import suppressions

    text = "set(A 1)\n#\n buildport: ignore[x]\nset(B 1) # buildport: ignore[y, z]\r\n#buildport: ignore\n"
    assert suppressions(text) == {4: {"y", "z"}, 5: {"*"}}


def test_a_makefile_included_from_several_folders_is_audited_once(tmp_path: Path) -> None:
    import shutil

    shutil.copytree(Path(__file__).resolve().parent.parent / "fixtures" / "projects" / "make-suite-shared-config",
                    tmp_path / "p")
    (tmp_path / "p" / "make.config").write_text("NVCC := nvcc\n")  # reached only through includes
    for sub in ("histogram", "kmeans"):
        makefile = tmp_path / "p" / sub / "Makefile"
        makefile.write_text("include ../make.config\n" + makefile.read_text())
    report = audit([str(tmp_path / "p")])
    paths = [f.path for f in report.files]
    assert len(paths) == len(set(paths))
    assert sorted(p for p in paths if p.endswith(("common.mk", "make.config"))) == [
        str(tmp_path / "p" / "common.mk"), str(tmp_path / "p" / "make.config")]


@settings(max_examples=500, derandomize=True, deadline=None)
@given(st.text(alphabet="aCcMmkKListe.uhxpnfGN+_-", max_size=16)
       | st.sampled_from(["CMakeLists.txt", "Makefile", "GNUmakefile", "a.CMAKE", ".cu", "..cu", "x.Cu", "k.cuh",
                          "rules.mk", "a.mk.bak", "c++", "x.c++", ".mk", "README"]))  # fmt: skip
def test_is_audited_says_what_kind_of_says(name: str) -> None:
    from buildport.audit import is_audited, kind_of

    assert is_audited(name) == (kind_of(name) is not None)


def test_a_file_buildport_ported_is_not_a_file_with_cuda_left() -> None:
    """The port's own output has HIP, `.cu` sources marked HIP and, in comments, the word CUDA: nothing of
    CUDA to review there (it was reported as a file that has HIP already, and failed the gate)."""
    original = ("# the CUDA kernels\ncmake_minimum_required(VERSION 3.18)\nproject(p LANGUAGES CXX CUDA)\n"
                "find_package(CUDAToolkit REQUIRED)\nfile(GLOB KERNELS src/*.cu)\n"
                "add_executable(app main.cu ${KERNELS})\ntarget_link_libraries(app PRIVATE CUDA::cudart)\n")
    ported = port_cmake(original, "CMakeLists.txt").text
    assert "LANGUAGE HIP" in ported and "CUDA" in ported
    audited = audit_text(ported, "CMakeLists.txt", CMAKE)
    assert audited is None or not [f for f in audited.findings if f.rule == "cmake-hip-present"]
    # a file with both languages still is
    both = audit_text(ported + "enable_language(CUDA)\nadd_executable(old old.cu)\n", "CMakeLists.txt", CMAKE)
    assert both is not None and "cmake-hip-present" in [f.rule for f in both.findings]


@pytest.mark.parametrize(("env", "coloured"), [({"FORCE_COLOR": "1"}, True), ({"NO_COLOR": "1", "FORCE_COLOR": "1"}, False),
                                              ({}, False)])
def test_colour_follows_no_color_and_force_color(tmp_path: Path, env: dict[str, str], coloured: bool) -> None:
    (tmp_path / "k.cu").write_text("#include <cuda_runtime.h>\nint main() { return cudaDeviceSynchronize(); }\n")
    base = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    done = subprocess.run([sys.executable, "-m", "buildport", "audit", "--no-cache", str(tmp_path)],
                          capture_output=True, text=True, env={**base, **env}, timeout=120)
    assert ("\x1b[" in done.stdout) is coloured, done.stdout
    forced = subprocess.run([sys.executable, "-m", "buildport", "audit", "--no-cache", "--no-color", str(tmp_path)],
                            capture_output=True, text=True, env={**base, "FORCE_COLOR": "1"}, timeout=120)
    assert "\x1b[" not in forced.stdout  # the option wins over the environment


def test_a_root_named_folder_of_the_project_is_no_cuda_left() -> None:
    """`CUDA_PATH = device` names the project's sources: the port leaves it and says so once; neither its
    assignment nor its uses are reported as a CUDA install left, while a real root beside it is ported."""
    text = (ROOT / "fixtures" / "make" / "root-named-project-folder" / "input.mk").read_text()
    audited = audit_text(text, "Makefile", MAKE)
    assert audited is not None
    paths = [f for f in audited.findings if f.rule in ("make-path", "build-cuda-path")]
    assert [(f.rule, f.fixable, f.line) for f in paths] == [("make-path", False, 4), ("make-path", True, 12), ("make-path", True, 13)]
