"""benchmarks/bench.py runs end to end on a tiny generated tree and prints its tables.

Nothing here is timed: the test only checks that every tool either runs or is
reported missing, and that the tables have their rows.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.perf  # runs the benchmark scripts on tiny inputs

BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "bench.py"


def test_bench_prints_the_tables() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--synthetic", "6", "--seed", "3", "--reps", "1", "--big-mb", "0.05",
         "--tools", "buildport,buildport-eager,buildport-port,tree-sitter-cmake,buildport-make,no-such-tool"],
        capture_output=True, text=True, check=True, timeout=300,
    )  # fmt: skip
    out = done.stdout
    assert "| tool | measures | MB/s median" in out
    assert "### cmake: 6 files" in out
    assert "### make: 6 files" in out
    assert "one file of 0.05 MB" in out
    rows = [line for line in out.splitlines() if line.startswith("| buildport |")]
    assert len(rows) == 2  # many files, and the big file
    assert all("100.00% | 100.00%" in row for row in rows)
    assert "tree-sitter-cmake" in out  # measured, or listed as missing
    assert "#### buildport and the whole pipelines, in turn in each of 1 rounds of one process" in out
    assert [line.split(" | ")[0] for line in out.splitlines() if line.endswith("%) |")] == ["| buildport-port"]


def test_synthetic_tree_is_reproducible(tmp_path: Path) -> None:
    sys.path.insert(0, str(BENCH.parent))
    from synthetic import write_tree

    write_tree(tmp_path / "a", 5, 7)
    write_tree(tmp_path / "b", 5, 7)
    first = {p.relative_to(tmp_path / "a"): p.read_bytes() for p in (tmp_path / "a").rglob("*") if p.is_file()}
    second = {p.relative_to(tmp_path / "b"): p.read_bytes() for p in (tmp_path / "b").rglob("*") if p.is_file()}
    assert first == second and len(first) == 10


def test_make_differential_agrees_on_the_fixtures_alone_and_with_their_run_facts() -> None:
    script = BENCH.parent / "make_differential.py"
    fixtures = BENCH.parent.parent / "fixtures" / "projects"
    done = subprocess.run([sys.executable, str(script), "--no-timing", "--port", str(fixtures)],
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].endswith(" 0 disagree")
    assert "each file alone:" in lines[1] and lines[1].endswith(" 0 differ")
    assert "with the facts of all" in lines[2] and lines[2].endswith(" 0 differ")


def test_linearity_prints_its_table() -> None:
    script = BENCH.parent / "linearity.py"
    done = subprocess.run(
        [sys.executable, str(script), "--size-mb", "0.004", "--factor", "2", "--reps", "1", "--difflib",
         "--shapes", "cmake:targets,make:tgt-var,make:synthetic"],
        capture_output=True, text=True, check=True, timeout=300,
    )  # fmt: skip
    rows = [line.split(" | ") for line in done.stdout.splitlines() if line.startswith("| ") and "---" not in line]
    assert rows[0][0] == "| shape"
    measured = {(row[0][2:], row[1]) for row in rows[1:]}
    pipelines = {"parse + print", "port", "audit", "diff", "difflib diff"}
    assert measured == {(shape, p) for shape in ("cmake:targets", "make:tgt-var", "make:synthetic") for p in pipelines}
    unknown = subprocess.run([sys.executable, str(script), "--shapes", "cmake:nothing"], capture_output=True, text=True)
    assert unknown.returncode == 2 and "unknown shapes: cmake:nothing" in unknown.stderr


def test_hipify_diff_compares_the_engines_on_a_tiny_folder(tmp_path: Path) -> None:
    (tmp_path / "a.cu").write_text("#include <cuda_runtime.h>\n__global__ void k() {}\nint main() { cudaFree(0); }\n")
    (tmp_path / "plain.cpp").write_text("int helper() { return 1; }\n")
    script = BENCH.parent / "hipify_diff.py"
    done = subprocess.run([sys.executable, str(script), str(tmp_path)], capture_output=True, text=True, check=True,
                          timeout=300)
    assert "files compared: 2" in done.stdout
    assert "identical: 1" in done.stdout and "untouched: 1" in done.stdout and "DIFFERENT: 0" in done.stdout
    assert "MB/s" in done.stdout


def test_hipify_diff_ledger_goes_on_where_a_run_stopped(tmp_path: Path) -> None:
    """A second run with the same ledger compares nothing again; a copy of a content is compared once;
    --cuda-only leaves out a C++ file with nothing to convert."""
    corpus = tmp_path / "corpus"
    (corpus / "copy").mkdir(parents=True)
    kernel = "#include <cuda_runtime.h>\nint main() { cudaDeviceSynchronize(); }\n"
    (corpus / "a.cu").write_text(kernel)
    (corpus / "copy" / "b.cu").write_text(kernel)
    (corpus / "host.cpp").write_text("#include <cuda_runtime.h>\nvoid f() { cudaFree(0); }\n")  # shorter
    (corpus / "plain.cpp").write_text("int helper() { return 1; }\n")
    script = BENCH.parent / "hipify_diff.py"
    ledger = tmp_path / "ledger.jsonl"
    command = [sys.executable, str(script), str(corpus), "--cuda-only", "--ledger", str(ledger), "--jobs", "1",
               "--shortest-first"]
    first = subprocess.run(command, capture_output=True, text=True, check=True, timeout=300)
    assert "files compared: 2" in first.stdout and "identical: 2" in first.stdout
    entries = [json.loads(line) for line in ledger.read_text().splitlines()]
    assert [Path(e["file"]).name for e in entries] == ["host.cpp", "a.cu"]
    assert {e["verdict"] for e in entries} == {"identical"} and all(e["lines"] == 2 for e in entries)
    again = subprocess.run(command, capture_output=True, text=True, check=True, timeout=300)
    assert "files compared: 0" in again.stdout
    assert len(ledger.read_text().splitlines()) == 2
