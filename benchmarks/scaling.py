"""Wall-clock figures of whole ``buildport`` runs over a tree: parallel jobs, the cache, start-up.

Usage::

    python benchmarks/scaling.py --files 2000       # 2,000 CMake files and 2,000 Makefiles
    python benchmarks/scaling.py --files 4 --reps 1  # a smoke run
    python benchmarks/scaling.py /path/to/a/tree     # a real tree

Each run is ``python -m buildport`` in a fresh process (so start-up and imports
count, as a user sees them), over a tree from :mod:`synthetic` or a real one.
The package is byte-compiled first, as installing it does; otherwise, with
``PYTHONDONTWRITEBYTECODE`` set, every run would compile its modules again. For
``cmake --check``, ``make --check`` and ``audit`` the table compares ``--jobs 1``
with ``--jobs 2`` (each run starts with no results cached, but with the make
parser's tables, as a user's second run on a changed tree does), and a cold cache
(nothing at all) with a warm one: once as a user's re-run goes (a replay of the
whole run, see ``buildport/cache/replay.py``) and once file by file through the per-file
cache and the file index (``BUILDPORT_REPLAY=0``, as after a change to one file). The two runs of a comparison are timed as
``--reps`` pairs, back to back in alternating order, so that a busy spell of a
shared machine slows both sides of a pair; a figure gives the median times, the
median ratio of the pairs and their range. Then what bounds ``--jobs 2`` on the
machine: the CPU that one ``cmake --check --jobs 1`` run uses alone, against what
each of two such runs uses when they run at once (two busy cores share caches and
memory, and on a virtual machine perhaps one physical core): if the same work
costs a factor ``f`` more, two workers can at best be ``2 / f`` times one process.
Then what a large cache costs a run that has little to do: ``cmake --check`` of a
small tree after a one-line edit (so the run is not replayed and ports that file
again), with a cache that holds only this tree's results against one that also
holds ``--filler`` entries of other work (about 3 kB each, as results of other
trees and options would be). Last, the start-up time of ``--version`` (median).
Nothing here is asserted; figures vary with the machine.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parent.parent


def timed(command: list[str], env: dict[str, str], cwd: Path) -> float:
    """Wall seconds of one run; its exit code may be 0, 1 (changes, findings) or 2 (unparsable files)."""
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    elapsed = time.perf_counter() - start
    _check(command, done.returncode, done.stderr.decode()[-400:])
    return elapsed


def _check(command: list[str], code: int, detail: str = "") -> None:
    """Stop if a run failed: 1 (changes or findings) and 2 (some files could not be parsed) are answers."""
    if code not in (0, 1, 2):
        raise SystemExit(f"{' '.join(command)} failed ({code}){': ' + detail if detail else ''}")


def empty(cache: Path, keep: tuple[str, ...] = ()) -> None:
    """Delete what ``cache`` holds but the entries named in ``keep`` (a cold cache)."""
    for entry in cache.iterdir() if cache.is_dir() else ():
        if entry.name not in keep:
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()


def cpu_of(commands: list[list[str]], env: dict[str, str], cwd: Path) -> list[float]:
    """The CPU seconds (user and system) of each command, all of them started at once."""
    running = [subprocess.Popen(c, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
               for c in commands]  # fmt: skip
    used: list[float] = []
    for command, process in zip(commands, running):
        _, status, usage = os.wait4(process.pid, 0)  # the child's own use, as the kernel counted it
        process.returncode = os.waitstatus_to_exitcode(status)
        _check(command, process.returncode)
        used.append(usage.ru_utime + usage.ru_stime)
    return used


def median_of(reps: int, command: list[str], env: dict[str, str], cwd: Path) -> float:
    return statistics.median(timed(command, env, cwd) for _ in range(reps))


def paired(reps: int, first: Callable[[], float], second: Callable[[], float]) -> tuple[list[float], list[float]]:
    """``reps`` pairs of timings, the two runs of a pair back to back and in alternating order, so
    that a slow spell of a shared machine weighs on both sides of a ratio rather than on one."""
    a: list[float] = []
    b: list[float] = []
    for rep in range(reps):
        if rep % 2:
            b.append(second())
            a.append(first())
        else:
            a.append(first())
            b.append(second())
    return a, b


def ratio_figure(a: list[float], b: list[float], digits: int = 2) -> str:
    """Median times and the median (and range) of the pairs' ratios."""
    ratios = sorted(x / y for x, y in zip(a, b))
    spread = f" (pairs {ratios[0]:.{digits}f}–{ratios[-1]:.{digits}f})" if len(ratios) > 1 else ""
    return (f"{statistics.median(a):.2f} s / {statistics.median(b):.3f} s = "
            f"{statistics.median(ratios):.{digits}f}×{spread}")


#: The runs measured: (name, command after ``buildport``); audit exits 1 when it finds something.
RUNS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("cmake --check", ("cmake", "--check", "-q")),
    ("make --check", ("make", "--check", "-q")),
    ("audit", ("audit", "--format", "json")),
)


def byte_compile() -> None:
    """Compile buildport's modules to ``__pycache__``, as ``pip install`` does."""
    import compileall

    compileall.compile_dir(str(REPO / "buildport"), quiet=1)


def measure(root: Path, scratch: Path, reps: int, startup_reps: int, filler: int = 40_000) -> list[tuple[str, str]]:
    """The table rows: (what, figure)."""
    byte_compile()
    env = dict(os.environ, PYTHONPATH=str(REPO))
    bp = [sys.executable, "-m", "buildport"]
    rows: list[tuple[str, str]] = []
    for name, args in RUNS:
        command = [*bp, *args, str(root)]
        # --jobs: no results kept from run to run, the make parser's tables kept (as for a user's second run)
        jobs_cache = scratch / f"jobs-{args[0]}"
        sharing = [*command, "--cache-dir", str(jobs_cache)]
        timed([*sharing, "--jobs", "1"], env, scratch)  # the parser tables

        def no_results(jobs: str) -> float:
            empty(jobs_cache, keep=("parsers",))
            return timed([*sharing, "--jobs", jobs], env, scratch)

        serial, double = paired(reps, lambda: no_results("1"), lambda: no_results("2"))
        cache = scratch / f"cache-{args[0]}"
        cached = [*command, "--jobs", "1", "--cache-dir", str(cache)]

        def cold() -> float:
            empty(cache)
            return timed(cached, env, scratch)

        colds, warms = paired(reps, cold, lambda: timed(cached, env, scratch))
        # the warm run file by file, through the per-file cache and the file index, without the replay
        file_by_file = dict(env, BUILDPORT_REPLAY="0")
        colds_again, per_file = paired(reps, cold, lambda: timed(cached, file_by_file, scratch))
        rows += [
            (f"{name}, --jobs 1 / --jobs 2 (no results cached)", ratio_figure(serial, double)),
            (f"{name}, cold / warm cache (--jobs 1)", ratio_figure(colds, warms, 1)),
            (f"{name}, cold / warm cache, replay off (BUILDPORT_REPLAY=0)", ratio_figure(colds_again, per_file, 1)),
        ]
    if hasattr(os, "wait4"):
        rows.append(("cmake --check --jobs 1: CPU of one run alone / of each of two at once",
                     contention(root, scratch, reps, env)))
    rows.append((f"cmake --check after a one-line edit: cache with {filler:,} other entries / without",
                 cache_growth(scratch, reps, env, filler)))
    interpreter = median_of(startup_reps, [sys.executable, "-c", "pass"], env, scratch)
    version = median_of(startup_reps, [*bp, "--version"], env, scratch)
    rows += [("python -c pass", f"{interpreter * 1000:.0f} ms"),
             ("python -m buildport --version", f"{version * 1000:.0f} ms")]  # fmt: skip
    script = shutil.which("buildport", path=os.path.dirname(sys.executable))
    if script:
        rows.append(("buildport --version (console script)",
                     f"{median_of(startup_reps, [script, '--version'], env, scratch) * 1000:.0f} ms"))
    return rows


def contention(root: Path, scratch: Path, reps: int, env: dict[str, str]) -> str:
    """How much more CPU the same run costs when another one runs beside it: ``reps`` pairs of one
    run alone and two at once (each with its own cache folder, no results kept), alternating."""
    commands = []
    for i in range(2):
        cache = scratch / f"contention-{i}"
        commands.append([sys.executable, "-m", "buildport", "cmake", "--check", "-q", str(root), "--jobs", "1",
                         "--cache-dir", str(cache)])
        cpu_of([commands[-1]], env, scratch)  # the parser tables, kept

    def alone() -> float:
        empty(scratch / "contention-0", keep=("parsers",))
        return cpu_of(commands[:1], env, scratch)[0]

    def together() -> float:
        for i in range(2):
            empty(scratch / f"contention-{i}", keep=("parsers",))
        return statistics.mean(cpu_of(commands, env, scratch))

    single, double = paired(reps, alone, together)
    factors = sorted(b / a for a, b in zip(single, double))
    factor = statistics.median(factors)
    spread = f" (pairs {factors[0]:.2f}–{factors[-1]:.2f})" if len(factors) > 1 else ""
    return (f"{statistics.median(single):.2f} s / {statistics.median(double):.2f} s: {factor:.2f}× the CPU"
            f"{spread}, so --jobs 2 can be at most {2 / factor:.2f}× --jobs 1 here")


def cache_growth(scratch: Path, reps: int, env: dict[str, str], filler: int) -> str:
    """``reps`` pairs of a run after an edit with a cache that holds ``filler`` other entries and
    one that does not (both warm for the tree), alternating."""
    sys.path.insert(0, str(REPO))
    from buildport.cache.store import Cache
    from synthetic import write_tree

    tree = scratch / "edited"
    write_tree(tree, 10, 1)
    edited = next(tree.rglob("CMakeLists.txt"))
    small, large = scratch / "edit-cache", scratch / "edit-cache-filled"
    other = Cache(large, max_bytes=10**12)
    for i in range(filler):
        other.put(hashlib.sha256(b"other work %d" % i).hexdigest(), {"text": "x" * 3000})

    def after_edit(cache: Path) -> float:
        with edited.open("a") as handle:
            handle.write("# edited\n")
        return timed([sys.executable, "-m", "buildport", "cmake", "--check", "-q", str(tree), "--jobs", "1",
                      "--cache-dir", str(cache)], env, scratch)

    for cache in (small, large):
        after_edit(cache)  # the tree's results, and the first full reading of the entries' sizes
    filled, bare = paired(reps, lambda: after_edit(large), lambda: after_edit(small))
    return ratio_figure(filled, bare)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Time buildport runs: --jobs scaling, cache, start-up.")
    parser.add_argument("root", nargs="?", type=Path, help="a real tree to measure instead of a generated one")
    parser.add_argument("--files", type=int, default=2000, help="CMake files (and as many Makefiles) to generate")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--reps", type=int, default=5, help="pairs of runs per comparison")
    parser.add_argument("--startup-reps", type=int, default=20, help="runs of --version (median)")
    parser.add_argument("--filler", type=int, default=40_000, help="entries of other work in the large cache")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from synthetic import write_tree

    with tempfile.TemporaryDirectory(prefix="buildport-scaling-") as name:
        scratch = Path(name)
        tree = args.root
        if tree is None:
            tree = scratch / "tree"
            write_tree(tree, args.files, args.seed)
        rows = measure(tree.resolve(), scratch, args.reps, args.startup_reps, args.filler)
    what = str(args.root) if args.root else f"{args.files} generated CMake files and Makefiles"
    print(f"# buildport scaling: {what}, Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, "
          f"{args.reps} pairs per comparison (start-up: median of {args.startup_reps})\n")
    print("| measure | figure |\n|---|---|")
    for what, figure in rows:
        print(f"| {what} | {figure} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
