"""The built-in conversion engine (buildport.source.convert) against the installed hipify-perl, byte for byte.

Every file is converted by both; the output and every message must be the same. A file the engine calls
untouched must come out of hipify-perl unchanged and without a word (that is what lets ``migrate`` give it
to no engine). The fast tests run 150 small generated files and the edge cases below through one
hipify-perl; the slow ones every CUDA source of ``fixtures/`` and 400 larger generated files.
"""

from __future__ import annotations

import os
import re
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


def differences(converter: Converter, sources: list[bytes], folder: Path, parts: int = 2,
                engine: Path = HIPIFY_PERL) -> tuple[list[str], int, int]:
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
        runs = list(pool.map(lambda chunk: hipify_perl_batch(folder, chunk, engine), chunks))
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


# ------------------------------------------------------------------------ other releases of hipify-perl

#: ROCm 6.2's hipify-perl casts the kernel argument of these functions to ``const void*`` (the first
#: argument; of hipFuncGetAttributes the second), in two blocks of ``transformHostFunctions`` after the
#: two that wrap symbols in ``HIP_SYMBOL``, with the same patterns.
CAST_FIRST = ("hipFuncSetAttribute", "hipFuncSetCacheConfig", "hipFuncSetSharedMemConfig",
              "hipLaunchCooperativeKernel", "hipLaunchKernel")
CAST_SECOND = ("hipFuncGetAttributes",)


def casting_release(text: str) -> str:
    """The installed script as ROCm 6.2's code has it: its first two ``transformHostFunctions`` blocks again,
    casting instead of wrapping, for the functions above; the version line 6.2's."""
    from buildport.source.hipify_script import _HOST_BLOCK

    start = text.index("sub transformHostFunctions {")
    first, second = list(_HOST_BLOCK.finditer(text, start))[:2]
    made = []
    for block, names in ((first, CAST_FIRST), (second, CAST_SECOND)):
        listed = "".join(f'        "{name}",\n' for name in names)
        made.append(block.group().replace(block["names"], listed).replace("HIP_SYMBOL", "reinterpret_cast<const void*>"))
    at = second.end()
    text = text[:at] + "".join("\n    " + block for block in made) + text[at:]
    return text.replace('print STDERR "HIP version 6.0.0\\n";', 'print STDERR "HIP version 6.2.0\\n";')


def without_a_version(text: str) -> tuple[str, str]:
    """The script with the first name of its deprecated hash given no version, as 6.2 names some
    (``"cuCtxGetSharedMemConfig" => ""``), and that name."""
    start = text.index("my %deprecated_funcs = (")
    pair = re.compile(r'^(\s*"(\w+)" => )"[\w.]+"', re.M).search(text, start)
    assert pair is not None
    return text[: pair.start()] + pair.group(1) + '""' + text[pair.end() :], pair.group(2)


CASTS = [
    b"cudaFuncSetCacheConfig(kernel, cudaFuncCachePreferL1);\n", b"cudaFuncSetAttribute(k<float>, a, n);\n",
    b"cudaFuncSetSharedMemConfig (k,\n  cudaSharedMemBankSizeEightByte);\n", b"cudaFuncGetAttributes(&attr, kernel);\n",
    b"cudaLaunchKernel((void*)k, grid, block, args, 0, s);\ncudaLaunchCooperativeKernel(k, g, b, a);\n",
    b"// CHECK: hipFuncSetAttribute(k, a, n)\ncudaFuncGetAttributes(&a,\n k)\r\n", b"cudaFuncSetCacheConfig(k)\n",
    b"__global__ void k() {}\nint main() { cudaFuncSetCacheConfig(k, cudaFuncCachePreferShared); k<<<1, 1>>>(); }\n",
]


def worded_as_6_3(text: str) -> str:
    """A script whose warnings say where first, as ROCm 6.3's do (``FILE:LINE: warning: ...``), and name an
    unsupported identifier after a colon."""
    import re

    text = re.sub(r'print STDERR "  warning: \$fileName:\$line_num: ', 'print STDERR "  $fileName:$line_num: warning: ', text)
    return text.replace('unsupported identifier \\"$func\\"', "unsupported HIP identifier: $func")


@pytest.mark.parametrize("release", ["6.0.2 upstream", "6.2", "6.3 wording"])
def test_other_releases_convert_as_their_hipify_perl_does(converter: Converter, tmp_path: Path, release: str) -> None:
    """Releases whose code differs from the installed one's only where the engine reads it as data: the
    interpreter line (upstream's ``#!/usr/bin/env perl``), blank lines, the version, and ROCm 6.2's casts."""
    from buildport.source.hipify_script import KNOWN_CODE

    text = HIPIFY_PERL.read_text(errors="surrogateescape")
    first, rest = text.split("\n", 1)
    if release == "6.0.2 upstream":
        text = "#!/usr/bin/env perl\n\n" + rest
    else:
        text, blank = without_a_version(casting_release(text))
        text = text if release == "6.2" else worded_as_6_3(text)
        assert text.count("$fileName:$line_num: warning:") == (7 if release == "6.3 wording" else 0)  # the -roc one too
    assert first.startswith("#!") and code_digest(text) in KNOWN_CODE
    script = read_script(text)
    assert script is not None
    engine = tmp_path / "bin" / "hipify-perl"
    engine.parent.mkdir()
    engine.write_text(text, errors="surrogateescape")
    engine.chmod(0o755)
    built = converter_for(engine)
    assert built is not None
    sources = EDGES + CASTS + generated(script, 40, seed=62)
    if release != "6.0.2 upstream":
        sources.append(blank.encode() + b"(&c); // deprecated, no version\n")
    work = tmp_path / "work"
    work.mkdir()
    found, fell_back, _untouched = differences(built, sources, work, engine=engine)
    assert found == []
    assert fell_back < len(sources) // 4
    if release != "6.0.2 upstream":  # the casts are made, and a version left empty is printed empty
        assert script.deprecated[blank.encode()] == b""
        casted = built.convert(CASTS[0], "a.cu")
        assert casted is not None and b"reinterpret_cast<const void*>(kernel)" in casted.output


def test_the_names_a_release_cannot_convert_are_read_from_its_warnings() -> None:
    from buildport.source.hipify import HipifyResult, engine_result

    said = ('  warning: a.cu:2: unsupported identifier "cudaFoo"\n'
            '  a.cu:12: warning: unsupported HIP identifier: cudaBar\n'
            '  a.cu:3: warning: unsupported device function "umin": x = umin(a, b);\n'
            "  a.cu:9: warning: experimental ROCm HIP identifier: cuX 6.1\n"
            "  warning: a.cu:#5 : cudaX y;\n"
            "  WARNINGS: 5\n")
    result = engine_result(HipifyResult("a.cu"), "hipify-perl", 0, b"int x;\n", said, b"int x;\n")
    assert result.unsupported == [(2, "cudaFoo"), (12, "cudaBar"), (3, "umin")]
    assert len(result.warnings) == 5
