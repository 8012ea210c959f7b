"""The audit's CUDA left in sources: hipify-perl's tables read as data, names counted per file, the names
it cannot convert reported one by one, and the gate that follows from them."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from click.testing import CliRunner

from buildport.cli import main
from buildport.source.hipify_tables import read_tables
from buildport.source.left import cuda_left
from buildport.source.lex import lex
from buildport.textio import decode

if TYPE_CHECKING:
    from buildport.source.convert import Converter

PERL = r'''
sub rocSubstitutions {
    subst("cudaMalloc", "rocMallocNotThis", "memory");
}

sub simpleSubstitutions {
    subst("cudaMalloc", "hipMalloc", "memory");
    subst("cudaFree", "hipFree", "memory");
    subst("cublasCreate", "hipblasCreate", "library");
    subst("__half", "__half", "device_type");
    subst("cuda_runtime.h", "hip\/hip_runtime.h", "include_cuda_main_header");
    subst("cuda_fp16.h", "hip\/hip_fp16.h", "include");
    subst("caffe2\/core\/common_cudnn.h", "caffe2\/core\/hip\/common_miopen.h", "include");
}

sub warnUnsupportedFunctions {
    my $line_num = shift;
    foreach $func (
        "cudaStreamAttrValue",
        "CUB_CAT"
    )
    {
    }
}

sub warnHipOnlyUnsupportedFunctions {
    foreach $func (
        "cusparseGetErrorStringX"
    )
}

sub warnUnsupportedDeviceFunctions {
    foreach $func (
        "umin",
        "__bfloat162char_rz"
    )
}
'''
TABLES = read_tables(PERL)


def test_the_tables_are_the_default_modes_rows() -> None:
    # a name HIP spells as CUDA does (__half) is no CUDA left
    assert TABLES.identifiers == {"cudaMalloc": "hipMalloc", "cudaFree": "hipFree", "cublasCreate": "hipblasCreate"}
    assert TABLES.headers == {"cuda_runtime.h": "hip/hip_runtime.h", "cuda_fp16.h": "hip/hip_fp16.h",
                              "caffe2/core/common_cudnn.h": "caffe2/core/hip/common_miopen.h"}
    # a bare device-function name (umin) is too common a name of a project's own to call CUDA's
    assert TABLES.unsupported == {"cudaStreamAttrValue", "CUB_CAT", "cusparseGetErrorStringX", "__bfloat162char_rz"}
    assert read_tables("no perl here").identifiers == {}


def _left(text: str, path: str = "x.cpp", tables: object = TABLES) -> list[tuple[int, int, str, str]]:
    return [(f.line, f.col, f.rule, f.message) for f in cuda_left(text, path, lex(text), tables)]  # type: ignore[arg-type]


def test_names_are_counted_per_file_and_unconvertible_ones_reported_each() -> None:
    text = ("// cudaMalloc in a comment, \"cudaFree\" in a string\n"
            "#include <cuda_runtime.h>\n"
            "#define CHECK(x) if (x) cudaFree(p)\n"
            "void f(float *p) { cudaMalloc(&p, 4); cudaMalloc(&p, 8); cudaStreamAttrValue v; }\n")
    found = _left(text)
    assert [f[:3] for f in found] == [(2, 10, "cuda-api-left"), (4, 58, "hipify-unsupported")]
    assert found[0][3] == ("4 uses of 3 CUDA names hipify-perl converts left in this file: cudaMalloc ×2, "
                           "<cuda_runtime.h>, cudaFree")
    assert "`cudaStreamAttrValue`" in found[1][3]


def test_what_the_file_defines_and_its_own_headers_are_not_cudas(tmp_path: Path) -> None:
    (tmp_path / "cuda_fp16.h").write_text("// the project's own\n")
    text = ('#include "cuda_fp16.h"\n#define cudaFree my_free\n'
            "void g(void *p) { cudaFree(p); }  // buildport: ignore[hipify-unsupported]\n"
            "CUB_CAT x;  // buildport: ignore[hipify-unsupported]\n")
    assert _left(text, str(tmp_path / "x.cu")) == []
    assert [f[2] for f in _left('#include <cuda_fp16.h>\n', str(tmp_path / "x.cu"))] == ["cuda-api-left"]


def test_without_hipify_perl_cudas_name_patterns_count() -> None:
    found = _left("#include <cublas_v2.h>\nvoid f() { cudaSetDevice(0); cudaStreamAttrValue v; }\n", tables=None)
    assert len(found) == 1 and found[0][3].startswith("3 uses of 3 CUDA names left in this file")


@pytest.fixture
def cuda_tree(tmp_path: Path) -> Path:
    (tmp_path / "x.cpp").write_text("#include <cuda_runtime.h>\nint main() { float *p; cudaMalloc(&p, 4); }\n")
    return tmp_path


def test_the_gate_fails_on_a_source_that_still_uses_cuda(cuda_tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")  # the gate holds without hipify-perl too
    monkeypatch.delenv("ROCM_PATH", raising=False)
    monkeypatch.delenv("HIP_PATH", raising=False)
    result = CliRunner().invoke(main, ["audit", "--no-cache", "--no-color", str(cuda_tree)])
    assert result.exit_code == 1, result.output
    assert "cuda-api-left" in result.output
    (cuda_tree / "x.cpp").write_text("#include <hip/hip_runtime.h>\nint main() { float *p; hipMalloc(&p, 4); }\n")
    result = CliRunner().invoke(main, ["audit", "--no-cache", "--no-color", str(cuda_tree)])
    assert result.exit_code == 0, result.output


def test_a_header_of_device_helpers_is_audited_and_a_name_is_explained_once(tmp_path: Path) -> None:
    from buildport.audit import audit

    header = tmp_path / "reduce.h"
    header.write_text("#pragma once\n__device__ inline float warp_sum(float v) {\n"
                      "  return v + __shfl_down_sync(0xffffffff, v, 1);\n}\n")
    report = audit([str(tmp_path)])
    rules = [(f.line, f.rule) for f in report.findings]
    assert (3, "warp-sync-intrinsic") in rules  # no CUDA include, and audited all the same
    assert (3, "hipify-unsupported") not in rules  # the intrinsic's own rule explains it


# ------------------------------------------------------------- the audit and the built-in engine agree


def _left_names(text: str, path: str) -> list[str]:
    from buildport.source.hipify_tables import installed_tables

    return [f.message for f in cuda_left(text, path, lex(text), installed_tables()) if f.rule == "cuda-api-left"]


def _installed_converter() -> "Converter":
    from buildport.source.convert import converter_for
    from tests.support.cuda_sources import HIPIFY_PERL

    converter = converter_for(HIPIFY_PERL) if HIPIFY_PERL.is_file() else None
    if converter is None:
        pytest.fail(f"{HIPIFY_PERL}, the hipify-perl the built-in engine knows, is needed (installed by .ci/setup.sh)")
    return converter


@pytest.mark.parametrize("kind", ["fixtures", "generated"])
def test_what_the_audit_calls_cuda_left_is_what_the_engine_converts(kind: str) -> None:
    """The audit counts a source's CUDA names with the tables the built-in engine converts them with: a
    source the engine leaves alone has none left, and the engine's output of every other has none left."""
    from tests.support.cuda_sources import generated

    converter = _installed_converter()
    root = Path(__file__).resolve().parents[1]
    if kind == "fixtures":
        suffixes = (".cu", ".cuh", ".cpp", ".h", ".hpp", ".cc")
        sources = [(str(p), p.read_bytes()) for p in sorted((root / "fixtures").rglob("*"))
                   if p.suffix in suffixes and p.is_file()]
    else:
        sources = [(f"gen{i}.cu", data) for i, data in enumerate(generated(converter.script, 200, seed=71))]
    assert len(sources) > 100
    untouched = converted = 0
    for path, data in sources:
        done = converter.convert(data, path)
        if done is None:
            continue  # handed to hipify-perl itself: tests/test_convert.py
        text = decode(data, path)  # as the audit reads it
        if done.output == data:
            untouched += 1
            assert _left_names(text, path) == [], path
        else:
            converted += 1
            assert _left_names(decode(done.output, path), path) == [], path
    assert untouched and converted
