"""Fuzzing findings (issue 35, item 10), each kept as a regression: a port a second run changed again, a
"not stable" internal error on valid input, an error that blamed text the user never wrote, a recipe prefix
lost, a file without CUDA rewritten. Every port here is checked for idempotence as well: porting the output
again gives the output (what a user running buildport twice sees, each run reading its own facts)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from buildport.engine import port_cmake, port_make
from buildport.findings import Severity
from buildport.passes import cmake_project
from buildport.result import UnstableRewrite
from buildport.rules.arch import MAKE_KNOWN_TARGETS
from buildport.rules.cmake import PROPERTIES
from buildport.syntax.make import parse_make
from buildport.syntax.make_nodes import RecipeLine


def _make(text: str) -> str:
    """``text`` ported as a Makefile; its port ported again must be itself."""
    once = port_make(text).text
    assert port_make(once).text == once, "a second run changes the port"
    return once


def _cmake(text: str, path: str = "<input>") -> str:
    """``text`` ported as CMake; its port ported again must be itself."""
    once = port_cmake(text, path).text
    assert port_cmake(once, path).text == once, "a second run changes the port"
    return once


def _warnings(text: str) -> list[str]:
    return [f.message for f in port_cmake(text).findings if f.severity >= Severity.WARNING]


# 1. make: a second run changed the output -------------------------------------------------------------------


def test_make_compiler_variable_assigned_after_the_rule() -> None:
    """Every nvcc of a recipe line is ported, not the first launch only: ``nvcc`` after ``&&`` was left
    while ``$(CC)`` was the compiler, and the second run, where ``CC = $(HIPCC)``, ported it."""
    text = "app: app.cu\n\t$(CC) -o app app.cu && nvcc --version\n\nCC=nvcc\n"
    assert _make(text).endswith("app: app.cu\n\t$(CC) -o app app.cu && $(HIPCC) --version\n\nCC=$(HIPCC)\n")


#: (Makefile, how its port ends): variants of the rule above and of the other causes the fuzzer found.
MAKE_IDEMPOTENT = [
    # the compiler variable assigned before the rule, other separators, other variables
    ("CC=nvcc\napp: app.cu\n\t$(CC) -o app app.cu && nvcc --version\n",
     "CC=$(HIPCC)\napp: app.cu\n\t$(CC) -o app app.cu && $(HIPCC) --version\n"),
    ("CXX = nvcc\napp: app.cu\n\t$(CXX) -c app.cu -arch=sm_70 || nvcc -o app app.o -arch=sm_70\n",
     "CXX = $(HIPCC)\napp: app.cu\n\t$(CXX) -c app.cu $(HIP_ARCH_FLAGS) || $(HIPCC) -o app app.o $(HIP_ARCH_FLAGS)\n"),
    ("app: a.cu\n\tnvcc -c a.cu && nvcc -o app a.o\n", "app: a.cu\n\t$(HIPCC) -c a.cu && $(HIPCC) -o app a.o\n"),
    ("app: a.cu\n\tnvcc --version | nvcc -o app a.cu\n", "app: a.cu\n\t$(HIPCC) --version | $(HIPCC) -o app a.cu\n"),
    ("NVCC=nvcc\napp: a.cu\n\tcd x && $(NVCC) -c a.cu -arch=sm_70; nvcc -o app a.o -arch=sm_70\n",
     "NVCC=$(HIPCC)\napp: a.cu\n\tcd x && $(NVCC) -c a.cu $(HIP_ARCH_FLAGS); $(HIPCC) -o app a.o $(HIP_ARCH_FLAGS)\n"),
    # a variable that holds what the port writes for nvcc is still the compiler: what follows is its argument
    ("app: app.cu\n\t$(X) nvcc -o app app.cu\nX = nvcc\n", "app: app.cu\n\t$(X) nvcc -o app app.cu\nX = $(HIPCC)\n"),
    ("X = $(CUDA_PATH)/bin/nvcc\napp: app.o\n\t$(X)\tnvcc -o app app.o\n",
     "X = $(HIPCC)\napp: app.o\n\t$(X)\tnvcc -o app app.o\n"),
    ("X := $(shell which nvcc)\napp: app.cu\n\t$(X) nvcc -o app app.cu\n",
     "X := $(if $(shell command -v $(firstword $(HIPCC)) 2>/dev/null),$(HIPCC))\napp: app.cu\n"
     "\t$(X) nvcc -o app app.cu\n"),
    # a CUDA root (ported to $(ROCM_PATH)) or nvcc's flags (ported to $(HIP_ARCH_FLAGS)) run no program
    ("LD = g++ /usr/local/cuda $(shell which nvcc)\n", "LD = g++ $(ROCM_PATH) $(shell which nvcc)\n"),
    ("LINK ?= -gencode arch=compute_70,code=sm_70 nvcc\n", "LINK ?= $(HIP_ARCH_FLAGS) nvcc\n"),
    # a .c file compiled by nvcc: the same rule read alike in both runs, no two edits of one word
    ("a.o: a.c\n\t$(CUDA_PATH)/bin/nvcc -c a.c $(CFLAGS)\nCFLAGS = -std=c++17\n",
     "a.o: a.c\n\t$(ROCM_PATH)/bin/hipcc -c a.c $(filter-out -std=c++% -std=gnu++%,$(CFLAGS))\nCFLAGS = -std=c++17\n"),
    ("a.o: a.c\n\tnvcc -arch=$(ARCH) -std=c++14 -c a.c\n", "a.o: a.c\n\t$(HIPCC) $(HIP_ARCH_FLAGS) -c a.c\n"),
    ("%.o: %.c\n\tnvcc -dc -lcuda -I/usr/local/cuda/include $(NVCCFLAGS)\n",
     "%.o: %.c\n\t$(HIPCC) -fgpu-rdc -c -I$(ROCM_PATH)/include -D__HIP_PLATFORM_AMD__ $(NVCCFLAGS)\n"),
    ("a.o: a.c\n\t$(NVCC) -c a.c\n\t$(CC) -std=c++17 -arch=$(ARCH) -c a.c ; $(LD) -o app a.o\n",
     "a.o: a.c\n\t$(NVCC) -c a.c\n\t$(CC) -arch=$(ARCH) -c a.c ; $(filter-out -std=c++% -std=gnu++%,$(LD)) -o app a.o\n"),
    # a separator that ends a word stays where it was: the flag before it is ported, the command still ends
    ("app: a.cu\n\tnvcc -c a.cu -arch=sm_70; nvcc -o app a.o\n",
     "app: a.cu\n\t$(HIPCC) -c a.cu $(HIP_ARCH_FLAGS); $(HIPCC) -o app a.o\n"),
    ("app: a.cu\n\tnvcc -c a.cu -lcudart&& find . -name '*.o' -exec nvcc {} \\;\n",
     "app: a.cu\n\t$(HIPCC) -c a.cu&& find . -name '*.o' -exec nvcc {} \\;\n"),
    # what another program of the line is given is no nvcc flag
    ("app: app.cu\n\tnvcc -c a.cu && echo -G\n", "app: app.cu\n\t$(HIPCC) -c a.cu && echo -G\n"),
]  # fmt: skip


@pytest.mark.parametrize("text,tail", MAKE_IDEMPOTENT)
def test_make_port_is_idempotent(text: str, tail: str) -> None:
    assert _make(text).endswith(tail)


def test_make_c_compiled_by_nvcc_gets_no_cxx_standard() -> None:
    """A build that compiles C with hipcc gets the HIP platform in HIPCC, and no C++ standard, which clang
    refuses for C, and which a second run took for the file's own (to filter out of every flag variable)."""
    out = _make("app.o: app.c\n\tnvcc -c app.c -I/usr/local/cuda/include $(CFLAGS)\n")
    assert "-std=gnu++" not in out
    assert out.endswith("app.o: app.c\n\t$(HIPCC) -c app.c -I$(ROCM_PATH)/include -D__HIP_PLATFORM_AMD__ $(CFLAGS)\n")


def test_make_targets_probe_is_no_use_of_hipcc() -> None:
    """The targets' probe names $(HIPCC) as the prelude reads it: read again, it alone asks for no HIPCC flags."""
    from buildport.passes.make_prelude import _PROBED_HIPCC  # how the prelude tells the probe from a use

    assert _PROBED_HIPCC in MAKE_KNOWN_TARGETS
    out = _make("a.o: a.c\n\t$(NVCC) -c a.c\n\t$(CC) -std=c++17 -arch=sm_70 -c a.c\n")
    assert "HIPCC +=" not in out


# 2. "not stable" internal errors on valid or near-valid input -----------------------------------------------


MAKE_COMPILER_ARGUMENT = [
    ("all:\n\tnvcc\tnvcc\n", "all:\n\t$(HIPCC)\tnvcc\n"),
    ("all:\n\tnvcc nvcc nvcc\n", "all:\n\t$(HIPCC) nvcc nvcc\n"),
    ("all: ; nvcc\tnvcc\n", "all: ; $(HIPCC)\tnvcc\n"),
    ("NVCC = nvcc nvcc\nall:\n\t$(NVCC) a.cu\n", "NVCC = $(HIPCC) nvcc\nall:\n\t$(NVCC) a.cu\n"),
    ("X = nvcc\nall:\n\t$(X)\tnvcc\n", "X = $(HIPCC)\nall:\n\t$(X)\tnvcc\n"),
]


@pytest.mark.parametrize("text,tail", MAKE_COMPILER_ARGUMENT)
def test_make_word_after_the_compiler_is_its_argument(text: str, tail: str) -> None:
    """``nvcc nvcc`` runs nvcc on a file named nvcc: the port runs hipcc on it, and ``$(HIPCC) nvcc`` is read
    the same way again (it was taken for a program run by a prefix, and ported)."""
    assert _make(text).endswith(tail)


def test_cmake_property_named_as_a_value() -> None:
    """A property's value is never read as a property name (in a subdirectory's file, where the port
    enables no HIP, the second run ported the value it had left)."""
    text = "set_target_properties(app PROPERTIES CUDA_STANDARD CUDA_STANDARD_REQUIRED)\n"
    assert _cmake(text) == "set_target_properties(app PROPERTIES HIP_STANDARD CUDA_STANDARD_REQUIRED)\n"


@pytest.mark.parametrize("name", sorted(PROPERTIES))
@pytest.mark.parametrize("value", sorted(PROPERTIES))
def test_cmake_every_cuda_property_with_a_property_name_as_value(name: str, value: str) -> None:
    for text in (f"add_executable(app app.cu)\nset_target_properties(app PROPERTIES {name} {value})\n",
                 f"add_executable(app app.cu)\nset_property(TARGET app PROPERTY {name} {value})\n",
                 f"set_target_properties(app PROPERTIES CXX_STANDARD 17 {name} {value} {value} ON)\n"):
        _cmake(text)


CMAKE_PROPERTIES = [
    ("set_target_properties(app PROPERTIES CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED CUDA_STANDARD)\n",
     "set_target_properties(app PROPERTIES HIP_STANDARD 17 HIP_STANDARD_REQUIRED CUDA_STANDARD)\n"),
    ("set_target_properties(app PROPERTIES OUTPUT_NAME CUDA_STANDARD CUDA_STANDARD 14)\n",
     "set_target_properties(app PROPERTIES OUTPUT_NAME CUDA_STANDARD HIP_STANDARD 14)\n"),
    ("set_property(TARGET app PROPERTY CUDA_STANDARD CUDA_STANDARD_REQUIRED)\n",
     "set_property(TARGET app PROPERTY HIP_STANDARD CUDA_STANDARD_REQUIRED)\n"),
    # set_property gives a property all the values after its name: CUDA's architectures are one list
    ("set_property(TARGET app PROPERTY CUDA_ARCHITECTURES 70 80)\n",
     'set_property(TARGET app PROPERTY HIP_ARCHITECTURES "${CMAKE_HIP_ARCHITECTURES}")\n'),
    ("set_target_properties(app PROPERTIES CUDA_RESOLVE_DEVICE_SYMBOLS ON CXX_STANDARD 17)\n",
     "set_target_properties(app PROPERTIES CXX_STANDARD 17)\n"),
    ("get_target_property(v app CUDA_ARCHITECTURES)\n", "get_target_property(v app HIP_ARCHITECTURES)\n"),
    ("set_target_properties(app PROPERTIES LINKER_LANGUAGE CUDA)\n",
     "set_target_properties(app PROPERTIES LINKER_LANGUAGE HIP)\n"),
]


@pytest.mark.parametrize("text,expected", CMAKE_PROPERTIES)
def test_cmake_property_names_by_position(text: str, expected: str) -> None:
    assert _cmake(text) == expected


# 3. errors that blamed text the user never wrote ------------------------------------------------------------


LEGACY = "find_package(CUDA REQUIRED)\ncuda_add_executable(app app.cu OPTIONS {})\n"


def test_cmake_legacy_option_with_a_parenthesis() -> None:
    """``OPTIONS "-DX=("`` was copied with its quotes into the quoted generator expression of a new line,
    which was not CMake: an error at ``<input>:1:1`` of a line the user never wrote."""
    out = _cmake(LEGACY.format('"-DX=("'))
    assert 'target_compile_options(app PRIVATE "$<$<COMPILE_LANGUAGE:HIP>:-DX=(>")\n' in out


@pytest.mark.parametrize("options,body", [
    ('"-DX=)" -O3', "-DX=);-O3"),
    ('-DY=\\"a\\" -DZ="b"', '-DY=\\"a\\";-DZ=\\"b\\"'),  # an unquoted argument's bare quote is escaped
    ('"-DX=a>b"', "-DX=a$<ANGLE-R>b"),  # a > that would end the generator expression
    ('"-Xcompiler -fPIC" --use_fast_math', "-fPIC;-ffast-math"),
    ("$<$<COMPILE_LANGUAGE:CUDA>:-G>", "$<$<COMPILE_LANGUAGE:HIP>:-g;-O0>"),  # renamed as Names renames
    ("${CUDA_NVCC_FLAGS}", "${HIP_COMPILE_OPTIONS}"),
])  # fmt: skip
def test_cmake_legacy_options_in_a_generator_expression(options: str, body: str) -> None:
    out = _cmake(LEGACY.format(options))
    assert f'target_compile_options(app PRIVATE "$<$<COMPILE_LANGUAGE:HIP>:{body}>")\n' in out


@pytest.mark.parametrize("text,line", [
    ('add_executable(app app.cu)\ntarget_compile_options(app PRIVATE "-DX=(" -Xcompiler -fPIC)\n',
     'target_compile_options(app PRIVATE "-DX=(" -fPIC)\n'),
    ('list(APPEND CUDA_NVCC_FLAGS -Xcompiler "-DX=(")\n', 'list(APPEND HIP_COMPILE_OPTIONS "-DX=(")\n'),
    ('set(CMAKE_CUDA_FLAGS --compiler-options "-DX=(" -lineinfo)\n',
     'set(CMAKE_HIP_FLAGS "-DX=(" "" -gline-tables-only)\n'),
])  # fmt: skip
def test_cmake_parenthesis_moved_into_an_unquoted_argument(text: str, line: str) -> None:
    """A host option in a quoted argument, moved to the place of its ``-Xcompiler``, stays quoted."""
    assert _cmake(text).endswith(line)


def test_cmake_line_a_pass_got_wrong_is_an_internal_error_of_the_file(monkeypatch: pytest.MonkeyPatch) -> None:
    """Should a pass write a line that is not CMake, the error names the file being ported and says it is
    buildport's, not a parse error at a line and column of a text the user never wrote."""
    monkeypatch.setattr(cmake_project, "_quoted_words", lambda text: [text])  # the old copy, quotes and all
    with pytest.raises(UnstableRewrite, match=r"^src/CMakeLists\.txt: the rewrite produced a line that is not CMake"):
        port_cmake(LEGACY.format('"-DX=("'), "src/CMakeLists.txt")


# 4. .RECIPEPREFIX -------------------------------------------------------------------------------------------


RECIPE_PREFIX = [
    (".RECIPEPREFIX = >\napp: app.cu\n>nvcc -arch=sm_70 -o app app.cu\n",
     ".RECIPEPREFIX = >\napp: app.cu\n>$(HIPCC) $(HIP_ARCH_FLAGS) -o app app.cu\n"),
    (".RECIPEPREFIX := >\nNVCC ?= nvcc\napp: app.cu\n> $(NVCC) -o $@ $<\n> @nvcc --version && nvcc -V\n",
     ".RECIPEPREFIX := >\nNVCC ?= $(HIPCC)\napp: app.cu\n> $(NVCC) -o $@ $<\n> @$(HIPCC) --version && $(HIPCC) -V\n"),
    (".RECIPEPREFIX = >\napp: app.cu\n>nvcc\tnvcc\n", ".RECIPEPREFIX = >\napp: app.cu\n>$(HIPCC)\tnvcc\n"),
    (".RECIPEPREFIX = >\na: a.cu\n>nvcc -o a a.cu\n.RECIPEPREFIX =\nb: b.cu\n\tnvcc -o b b.cu\n",
     ".RECIPEPREFIX = >\na: a.cu\n>$(HIPCC) -o a a.cu\n.RECIPEPREFIX =\nb: b.cu\n\t$(HIPCC) -o b b.cu\n"),
    # a define body's recipe line, once evaluated: its command starts after the prefix
    (".RECIPEPREFIX = >\ndefine RULE\n$(1): $(1).cu\n>nvcc -o $(1) $(1).cu\nendef\n$(eval $(call RULE,app))\n",
     ".RECIPEPREFIX = >\ndefine RULE\n$(1): $(1).cu\n>$(HIPCC) -o $(1) $(1).cu\nendef\n$(eval $(call RULE,app))\n"),
]  # fmt: skip


@pytest.mark.parametrize("text,tail", RECIPE_PREFIX)
def test_make_recipe_prefix_kept(text: str, tail: str) -> None:
    out = _make(text)
    assert out.endswith(tail)
    for line in parse_make(out).lines:  # read back as recipe lines, with the prefix they were written with
        if isinstance(line, RecipeLine):
            assert line.span.of(out)[:1] in ">\t" and "nvcc" not in line.command_text.split()[0]


def test_make_silent_nvcc_keeps_its_prefix() -> None:
    """``@nvcc`` (the prefixes of a recipe's command: silent, ignore errors) was left as it was."""
    assert _make("app: app.cu\n\t-@nvcc -o app app.cu\n").endswith("app: app.cu\n\t-@$(HIPCC) -o app app.cu\n")


# 5. a file without CUDA -------------------------------------------------------------------------------------


HOST_ONLY = [
    "project(p LANGUAGES CXX)\nadd_executable(app main.cpp)\ntarget_compile_options(app PRIVATE -Xcompiler -Wall)\n",
    "project(p LANGUAGES CXX)\nadd_executable(app main.cpp)\ntarget_compile_options(app PRIVATE -Xcompiler=-Wall)\n",
    'PROJECT(p CXX)\nadd_executable(app main.cpp)\ntarget_compile_options(app PRIVATE "-Xcompiler -Wall")\n',
    'project(p)\nset(CMAKE_CXX_FLAGS "${CMAKE_CXX_FLAGS} -Xcompiler -Wall")\nadd_executable(app main.cpp)\n',
    "project(p C CXX)\nadd_compile_options(-Xcompiler -fopenmp --use_fast_math)\nadd_library(l l.c)\n",
    "project(p NONE)\nadd_executable(app main.cpp)\ntarget_link_options(app PRIVATE -Xcompiler -fopenmp)\n",
]


@pytest.mark.parametrize("text", HOST_ONLY)
def test_cmake_file_without_cuda_stays_byte_identical(text: str) -> None:
    """A project whose languages are the host's and whose file says nothing else of CUDA gives its nvcc-like
    flags to the host compiler: the file is left as it is, and nothing is reported of it."""
    result = port_cmake(text)
    assert result.text == text
    assert result.findings == []


@pytest.mark.parametrize("text", [
    "project(p LANGUAGES CXX)\nenable_language(CUDA)\nadd_executable(app main.cpp)\n"
    "target_compile_options(app PRIVATE -Xcompiler -Wall)\n",
    "project(p LANGUAGES CXX)\nadd_executable(app main.cpp k.cu)\ntarget_compile_options(app PRIVATE -Xcompiler -Wall)\n",
])  # fmt: skip
def test_cmake_project_with_cuda_still_ported(text: str) -> None:
    assert "-Xcompiler" not in _cmake(text)


@pytest.mark.parametrize("text,line", [
    # a subdirectory's file (no project()) may be part of a CUDA project: its flags are ported, a flag with
    # the value it takes from the next argument
    ("add_executable(app main.cpp)\ntarget_compile_options(app PRIVATE -Xcompiler -Wall)\n",
     "target_compile_options(app PRIVATE -Wall)\n"),
    ("add_executable(app main.cpp)\ntarget_compile_options(app PRIVATE --compiler-options -Wall -lineinfo)\n",
     "target_compile_options(app PRIVATE -Wall -gline-tables-only)\n"),
    ("add_executable(app main.cpp)\nadd_compile_options(-Xcompiler -fopenmp --use_fast_math)\n",
     "add_compile_options(-fopenmp -ffast-math)\n"),
])  # fmt: skip
def test_cmake_flag_and_its_value_read_together(text: str, line: str) -> None:
    assert _cmake(text).endswith(line)
    assert _warnings(text) == []


@pytest.mark.parametrize("option", ["-G", "-lineinfo", "--use_fast_math", "-Xcompiler", "-arch=sm_70"])
def test_cmake_nvcc_option_given_to_the_host_compiler_left_as_is(option: str) -> None:
    """``-Xcompiler -G`` hands nvcc's own option to the host compiler: made clang's, a second run read it as
    nvcc's again. It is left as it is, and reported."""
    text = f"add_library(k k.cu)\ntarget_compile_options(k PRIVATE -Xcompiler {option} -O2)\n"
    assert _cmake(text).endswith(f"target_compile_options(k PRIVATE -Xcompiler {option} -O2)\n")
    assert any("an nvcc option given to the host compiler" in message for message in _warnings(text))


# the fuzzing itself, kept small: Makefiles and CMake files of the words the findings came from -------------


#: Commands begin with a program, and nvcc is no argument but in ``nvcc nvcc``: a word the port removes
#: between a reference and nvcc (``$(X) -lcudart nvcc``) leaves nvcc where ``$(X)`` may run it, and a second
#: run ports it (a limit still). Each variable holds one kind of value.
_PROGRAMS = ["nvcc", "@nvcc", "$(CC)", "$(NVCC)", "$(X)", "$(CUDA_PATH)/bin/nvcc", "/usr/local/cuda/bin/nvcc",
             "$(shell which nvcc)", "g++", "echo", "cd"]
_ARGUMENTS = ["-arch=sm_70", "-Xcompiler -fPIC", "-lcudart", "-L$(CUDA_PATH)/lib64", "-I/usr/local/cuda/include",
              "-std=c++17", "-dc", "--use_fast_math", "-gencode arch=compute_70,code=sm_70", "-arch=$(ARCH)", "-G",
              "$(NVCCFLAGS)", "$(CFLAGS)", "-o", "$@", "$<", "-c", "a.cu", "a.c", "--version"]
_VALUES = {
    "CC": ["nvcc", "g++", "nvcc nvcc", "ccache nvcc"],
    "NVCC": ["nvcc", "/usr/local/cuda/bin/nvcc", "$(CUDA_PATH)/bin/nvcc", "$(shell which nvcc)", "ccache nvcc"],
    "X": ["nvcc", "$(NVCC)", "$(CUDA_PATH)/bin/nvcc", "g++"],
    "CFLAGS": ["-std=c++17", "-O2 -Wall", "-arch=sm_70 -Xcompiler -Wall"],
    "NVCCFLAGS": ["-std=c++17 -lineinfo", "-arch=sm_70 -Xcompiler -Wall", "--use_fast_math -dc"],
    "ARCH": ["sm_70", "sm_70 sm_80"],
    "CUDA_PATH": ["/usr/local/cuda", "/opt/cuda"],
}
_SEPARATORS = ["&&", ";", "||", "|"]


@st.composite
def _makefiles(draw: st.DrawFn) -> str:
    prefix = draw(st.sampled_from(["\t", "\t", ">"]))
    lines = [".RECIPEPREFIX = >"] if prefix == ">" else []
    for _ in range(draw(st.integers(1, 5))):
        kind = draw(st.integers(0, 2))
        if kind == 0:
            name = draw(st.sampled_from(sorted(_VALUES)))
            lines.append(f"{name} {draw(st.sampled_from(['=', ':=', '?=', '+=']))} {draw(st.sampled_from(_VALUES[name]))}")
            continue
        lines.append(draw(st.sampled_from(["app: a.o", "a.o: a.cu", "a.o: a.c", "%.o: %.c", "%.o: %.cu"])))
        command: list[str] = []
        for i in range(draw(st.integers(1, 3))):
            command += [draw(st.sampled_from(_SEPARATORS))] if i else []
            command.append(draw(st.sampled_from(_PROGRAMS)))
            command += draw(st.lists(st.sampled_from(_ARGUMENTS), max_size=5))
        lines.append(prefix + " ".join(command))
    return "\n".join(lines) + "\n"


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(_makefiles())
def test_make_generated_ports_are_stable(text: str) -> None:
    _make(text)


_CMAKE_FLAGS = ["-Xcompiler", "-Wall", "--use_fast_math", "-lineinfo", "-G", '"-DX=("', '"-Xcompiler -fPIC"',
                "-arch=sm_70", "--compiler-options", "$<$<COMPILE_LANGUAGE:CUDA>:-G>", '"-DY=a>b"', "${FLAGS}",
                '"SHELL:-Xcompiler -O3"', '-DX=\\"a\\"']
_CMAKE_PROPERTY_WORDS = [*sorted(PROPERTIES), "LANGUAGE", "LINKER_LANGUAGE", "CXX_STANDARD", "ON", "17", "CUDA", '"70;80"']


@st.composite
def _cmake_files(draw: st.DrawFn) -> str:
    lines = [draw(st.sampled_from(["", "project(p LANGUAGES CXX)", "project(p CXX CUDA)", "find_package(CUDA REQUIRED)"]))]
    sources = draw(st.sampled_from(["a.cu", "a.cpp", "a.cu b.cpp"]))
    if draw(st.booleans()):
        options = draw(st.lists(st.sampled_from(_CMAKE_FLAGS), max_size=4))
        lines.append(f"cuda_add_executable(app {sources}{' OPTIONS ' + ' '.join(options) if options else ''})")
    else:
        lines.append(f"add_executable(app {sources})")
    for _ in range(draw(st.integers(1, 3))):
        if draw(st.booleans()):
            words = " ".join(draw(st.lists(st.sampled_from(_CMAKE_PROPERTY_WORDS), min_size=1, max_size=4)))
            lines.append(draw(st.sampled_from([f"set_target_properties(app PROPERTIES {words})",
                                               f"set_property(TARGET app PROPERTY {words})"])))
        else:
            head = draw(st.sampled_from(["target_compile_options(app PRIVATE", "add_compile_options(",
                                         "list(APPEND CUDA_NVCC_FLAGS", "set(CMAKE_CUDA_FLAGS", "set(CMAKE_CXX_FLAGS"]))
            lines.append(f"{head} {' '.join(draw(st.lists(st.sampled_from(_CMAKE_FLAGS), min_size=1, max_size=4)))})")
    return "\n".join(lines) + "\n"


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(_cmake_files())
def test_cmake_generated_ports_are_stable(text: str) -> None:
    _cmake(text)
