"""CUDA-like sources made of what hipify-perl acts on, and hipify-perl run over many of them at once.

:func:`generated` writes small files (a few lines: hipify-perl spends ~45 ms on each line) mixing names of
the installed script's tables at word boundaries and inside other words, headers after the characters that
stop hipify-perl from converting them, comments, strings, kernel launches, device code, device function
calls with and without a namespace, ``cub::``, the symbol calls whose argument it wraps, names it warns
about (and its whitelist), CRLF and bytes that are not ASCII. :func:`hipify_perl_batch` runs one
hipify-perl over a folder of files (``-inplace``: one process, not one a file) and gives each file's output
and the messages of the whole run.
"""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

from buildport.source.hipify_script import HipifyScript

HIPIFY_PERL = Path("/usr/local/bin/hipify-perl")

_SEPARATORS = (" ", "", ";", "(", ")", ", ", "\t", "::", ".", "->", "<", ">", "*", "&", "!", "#", "-", "=", "[",
               "/", "'", '"', "{", "}", "`", "@", "$", "%", "^", "+", "?", ":", "\\", "\x0b", "\x0c", "\xa0", "\x85")
_FIXED = (
    "__global__ void k(float *x) {", "__shared__ float s[32];", "__device__ int f();", "}",
    "k<<<grid, block>>>(x);", "k<float><<<1, 2, 0, stream>>>();", "kern<<<dim3(1,2), n*2>>>(a, b)",
    "#include <cuda_runtime.h>", '#include "cuda.h"', "#include <cub/cub.cuh>", "#include <texture_fetch_functions.h>",
    "!cuda.h", "<cuda.h>", "(cuda_runtime.h)", ".cuda.h", "-cuda.h", "cuda_h", "cudaXh", "my_cuda.h", "cuda.hpp",
    "cub::DeviceReduce::Sum", "using namespace cub;", "using  namespace\tcub", "usingnamespacecub", "hipcub::x", "cub ::",
    "xcub::", "cub::", "cudaMemcpyToSymbol(sym, src, n)", "cudaMemcpyToSymbolAsync(d_c, &h, sizeof(h), 0, s)",
    "cudaMemcpyFromSymbol(dst, sym, n)", "cudaMemcpyFromSymbol(dst,\n  sym)", "cudaGetSymbolAddress((void**)&p, sym)",
    "cudaGetSymbolSize(&n, sym)", "hipMemcpyToSymbol(a,b)", "// CHECK: hipMemcpyToSymbol(a, b)",
    "cuOccupancyMaxPotentialBlockSize(&g, &b, f, 0, 0, 0)", "cudaGraphAddMemcpyNodeToSymbol(&n, g, 0, 0, sym, s, 1, 0, k)",
    "sqrtf(x)", "std::sqrt(y)", "::umin(a, b)", "ns::umin(a, b)", "umin (a)", "__brev(x)", "mul24(a,\n b)",
    "min(a, b)", "__syncthreads();", "/* cudaMalloc */", "// cudaFree(p)", '"cudaError_t"', "'c'", "cudaFooBar(x)",
    "cudaX", "cudaAb", "ZAP", "cudaDevice", "cudaDevices[i]", "texture<float, 2> t;", "surfaceReference",
    "caffé", "\xe9t\xe9", "\u00b5s", "int main() { return 0; }", "", "  ", "\\", "%s %d",
)

#: pieces of sources hipify-perl leaves alone (most of them): a file of only these needs no engine
_PLAIN = ("int main() { return 0; }", "hipMalloc(p, n);", "float x = 1.0f;", "// a comment", '"a string"', "cuda",
          "CUDA", "cu", "cudax", "cuda2D", "nv", "hip", "std::min(a, b)", "#include <vector>", "Cub::x", "cubic",
          "__global", "__shared", "__device__", "hipMemcpy(a, b, n, hipMemcpyDefault)", "#define N 4", "texture_",
          "Texture", "my_cuda_h")


def generated(script: HipifyScript, count: int, seed: int, lines: tuple[int, int] = (1, 3)) -> list[bytes]:
    """``count`` small sources (``lines``: how many lines, at least and at most), the same for a ``seed``."""
    rng = random.Random(seed)
    hashes = (script.experimental, script.removed, script.deprecated)
    # two names of one hash on a line (cudaBindTexture2D holds cudaBindTexture too) send the file to hipify-perl
    # (Perl walks a hash in no fixed order): the names of the hashes (a fifth of the table) are a pool apart
    hashed = [n.decode() for h in hashes for n in h]
    names = [row.cuda.decode() for row in script.rows if not any(n.encode() in row.cuda for n in hashed)]
    hips = [row.hip.decode() for row in script.rows if row.hip]
    warned = [n.decode() for n in (*script.unsupported, *script.hip_only_unsupported, *script.unsupported_device,
                                    *script.whitelist)]
    device = [n.decode() for n in script.supported_device]
    pools, weights = (names, hips, warned, device, hashed, _FIXED), (30, 6, 12, 6, 2, 36)
    sources = []
    for _ in range(count):
        eol = rng.choice(("\n", "\n", "\n", "\r\n"))
        plain = rng.random() < 0.15
        text = []
        for _line in range(rng.randint(*lines)):
            pieces = []
            for _piece in range(rng.randint(1, 6)):
                piece = rng.choice(_PLAIN if plain else rng.choices(pools, weights)[0])
                if rng.random() < 0.15:
                    piece = rng.choice(("x", "_", "2", "")) + piece + rng.choice(("x", "_", "2", ""))
                if rng.random() < 0.1:
                    piece += "(" + rng.choice(("a, b", "", "a", "(x), y")) + ")"
                pieces.append(piece)
                pieces.append(rng.choice(_SEPARATORS))
            text.append("".join(pieces))
        body = eol.join(text) + rng.choice((eol, eol, ""))
        sources.append(body.encode(rng.choice(("utf-8", "utf-8", "latin-1")), "replace"))
    return sources


def hipify_perl_batch(folder: Path, names: list[str], engine: Path = HIPIFY_PERL) -> tuple[dict[str, bytes], bytes]:
    """Each file's bytes after one ``hipify-perl -inplace -print-stats`` over ``names`` (in ``folder``), and
    what that run printed to stderr before its totals (the messages of each file, in order)."""
    if not names:
        return {}, b""
    done = subprocess.run([str(engine), "-inplace", "-print-stats", *names], cwd=folder, capture_output=True,
                          check=True)
    messages = done.stderr
    if len(names) > 1:  # the totals of the whole run, after the last file's messages
        cut = messages.rfind(b"\n[HIPIFY] info: file 'GLOBAL' statistics:\n")
        assert cut >= 0, messages[-500:]
        messages = messages[:cut]
    return {name: (folder / name).read_bytes() for name in names}, messages
