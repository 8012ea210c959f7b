"""NVIDIA's profilers, debugger and sanitizers, and what a ROCm build runs instead.

One row per tool (and, for ``nsys``, per subcommand), read by the make and the
CMake rewrites (:mod:`buildport.passes.tools`) where a recipe, a variable, a
custom command, a test or ``find_program`` names the tool. ``program`` is the
ROCm program that replaces it, with ``added`` the words that give it the same
mode; None means ROCm has no equivalent: the call is left as it is and
reported, with ``note`` saying what a person does instead.

Each option of a row is one :class:`ToolOption`; ``action``:

- ``keep``: the same option (the same words);
- ``map``: replaced by ``to``;
- ``drop``: removed with its value, and reported (``note`` says why);
- ``output``: names the output file: ``-o NAME.csv`` (rocprof writes CSV, not
  NVIDIA's report formats), and reported;
- ``report``: the option has no ROCm form buildport can write: the call is
  left as it is, and reported.

An option a row does not list leaves the call as it is, reported, unless the
row keeps every option (``keeps_options``: rocgdb is gdb, as cuda-gdb is).

Facts: ``nvprof --help`` and ``nsys profile --help`` (CUDA 12); ``rocprof
--help`` of ROCm 5.2 (``--stats``, ``--hip-trace``, ``--hsa-trace``,
``--roctx-trace``, ``-o file.csv``, ``-i`` for counters); rocprof-compute
(formerly omniperf) ships with ROCm 6.2 and later; rocgdb is ROCm's gdb;
AddressSanitizer on AMD GPUs: ROCm's "Using AddressSanitizer" page
(``-fsanitize=address -shared-libasan``, ``xnack+`` targets, ``HSA_XNACK=1``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping

from buildport.passes.wordtrie import bounded_trie


@dataclass(frozen=True, slots=True)
class ToolOption:
    """One option of an NVIDIA tool, in all its spellings."""

    names: tuple[str, ...]
    action: str  # keep, map, drop, output or report
    takes_value: bool = False  # ``-o NAME`` or ``--output=NAME``
    to: tuple[str, ...] = ()  # for map
    note: str = ""
    warn: bool = False  # a drop a person should look at (the run measures something else)


@dataclass(frozen=True, slots=True)
class Tool:
    """One NVIDIA tool (or one subcommand of it) and its ROCm replacement."""

    names: tuple[str, ...]  # the program's names
    subcommand: str  # "" none; "*" any other than the rows before it name
    program: str | None  # the ROCm program; None: no equivalent
    added: tuple[str, ...] = ()  # the words that give the program the tool's mode
    options: tuple[ToolOption, ...] = ()
    keeps_options: bool = False  # every option means the same to the ROCm program
    note: str = ""


#: rocprof's output (``-o``): a CSV file of the kernels run, beside which ``--stats`` writes ``NAME.stats.csv``.
OUTPUT_SUFFIX = ".csv"
#: NVIDIA's report suffixes, which a ``-o`` name loses before it gets :data:`OUTPUT_SUFFIX`.
REPORT_SUFFIXES = (".nsys-rep", ".qdrep", ".nvvp", ".nvprof", ".ncu-rep")

_ASAN = ("nearest ROCm practice: an AddressSanitizer build (-fsanitize=address -shared-libasan, compiled for "
         "xnack+ targets such as gfx90a:xnack+, run with HSA_XNACK=1)")
_COMPUTE = ("kernel analysis (ncu's sections and metrics) has no ROCm 5.2 tool; ROCm 6.2 and later have "
            "rocprof-compute (formerly omniperf): `rocprof-compute profile -n NAME -- PROGRAM`; `rocprof --stats` "
            "gives kernel times only")

_NVPROF_OPTIONS = (
    ToolOption(("--print-gpu-trace",), "map", to=("--hip-trace",), note="each kernel and copy: rocprof's HIP trace"),
    ToolOption(("--print-api-trace",), "map", to=("--hip-trace",), note="the runtime calls: rocprof's HIP trace"),
    ToolOption(("-s", "--print-summary"), "drop", note="the summary is what --stats writes"),
    ToolOption(("-o", "--export-profile"), "output", takes_value=True,
               note="nvprof wrote an .nvvp profile for the visual profiler; rocprof writes CSV"),
    ToolOption(("--log-file",), "drop", takes_value=True, warn=True,
               note="rocprof writes its results to the -o files, not to a log"),
    ToolOption(("-f", "--force-overwrite"), "drop", note="rocprof overwrites its output"),
    ToolOption(("--csv",), "drop", note="rocprof writes CSV"),
    ToolOption(("--unified-memory-profiling",), "drop", takes_value=True, note="no such switch in rocprof"),
    ToolOption(("--profile-from-start",), "drop", takes_value=True, warn=True,
               note="rocprof profiles the whole run (cudaProfilerStart ranges are not read)"),
    ToolOption(("-m", "--metrics", "-e", "--events"), "report", takes_value=True,
               note="rocprof reads hardware counters from an input file (-i FILE, lines `pmc: NAME ...`), whose "
                    "names are AMD's"),
)  # fmt: skip

_NSYS_OPTIONS = (
    ToolOption(("--stats",), "drop", takes_value=True, note="the statistics are --stats"),
    ToolOption(("-o", "--output"), "output", takes_value=True,
               note="nsys wrote an .nsys-rep report for Nsight Systems; rocprof writes CSV"),
    ToolOption(("-t", "--trace"), "drop", takes_value=True, warn=True,
               note="rocprof traces the HIP calls and kernels (--hip-trace); NVTX ranges become roctx ranges "
                    "(--roctx-trace) once the sources use roctx"),
    ToolOption(("-f", "--force-overwrite"), "drop", takes_value=True, note="rocprof overwrites its output"),
    ToolOption(("-s", "--sample"), "drop", takes_value=True, note="rocprof samples no CPU"),
    ToolOption(("--cpuctxsw",), "drop", takes_value=True, note="rocprof traces no CPU context switches"),
    ToolOption(("-b", "--backtrace"), "drop", takes_value=True, note="rocprof samples no CPU"),
    ToolOption(("-w", "--show-output"), "drop", takes_value=True, note="rocprof shows the program's output"),
    ToolOption(("--cuda-memory-usage",), "drop", takes_value=True, warn=True,
               note="rocprof does not track GPU memory use"),
    ToolOption(("-c", "--capture-range"), "drop", takes_value=True, warn=True,
               note="rocprof profiles the whole run (cudaProfilerStart ranges are not read)"),
    ToolOption(("--export",), "drop", takes_value=True, warn=True,
               note="rocprof writes CSV (and JSON traces with --hip-trace) only"),
)  # fmt: skip

TOOLS: tuple[Tool, ...] = (
    Tool(("nvprof",), "", "rocprof", ("--stats",), _NVPROF_OPTIONS,
         note="kernel statistics, as nvprof's summary"),
    Tool(("nsys",), "profile", "rocprof", ("--stats", "--hip-trace"), _NSYS_OPTIONS,
         note="kernel statistics and a trace of the HIP calls (on ROCm 6 and later, rocprofv3 takes "
              "--stats --hip-trace --kernel-trace)"),
    Tool(("nsys",), "*", None,
         note="nsys's other commands (stats, export, analyze) read an .nsys-rep report; rocprof's results are CSV "
              "files, read as they are"),
    Tool(("ncu", "nv-nsight-cu-cli"), "", None, note=_COMPUTE),
    Tool(("cuda-gdb",), "", "rocgdb", keeps_options=True,
         note="ROCm's gdb (package rocgdb), which takes gdb's options; CUDA commands in a gdb script "
              "(`set cuda ...`, `cuda kernel`) have no rocgdb form"),
    Tool(("compute-sanitizer",), "", None,
         note="no ROCm equivalent of compute-sanitizer's memcheck, racecheck, initcheck or synccheck; " + _ASAN),
    Tool(("cuda-memcheck",), "", None, note="no ROCm equivalent of cuda-memcheck; " + _ASAN),
)  # fmt: skip

#: Each program name → its rows, in table order.
BY_NAME: Mapping[str, tuple[Tool, ...]] = MappingProxyType({
    name: tuple(tool for tool in TOOLS if name in tool.names) for tool in TOOLS for name in tool.names
})

#: The names the prescans search for.
TOOL_WORDS: tuple[str, ...] = tuple(BY_NAME)

#: A tool's name where a word may run it: alone (after make's recipe prefixes), or at the end of a path.
TOOL_WORD = re.compile(rf"(?:^[@+-]*|/)({'|'.join(re.escape(n) for n in sorted(BY_NAME, key=len, reverse=True))})$")
#: Any tool name in a text, as a word (a quick test before a line's words are read).
_BOUNDARY = r"[\w-]"
TOOL_HINT = re.compile(rf"(?:{bounded_trie(BY_NAME, _BOUNDARY)})(?!{_BOUNDARY})")
