"""Does a file cost the same per MB at any size? One generated file per shape, at two sizes.

Each shape is one construct repeated (a target with its link line, a flag
assignment, a target-specific variable, a rule and its nvcc recipe, ...), the
way generated build files and large monorepo files repeat them. For every shape
the script times, in this one process (CPU time, median of ``--reps``), the
parser alone and each pipeline (port, audit, and the unified diff ``--diff``
prints) on a file of ``--size-mb`` and on one ``--factor`` times larger, and
prints the cost per MB at both sizes and their ratio. Linear work gives a ratio
near 1; work that grows with the square of the file gives the factor itself.

    python benchmarks/linearity.py                     # 0.25 MB and 1 MB, every shape
    python benchmarks/linearity.py --shapes cmake:targets,make:tgt-var --size-mb 1
    python benchmarks/linearity.py --difflib           # also difflib's diff of the whole files (slow)

``--fail-above R`` makes the exit status 1 when any ratio exceeds ``R`` (for a
machine whose speed holds still; this machine's varies by tens of percent).
"""

from __future__ import annotations

import argparse
import difflib
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

#: One repetition of a construct, by index; the first (index 0) may open what later ones continue.
Repeat = Callable[[int], str]

MAKE: dict[str, Repeat] = {
    "assign": lambda i: f"CUDA_FLAGS_{i} = -O2 --use_fast_math\n",
    "nvcc-rule": lambda i: f"obj_{i}.o: src_{i}.cu\n\tnvcc -arch=sm_80 -c $< -o $@\n",
    "cond": lambda i: f"ifeq ($(CUDA),{i})\nNVCC_FLAGS += -G -lineinfo\nendif\n",
    "define": lambda i: f"define CU_RULE_{i}\n\tnvcc -arch=sm_70 -c $$< -o $$@\nendef\n",
    "continued": lambda i: f" src_{i}.cu \\\n" if i else "SRCS = \\\n",
    "tgt-var": lambda i: f"t_{i}: NVCCFLAGS += -arch=sm_80\n",
    "include": lambda i: f"-include dep_{i}.d\n",
    "ldlibs": lambda i: f"LDLIBS += -L/usr/local/cuda/lib64 -lcublas -lcudart # {i}\n",
    "recipe-cont": lambda i: "x:\n\tnvcc -c a.cu \\\n" if i == 0 else f"\t  -DX{i} \\\n",
    "root": lambda i: f"CUDA_PATH ?= /usr/local/cuda\nINC_{i} = -I$(CUDA_PATH)/include\n",
    "foreach": lambda i: f"$(foreach sm,70 80,$(eval GENCODE_{i} += -gencode arch=compute_$(sm),code=sm_$(sm)))\n",
    "dc": lambda i: f"o{i}.o: s{i}.cu\n\t$(NVCC) -dc $< -o $@\nbin{i}: o{i}.o\n\t$(NVCC) $^ -o $@\n",
    "cuda-cond": lambda i: f"ifneq ($(CUDA_HOME),)\nX{i} = 1\nelse\nY{i} = 2\nendif\n",
    "plain": lambda i: "all:\n\techo\n",
    # one construct growing: a line, a recipe, a nesting
    "long-line": lambda i: " -gencode arch=compute_80,code=sm_80" if i else "NVCCFLAGS =",
    "long-recipe": lambda i: f" -Ifoo_{i} -lcublas" if i else "x: a.cu\n\tnvcc -c a.cu",
    "nested-cond": lambda i: "ifdef CUDA_PATH\n" if i else "NVCC = nvcc\n",
}

CMAKE: dict[str, Repeat] = {
    "targets": lambda i: f"add_executable(t_{i} a_{i}.cu)\n"
                         f"target_link_libraries(t_{i} PRIVATE CUDA::cudart CUDA::cublas)\n",
    "flags": lambda i: 'set(CMAKE_CUDA_FLAGS "${CMAKE_CUDA_FLAGS} -arch=sm_80 --use_fast_math")\n',
    "long-set": lambda i: f"  a_{i}.cu\n" if i else "set(SRCS\n",
    "if-blocks": lambda i: f'if(CUDA_FOUND)\n  message(STATUS "cuda {i}")\nendif()\n',
    "find": lambda i: "find_package(CUDAToolkit REQUIRED)\n",
    "props": lambda i: f"set_source_files_properties(f_{i}.cpp PROPERTIES LANGUAGE CUDA)\n",
    "genex": lambda i: "target_compile_options(t PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall -lineinfo>)\n",
    "functions": lambda i: f"function(f_{i})\n  cuda_add_executable(x_{i} y.cu)\nendfunction()\n",
    "host-headers": lambda i: f"add_executable(h{i} m.cpp k.cu)\n"
                              f"target_include_directories(h{i} PRIVATE ${{CUDAToolkit_INCLUDE_DIRS}})\n",
    "custom": lambda i: f"add_custom_command(OUTPUT k{i}.fatbin COMMAND ${{CMAKE_CUDA_COMPILER}} -fatbin k{i}.cu)\n",
    "legacy-flags": lambda i: f"list(APPEND CUDA_NVCC_FLAGS -gencode arch=compute_{i % 90},code=sm_80)\n"
                              f"cuda_add_library(l{i} a.cu OPTIONS -G)\n",
    "arch-prop": lambda i: f'set_target_properties(t_{i} PROPERTIES CUDA_ARCHITECTURES "70;80")\n',
    "plain": lambda i: f"add_library(lib_{i} a.cpp)\n",
    "long-flags": lambda i: " -arch=sm_80 --use_fast_math" if i else 'set(CMAKE_CUDA_FLAGS "',
    "long-sources": lambda i: f" a{i}.cu" if i else "add_executable(t",
    "long-links": lambda i: " CUDA::cublas CUDA::cudart" if i else "target_link_libraries(t",
    "nested-if": lambda i: "if(A)\n" if i else "add_executable(t a.cu)\n",
}

#: What closes a shape of ``n`` repetitions (its first one opened it, or each one did).
_CLOSE: dict[tuple[str, str], Callable[[int], str]] = {
    ("cmake", "long-set"): lambda n: ")\n",
    ("make", "long-line"): lambda n: "\n",
    ("make", "long-recipe"): lambda n: "\n",
    ("make", "nested-cond"): lambda n: "endif\n" * (n - 1),
    ("cmake", "long-flags"): lambda n: '")\n',
    ("cmake", "long-sources"): lambda n: ")\n",
    ("cmake", "long-links"): lambda n: ")\n",
    ("cmake", "nested-if"): lambda n: "endif()\n" * (n - 1),
}
#: Shapes whose first repetition goes last: it is what the others nest around.
_INNERMOST = frozenset({("make", "nested-cond"), ("cmake", "nested-if")})


def _synthetic(kind: str) -> Repeat:
    """Whole generated files (benchmarks/synthetic.py), one after another: what real files mix."""
    import random

    from synthetic import cmake_file, make_file

    rng = random.Random(11)
    made = cmake_file if kind == "cmake" else make_file
    return lambda i: made(rng)


def shapes() -> dict[str, tuple[str, Repeat]]:
    """Every shape: ``kind:name`` → (kind, its repetition)."""
    found: dict[str, tuple[str, Repeat]] = {}
    for kind, table in (("make", MAKE), ("cmake", CMAKE)):
        for name, repeat in table.items():
            found[f"{kind}:{name}"] = (kind, repeat)
    return found


def text_of(kind: str, name: str, repeat: Repeat, size: int) -> str:
    """The shape repeated until ``size`` characters (the same text for the same size)."""
    parts: list[str] = []
    total = i = 0
    while total < size:
        parts.append(repeat(i))
        total += len(parts[-1])
        i += 1
    if (kind, name) in _INNERMOST:
        parts.append(parts.pop(0))
    close = _CLOSE.get((kind, name))
    return "".join(parts) + (close(len(parts)) if close is not None else "")


def pipelines(kind: str, peer: bool) -> dict[str, Callable[[str], object]]:
    """What is timed on each file: the parser alone, the port, the audit, the diff of the port."""
    from buildport.audit import audit_text
    from buildport.engine import port_cmake, port_make
    from buildport.report.linediff import lines, unified
    from buildport.syntax.cmake import parse_cmake
    from buildport.syntax.make import parse_make

    path = "bench/CMakeLists.txt" if kind == "cmake" else "bench/Makefile"
    parse = parse_cmake if kind == "cmake" else parse_make
    port = port_cmake if kind == "cmake" else port_make
    ported: dict[str, object] = {}  # text → its port, for the diffs (the port is timed on its own)

    def result(text: str) -> object:
        if text not in ported:
            ported.clear()
            ported[text] = port(text, path)
        return ported[text]

    def diff(text: str) -> object:
        done = result(text)
        return list(unified(done.original, done.text, done.regions, "a", "b"))  # type: ignore[attr-defined]

    def whole_diff(text: str) -> object:
        done = result(text)
        return list(difflib.unified_diff(lines(done.original), lines(done.text), "a", "b"))  # type: ignore[attr-defined]

    runs: dict[str, Callable[[str], object]] = {
        "parse + print": lambda text: str(parse(text, path)),
        "port": lambda text: port(text, path),
        "audit": lambda text: audit_text(text, path, kind),
        "diff": diff,
    }
    if peer:
        runs["difflib diff"] = whole_diff
    for run in (diff, whole_diff):
        run.prepare = result  # type: ignore[attr-defined]  # the port a diff reads, made before the clock
    return runs


def timed(run: Callable[[str], object], text: str, reps: int, prepare: Callable[[str], object] | None) -> float:
    """Median CPU seconds of ``run(text)`` over ``reps`` calls (``prepare`` runs first, untimed)."""
    times = []
    for _ in range(reps):
        if prepare is not None:
            prepare(text)
        start = time.process_time()
        run(text)
        times.append(time.process_time() - start)
    return statistics.median(times)


def measure(selected: list[str], size: int, factor: int, reps: int, peer: bool) -> list[tuple[str, str, float, float]]:
    """(shape, pipeline, seconds per MB at ``size``, seconds per MB at ``factor`` × ``size``) for each."""
    table = shapes()
    rows = []
    for key in selected:
        kind, repeat = table[key] if key in table else (key.split(":")[0], _synthetic(key.split(":")[0]))
        name = key.split(":", 1)[1]
        small = text_of(kind, name, repeat, size)
        if name == "synthetic":  # the same kind of files, generated further
            large = small + text_of(kind, name, repeat, size * (factor - 1))
        else:
            large = text_of(kind, name, repeat, size * factor)
        warm = text_of(kind, name, repeat, size // 8)
        runs = pipelines(kind, peer)
        for label, run in runs.items():
            prepare = getattr(run, "prepare", None)
            timed(run, warm, 1, prepare)  # regexes, tables and caches made outside the clock
            costs = [timed(run, text, reps, prepare) / (len(text) / 1e6) for text in (small, large)]
            rows.append((key, label, costs[0], costs[1]))
            print(f"  {key:22} {label:14} {costs[0]:8.3f} {costs[1]:8.3f} s/MB", file=sys.stderr, flush=True)
    return rows


def report(rows: list[tuple[str, str, float, float]], size: int, factor: int) -> str:
    small, large = size / 1e6, size * factor / 1e6
    out = [f"### Cost per MB of one file of {small:g} MB and of {large:g} MB (CPU, one process)", "",
           f"| shape | pipeline | s/MB at {small:g} MB | s/MB at {large:g} MB | ratio |", "|---|---|---|---|---|"]
    for key, label, a, b in rows:
        ratio = b / a if a > 0 else float("nan")
        out.append(f"| {key} | {label} | {a:.3f} | {b:.3f} | {ratio:.2f}{' !' if ratio > 1.5 else ''} |")
    out.append("")
    out.append(f"A ratio near 1: linear. Near {factor}: the square of the file. `!` marks a ratio above 1.5.")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size-mb", type=float, default=0.25, help="size of the smaller file (MB)")
    parser.add_argument("--factor", type=int, default=4, help="how many times larger the second file is")
    parser.add_argument("--reps", type=int, default=3, help="timed runs per file (median)")
    parser.add_argument("--shapes", default="", help="comma-separated kind:name (default: all, and kind:synthetic)")
    parser.add_argument("--difflib", action="store_true", help="also time difflib's diff of the whole files")
    parser.add_argument("--fail-above", type=float, default=0.0, help="exit 1 if a ratio exceeds this")
    args = parser.parse_args(argv)
    selected = [s for s in args.shapes.split(",") if s] or [*shapes(), "cmake:synthetic", "make:synthetic"]
    unknown = [s for s in selected if s not in shapes() and s not in ("cmake:synthetic", "make:synthetic")]
    if unknown:
        parser.error(f"unknown shapes: {', '.join(unknown)} (known: {', '.join(shapes())}, cmake:synthetic, "
                     "make:synthetic)")
    size = int(args.size_mb * 1e6)
    rows = measure(selected, size, args.factor, args.reps, args.difflib)
    print(report(rows, size, args.factor))
    worst = max((b / a for _, _, a, b in rows if a > 0), default=0.0)
    return 1 if args.fail_above and worst > args.fail_above else 0


if __name__ == "__main__":
    sys.exit(main())
