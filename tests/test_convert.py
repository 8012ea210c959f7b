"""The built-in conversion engine (buildport.source.convert) against the installed hipify-perl, byte for byte.

Every file is converted by both; the output and every message must be the same. A file the engine calls
untouched must come out of hipify-perl unchanged and without a word (that is what lets ``migrate`` give it
to no engine). The fast tests run 150 small generated files and the edge cases below through one
hipify-perl; the slow ones every CUDA source of ``fixtures/`` and 400 larger generated files.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from buildport.source.convert import Converted, Converter, converter_for
from buildport.source.hipify_script import code_digest, read_script
from tests.support.cuda_sources import HIPIFY_PERL, generated, hipify_perl_batch

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def converter() -> Converter:
    if not HIPIFY_PERL.is_file():
        pytest.fail(f"{HIPIFY_PERL} is needed (installed by .ci/setup.sh)")
    built = converter_for(HIPIFY_PERL)
    if built is None:
        pytest.fail(f"{HIPIFY_PERL} is not the hipify-perl the built-in engine knows "
                    f"(code digest {code_digest(HIPIFY_PERL.read_text(errors='replace'))})")
    return built


def differences(converter: Converter, sources: list[bytes], folder: Path, parts: int = 2) -> tuple[list[str], int, int]:
    """Each file's differences between the engines (empty: none), how many files the built-in engine handed
    back to hipify-perl, and how many it called untouched. hipify-perl runs in ``parts`` processes."""
    names = [f"s{i:04d}.cu" for i in range(len(sources))]
    ours: dict[str, Converted] = {}
    fell_back = untouched = 0
    for name, data in zip(names, sources):
        (folder / name).write_bytes(data)
        done = converter.attempt(data, name)
        if isinstance(done, Converted):
            ours[name] = done
            untouched += converter.untouched(data)
        else:
            fell_back += 1
    compared = [n for n in names if n in ours]
    chunks = [compared[i::parts] for i in range(parts)]
    with ThreadPoolExecutor(max_workers=parts) as pool:
        runs = list(pool.map(lambda chunk: hipify_perl_batch(folder, chunk), chunks))
    found = []
    for chunk, (outputs, messages) in zip(chunks, runs):
        for name in chunk:
            if outputs[name] != ours[name].output:
                found.append(f"{name}: output {sources[names.index(name)]!r}: {ours[name].output!r} / {outputs[name]!r}")
        expected = b"".join(ours[name].messages for name in chunk)
        if messages != expected:
            at = next((i for i, (a, b) in enumerate(zip(messages, expected)) if a != b), min(len(messages), len(expected)))
            found.append(f"messages at {at}: hipify-perl {messages[at - 200:at + 200]!r} / built-in {expected[at - 200:at + 200]!r}")
    return found, fell_back, untouched


EDGES = [
    b"", b"\n", b"int a;", b"int a;\n", b"cudaMalloc", b"cudaMalloc\r\n", b"x cudaMalloc(p, n); cudaFree(p);\r\n",
    b"#include <cuda_runtime.h>\n#include \"cuda.h\"\n#include<cuda.h>\n", b"a.cuda.h !cuda.h cuda_h cudaXh\n",
    b"%cuda.h $cuda_runtime.h \x00cuda.h #cuda.h\n",  # hipify-perl's Perl string: `$%` is a variable, not two characters
    b"__global__ void k() {}\n", b"// __shared__ in a comment\n", b"__global__\r\n", b"using namespace cub;\ncub::Foo\n",
    b"cudaMemcpyToSymbol(sym, src, n);\ncudaMemcpyFromSymbol(dst, sym, n);\n",
    b"cudaGetSymbolAddress((void**)&p,\n   sym);\n", b"texture<float> t; // texture\n",
    b"cudaUnknownName(); cudaDevice x;\n", b"__global__ void k(){ umin(a, b); ns::umin(a, b); sqrtf(x); }\n",
    b"cudaThreadSynchronize();\n", b"CUB_CAT_ CUB_CAT memoryBarrier nv_bfloat162\n", b"\xff\xfe cudaMalloc \xe9\n",
    b"cub/cub.cuh texture_fetch_functions.h CUoccupancyB2DSize\n", b"__half h; half2 x;\n",
]


def test_edge_cases_convert_as_hipify_perl_does(converter: Converter, tmp_path: Path) -> None:
    found, fell_back, _untouched = differences(converter, EDGES, tmp_path)
    assert found == []
    assert fell_back == 0


def test_generated_sources_convert_as_hipify_perl_does(converter: Converter, tmp_path: Path) -> None:
    sources = generated(converter.script, 100, seed=33)
    found, fell_back, untouched = differences(converter, sources, tmp_path)
    assert found == []
    assert fell_back < len(sources) // 4  # lines with two names of one of hipify-perl's hashes, mostly
    assert untouched >= 3  # the predicate is exercised: hipify-perl left these alone, silently


@pytest.mark.slow
def test_fixture_sources_convert_as_hipify_perl_does(converter: Converter, tmp_path: Path) -> None:
    suffixes = (".cu", ".cuh", ".cpp", ".h", ".hpp", ".cc")
    paths = sorted(p for p in (ROOT / "fixtures").rglob("*") if p.suffix in suffixes and p.is_file())
    assert len(paths) > 100
    found, fell_back, _untouched = differences(converter, [p.read_bytes() for p in paths], tmp_path,
                                               parts=os.cpu_count() or 2)
    assert found == []
    assert fell_back == 0


@pytest.mark.slow
def test_larger_generated_sources_convert_as_hipify_perl_does(converter: Converter, tmp_path: Path) -> None:
    sources = generated(converter.script, 400, seed=330, lines=(2, 8))
    found, fell_back, _untouched = differences(converter, sources, tmp_path, parts=os.cpu_count() or 2)
    assert found == []
    assert fell_back < len(sources) // 2


def test_a_line_with_two_names_of_one_hash_goes_to_hipify_perl(converter: Converter) -> None:
    """Perl walks its hash of removed names in an order that changes from run to run: which of the two it
    warns about first (and whether the second is found at all) is not certain."""
    removed = sorted(converter.script.removed)
    line = removed[0] + b" " + removed[1] + b"\n"
    assert converter.convert(line, "a.cu") is None
    assert converter.convert(removed[0] + b"\n" + removed[1] + b"\n", "a.cu") is not None


def test_a_file_name_with_a_percent_sign_goes_to_hipify_perl(converter: Converter) -> None:
    assert converter.convert(b"cudaMalloc(p, n);\n", "100%.cu") is None


def test_untouched_sources_need_no_engine(converter: Converter) -> None:
    assert converter.untouched(b"int main() { return 0; }\n")
    assert converter.untouched(b"hipMalloc(p, n); // a HIP file already\n")
    for busy in (b"cudaMalloc(p);", b"__global__ void k();", b"#include <cuda.h>", b"cub::X", b"cudaSomething2",
                 b"texture", b"__half"):
        assert not converter.untouched(busy), busy


def test_an_unknown_hipify_perl_is_not_reproduced() -> None:
    """Another release's code (here: one statement changed) gives no built-in engine: hipify-perl runs."""
    text = HIPIFY_PERL.read_text(errors="replace")
    assert read_script(text) is not None
    assert read_script(text.replace("$countKeywords += m/__global__/;", "$countKeywords += m/__global__/g;")) is None
