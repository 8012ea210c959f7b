"""NVIDIA's profilers, debugger and sanitizers: each row of ``rules.tools`` as make and CMake port it."""

from __future__ import annotations

import pytest

from buildport.engine import port_cmake, port_make
from buildport.passes.tools import output_name, port_call
from buildport.rules.tools import TOOLS, Tool, ToolOption

MAPPED = [tool for tool in TOOLS if tool.program is not None]
UNPORTED = [tool for tool in TOOLS if tool.program is None]


def _call(tool: Tool, name: str) -> str:
    sub = "" if tool.subcommand in ("", "*") else f" {tool.subcommand}"
    return f"{name}{sub}"


def _recipe(command: str) -> str:
    return f"check: app\n\t{command}\n"


def _rules(text: str, rule: str) -> list[str]:
    return [f.rule for f in port_make(text).findings if f.rule == rule]


@pytest.mark.parametrize("tool", MAPPED, ids=[t.names[0] for t in MAPPED])
def test_a_tool_with_an_equivalent_runs_it_in_a_recipe_and_a_custom_target(tool: Tool) -> None:
    wanted = " ".join([tool.program or "", *tool.added])
    for name in tool.names:
        ported = port_make(_recipe(f"{_call(tool, name)} ./app 16"))
        assert ported.text == _recipe(f"{wanted} ./app 16")
        assert [f.rule for f in ported.findings] == ["gpu-tool"] and ported.findings[0].replacement == wanted
        cmake = port_cmake(f"add_custom_target(check COMMAND {_call(tool, name)} $<TARGET_FILE:app>)\n")
        assert f"COMMAND {wanted} $<TARGET_FILE:app>)" in cmake.text


@pytest.mark.parametrize("tool", UNPORTED, ids=[f"{t.names[0]}-{t.subcommand}" for t in UNPORTED])
def test_a_tool_without_an_equivalent_is_left_and_reported_with_the_rows_note(tool: Tool) -> None:
    for name in tool.names:
        command = f"{name} {'stats report.nsys-rep' if tool.subcommand == '*' else '--set full ./app'}"
        ported = port_make(_recipe(command))
        assert ported.text == _recipe(command)
        [finding] = ported.findings
        assert finding.rule == "gpu-tool-unported" and not finding.fixable and tool.note in finding.message
        cmake = port_cmake(f"add_test(NAME t COMMAND {command})\n")
        assert [(f.rule, f.fixable) for f in cmake.findings] == [("gpu-tool-unported", False)]


OPTIONS = [(tool, option) for tool in MAPPED for option in tool.options]


@pytest.mark.parametrize("tool, option", OPTIONS, ids=[f"{t.names[0]}{o.names[0]}" for t, o in OPTIONS])
def test_each_option_does_what_its_row_says(tool: Tool, option: ToolOption) -> None:
    head = _call(tool, tool.names[0])
    wanted = " ".join([tool.program or "", *tool.added])
    for spelling in option.names:
        given = f"{spelling} out.nvvp" if option.takes_value else spelling
        text = _recipe(f"{head} {given} ./app")
        ported = port_make(text)
        options = [f for f in ported.findings if f.rule == "gpu-tool-option"]
        if option.action == "report":
            assert ported.text == text and [f.fixable for f in options] == [False]
            continue
        assert [f.fixable for f in options] == [True]
        if option.action == "drop":
            assert ported.text == _recipe(f"{wanted} ./app")
        elif option.action == "map":
            extra = [w for w in option.to if w not in tool.added]
            assert ported.text == _recipe(" ".join([wanted, *extra, "./app"]))
        elif option.action == "output":
            assert ported.text == _recipe(f"{wanted} -o out.csv ./app")
            assert options[0].severity.name == "WARNING"


def test_an_option_the_table_does_not_list_leaves_the_call_and_is_reported() -> None:
    text = _recipe("nsys profile --gpu-metrics-device=all ./app")
    ported = port_make(text)
    assert ported.text == text
    assert [(f.rule, f.fixable) for f in ported.findings] == [("gpu-tool-option", False)]


def test_cuda_gdb_keeps_every_option() -> None:
    assert port_make(_recipe("cuda-gdb -q -batch -ex run --args ./app 1")).text == _recipe(
        "rocgdb -q -batch -ex run --args ./app 1")


def test_a_variable_that_holds_a_tool_is_ported_where_it_is_set_and_where_it_runs() -> None:
    text = "PROF = nvprof\nNSYS ?= nsys\nrun: app\n\t$(PROF) --print-gpu-trace ./app\n\t$(NSYS) profile -o r ./app\n"
    assert port_make(text).text == ("PROF = rocprof --stats\nNSYS ?= rocprof\nrun: app\n"
                                    "\t$(PROF) --hip-trace ./app\n\t$(NSYS) --stats --hip-trace -o r.csv ./app\n")


def test_find_program_finds_the_rocm_program_and_its_uses_get_the_modes_words() -> None:
    text = "find_program(NSYS nsys)\nadd_custom_target(p COMMAND ${NSYS} profile --stats=true ./app)\n"
    assert port_cmake(text).text == ("find_program(NSYS rocprof)\n"
                                     "add_custom_target(p COMMAND ${NSYS} --stats --hip-trace ./app)\n")


def test_a_tool_call_ends_with_its_shell_command() -> None:
    ported = port_make(_recipe("nvprof ./app -o x > log; nvprof -o p.nvvp ./app && cuda-gdb ./app"))
    assert ported.text == _recipe("rocprof --stats ./app -o x > log; rocprof --stats -o p.csv ./app && rocgdb ./app")


def test_a_tool_named_by_a_cuda_path_gets_rocms() -> None:
    ported = port_make("CUDA_PATH ?= /usr/local/cuda\n" + _recipe("$(CUDA_PATH)/bin/nvprof ./app"))
    assert _recipe("$(ROCM_PATH)/bin/rocprof --stats ./app") in ported.text


@pytest.mark.parametrize("text", [
    _recipe("echo nvprof nsys ncu"), _recipe("rocprof --stats ./app"), "DOC = see nsys\n",
    _recipe("grep compute-sanitizer notes.txt"),
])  # fmt: skip
def test_look_alikes_are_left_alone(text: str) -> None:
    ported = port_make(text)
    assert ported.text == text and not ported.findings


def test_output_names_lose_nvidias_suffix() -> None:
    assert [output_name(n) for n in ("a.nvvp", "r.nsys-rep", "x", "y.csv", "$(T)-report")] == [
        "a.csv", "r.csv", "x.csv", "y.csv", "$(T)-report.csv"]


def test_a_mapped_option_the_mode_has_already_is_not_given_twice() -> None:
    ported = port_call(["nsys", "profile", "--print-gpu-trace", "./app"], "nsys")
    assert ported.notes[0].rule == "gpu-tool-option" and not ported.notes[0].fixable  # not nsys's option
    ported = port_call(["nvprof", "--print-gpu-trace", "--print-api-trace", "./app"], "nvprof")
    assert ported.words == ["rocprof --stats", "--hip-trace", "", None]


@pytest.mark.parametrize("flags, wanted", [
    ("-G -lineinfo", "-g -O0"), ("-lineinfo -G", "-g -O0"), ("-lineinfo", "-gline-tables-only"), ("-G", "-g -O0"),
])  # fmt: skip
def test_device_debug_makes_line_info_void(flags: str, wanted: str) -> None:
    assert port_make(f"debug: NVCCFLAGS += {flags}\n").text == f"debug: NVCCFLAGS += {wanted}\n"


def test_an_option_without_its_value_leaves_the_call() -> None:
    text = _recipe("nsys profile -o")
    ported = port_make(text)
    assert ported.text == text and [(f.rule, f.fixable) for f in ported.findings] == [("gpu-tool-option", False)]


def test_a_cmake_variable_set_to_a_tool_is_ported_as_find_programs_is() -> None:
    text = 'set(PROFILER nvprof CACHE STRING "profiler")\nadd_custom_target(p COMMAND ${PROFILER} ./app)\n'
    assert port_cmake(text).text == ('set(PROFILER rocprof CACHE STRING "profiler")\n'
                                     "add_custom_target(p COMMAND ${PROFILER} --stats ./app)\n")
    text = "set(SANITIZER compute-sanitizer)\nadd_test(NAME t COMMAND ${SANITIZER} ./app)\n"
    ported = port_cmake(text)
    assert ported.text == text and [f.line for f in ported.findings if f.rule == "gpu-tool-unported"] == [1, 2]
