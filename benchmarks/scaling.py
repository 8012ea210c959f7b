"""Wall-clock figures of whole ``buildport`` runs over a tree: parallel jobs, the cache, start-up.

Usage::

    python benchmarks/scaling.py --files 2000       # 2,000 CMake files and 2,000 Makefiles
    python benchmarks/scaling.py --files 4 --reps 1  # a smoke run
    python benchmarks/scaling.py /path/to/a/tree     # a real tree

Each figure is the median wall time of ``--reps`` runs of ``python -m buildport``
in a fresh process (so start-up and imports count, as a user sees them), over a
tree from :mod:`synthetic` or a real one. For ``cmake --check``, ``make --check``
and ``audit`` the table shows ``--jobs 1`` over ``--jobs 2`` (each run starts with no
results cached, but with the make parser's tables, as a user's second run on a
changed tree does) and a cold cache (nothing at all) over a warm one; then the
start-up time of ``--version``. Nothing here is asserted; figures vary with the machine.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def timed(command: list[str], env: dict[str, str], cwd: Path) -> float:
    """Wall seconds of one run; its exit code may be 0, 1 (changes, findings) or 2 (unparsable files)."""
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1, 2):  # 1: changes or findings; 2: some files could not be parsed
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}): {done.stderr.decode()[-400:]}")
    return elapsed


def median_of(reps: int, command: list[str], env: dict[str, str], cwd: Path, before: Path | None = None,
              keep: tuple[str, ...] = ()) -> float:
    """The median of ``reps`` runs; ``before`` is a cache folder emptied before each run (a cold cache)
    but for the entries named in ``keep``."""
    times = []
    for _ in range(reps):
        if before is not None:
            for entry in before.iterdir() if before.is_dir() else ():
                if entry.name not in keep:
                    shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
        times.append(timed(command, env, cwd))
    return statistics.median(times)


#: The runs measured: (name, command after ``buildport``); audit exits 1 when it finds something.
RUNS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("cmake --check", ("cmake", "--check", "-q")),
    ("make --check", ("make", "--check", "-q")),
    ("audit", ("audit", "--format", "json")),
)


def measure(root: Path, scratch: Path, reps: int, startup_reps: int) -> list[tuple[str, str]]:
    """The table rows: (what, figure)."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    bp = [sys.executable, "-m", "buildport"]
    rows: list[tuple[str, str]] = []
    for name, args in RUNS:
        command = [*bp, *args, str(root)]
        cache = scratch / f"cache-{args[0]}"
        # --jobs: no results kept from run to run, the make parser's tables kept (as for a user's second run)
        jobs_cache = scratch / f"jobs-{args[0]}"
        keep = ("parsers",)
        sharing = [*command, "--cache-dir", str(jobs_cache)]
        timed([*sharing, "--jobs", "1"], env, scratch)  # the parser tables
        serial = median_of(reps, [*sharing, "--jobs", "1"], env, scratch, before=jobs_cache, keep=keep)
        double = median_of(reps, [*sharing, "--jobs", "2"], env, scratch, before=jobs_cache, keep=keep)
        cold = median_of(reps, [*command, "--jobs", "1", "--cache-dir", str(cache)], env, scratch, before=cache)
        timed([*command, "--jobs", "1", "--cache-dir", str(cache)], env, scratch)  # fill the cache
        warm = median_of(reps, [*command, "--jobs", "1", "--cache-dir", str(cache)], env, scratch)
        rows += [
            (f"{name}, --jobs 1 / --jobs 2 (no results cached)", f"{serial:.2f} s / {double:.2f} s = {serial / double:.2f}×"),
            (f"{name}, cold / warm cache (--jobs 1)", f"{cold:.2f} s / {warm:.3f} s = {cold / warm:.1f}×"),
        ]
    interpreter = median_of(startup_reps, [sys.executable, "-c", "pass"], env, scratch)
    version = median_of(startup_reps, [*bp, "--version"], env, scratch)
    rows += [("python -c pass", f"{interpreter * 1000:.0f} ms"),
             ("python -m buildport --version", f"{version * 1000:.0f} ms")]  # fmt: skip
    script = shutil.which("buildport", path=os.path.dirname(sys.executable))
    if script:
        rows.append(("buildport --version (console script)",
                     f"{median_of(startup_reps, [script, '--version'], env, scratch) * 1000:.0f} ms"))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Time buildport runs: --jobs scaling, cache, start-up.")
    parser.add_argument("root", nargs="?", type=Path, help="a real tree to measure instead of a generated one")
    parser.add_argument("--files", type=int, default=2000, help="CMake files (and as many Makefiles) to generate")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--reps", type=int, default=3, help="runs per figure (median)")
    parser.add_argument("--startup-reps", type=int, default=20, help="runs of --version (median)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from synthetic import write_tree

    with tempfile.TemporaryDirectory(prefix="buildport-scaling-") as name:
        scratch = Path(name)
        tree = args.root
        if tree is None:
            tree = scratch / "tree"
            write_tree(tree, args.files, args.seed)
        rows = measure(tree.resolve(), scratch, args.reps, args.startup_reps)
    what = str(args.root) if args.root else f"{args.files} generated CMake files and Makefiles"
    print(f"# buildport scaling: {what}, Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, "
          f"median of {args.reps} (start-up: {args.startup_reps})\n")
    print("| measure | figure |\n|---|---|")
    for what, figure in rows:
        print(f"| {what} | {figure} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
