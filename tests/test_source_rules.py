"""Source rules of ``buildport audit``: catalogue, tokenizer, matchers, suppression, docs.

Positions are asserted exactly: each positive case names the token (``needle``)
the finding must point at, and :func:`where` turns it into a 1-based line and
column, so a finding one column off fails.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from buildport.findings import Finding, Severity
from buildport.rules.source_rules import (
    API_FAMILIES, API_NAMES, BY_ID, CUDA_HEADER, CUDA_IDENTIFIER, CUDA_SOURCE_PATTERNS, CUDA_SOURCE_WORDS, FLAG_NAMES,
    LIBRARY_HEADERS,
    RULES, SourceRule,
)
from buildport.source.lex import CHAR, COMMENT, HEADER, IDENT, NUMBER, PUNCT, STRING, lex, tokenize
from buildport.source.scan import hinted, is_cuda_source, lexed_as_cuda, scan_cuda_source, scan_source

ROOT = Path(__file__).resolve().parent.parent


def where(text: str, needle: str, occurrence: int = 1) -> tuple[int, int]:
    """1-based line and column of the ``occurrence``-th ``needle`` in ``text``."""
    at = -1
    for _ in range(occurrence):
        at = text.index(needle, at + 1)
    line = text.count("\n", 0, at) + 1
    return line, at - (text.rfind("\n", 0, at) + 1) + 1


def positions(text: str, rule: str) -> list[tuple[int, int]]:
    return [(f.line, f.col) for f in scan_source(text, "t.cu") if f.rule == rule]


def rules_in(text: str) -> set[str]:
    return {f.rule for f in scan_source(text, "t.cu")}


# (rule, snippet, needle, occurrence): the rule must fire exactly at the needle.
POSITIVE = [
    ("warp-size-literal", "int lane = threadIdx.x % 32;\n", "32", 1),
    ("warp-size-literal", "int lane = threadIdx.x & 31;\n", "31", 1),
    ("warp-size-literal", "int lane = laneId & 0x1f;\n", "0x1f", 1),
    ("warp-size-literal", "int warp = threadIdx.x >> 5;\n", "5", 1),
    ("warp-size-literal", "int warp = (threadIdx.x + blockDim.x * blockIdx.x) / 32;\n", "32", 1),
    ("warp-size-literal", "int warps = blockDim.x / 32;\n", "32", 1),
    ("warp-size-literal", "if (tid < 32) warp_reduce(s, tid);\n", "32", 1),
    ("warp-size-literal", "int base = 32 * warp_id;\n", "32", 1),
    ("warp-size-literal", "#define WARP_SIZE 32\n", "32", 1),
    ("warp-size-literal", "#define WARP_SIZE (32)\n", "32", 1),
    ("warp-size-literal", "constexpr int kWarpSize = 32;\n", "32", 1),
    ("warp-size-literal", "template <int WarpSize = 32> __device__ void f();\n", "32", 1),
    ("warp-size-literal", "v += __shfl_down(v, 16);\n", "16", 1),
    ("warp-size-literal", "v = __shfl(v, 0, 32);\n", "32", 1),
    ("warp-size-literal", "for (int offset = 16; offset > 0; offset /= 2)\n  v += __shfl_xor(v, offset);\n",
     "16", 1),
    ("warp-size-literal", "for (int i = 1; i < 32; i *= 2) {\n  v += __shfl_up(v, i);\n}\n", "32", 1),
    ("warp-mask-32bit", "v = __shfl_sync(0xffffffff, v, 0);\n", "0xffffffff", 1),
    ("warp-mask-32bit", "__syncwarp(-1);\n", "-1", 1),
    ("warp-mask-32bit", "unsigned mask = __ballot_sync(m, p);\n", "unsigned", 1),
    ("warp-mask-32bit", "uint32_t active = __activemask();\n", "uint32_t", 1),
    ("warp-mask-32bit", "const unsigned int b = __ballot(p);\n", "const", 1),
    ("warp-mask-32bit", "unsigned long long m = (unsigned)__ballot(p);\n", "unsigned", 2),
    ("warp-mask-32bit", "int n = __popc(__ballot(p));\n", "__popc", 1),
    ("warp-mask-32bit", "#define FULL_MASK 0xffffffffu\n", "0xffffffffu", 1),
    ("warp-mask-32bit", "const unsigned kLaneMask = 0xFFFFFFFF;\n", "0xFFFFFFFF", 1),
    ("warp-sync-intrinsic", "__syncwarp();\n", "__syncwarp", 1),
    ("warp-sync-intrinsic", "unsigned long long m = __ballot_sync(~0ull, p);\n", "__ballot_sync", 1),
    ("warp-sync-intrinsic", "auto m = __activemask();\n", "__activemask", 1),
    ("warp-sync-intrinsic", "#define SHFL(v, o) __shfl_down_sync(MASK, v, o)\n", "__shfl_down_sync", 1),
    ("texture-reference", "texture<float, 1, cudaReadModeElementType> tex;\n", "texture", 1),
    ("texture-reference", "static texture<float4, cudaTextureType2D> texRef;\n", "texture", 1),
    ("texture-reference", "void f(texture<float> &t);\n", "texture", 1),
    ("texture-reference", "surface<void, 2> surf;\n", "surface", 1),
    ("texture-reference", "cudaBindTexture(0, tex, d, n);\n", "cudaBindTexture", 1),
    ("texture-reference", "x = 1; cudaUnbindTexture(tex);\n", "cudaUnbindTexture", 1),
    ("pinned-memory", "cudaHostRegister(p, n, cudaHostRegisterDefault);\n", "cudaHostRegister", 1),
    ("pinned-memory", "  cudaMallocHost(&p, n);\n", "cudaMallocHost", 1),
    ("pinned-memory", "unsigned flags = cudaHostAllocMapped;\n", "cudaHostAllocMapped", 1),
    ("default-stream", "cudaMemcpyAsync(d, h, n, cudaMemcpyHostToDevice);\n", "cudaMemcpyAsync", 1),
    ("default-stream", "cudaMemcpyAsync(d, h, n, cudaMemcpyHostToDevice, 0);\n", "cudaMemcpyAsync", 1),
    ("default-stream", "  cudaMemsetAsync(d, 0, n, NULL);\n", "cudaMemsetAsync", 1),
    ("default-stream", "cudaMemcpyAsync(d, h, n, k, (cudaStream_t)0);\n", "cudaMemcpyAsync", 1),
    ("default-stream", "cudaMemPrefetchAsync(p, n, dev);\n", "cudaMemPrefetchAsync", 1),
    ("default-stream-launch", "k<<<g, b>>>(x);\n", "<<<", 1),
    ("default-stream-launch", "  k<<<g, b, shm>>>(x);\n", "<<<", 1),
    ("default-stream-launch", "k<<<g,b,0,0>>>(x);\n", "<<<", 1),
    ("default-stream-launch", "k<<<dim3(n, 1), b, 0, nullptr>>>(x);\n", "<<<", 1),
    ("stream-priority", "cudaDeviceGetStreamPriorityRange(&lo, &hi);\n", "cudaDeviceGetStreamPriorityRange", 1),
    ("stream-priority", "cudaStreamCreateWithPriority(&s, 0, hi);\n", "cudaStreamCreateWithPriority", 1),
    ("per-thread-stream", "cudaStreamSynchronize(cudaStreamPerThread);\n", "cudaStreamPerThread", 1),
    ("per-thread-stream", "#define CUDA_API_PER_THREAD_DEFAULT_STREAM 1\n", "CUDA_API_PER_THREAD_DEFAULT_STREAM", 1),
    ("stream-nonblocking", "cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);\n", "cudaStreamNonBlocking", 1),
    ("cuda-atomic", "cuda::atomic_ref<int, cuda::thread_scope_device> r(x);\n", "cuda", 1),
    ("cuda-atomic", "static cuda::std::atomic<int> a;\n", "cuda", 1),
    ("cuda-atomic", "#include <cuda/std/atomic>\n", "<cuda/std/atomic>", 1),
    ("atomic-scope", "atomicCAS_block(&x, 0, 1);\n", "atomicCAS_block", 1),
    ("atomic-scope", "old = atomicAdd_system(p, 1);\n", "atomicAdd_system", 1),
    ("threadfence", "  __threadfence_block();\n", "__threadfence_block", 1),
    ("threadfence", "__threadfence();\n", "__threadfence", 1),
    ("threadfence-system", "__threadfence_system();\n", "__threadfence_system", 1),
    ("volatile-spin-wait", "__device__ void w(volatile int* flag) {\n  while (*flag == 0) {}\n}\n", "while", 1),
    ("volatile-spin-wait", "__global__ void k(int* f) { while (*(volatile int*)f == 0); }\n", "while", 1),
    ("volatile-spin-wait", "__device__ void w(volatile int* f) {\n  do { } while (f[0] != 1);\n}\n", "while", 1),
    ("volatile-spin-wait", "__device__ void w(volatile int* f) {\n  for (; *f == 0;) {}\n}\n", "for", 1),
    ("volatile-spin-wait", "struct Q { volatile int head; };\n__device__ void w(Q* q) {\n"
                           "  while (q->head == 0) {}\n}\n", "while", 1),
    ("inline-ptx", "asm(\"mov.u32 %0, %%laneid;\" : \"=r\"(l));\n", "asm", 1),
    ("inline-ptx", "  asm volatile (\"ld.global.nc.f32 %0, [%1];\" : \"=f\"(v) : \"l\"(p));\n", "asm", 1),
    ("inline-ptx", "__asm__ __volatile__(\"trap;\");\n", "__asm__", 1),
    ("inline-ptx", "asm(\"{\\n\\t\"\n    \"shfl.sync.bfly.b32 %0, %1, %2, 0x1f, -1;\\n\\t\"\n    \"}\" : \"=r\"(r));\n",
     "asm", 1),
    ("cuda-arch-version", "#if __CUDA_ARCH__ >= 800\n#endif\n", "__CUDA_ARCH__", 1),
    ("cuda-arch-version", "#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ < 700)\n#endif\n", "__CUDA_ARCH__", 2),
    ("cuda-arch-version", "#if 1\n#elif 600 <= __CUDA_ARCH__\n#endif\n", "__CUDA_ARCH__", 1),
    ("cuda-arch-device", "#ifdef __CUDA_ARCH__\n#endif\n", "__CUDA_ARCH__", 1),
    ("cuda-arch-device", "  #  ifndef __CUDA_ARCH__\n#endif\n", "__CUDA_ARCH__", 1),
    ("cuda-arch-device", "#if !defined(__CUDA_ARCH__)\n#endif\n", "__CUDA_ARCH__", 1),
    ("cuda-arch-device", "#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ < 700)\n#endif\n", "__CUDA_ARCH__", 1),
    ("cuda-header-macro", "#ifdef __DRIVER_TYPES_H__\n#define checkCudaErrors(v) check(v)\n#endif\n",
     "__DRIVER_TYPES_H__", 1),
    ("cuda-header-macro", "#if CUDART_VERSION >= 4000\n#endif\n", "CUDART_VERSION", 1),
    ("cuda-header-macro", "#if 0\n#elif defined(CURAND_H_) && !defined(__CUDA_RUNTIME_H__)\n#endif\n",
     "__CUDA_RUNTIME_H__", 1),
    ("cuda-header-macro", "#  ifndef CUSPARSEAPI\n#endif\n", "CUSPARSEAPI", 1),
    ("cuda-token-paste", "#define CUDA(fn) do { s = (cuda##fn); } while (0)\n", "cuda##", 1),
    ("cuda-token-paste", "#define cu( fn ) (cu ## fn)\n", "cu ##", 1),
    ("cuda-token-paste", "#define BLAS(op) cublas##op\n#define FFT(op) cufft##op\n", "cufft##", 1),
    ("cuda-token-paste", "#define COPY(kind) cudaMemcpy##kind(d, s, n)\n", "cudaMemcpy##", 1),
    ("cuda-token-paste", "#define EXEC(t) cufftExec##t(plan, in, out)\n", "cufftExec##", 1),
    ("grid-sync", "auto g = cg::this_grid();\n", "this_grid", 1),
    ("grid-sync", "auto g = cg::this_grid();\ng.sync();\n", "g.sync", 1),
    ("grid-sync", "cg::grid_group grid = cg::this_grid();\ncg::sync(grid);\n", "sync(grid)", 1),
    ("grid-sync", "cudaLaunchCooperativeKernel((void*)k, g, b, args);\n", "cudaLaunchCooperativeKernel", 1),
    ("dynamic-parallelism", "__global__ void p(int* d) {\n  c<<<1, 1>>>(d);\n}\n", "<<<", 1),
    ("dynamic-parallelism", "__global__ void p() { if (1) { cudaDeviceSynchronize(); } }\n",
     "cudaDeviceSynchronize", 1),
    ("dynamic-parallelism", "template <typename T>\n__global__ void __launch_bounds__(256) p(T* d) {\n"
                            "  c<<<1, 1, 0, s>>>(d);\n}\n", "<<<", 1),
    ("dynamic-parallelism", "__device__ void d() { cudaMalloc(&x, 4); }\n", "cudaMalloc", 1),
    ("cuda-graph", "cudaGraphExec_t exec;\n", "cudaGraphExec_t", 1),
    ("cuda-graph", "cudaStreamBeginCapture(s, m);\n", "cudaStreamBeginCapture", 1),
    ("func-attribute", "cudaFuncSetCacheConfig(k, cudaFuncCachePreferShared);\n", "cudaFuncSetCacheConfig", 1),
    ("func-attribute", "cudaDeviceSetSharedMemConfig(c);\n", "cudaDeviceSetSharedMemConfig", 1),
    ("device-limit", "cudaDeviceSetLimit(cudaLimitStackSize, 4096);\n", "cudaDeviceSetLimit", 1),
    ("nanosleep", "while (busy()) __nanosleep(1000);\n", "__nanosleep", 1),
    ("ldg", "float v = __ldg(p + i);\n", "__ldg", 1),
    ("library-no-equivalent", "#include <nvml.h>\n", "<nvml.h>", 1),
    ("library-no-equivalent", "#include \"cufile.h\"\n", "\"cufile.h\"", 1),
    ("library-no-equivalent", "#include <cuda/barrier>\n", "<cuda/barrier>", 1),
    ("library-no-equivalent", "nvmlInit();\n", "nvmlInit", 1),
    ("library-no-equivalent", "nppiMalloc_8u_C1(w, h, &s);\n", "nppiMalloc_8u_C1", 1),
    ("library-no-equivalent", "CUpti_ActivityKind k;\n", "CUpti_ActivityKind", 1),
    ("library-different-api", "#include <cudnn.h>\n", "<cudnn.h>", 1),
    ("library-different-api", "cudnnCreate(&h);\n", "cudnnCreate", 1),
    ("library-different-api", "#include <nvtx3/nvToolsExt.h>\n", "<nvtx3/nvToolsExt.h>", 1),
    ("library-different-api", "nvtxRangePushA(\"x\");\n", "nvtxRangePushA", 1),
    ("library-different-api", "wmma::fragment<wmma::matrix_a, 16, 16, 16, half> a;\n", "wmma", 1),
]


@pytest.mark.parametrize(("rule", "snippet", "needle", "occurrence"), POSITIVE)
def test_rule_fires_at_exact_position(rule: str, snippet: str, needle: str, occurrence: int) -> None:
    assert where(snippet, needle, occurrence) in positions(snippet, rule)


#: Rules reported from the conversion engine's output and tables, not from the source rules' reading of a
#: source (migrate's engine run, tests/test_cli.py; the audit's CUDA left, tests/test_sourceleft.py).
FROM_THE_ENGINE = {"hipify-unsupported", "hipify-failed", "cuda-api-left"}
#: Reported by migrate --keep-cuda of what a normal migration rewrites in a source (tests/test_dual.py).
FROM_KEEP_CUDA = {"dual-source-not-carried"}


def test_every_rule_has_a_positive_case() -> None:
    assert {rule.id for rule in RULES} - FROM_THE_ENGINE - FROM_KEEP_CUDA <= {case[0] for case in POSITIVE}


# (rule, snippet): look-alikes that must not produce the rule.
NEGATIVE = [
    ("cuda-header-macro", "#define CUDART_VERSION 12000\n#undef __CUDA_RUNTIME_H__\n"),
    ("cuda-token-paste", "#define NAME(x) x##cuda\n#define HIP(fn) hip##fn\nint cuda = 1;\nauto n = cu;\n"),
    ("cuda-token-paste", "#define CAT(a, b) a##b\n#define CUDA CAT(cu, da)\n"),
    ("cuda-token-paste", "#define KERNEL(n) cuda_##n##_kernel\n#define CAT(cu, x) cu##x\n"),
    ("cuda-token-paste", "#define cu(fn) other(fn)\n#define CUDA_NAME(x) CUDA##x\n"),
    ("cuda-header-macro", "int v = CUDART_VERSION;\nprintf(\"%d\", __CUDA_API_VERSION);\n"),
    ("cuda-header-macro", "#ifdef CUDART_VERSION_X\n#endif\n// #ifdef __CUDA_RUNTIME_H__\n"),
    ("cuda-header-macro", "#ifndef __cuda_cuda_h__\n#define __cuda_cuda_h__ 1\n#define __CUDA_API_VERSION 5000\n"
                          "#if __CUDA_API_VERSION >= 3020\n#endif\n#endif\n"),
    ("warp-size-literal", "float buf[32];\n"),
    ("warp-size-literal", "__shared__ float partial[32];\n"),
    ("warp-size-literal", "int n = count % 32;\n"),
    ("warp-size-literal", "int bytes = 32 * sizeof(float);\n"),
    ("warp-size-literal", "k<<<1, 32>>>(x);\n"),
    ("warp-size-literal", "// threadIdx.x % 32\n"),
    ("warp-size-literal", "const char* s = \"threadIdx.x % 32\";\n"),
    ("warp-size-literal", "int lane = threadIdx.x % warpSize;\n"),
    ("warp-size-literal", "for (int i = 0; i < 32; ++i) sum += a[i];\n"),
    ("warp-size-literal", "#define BLOCK_SIZE 32\n"),
    ("warp-size-literal", "v += __shfl_down(v, 1);\n"),
    ("warp-mask-32bit", "unsigned long long m = __ballot(p);\n"),
    ("warp-mask-32bit", "auto m = __ballot(p);\n"),
    ("warp-mask-32bit", "v = __shfl_xor_sync(~0ull, v, 1);\n"),
    ("warp-mask-32bit", "v = __shfl_xor_sync(0xffffffffffffffffull, v, 1);\n"),
    ("warp-mask-32bit", "uint32_t color = 0xffffffff;\n"),
    ("warp-mask-32bit", "int n = __popcll(__ballot(p));\n"),
    ("warp-mask-32bit", "int n = __popc(bits);\n"),
    ("warp-sync-intrinsic", "v = __shfl_down(v, 1);\n"),
    ("warp-sync-intrinsic", "// __shfl_down_sync(mask, v, 1)\n"),
    ("texture-reference", "float texture = 0.5f;\n"),
    ("texture-reference", "if (texture < limit && x > y) {}\n"),
    ("texture-reference", "int surface = texture;\n"),
    ("texture-reference", "cudaTextureObject_t tex = 0;\n"),
    ("texture-reference", "m.texture<float>(p);\n"),
    ("pinned-memory", "// cudaHostRegister(p, n, 0);\n"),
    ("pinned-memory", "/* cudaHostRegister(p, n, 0); */\n"),
    ("pinned-memory", "const char* s = \"cudaHostRegister(p, n, 0)\";\n"),
    ("pinned-memory", "const char* s = R\"doc(cudaHostRegister(p, n, 0))doc\";\n"),
    ("pinned-memory", "hipHostRegister(p, n, 0);\n"),
    ("pinned-memory", "obj.cudaHostRegister(p);\n"),
    ("pinned-memory", "int mycudaHostRegister = 0;\n"),
    ("default-stream", "cudaMemcpyAsync(d, h, n, cudaMemcpyHostToDevice, stream);\n"),
    ("default-stream", "cudaMemcpy(d, h, n, cudaMemcpyHostToDevice);\n"),
    ("default-stream", "auto fn = &cudaMemcpyAsync;\n"),
    ("default-stream-launch", "k<<<g, b, 0, stream>>>(x);\n"),
    ("default-stream-launch", "k<<<g, b, shm, streams[i]>>>(x);\n"),
    ("default-stream-launch", "k<<<dim3(n, 1), b, 0, s>>>(x);\n"),
    ("default-stream-launch", "// k<<<g, b>>>(x);\n"),
    ("default-stream-launch", "std::vector<std::vector<std::vector<int>>> v;\n"),
    ("inline-ptx", "// asm(\"mov.u32 %0, %%laneid;\");\n"),
    ("inline-ptx", "asm volatile(\"\" ::: \"memory\");\n"),
    ("inline-ptx", "asm volatile(\"s_waitcnt vmcnt(0)\");\n"),
    ("inline-ptx", "asm volatile(\"v_mac_f32_e32 %0, %2, %3\" : \"=v\"(o) : \"0\"(o), \"v\"(a), \"v\"(b));\n"),
    ("inline-ptx", "asm(\"pause\");\n"),
    ("inline-ptx", "int asm_count = 0;\n"),
    ("cuda-arch-version", "#if __HIP_ARCH_HAS_WARP_SHUFFLE__\n#endif\n"),
    ("cuda-arch-device", "// #ifdef __CUDA_ARCH__\n"),
    ("cuda-arch-device", "#if __HIP_DEVICE_COMPILE__\n#endif\n"),
    ("grid-sync", "cg::thread_block block = cg::this_thread_block();\nblock.sync();\n"),
    ("grid-sync", "tile.sync();\n"),
    ("dynamic-parallelism", "void host() { k<<<1, 1>>>(); cudaDeviceSynchronize(); }\n"),
    ("dynamic-parallelism", "__host__ __device__ void hd() { cudaDeviceSynchronize(); }\n"),
    ("dynamic-parallelism", "__device__ int table[] = {1, 2};\nvoid host() { cudaDeviceSynchronize(); }\n"),
    ("dynamic-parallelism", "__global__ void k();\nvoid host() { k<<<1, 1>>>(); }\n"),
    ("cuda-graph", "cudaGraphicsMapResources(1, &r, s);\n"),
    ("volatile-spin-wait", "volatile sig_atomic_t stop;\nvoid host() { while (!stop) {} }\n"),
    ("volatile-spin-wait", "__device__ void w(int* f) { while (f[0] == 0) {} }\n"),
    ("cuda-atomic", "std::atomic<int> a;\n"),
    ("cuda-atomic", "cuda::std::array<int, 3> a;\n"),
    ("atomic-scope", "atomicAdd(&x, 1);\n"),
    ("ldg", "int __ldg_count = 0;\n"),
    ("library-no-equivalent", "#include <cuda_runtime.h>\n"),
    ("library-no-equivalent", "int nvml = 0; // nvmlInit\n"),
    ("library-different-api", "#include <miopen/miopen.h>\n"),
    ("library-different-api", "#include \"cudnn_att.h\"\n"),
    ("library-different-api", "#ifndef CUDNN_ATT_H\n#define CUDNN_ATT_H\n#endif\n"),
    ("library-different-api", "#include \"mma.h\"\n"),
    ("warp-size-literal", "cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);\n"),
    ("library-different-api", "rocwmma::fragment<rocwmma::matrix_a, 16, 16, 16, half> a;\n"),
]


@pytest.mark.parametrize(("rule", "snippet"), NEGATIVE)
def test_look_alike_does_not_fire(rule: str, snippet: str) -> None:
    assert rule not in rules_in(snippet)


def test_pinned_flags_reported_with_their_call_only() -> None:
    text = "cudaHostAlloc(&p, n, cudaHostAllocMapped | cudaHostAllocPortable);\n"
    findings = [f for f in scan_source(text, "t.cu") if f.rule == "pinned-memory"]
    assert [(f.line, f.col) for f in findings] == [(1, 1)]
    assert "`cudaHostAllocMapped`, `cudaHostAllocPortable`" in findings[0].message


def test_libraries_are_reported_once_per_file() -> None:
    text = "#include <nvml.h>\nnvmlInit();\nnvmlShutdown();\nnppiFree(p);\n"
    assert positions(text, "library-no-equivalent") == [(1, 10), (2, 1), (4, 1)]


def test_api_families_are_reported_once_per_name() -> None:
    text = "cudaGraphLaunch(g, s);\ncudaGraphLaunch(g, s);\ncudaGraphDestroy(g);\n"
    assert positions(text, "cuda-graph") == [(1, 1), (3, 1)]


def test_several_findings_on_one_line_each_have_their_column() -> None:
    text = "  v += __shfl_down_sync(0xffffffff, v, 16);\n"
    found = sorted((f.col, f.rule) for f in scan_source(text, "t.cu"))
    assert found == [(8, "warp-sync-intrinsic"), (25, "warp-mask-32bit"), (40, "warp-size-literal")]


def test_crlf_lone_cr_and_tabs_count_like_the_other_parsers() -> None:
    text = "int a;\r\n\tcudaMallocHost(&p, n);\rx = threadIdx.x % 32;\n"
    assert positions(text, "pinned-memory") == [(2, 2)]
    assert positions(text, "warp-size-literal") == [(3, 19)]


@pytest.mark.parametrize(("condition", "first_sentence"), [
    ("__CUDA_ARCH__ >= 700", "`__CUDA_ARCH__ >= 700` is false on AMD"),
    ("__CUDA_ARCH__ < 700", "`__CUDA_ARCH__ < 700` is true on AMD"),
    ("600 <= __CUDA_ARCH__", "`600 <= __CUDA_ARCH__` is false on AMD"),
])
def test_arch_check_says_what_it_evaluates_to(condition: str, first_sentence: str) -> None:
    (finding,) = scan_source(f"#if {condition}\n#endif\n", "t.cu")
    assert finding.message.startswith(first_sentence + " (`#if` reads the undefined `__CUDA_ARCH__` as 0). ")


def test_byte_order_mark_is_not_a_token() -> None:
    text = "\ufeff#include <nppi.h>\n"
    assert positions(text, "library-no-equivalent") == [(1, 11)]
    assert [t.text for t in tokenize(text)] == ["#", "include", "<nppi.h>"]


def test_directive_continued_by_a_splice() -> None:
    text = "#define LANE_ID \\\n  (threadIdx.x & 31)\nint x;\n"
    assert positions(text, "warp-size-literal") == [(2, 18)]


# --- the finding itself --------------------------------------------------------------------------

def test_finding_carries_catalogue_data() -> None:
    text = "__global__ void k(unsigned* out, int p) {\n  out[0] = __ballot_sync(0xffffffff, p);\n}\n"
    finding = next(f for f in scan_source(text, "src/k.cu") if f.rule == "warp-mask-32bit")
    rule = BY_ID["warp-mask-32bit"]
    assert isinstance(finding, Finding)
    assert (finding.path, finding.line, finding.col) == ("src/k.cu", 2, 26)
    assert finding.severity is Severity.ERROR is rule.severity
    assert finding.message == "`0xffffffff` used as a lane mask for `__ballot_sync`. " + rule.rationale
    assert finding.suggestion == rule.suggestion
    assert finding.fixable is False
    assert finding.format().startswith("src/k.cu:2:26: error[warp-mask-32bit]: `0xffffffff` used")


def test_findings_are_sorted_and_unique() -> None:
    text = "\n".join(rule.before for rule in RULES)
    findings = scan_source(text, "t.cu")
    keys = [f.sort_key() for f in findings]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)


# --- suppression ---------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "cudaMallocHost(&p, n);  // buildport: ignore[pinned-memory]\n",
    "cudaMallocHost(&p, n);  /* buildport: ignore[pinned-memory] */\n",
    "// buildport: ignore[pinned-memory]\ncudaMallocHost(&p, n);\n",
    "/* buildport: ignore[ldg, pinned-memory] */\ncudaMallocHost(&p, n);\n",
    "cudaMallocHost(&p, n); // buildport: ignore\n",
    "// buildport:ignore\ncudaMallocHost(&p, n);\n",
    "/* reviewed:\n   buildport: ignore[pinned-memory] */\ncudaMallocHost(&p, n);\n",
])
def test_suppressed(text: str) -> None:
    assert "pinned-memory" not in rules_in(text)


@pytest.mark.parametrize("text", [
    "cudaMallocHost(&p, n);  // buildport: ignore[ldg]\n",
    "// buildport: ignore[pinned-memory]\n\ncudaMallocHost(&p, n);\n",
    "cudaMallocHost(&p, n);\n// buildport: ignore[pinned-memory]\n",
    "cudaMallocHost(&p, \"buildport: ignore[pinned-memory]\");\n",
    "cudaMallocHost(&p, n);  // buildport: ignored\n",
    "cudaMallocHost(&p, n);  // buildport: ignore-next\n",
])
def test_not_suppressed(text: str) -> None:
    assert "pinned-memory" in rules_in(text)


def test_suppression_is_per_rule() -> None:
    text = "v = __shfl_sync(0xffffffff, v, 0);  // buildport: ignore[warp-sync-intrinsic]\n"
    assert rules_in(text) == {"warp-mask-32bit"}


# --- the catalogue -------------------------------------------------------------------------------

@pytest.mark.parametrize("rule", [r for r in RULES if r.id not in FROM_THE_ENGINE | FROM_KEEP_CUDA], ids=lambda r: r.id)
def test_before_example_fires_and_after_example_does_not(rule: SourceRule) -> None:
    assert rule.id in rules_in(rule.before)
    assert rule.id not in rules_in(rule.after)


def test_catalogue_is_well_formed() -> None:
    ids = [rule.id for rule in RULES]
    assert len(ids) == len(set(ids))
    for rule in RULES:
        assert rule.id == rule.id.lower() and " " not in rule.id
        assert isinstance(rule.severity, Severity)
        assert rule.title and rule.rationale and rule.suggestion and rule.source
        assert "\n" not in rule.rationale, "the rationale is one paragraph"
        assert rule.before.endswith("\n") and rule.after.endswith("\n")
    referenced = {rule for rule, _ in API_NAMES.values()} | {rule for rule, _ in FLAG_NAMES.values()}
    referenced |= {family[1] for family in API_FAMILIES} | {rule for _, rule, _ in LIBRARY_HEADERS}
    assert referenced <= set(ids)


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_rules_doc", ROOT / "scripts" / "gen_rules_doc.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_rules_page_is_up_to_date() -> None:
    committed = (ROOT / "docs" / "source-rules.md").read_text(encoding="utf-8")
    assert committed == _generator().render(), "run scripts/gen_rules_doc.py"


def test_rules_page_lists_every_rule() -> None:
    page = _generator().render()
    for rule in RULES:
        assert f"## `{rule.id}`: {rule.title}" in page


# --- tokenizer -----------------------------------------------------------------------------------

def _kinds(text: str) -> list[tuple[str, str]]:
    return [(t.kind, t.text) for t in tokenize(text)]


def test_tokenizer_kinds() -> None:
    text = ("a = u8\"s\\\"q\" + L'\\'' + 1'000u + .5f + 0x1Fu; // c \\\n still comment\n"
            "b /* x\n y */ <<<>>> ::;\n")
    assert _kinds(text) == [
        (IDENT, "a"), (PUNCT, "="), (STRING, 'u8"s\\"q"'), (PUNCT, "+"), (CHAR, "L'\\''"), (PUNCT, "+"),
        (NUMBER, "1'000u"), (PUNCT, "+"), (NUMBER, ".5f"), (PUNCT, "+"), (NUMBER, "0x1Fu"), (PUNCT, ";"),
        (COMMENT, "// c \\\n still comment"), (IDENT, "b"), (COMMENT, "/* x\n y */"), (PUNCT, "<<<"),
        (PUNCT, ">>>"), (PUNCT, "::"), (PUNCT, ";"),
    ]


def test_raw_strings() -> None:
    text = 'x = R"sep( ")" // not a comment )sep"; y = LR"(a)"; zR"(b)";\n'
    kinds = _kinds(text)
    assert (STRING, 'R"sep( ")" // not a comment )sep"') in kinds
    assert (STRING, 'LR"(a)"') in kinds
    assert (IDENT, "zR") in kinds and (STRING, '"(b)"') in kinds
    assert all(kind != COMMENT for kind, _ in kinds)


def test_raw_string_opener_inside_comment_or_string_is_not_one() -> None:
    text = '// R"(\nint a; const char* s = "R\\"(";\nint b;\n'
    idents = [value for kind, value in _kinds(text) if kind == IDENT]
    assert idents == ["int", "a", "const", "char", "s", "int", "b"]


def test_unterminated_constructs_end_cleanly() -> None:
    assert _kinds('"abc\nx')[-1] == (IDENT, "x")
    assert _kinds("'abc\nx")[-1] == (IDENT, "x")
    assert _kinds("/* open")[-1] == (COMMENT, "/* open")
    assert _kinds('R"(open\nx')[-1] == (STRING, 'R"(open\nx')


def test_directives() -> None:
    text = ("#include <cuda/atomic>\n  #  define A(x) \\\n   ((x) * 2) // c\nint y;\n"
            "#include \"local.h\"\n#pragma unroll\nz = a # b;\n")
    lexed = lex(text)
    assert [(d.name, d.tokens.texts) for d in lexed.directives] == [
        ("include", ["<cuda/atomic>"]),
        ("define", ["A", "(", "x", ")", "(", "(", "x", ")", "*", "2", ")"]),
        ("include", ['"local.h"']),
        ("pragma", ["unroll"]),
    ]
    assert lexed.directives[0].tokens.kinds == [HEADER]
    assert lexed.code.texts == ["int", "y", ";", "z", "=", "a", "#", "b", ";"]
    assert lexed.comments.texts == ["// c"]


def test_token_positions() -> None:
    text = "int a;\r\n\tb = 'c';\rd\n"
    assert [(t.text, t.line, t.col) for t in tokenize(text)] == [
        ("int", 1, 1), ("a", 1, 5), (";", 1, 6), ("b", 2, 2), ("=", 2, 4), ("'c'", 2, 6), (";", 2, 9),
        ("d", 3, 1),
    ]


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_random_text_never_raises(text: str) -> None:
    lines = text.count("\n") + text.count("\r") - text.count("\r\n") + 1
    for finding in scan_source(text, "r.cu"):
        assert 1 <= finding.line <= lines and finding.col >= 1
    is_cuda_source("r.cpp", text)


_FRAGMENTS = st.sampled_from([
    " ", "\n", "\\\n", "\r\n", "#", "#define ", "#include ", "<", ">", "<<<", ">>>", "(", ")", "{", "}", "[",
    "]", ";", ",", "=", "%", "&", ">>", "32", "31", "16", "5", "0xffffffff", "\"", "'", "R\"(", ")\"", "//",
    "/*", "*/", "threadIdx.x", "lane", "__global__", "__device__", "__host__", "void", "k", "while", "for",
    "volatile", "texture", "asm", "\"mov.u32 %0;\"", "__shfl_down_sync", "__ballot", "unsigned", "int",
    "cudaMemcpyAsync", "cudaHostRegister", "__CUDA_ARCH__", "defined", "cuda", "::", "atomic", "grid",
    ".", "sync", "this_grid", "buildport: ignore", "nppiX", "wmma", "__popc",
])


@settings(max_examples=500, deadline=None)
@given(st.lists(_FRAGMENTS, max_size=60).map("".join))
def test_random_cuda_like_text_never_raises_and_tokens_are_exact(text: str) -> None:
    scan_source(text, "r.cu")
    for token in tokenize(text):
        assert text[token.start : token.start + len(token.text)] == token.text


# --- file classification and speed ---------------------------------------------------------------

@pytest.mark.parametrize(("path", "text", "expected"), [
    ("k.cu", "", True),
    ("k.cuh", "int x;", True),
    ("a.cpp", "#include <cuda_runtime.h>\n", True),
    ("a.h", "#include \"cublas_v2.h\"\n", True),
    ("a.cc", "void f() { cudaMalloc(&p, 4); }\n", True),
    ("a.cxx", "#ifdef __CUDACC__\n#endif\n", True),
    ("a.hpp", "#include <thrust/device_vector.h>\n", True),
    ("a.c", "CUresult r = cuInit(0);\n", True),
    ("a.cpp", "// cudaMalloc(&p, 4);\nconst char* s = \"cuda_runtime.h\";\n", False),
    ("a.cpp", "#include <vector>\nint main() {}\n", False),
    ("a.py", "cudaMalloc", False),
    ("CMakeLists.txt", "#include <cuda_runtime.h>", False),
])
def test_is_cuda_source(path: str, text: str, expected: bool) -> None:
    assert is_cuda_source(path, text) is expected
    assert scan_cuda_source(path, text) == (scan_source(text, path) if expected else None)


def test_a_cpp_file_read_to_tell_it_is_cuda_is_lexed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    import buildport.source.scan as sourcescan

    calls: list[str] = []

    def counted(text: str) -> object:
        calls.append(text)
        return lex(text)

    monkeypatch.setattr(sourcescan, "lex", counted)
    text = "void f() { cudaMalloc(&p, 4); }\n__global__ void k() { int lane = threadIdx.x % 32; }\n"  # no header
    findings = scan_cuda_source("row_sum.cpp", text)
    assert len(calls) == 1
    assert findings == scan_source(text, "row_sum.cpp") and findings


_KERNEL = """\
// Block reduction, one warp per row.
#include <cuda_runtime.h>
#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) abort(); } while (0)

template <typename T>
__global__ void row_sum(const T* __restrict__ in, T* out, int n) {
  __shared__ T partial[32];
  int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
  T v = 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) v += in[blockIdx.x * n + i];
  for (int o = warpSize / 2; o > 0; o /= 2) v += __shfl_down(v, o);
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp == 0) out[blockIdx.x] = partial[lane];
}

void launch(const float* in, float* out, int rows, int n, cudaStream_t s) {
  row_sum<float><<<rows, 256, 0, s>>>(in, out, n);
  CHECK(cudaGetLastError());
  const char* msg = "launched row_sum with 256 threads";
  (void)msg;
}
"""


def test_one_megabyte_scans_and_scales_with_its_content() -> None:
    """No timing here (speed is for benchmarks/): a 1 MiB file scans, and its findings
    are exactly those of its repeated kernel, shifted line by line."""
    copies = 2**20 // len(_KERNEL) + 1
    one = scan_source(_KERNEL, "k.cu")
    many = scan_source(_KERNEL * copies, "big.cu")
    assert len(many) == len(one) * copies


# --- the pre-check that spares lexing C/C++ files without CUDA ------------------------


@settings(max_examples=400, derandomize=True, deadline=None)
@given(st.one_of(st.from_regex(CUDA_IDENTIFIER, fullmatch=True), st.from_regex(CUDA_HEADER, fullmatch=True)))
def test_the_hint_finds_every_cuda_identifier_and_header(word: str) -> None:
    assert hinted(word), word


@pytest.mark.parametrize("text", [
    "#include <cuComplex.h>\n", "#include <thrust/sort.h>\n", "#include <cub/cub.cuh>\n",
    "#include <mma.h>\n", "#include <sm_60_intrinsics.h>\n", "#include <nvtx3/nvToolsExt.h>\n",
    "void f() { k<<<1, 1>>>(); }\n", "CUresult r;\n", "int x = cuMemAlloc(0);\n", "#ifdef __CUDACC__\n#endif\n",
    "__device__ inline float half(float v) { return v / 2; }\n",  # a header of device helpers, no CUDA include
])  # fmt: skip
def test_files_the_hint_lets_through_are_cuda_sources(text: str) -> None:
    assert hinted(text)
    assert is_cuda_source("a.cpp", text)


_TELLING = st.sampled_from([
    " ", "\n", "\\\n", "#include ", "#define ", "<", ">", "\"", "'", "//", "/*", "*/", "R\"(", ")\"", "<<", "<<<",
    "cuda", "CUDA", "Malloc", "cudaMalloc", "cuda_runtime.h", "cuda/std/x", "thrust/", "sort.h", "npp", "iX",
    "CUresult", "__CUDACC__", "x", "_", "1", "$", "\u00e9", "cmake_cuda_register.h", "cuInit", "Ctx",
    "rmm/", ".hpp", "\u0663", "\t", "CUdevice", "ptr", "thrust/sort.h", ">", "u8", "L", '#include "cuda.h',
    "__device__", "__global__", "__shared__x", "__constant__",
])


@settings(max_examples=500, deadline=None, derandomize=True)
@given(st.lists(_TELLING, max_size=25).map("".join))
def test_a_file_not_lexed_is_one_lexing_would_not_call_cuda(text: str) -> None:
    """The searches that spare lexing say "not CUDA" only where lexing says so too."""
    assert is_cuda_source("a.cpp", text) is (hinted(text) and lexed_as_cuda(lex(text)))


@settings(max_examples=500, deadline=None, derandomize=True)
@given(st.lists(st.one_of(_TELLING, st.sampled_from(["sm_", "\u0663", "7", "CU", "nv", "tx3", "mma", ".h"]),
                          st.text(max_size=3)), max_size=20).map("".join))
def test_the_hint_searched_word_by_word_finds_what_one_alternation_finds(text: str) -> None:
    alternation = re.compile("|".join([*map(re.escape, CUDA_SOURCE_WORDS), *CUDA_SOURCE_PATTERNS]))
    assert hinted(text) is (alternation.search(text) is not None)


@settings(max_examples=500, deadline=None, derandomize=True)
@given(st.text(alphabet=" \t\f\v\ufeff\n#ax/*\"", max_size=40))
def test_directive_marks_found_from_each_hash_are_the_pattern_s(text: str) -> None:
    from buildport.source.lex import _LINE_START_HASH, _line_start_hashes

    assert list(_line_start_hashes(text)) == [m.end() - 1 for m in _LINE_START_HASH.finditer(text)]


@pytest.mark.parametrize("text", [
    '#include "cuda_runtime.hx\nint x;\n',  # an unclosed name loses its last character: cuda_runtime.h
    "#include < cuda.h >\n", "int a = b$cudaMalloc;\nvoid f() { cudaMalloc(p); }\n", "x<<<1, 1>>>();\n",
])
def test_the_shortcut_keeps_what_lexing_calls_cuda(text: str) -> None:
    assert lexed_as_cuda(lex(text))
    assert is_cuda_source("a.cpp", text)


def test_a_cpp_file_that_only_mentions_cuda_is_not_lexed(monkeypatch: pytest.MonkeyPatch) -> None:
    import buildport.source.scan as sourcescan

    def fail(text: str) -> None:
        raise AssertionError("lexed")

    monkeypatch.setattr(sourcescan, "lex", fail)
    assert not is_cuda_source("a.cpp", '// the CUDA language\nif (lang == "CUDA") use_cuda_flags(); // cudart\n')


def test_a_plain_cpp_file_is_not_lexed(monkeypatch: pytest.MonkeyPatch) -> None:
    import buildport.source.scan as sourcescan

    def fail(text: str) -> None:
        raise AssertionError("lexed")

    monkeypatch.setattr(sourcescan, "lex", fail)
    assert not is_cuda_source("a.cpp", "#include <vector>\nint current_cursor(int execute);\n")
