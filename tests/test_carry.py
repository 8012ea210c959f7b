"""Findings of a source before hipify, carried to the converted text (buildport.source.carry)."""

from __future__ import annotations

from buildport.source.carry import carried
from buildport.source.scan import scan_source

ORIGINAL = """\
#include <cuda_runtime.h>
int main() {
  float *h; cudaMallocHost(&h, 64);
  cudaMemcpyAsync(h, h, 64, cudaMemcpyDeviceToHost);
  v = __shfl_down_sync(0xffffffff, v, 1);
}
"""
# hipify's output: an include on top, names renamed within their lines
ENGINE = '#include "hip/hip_runtime.h"\n' + ORIGINAL.replace("cudaMallocHost", "hipHostMalloc").replace(
    "cudaMemcpyAsync", "hipMemcpyAsync").replace("cudaMemcpyDeviceToHost", "hipMemcpyDeviceToHost").replace(
    "cuda_runtime.h", "hip/hip_runtime.h")
# a fix after the engine: the warp call made the form without a mask, and a block put in before main
FINAL = ENGINE.replace("__shfl_down_sync(0xffffffff, v, 1)", "__shfl_down(v, 1)").replace(
    "int main() {", "// a fallback\nint main() {")


def _at(findings: list) -> set[tuple[int, int, str]]:
    return {(f.line, f.col, f.rule) for f in findings}


def test_findings_by_cuda_names_reach_the_renamed_lines_and_fixed_ones_stay_fixed() -> None:
    before = scan_source(ORIGINAL, "k.cu")
    assert {"pinned-memory", "default-stream", "warp-sync-intrinsic"} <= {f.rule for f in before}
    after = scan_source(FINAL, "k.cu")
    moved = carried(ORIGINAL, ENGINE, FINAL, before, after)
    assert _at(moved) == {(5, 13, "pinned-memory"), (6, 3, "default-stream")}
    assert FINAL.splitlines()[4][12:].startswith("hipHostMalloc")
    # a rule the converted text shows on that line already is not doubled
    assert carried(ORIGINAL, ENGINE, FINAL, before, after + moved) == []


def test_nothing_is_carried_from_a_text_the_engine_left() -> None:
    before = scan_source(ORIGINAL, "k.cu")
    assert carried(ORIGINAL, ORIGINAL, ORIGINAL, before, []) == []


def test_a_finding_at_a_token_the_engine_left_is_not_carried() -> None:
    """hipify renamed cudaStream_t on the line, not the warp call a later fix made the form without a mask."""
    original = "__global__ void k(cudaStream_t s, int v) { v = __shfl_down_sync(0xffffffff, v, 1); }\n"
    engine = original.replace("cudaStream_t", "hipStream_t")
    final = engine.replace("__shfl_down_sync(0xffffffff, v, 1)", "__shfl_down(v, 1)")
    before = scan_source(original, "k.cu")
    assert "warp-sync-intrinsic" in {f.rule for f in before}
    assert carried(original, engine, final, before, scan_source(final, "k.cu")) == []
