"""What ``buildport audit`` reports in CUDA sources: the rule catalogue, as data.

hipify rewrites API names; it does not see a 32-lane warp baked into arithmetic,
a texture reference, a pinned buffer that a port must keep, or a library ROCm does
not have. Each :class:`SourceRule` names one such difference, says why it matters
on AMD GPUs and what to do, and carries a before/after pair (the ``before`` must
trigger the rule, the ``after`` must not; the tests check both). The tables below
the catalogue are the API names the matchers in :mod:`buildport.source.scan` look
for. ``docs/source-rules.md`` is generated from this module by
``scripts/gen_rules_doc.py``.

Facts are from AMD's HIP documentation (kernel language reference, porting guide,
programming manual), the HIPIFY support tables (``docs/tables/*.md``) and the HIP
runtime sources (``clr``), as noted per rule.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping

from buildport.findings import Severity

ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO


@dataclass(frozen=True, slots=True)
class SourceRule:
    """One source-level CUDA→HIP difference that an audit reports.

    ``rationale`` is the paragraph a finding's message carries after its first,
    specific sentence; ``suggestion`` says what to do; ``source`` is a short note
    of where the fact comes from.
    """

    id: str
    title: str
    severity: Severity
    rationale: str
    suggestion: str
    before: str
    after: str
    source: str


RULES: tuple[SourceRule, ...] = (
    SourceRule(
        "hipify-unsupported", "Name the conversion engine left as it is", ERROR,
        "The conversion engine (hipify-perl, hipify-clang) has no HIP name for this CUDA identifier in the "
        "ROCm release it maps to, and left it in the converted source: the file will not compile against "
        "HIP until a person replaces it (often a newer ROCm has it, or an API of another shape does the job).",
        "Replace the name by hand: look it up in the HIP API reference or the engine's tables for a newer "
        "ROCm, or rewrite the code that needs it.",
        "curandOrdering_t order;\n",
        "/* no hipRAND ordering type in this ROCm: choose the generator without it */\n",
        "hipify-perl's 'unsupported identifier' warnings",
    ),
    SourceRule(
        "hipify-failed", "Source migrate could not convert", ERROR,
        "The conversion engine exited with an error, produced nothing, or passed its time limit on a source "
        "the build compiles, or the file could not be read as text: `migrate` left it as it was, in CUDA, while "
        "the build files that compile it are ported, so the build fails on it until it is converted.",
        "Convert the file by hand, or fix what stopped the engine (its message is given) and migrate again.",
        "/* a source hipify-perl timed out on */\n",
        "/* the same source, converted */\n",
        "migrate's engine run",
    ),
    SourceRule(
        "dual-source-not-carried", "A dual build's HIP side needs the source changed", WARNING,
        "`migrate --keep-cuda` leaves every source as it is and maps CUDA's names to HIP's in a header of the "
        "compatibility folder; a normal migration also rewrites some constructs in the source itself, and this "
        "one (named in the message: a kernel launch written with spaces inside `<<<`, a device function HIP "
        "defines too, a macro that marks functions `__device__` in nvcc's device pass only) cannot be carried "
        "by a header. The CUDA build is unaffected; the HIP build fails on it until the source is changed.",
        "Write the HIP form under `#ifdef __HIP_PLATFORM_AMD__` (the CUDA form in the `#else`), or migrate "
        "without --keep-cuda.",
        "kernel<< <grid, block >> >(data);\n",
        "kernel<<<grid, block>>>(data);\n",
        "what buildport.source.fix rewrites that the compatibility folder cannot",
    ),
    SourceRule(
        "cuda-api-left", "CUDA API left in a source", WARNING,
        "The file still uses CUDA's runtime, driver or library API, types or headers by their CUDA names: "
        "it builds against CUDA only. The conversion engine converts each of these names (the count is per "
        "file, as hipexamine counts them); the audit reads the names from the installed hipify-perl's tables, "
        "or from CUDA's name patterns where there is none.",
        "Run `buildport migrate` (it converts the sources its build files compile), or hipify the file.",
        "cudaMalloc(&p, n);\n",
        "hipMalloc(&p, n);\n",
        "hipify-perl's substitution tables",
    ),
    SourceRule(
        "warp-size-literal", "Warp size 32 written as a literal", WARNING,
        "AMD data-center GPUs (GCN, CDNA: gfx90a, gfx942) execute 64-lane wavefronts, and `warpSize` "
        "is 64 there; code that writes the warp width as 32 (`threadIdx.x % 32`, `& 31`, `>> 5`, "
        "`tid < 32`, a shuffle width of 32, a reduction loop that starts at offset 16, "
        "`#define WARP_SIZE 32`) computes wrong lane and warp indices, reduces only half of each "
        "wavefront, or leaves half the machine idle. hipify passes these literals through unchanged "
        "and nothing fails at compile or run time.",
        "Derive lane and warp indices from `warpSize` in device code (it is not a compile-time constant "
        "in HIP) or from `hipDeviceProp_t::warpSize` on the host; start butterfly reductions at "
        "`warpSize / 2`; size per-warp arrays for 64 lanes.",
        "__device__ int lane_id() { return threadIdx.x % 32; }\n",
        "__device__ int lane_id() { return threadIdx.x % warpSize; }\n",
        "HIP kernel language reference, 'warpSize' and 'Warp cross-lane functions'",
    ),
    SourceRule(
        "warp-mask-32bit", "32-bit lane mask or ballot result", ERROR,
        "In HIP, `__ballot`, `__activemask` and the lane masks of the `*_sync` builtins are 64-bit "
        "(`unsigned long long`), because a wavefront holds up to 64 lanes. A mask of `0xffffffff` "
        "names only lanes 0-31, and a ballot kept in `unsigned int` (or counted with `__popc`, "
        "searched with `__ffs`) silently drops lanes 32-63. From ROCm 6.2 the `*_sync` builtins "
        "`static_assert` that the mask argument is a 64-bit integer, so a 32-bit mask no longer "
        "compiles.",
        "Keep masks in `unsigned long long` (or `uint64_t`), write the full mask as `~0ull` or use "
        "`__activemask()`, and count or search masks with `__popcll` / `__ffsll`.",
        "unsigned mask = __ballot_sync(0xffffffff, pred);\n",
        "unsigned long long mask = __ballot(pred);\n",
        "HIP kernel language reference, 'Warp vote and ballot functions'; "
        "clr amd_warp_sync_functions.h (static_assert on the mask size)",
    ),
    SourceRule(
        "warp-sync-intrinsic", "Warp `*_sync` intrinsic", ERROR,
        "The warp intrinsics with an explicit mask (`__shfl_sync`, `__shfl_down_sync`, "
        "`__ballot_sync`, `__any_sync`, `__all_sync`, `__match_any_sync`, `__syncwarp`, "
        "`__activemask`, the `__reduce_*_sync` family) do not exist in ROCm 5.2. hipify-perl passes "
        "them through with a warning, so the port fails to compile. ROCm 6.2 added the shuffle, "
        "vote, ballot and match forms and `__activemask` behind `HIP_ENABLE_WARP_SYNC_BUILTINS` "
        "(announced as always on from 6.3), with 64-bit masks; `__syncwarp`, `__uni_sync` and "
        "`__reduce_*_sync` are not in HIP's headers even then. AMD wavefronts have no independent "
        "thread scheduling, so the lanes of a wavefront run in lockstep.",
        "For ROCm before 6.2 use the mask-free forms (`__shfl`, `__shfl_down`, `__shfl_xor`, "
        "`__ballot`, `__any`, `__all`); drop `__syncwarp` and write `__reduce_*_sync` as a shuffle "
        "reduction over `warpSize`; on ROCm 6.2+ the `_sync` shuffles and votes work with 64-bit masks.",
        "v += __shfl_down_sync(mask, v, offset);\n",
        "v += __shfl_down(v, offset);\n",
        "HIPIFY CUDA_Device_API_supported_by_HIP.md (no HIP mapping); HIP kernel language "
        "reference ('the __sync variants are made available in ROCm 6.2')",
    ),
    SourceRule(
        "texture-reference", "Texture or surface reference", ERROR,
        "Texture and surface references (`texture<T, dim, mode>` globals, `cudaBindTexture*`, "
        "`cudaUnbindTexture`, `cudaGetTextureReference`, `cudaBindSurfaceToArray`) were deprecated "
        "in CUDA 11 and removed in CUDA 12; HIP deprecated its copies (`hipBindTexture*`, "
        "`hipTexRef*`) in HIP 3.8 and lists them among the APIs that give errors and unexpected "
        "results. A port that keeps them depends on APIs that CUDA has removed and HIP has deprecated.",
        "Convert each reference to a texture object: create a `cudaTextureObject_t` with "
        "`cudaCreateTextureObject` from a resource and texture descriptor, pass it to the kernel as an "
        "argument and read it with `tex1Dfetch<T>(obj, i)` / `tex2D<T>(obj, x, y)`; hipify maps the "
        "object API one to one.",
        "texture<float, 1, cudaReadModeElementType> tex;\n"
        "cudaBindTexture(0, tex, d_in, bytes);\n",
        "cudaTextureObject_t tex = 0;\n"
        "cudaCreateTextureObject(&tex, &res_desc, &tex_desc, nullptr);\n",
        "HIPIFY CUDA_Runtime_API_functions_supported_by_HIP.md (cudaBindTexture: deprecated 11.0, "
        "removed 12.0); HIP deprecated_api_list.rst",
    ),
    SourceRule(
        "pinned-memory", "Pinned (page-locked) host memory", WARNING,
        "Pinned host memory (`cudaHostRegister`, `cudaHostAlloc`, `cudaMallocHost`) is what makes "
        "host-device copies fast and truly asynchronous. A port that loses a `cudaHostRegister` "
        "keeps working but copies from pageable memory; that cost about 40% of throughput in a "
        "published PyTorch-extension port. The flags differ: `hipHostMalloc` always maps and makes "
        "memory portable, and its allocations are coherent (typically not cached by the GPU) when "
        "no flag or `hipHostMallocMapped` is given, but non-coherent when only other flags are "
        "given, unless `HIP_HOST_COHERENT=1`. Mapped (zero-copy) memory is read over the "
        "interconnect on every access.",
        "Keep every registration and pinned allocation in the port (`hipHostRegister`, "
        "`hipHostMalloc`), choose `hipHostMallocCoherent` / `hipHostMallocNonCoherent` explicitly "
        "where kernels read host memory directly, and measure copy bandwidth before and after.",
        "cudaHostRegister(buf, bytes, cudaHostRegisterDefault);\n",
        "hipHostRegister(buf, bytes, hipHostRegisterDefault);\n",
        "HIP programming manual, 'Host Memory' and 'Coherency Controls'; audit issue "
        "(throughput loss in a published port)",
    ),
    SourceRule(
        "default-stream", "Asynchronous copy on the null stream", WARNING,
        "An `*Async` copy, memset or allocation with no stream argument, or with stream `0`, "
        "`NULL` or `nullptr`, runs on the null stream. HIP keeps CUDA's legacy semantics: the null "
        "stream waits for and blocks every other blocking stream, so the copy serializes with the "
        "work on all of them. If the CUDA build used `nvcc --default-stream per-thread`, the same "
        "call meant a per-thread stream; hipcc needs `-fgpu-default-stream=per-thread` to keep that "
        "meaning, and without it the overlap is silently lost.",
        "Pass the stream the surrounding work runs on, or build with "
        "`-fgpu-default-stream=per-thread` when the CUDA build used `--default-stream per-thread`.",
        "cudaMemcpyAsync(d, h, n, cudaMemcpyHostToDevice);\n",
        "cudaMemcpyAsync(d, h, n, cudaMemcpyHostToDevice, stream);\n",
        "HIP programming manual, 'Use of Per-thread default stream'",
    ),
    SourceRule(
        "default-stream-launch", "Kernel launch on the null stream", INFO,
        "A launch `<<<grid, block>>>` or `<<<grid, block, shmem>>>` (or with stream `0`) goes to the "
        "null stream, which in HIP as in legacy CUDA synchronizes with every other blocking stream; "
        "hipify writes the `0` explicitly. It is correct, but it serializes, and it changes meaning "
        "if the CUDA build used `nvcc --default-stream per-thread` and the HIP build does not pass "
        "`-fgpu-default-stream=per-thread`.",
        "Launch on an explicit stream where the program overlaps work, or carry the per-thread "
        "default-stream flag over to the HIP build.",
        "kernel<<<grid, block>>>(d);\n",
        "kernel<<<grid, block, 0, stream>>>(d);\n",
        "HIP programming manual, 'Use of Per-thread default stream'; HIP kernel language reference "
        "(launch syntax)",
    ),
    SourceRule(
        "stream-priority", "Stream priorities", INFO,
        "HIP implements three stream priorities: -1 (high), 0 (normal) and 1 (low); "
        "`hipDeviceGetStreamPriorityRange` reports least 1, greatest -1, and other values are "
        "clamped. CUDA reports a device-specific range (for example 0 down to -5) in which 0 is "
        "the lowest priority, so priorities computed from CUDA's range, or a literal 0 meant as "
        "'low', map to different levels on AMD.",
        "Query `hipDeviceGetStreamPriorityRange` and use its least/greatest values; do not hard-code "
        "CUDA's numbers.",
        "cudaStreamCreateWithPriority(&s, cudaStreamDefault, -5);\n",
        "hipDeviceGetStreamPriorityRange(&least, &greatest);\n"
        "hipStreamCreateWithPriority(&s, hipStreamDefault, greatest);\n",
        "clr hipamd/src/hip_stream.cpp (Priority High=-1, Normal=0, Low=1; clamping)",
    ),
    SourceRule(
        "per-thread-stream", "Per-thread default stream", WARNING,
        "`cudaStreamPerThread` (and `cudaStreamLegacy`, its opposite) name the per-thread and the "
        "legacy default stream explicitly. HIP has `hipStreamPerThread` since HIP 4.5, but the "
        "meaning of every *implicit* stream in the program depends on a build flag: nvcc's "
        "`--default-stream per-thread` becomes hipcc's `-fgpu-default-stream=per-thread`. Code that "
        "mixes the two kinds relies on the flag, and a port that drops it changes synchronization "
        "without an error.",
        "Check how the CUDA build set `--default-stream` and give hipcc the matching "
        "`-fgpu-default-stream=` option; keep explicit `hipStreamPerThread` handles.",
        "cudaMemcpyAsync(d, h, n, cudaMemcpyHostToDevice, cudaStreamPerThread);\n",
        "hipMemcpyAsync(d, h, n, hipMemcpyHostToDevice, hipStreamPerThread);\n",
        "HIPIFY runtime table (cudaStreamPerThread -> hipStreamPerThread, HIP 4.5.0); HIP "
        "programming manual, 'Use of Per-thread default stream'",
    ),
    SourceRule(
        "stream-nonblocking", "Non-blocking stream", INFO,
        "A stream created with `cudaStreamNonBlocking` does not synchronize with the null stream. "
        "HIP keeps the flag (`hipStreamNonBlocking`) and its meaning, but a port tends to add null-"
        "stream work (hipify writes stream `0` into every launch without one, and synchronous "
        "`hipMemcpy` runs on the null stream), and none of that orders against a non-blocking "
        "stream. Dependencies that held by accident on NVIDIA become races.",
        "Make every cross-stream dependency of a non-blocking stream explicit with events "
        "(`hipEventRecord` + `hipStreamWaitEvent`).",
        "cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);\n",
        "hipStreamCreateWithFlags(&s, hipStreamNonBlocking);\n"
        "hipEventRecord(ready, producer);\n"
        "hipStreamWaitEvent(s, ready, 0);\n",
        "HIPIFY runtime types table (cudaStreamNonBlocking -> hipStreamNonBlocking); hipStreamCreateWithFlags docs",
    ),
    SourceRule(
        "cuda-atomic", "libcu++ atomics with scopes and orders", ERROR,
        "`cuda::atomic`, `cuda::atomic_ref`, `cuda::std::atomic` and the `cuda::thread_scope_*` / "
        "`cuda::memory_order_*` names come from libcu++ (`<cuda/atomic>`, `<cuda/std/atomic>`), "
        "which ROCm 5.2 does not ship and hipify does not convert. The scoped orders they express "
        "still matter on AMD, where caches are not coherent across agents unless the memory is "
        "fine-grained.",
        "Rewrite with HIP's scoped atomic builtins (`__hip_atomic_load/store/fetch_add(ptr, v, "
        "__ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_AGENT)`) or the clang `__atomic_*` builtins, keeping "
        "the original scope and order.",
        "cuda::atomic<int, cuda::thread_scope_device> counter;\n",
        "__hip_atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);\n",
        "HIPIFY (no libcu++ mapping); HIP kernel language reference (atomics)",
    ),
    SourceRule(
        "atomic-scope", "Scoped atomic (`_system` / `_block`)", WARNING,
        "`atomic*_system` functions exist in HIP (since 4.3) but are atomic across the host and "
        "other GPUs only on fine-grained (coherent) memory, for example `hipHostMalloc` with the "
        "coherent default or `hipHostMallocCoherent`; on ordinary (coarse-grained) device memory "
        "or non-coherent host memory other agents do not observe them atomically, and nothing "
        "reports it. The `atomic*_block` functions have no HIP counterpart and hipify leaves them "
        "untranslated.",
        "Allocate memory shared with the host or peers as coherent host memory, and replace "
        "`_block` atomics by the plain function or by `__hip_atomic_*` with "
        "`__HIP_MEMORY_SCOPE_WORKGROUP`.",
        "atomicAdd_system(&flag, 1);\n",
        "__hip_atomic_fetch_add(flag, 1, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);\n",
        "HIP kernel language reference, 'Atomic functions'; HIPIFY device API table "
        "(atomic*_system from 4.3.0, no *_block entries)",
    ),
    SourceRule(
        "threadfence", "Device or block memory fence", INFO,
        "`__threadfence()` and `__threadfence_block()` are supported by HIP, but a hand-off "
        "between blocks needs ordering on both sides: on AMD a consumer that reads the data after "
        "seeing the flag, without an acquire (a fence or an acquire atomic), can read a stale copy "
        "from its compute unit's L1 cache, which is not coherent with other compute units. Code "
        "that fences only in the producer, or polls a plain or `volatile` flag, may have worked "
        "on NVIDIA and fail on AMD.",
        "Check the producer/consumer pattern around each fence; prefer release/acquire atomics "
        "(`__hip_atomic_store`/`__hip_atomic_load`) on the flag over a fence and a plain store.",
        "__threadfence();\n",
        "__builtin_amdgcn_fence(__ATOMIC_RELEASE, \"agent\");\n",
        "HIP kernel language reference, 'Memory fence instructions'",
    ),
    SourceRule(
        "threadfence-system", "System-scope memory fence", WARNING,
        "`__threadfence_system()` makes writes visible to the host and other GPUs only for "
        "fine-grained (coherent) system memory on AMD; AMD's documentation asks that such kernels "
        "work only on memory from `hipHostMalloc` and not copy it. On device memory or "
        "non-coherent host memory the fence orders nothing outside the GPU.",
        "Allocate the shared buffers with `hipHostMalloc` (coherent), or replace fence-plus-flag "
        "by a system-scope release store on the flag.",
        "__threadfence_system();\n",
        "__hip_atomic_store(flag, 1, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_SYSTEM);\n",
        "HIP kernel language reference, 'Memory fence instructions'",
    ),
    SourceRule(
        "volatile-spin-wait", "`volatile` spin wait", WARNING,
        "A loop that polls a `volatile` variable waits for another thread, block or the host "
        "without any memory-model guarantee: `volatile` orders nothing, so the data the flag "
        "guards need not be visible when the flag is, and on AMD a flag that the host or a peer "
        "GPU writes into coarse-grained (non-coherent) memory need not be seen while the kernel "
        "runs. And because AMD wavefronts have no independent thread scheduling, a lane that spins "
        "on a value another lane of the same wavefront must write never lets that lane run: the "
        "kernel hangs.",
        "Poll with an acquire atomic load at the right scope (`__hip_atomic_load(p, "
        "__ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_AGENT)`), back off with "
        "`__builtin_amdgcn_s_sleep`, and never wait on a lane of the same wavefront.",
        "__device__ void wait_for(volatile int* flag) {\n"
        "  while (*flag == 0) { }\n"
        "}\n",
        "__device__ void wait_for(int* flag) {\n"
        "  while (__hip_atomic_load(flag, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_AGENT) == 0) { }\n"
        "}\n",
        "HIP kernel language reference, 'Independent thread scheduling' (not supported)",
    ),
    SourceRule(
        "inline-ptx", "Inline PTX assembly", ERROR,
        "`asm(...)` statements with PTX (`mov.u32 %0, %%laneid;`, `ld.global.nc`, `cp.async`, "
        "`shfl.sync`) are NVIDIA machine code. hipify leaves them alone and clang cannot assemble "
        "them for an AMD GPU, so the file stops compiling; inline assembly on AMD is GCN/CDNA ISA "
        "with different registers and constraints.",
        "Replace each PTX block by the HIP builtin or plain C++ it implements (`__lane_id()`, "
        "`__builtin_nontemporal_load`, `__shfl_xor`, `__builtin_amdgcn_*`), keeping the PTX "
        "only behind `#ifdef __HIP_PLATFORM_NVIDIA__`.",
        "asm volatile(\"mov.u32 %0, %%laneid;\" : \"=r\"(lane));\n",
        "lane = __lane_id();\n",
        "HIP kernel language reference, 'In-Line Assembly' (GCN ISA only)",
    ),
    SourceRule(
        "cuda-arch-version", "`__CUDA_ARCH__` version check", WARNING,
        "HIP-Clang does not define `__CUDA_ARCH__`, so `#if` reads it as 0: on AMD "
        "`__CUDA_ARCH__ >= 700` is false and `__CUDA_ARCH__ < 700` is true. The path written for "
        "new NVIDIA GPUs (often the fast one) silently disappears, and the one for old GPUs or for "
        "the host is compiled into the device code instead; outside `#if`, the name does not "
        "compile.",
        "Test the feature, not the NVIDIA generation: `__HIP_ARCH_HAS_*__` macros (for example "
        "`__HIP_ARCH_HAS_WARP_SHUFFLE__`), `__gfx90a__`-style target macros, or a run-time "
        "`hipDeviceProp_t` query.",
        "#if __CUDA_ARCH__ >= 300\n"
        "  v = __shfl_down(v, 1);\n"
        "#endif\n",
        "#if __HIP_ARCH_HAS_WARP_SHUFFLE__\n"
        "  v = __shfl_down(v, 1);\n"
        "#endif\n",
        "HIP porting guide, 'Identifying Architecture Features' and compiler-defines table",
    ),
    SourceRule(
        "cuda-token-paste", "Macro that pastes a CUDA prefix onto a name", WARNING,
        "A macro that builds API names by pasting (`#define CUDA(fn) cuda##fn`, `cu##fn` for the driver "
        "API, `cublas##op`) calls functions whose names appear nowhere in the source: hipify renames the "
        "names it sees, so the calls made through the macro (`CUDA(Malloc(&p, n))`) still name CUDA's "
        "functions after the port, and the file does not compile against HIP.",
        "Paste the HIP prefix in the HIP build (`hip##fn`, `hipblas##op`; the driver API's `cu` becomes "
        "`hip` too), or write the calls out whole so hipify sees them.",
        "#define CUDA(fn) check(cuda##fn, #fn)\n"
        "CUDA(Malloc(&p, n));\n",
        "#define CUDA(call) check(call, #call)\n"
        "CUDA(hipMalloc(&p, n));\n",
        "C preprocessor (token pasting happens after hipify's text rewrite); cudahandbook's chError.h",
    ),
    SourceRule(
        "cuda-header-macro", "Test of a macro only CUDA's headers define", ERROR,
        "CUDA headers define their include guards (`__CUDA_RUNTIME_H__`, `__DRIVER_TYPES_H__`, "
        "`CURAND_H_`, ...) and version macros (`CUDART_VERSION`, `__CUDA_API_VERSION`), and code "
        "tests them to learn which header came before it: cuda-samples' `helper_cuda.h` defines "
        "`checkCudaErrors` and `findCudaDevice` only `#ifdef __DRIVER_TYPES_H__` / "
        "`#ifdef __CUDA_RUNTIME_H__`. hipify renames the headers but not these tests, and no HIP "
        "header defines the CUDA names, so after the port the guarded code is silently compiled out "
        "(and `#if CUDART_VERSION >= 4000` is false): the first sign is an undeclared identifier "
        "somewhere else, or nothing at all.",
        "Test the HIP header's own macro instead (the finding names it where ROCm's header has one: "
        "`HIP_INCLUDE_HIP_HIP_RUNTIME_H`, `HIP_INCLUDE_HIP_DRIVER_TYPES_H`, `HIPRAND_H_`, ...), or "
        "decide what a CUDA version test means on HIP (`HIP_VERSION`, `__HIP_PLATFORM_AMD__`).",
        "#ifdef __CUDA_RUNTIME_H__\n"
        "inline int pick_device() { return gpuGetMaxGflopsDeviceId(); }\n"
        "#endif\n",
        "#ifdef HIP_INCLUDE_HIP_HIP_RUNTIME_H\n"
        "inline int pick_device() { return gpuGetMaxGflopsDeviceId(); }\n"
        "#endif\n",
        "CUDA toolkit headers (include guards); ROCm 5.2 headers /usr/include/hip, hiprand, hipsparse, and "
        "hipBLAS' hipblas.h, hipFFT's hipfft.h, hipSOLVER's hipsolver.h (their guards)",
    ),
    SourceRule(
        "cuda-arch-device", "`__CUDA_ARCH__` used to detect device code", WARNING,
        "HIP-Clang does not define `__CUDA_ARCH__` in device or host compilation, so "
        "`#ifdef __CUDA_ARCH__` (or `defined(__CUDA_ARCH__)`) never selects the device branch on "
        "AMD: device code gets the host implementation, which either fails to compile or runs the "
        "slow path.",
        "Use `__HIP_DEVICE_COMPILE__`, which HIP defines (to 1) when compiling for the device, on "
        "both AMD and NVIDIA.",
        "#ifdef __CUDA_ARCH__\n"
        "  x = device_path();\n"
        "#else\n"
        "  x = host_path();\n"
        "#endif\n",
        "#if __HIP_DEVICE_COMPILE__\n"
        "  x = device_path();\n"
        "#else\n"
        "  x = host_path();\n"
        "#endif\n",
        "HIP porting guide, compiler-defines table (__CUDA_ARCH__: undefined for HIP-Clang)",
    ),
    SourceRule(
        "grid-sync", "Cooperative-groups grid synchronization", WARNING,
        "`this_grid()` / `grid.sync()` need every block of the grid to be resident at once. HIP "
        "supports them only for kernels launched with `hipLaunchCooperativeKernel`, and the largest "
        "co-resident grid on an AMD GPU follows from its own occupancy (64-lane wavefronts, "
        "different register and LDS budgets): a grid sized from NVIDIA's SM count or occupancy "
        "deadlocks or is rejected.",
        "Launch with `hipLaunchCooperativeKernel` and size the grid from "
        "`hipOccupancyMaxActiveBlocksPerMultiprocessor` x `multiProcessorCount` on the AMD device.",
        "cg::grid_group grid = cg::this_grid();\n"
        "grid.sync();\n",
        "// buildport: ignore[grid-sync] launched with hipLaunchCooperativeKernel, grid from occupancy\n"
        "cg::this_grid().sync();\n",
        "HIP kernel language reference, 'Cooperative groups functions'; HIPIFY runtime table "
        "(cudaLaunchCooperativeKernel -> hipLaunchCooperativeKernel)",
    ),
    SourceRule(
        "dynamic-parallelism", "Kernel launch or runtime call in device code", ERROR,
        "HIP does not support dynamic parallelism: a `__global__` or `__device__` function cannot "
        "launch a kernel (`<<<...>>>` in device code) or call the device runtime "
        "(`cudaDeviceSynchronize`, `cudaLaunchDevice`, `cudaMalloc` from a kernel).",
        "Move the child launch to the host (launch the parent, then the child, on one stream), or "
        "merge the child's work into the parent kernel.",
        "__global__ void parent(int* d) {\n"
        "  child<<<1, 64>>>(d);\n"
        "}\n",
        "__global__ void parent(int* d) { work(d); }\n"
        "void run(int* d) { parent<<<1, 64, 0, s>>>(d); child<<<1, 64, 0, s>>>(d); }\n",
        "HIP kernel language reference, '__global__' (no dynamic parallelism)",
    ),
    SourceRule(
        "cuda-graph", "CUDA graphs and stream capture", WARNING,
        "hipGraph arrived in HIP 4.3 and grows with every release: in ROCm 5.2 there is no "
        "`hipGraphUpload` or user objects (5.3), no memory-allocation nodes (5.5), no external-"
        "semaphore nodes (5.7), no `hipGraphAddNode`/`hipGraphInstantiateWithParams` (6.2), and no "
        "conditional nodes at all. hipify renames the calls regardless, so a graph-based port may "
        "not compile, or may capture work that the target ROCm cannot replay.",
        "Check each graph API the file uses against HIPIFY's runtime table for the ROCm version you "
        "target, and keep a stream-based fallback where a node type is missing.",
        "cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);\n",
        "hipStreamBeginCapture(s, hipStreamCaptureModeGlobal);\n",
        "HIPIFY CUDA_Runtime_API_functions_supported_by_HIP.md (HIP version per graph API)",
    ),
    SourceRule(
        "func-attribute", "Kernel attribute and cache configuration", WARNING,
        "`cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, n)` is how CUDA "
        "kernels opt into more than 48 KiB of shared memory; on AMD the limit is the LDS of a "
        "workgroup (64 KiB on CDNA2 and CDNA3 GPUs), and HIP rejects larger values. The "
        "shared-memory carveout, `cudaFuncSetCacheConfig`, `cudaDeviceSetCacheConfig` and the "
        "shared-memory bank configuration are accepted and ignored by HIP, so tuning that relied "
        "on them does nothing.",
        "Re-derive shared-memory sizes for 64 KiB of LDS per workgroup (tile sizes, stages) and "
        "drop cache and bank configuration calls.",
        "cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 98304);\n",
        "hipFuncSetAttribute((const void*)k, hipFuncAttributeMaxDynamicSharedMemorySize, 65536);\n",
        "clr hipamd/src/hip_module.cpp (hipFuncSetAttribute checks LDS size; cache config is a no-op)",
    ),
    SourceRule(
        "device-limit", "Device limits", WARNING,
        "`hipDeviceSetLimit` first appeared in HIP 5.3, so on ROCm 5.2 the hipified call does not "
        "compile; later versions accept only `hipLimitStackSize` and `hipLimitMallocHeapSize` and "
        "return `hipErrorUnsupportedLimit` for the printf FIFO, the L2 limits and the "
        "dynamic-parallelism limits (which HIP does not have).",
        "Keep only stack and heap limits, guard them by ROCm version, and check the returned "
        "error instead of assuming success.",
        "cudaDeviceSetLimit(cudaLimitPrintfFifoSize, 1 << 24);\n",
        "hipDeviceSetLimit(hipLimitStackSize, 4096);\n",
        "HIPIFY runtime table (cudaDeviceSetLimit -> hipDeviceSetLimit, 5.3.0); clr "
        "hip_device_runtime.cpp (supported limits)",
    ),
    SourceRule(
        "nanosleep", "`__nanosleep`", ERROR,
        "HIP has no `__nanosleep` and hipify has no mapping for it, so the port does not compile. "
        "The AMD instruction is `s_sleep`, available as `__builtin_amdgcn_s_sleep(n)`: it takes a "
        "compile-time constant and sleeps for about 64 x n clock cycles, not nanoseconds.",
        "Replace with `__builtin_amdgcn_s_sleep(n)` with a small constant n, and re-tune back-off "
        "loops in clock cycles.",
        "__nanosleep(100);\n",
        "__builtin_amdgcn_s_sleep(2);\n",
        "HIPIFY device API table (no entry); clr device headers (no declaration); AMD ISA "
        "(s_sleep)",
    ),
    SourceRule(
        "ldg", "`__ldg` read-only cache load", INFO,
        "HIP provides `__ldg`, but as a plain load: AMD GPUs have no separate read-only/texture "
        "data path, so a kernel that was tuned around `__ldg` keeps its extra code and loses the "
        "effect it was written for.",
        "Use plain loads from `const T* __restrict__` parameters, which let the compiler choose "
        "scalar or cached loads.",
        "float v = __ldg(&in[i]);\n",
        "float v = in[i];\n",
        "clr hip_ldg.h (__ldg returns *ptr); HIP porting guide, 'Textures and Cache Control'",
    ),
    SourceRule(
        "library-no-equivalent", "NVIDIA library without a ROCm equivalent", ERROR,
        "Some NVIDIA libraries have no ROCm counterpart with the same API, and hipify has no "
        "tables for them: NPP (image and signal primitives), nvJPEG, cuFile (GPUDirect Storage), "
        "CUPTI (profiling), NVML (device management) and libcu++ (`<cuda/...>`). Their headers and "
        "calls pass through hipify unchanged and the port fails to compile or link.",
        "Plan a replacement per library: own HIP kernels or another image library for NPP, rocJPEG "
        "(ROCm 6.2+, different API) for nvJPEG, rocprofiler/roctracer for CUPTI, ROCm SMI or AMD "
        "SMI for NVML, HIP builtins for libcu++.",
        "#include <nppi.h>\n",
        "#include \"resize_kernels.h\"\n",
        "HIPIFY docs/tables (no NPP, nvJPEG, cuFile, CUPTI, NVML or libcu++ tables)",
    ),
    SourceRule(
        "library-different-api", "NVIDIA library with a different ROCm API", WARNING,
        "Some NVIDIA libraries have ROCm counterparts with a different API rather than a renamed "
        "one: cuDNN → MIOpen (hipify converts only part of cuDNN), NVTX → rocTX, and the WMMA "
        "warp-matrix API of `<mma.h>` (`nvcuda::wmma`) → rocWMMA, which HIP's kernel language "
        "does not provide. Calls need rewriting, not renaming.",
        "Port cuDNN calls to MIOpen (descriptors and algorithm search differ), NVTX ranges to "
        "`roctxRangePush`/`roctxRangePop`, and WMMA fragments to rocWMMA.",
        "#include <cudnn.h>\n",
        "#include <miopen/miopen.h>\n",
        "HIPIFY CUDNN_API_supported_by_HIP_and_MIOPEN.md; HIP kernel language reference, 'Warp "
        "matrix functions' (not supported)",
    ),
)

BY_ID: Mapping[str, SourceRule] = MappingProxyType({rule.id: rule for rule in RULES})

# --- API names the matchers look for -----------------------------------------------------------
# Identifier -> (rule id, what it is). Flags listed here inside the call they belong to are
# reported with that call, not on their own.

API_NAMES: Mapping[str, tuple[str, str]] = MappingProxyType({
    **{name: ("pinned-memory", "registers pageable memory as pinned")
       for name in ("cudaHostRegister", "cuMemHostRegister")},
    **{name: ("pinned-memory", "allocates pinned host memory")
       for name in ("cudaHostAlloc", "cudaMallocHost", "cuMemHostAlloc", "cuMemAllocHost")},
    "cudaHostGetDevicePointer": ("pinned-memory", "maps pinned host memory into the device"),
    **{name: ("texture-reference", "is the texture-reference API")
       for name in ("cudaBindTexture", "cudaBindTexture2D", "cudaBindTextureToArray",
                    "cudaBindTextureToMipmappedArray", "cudaUnbindTexture", "cudaGetTextureReference",
                    "cudaGetTextureAlignmentOffset", "cuTexRefSetArray", "cuTexRefSetAddress",
                    "cuModuleGetTexRef", "textureReference")},
    **{name: ("texture-reference", "is the surface-reference API")
       for name in ("cudaBindSurfaceToArray", "cudaGetSurfaceReference", "cuModuleGetSurfRef",
                    "surfaceReference")},
    **{name: ("warp-sync-intrinsic", "is a warp intrinsic ROCm 5.2 lacks")
       for name in ("__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync",
                    "__ballot_sync", "__any_sync", "__all_sync", "__uni_sync", "__activemask",
                    "__syncwarp", "__match_any_sync", "__match_all_sync", "__reduce_add_sync",
                    "__reduce_min_sync", "__reduce_max_sync", "__reduce_and_sync",
                    "__reduce_or_sync", "__reduce_xor_sync")},
    "__threadfence": ("threadfence", "is a device-scope fence"),
    "__threadfence_block": ("threadfence", "is a block-scope fence"),
    "__threadfence_system": ("threadfence-system", "is a system-scope fence"),
    **{name: ("stream-priority", "sets or reads a stream priority")
       for name in ("cudaStreamCreateWithPriority", "cudaDeviceGetStreamPriorityRange",
                    "cudaStreamGetPriority", "cudaLaunchAttributePriority")},
    "cudaStreamPerThread": ("per-thread-stream", "names the per-thread default stream"),
    "cudaStreamLegacy": ("per-thread-stream", "names the legacy default stream"),
    "CUDA_API_PER_THREAD_DEFAULT_STREAM": ("per-thread-stream", "selects the per-thread default stream"),
    "cudaStreamNonBlocking": ("stream-nonblocking", "creates a stream that does not sync with the null stream"),
    "CU_STREAM_NON_BLOCKING": ("stream-nonblocking", "creates a stream that does not sync with the null stream"),
    **{name: ("grid-sync", "launches a cooperative kernel")
       for name in ("cudaLaunchCooperativeKernel", "cudaLaunchCooperativeKernelMultiDevice",
                    "cuLaunchCooperativeKernel")},
    "this_grid": ("grid-sync", "takes the whole grid as a cooperative group"),
    "this_multi_grid": ("grid-sync", "takes a multi-device grid as a cooperative group"),
    **{name: ("func-attribute", "configures a kernel's shared memory or cache")
       for name in ("cudaFuncSetAttribute", "cudaFuncSetCacheConfig", "cudaDeviceSetCacheConfig",
                    "cudaDeviceSetSharedMemConfig", "cudaFuncSetSharedMemConfig", "cuFuncSetAttribute",
                    "cuFuncSetCacheConfig")},
    **{name: ("device-limit", "sets a device limit")
       for name in ("cudaDeviceSetLimit", "cudaThreadSetLimit", "cuCtxSetLimit")},
    "__nanosleep": ("nanosleep", "sleeps for a number of nanoseconds"),
    "__ldg": ("ldg", "loads through the read-only data cache"),
})

# Flags: reported with the call they appear in (above), or on their own elsewhere.
FLAG_NAMES: Mapping[str, tuple[str, str]] = MappingProxyType({
    **dict.fromkeys(("cudaHostAllocMapped", "cudaHostRegisterMapped", "cudaDeviceMapHost"),
                    ("pinned-memory", "asks for mapped (zero-copy) pinned memory")),
    **dict.fromkeys(("cudaHostAllocPortable", "cudaHostRegisterPortable"),
                    ("pinned-memory", "asks for portable pinned memory")),
    **dict.fromkeys(("cudaHostAllocWriteCombined", "cudaHostRegisterIoMemory", "cudaHostRegisterReadOnly"),
                    ("pinned-memory", "is a pinned-memory flag")),
    **dict.fromkeys(("cudaFuncAttributeMaxDynamicSharedMemorySize",
                     "cudaFuncAttributePreferredSharedMemoryCarveout", "cudaFuncCachePreferShared",
                     "cudaFuncCachePreferL1", "cudaFuncCachePreferEqual"),
                    ("func-attribute", "is a kernel shared-memory or cache setting")),
    **dict.fromkeys(("cudaLimitPrintfFifoSize", "cudaLimitDevRuntimeSyncDepth",
                     "cudaLimitDevRuntimePendingLaunchCount", "cudaLimitMaxL2FetchGranularity",
                     "cudaLimitPersistingL2CacheSize"),
                    ("device-limit", "is a device limit HIP does not support")),
})

# Asynchronous APIs and the 0-based position of their stream argument.
ASYNC_STREAM_ARG: Mapping[str, int] = MappingProxyType({
    "cudaMemcpyAsync": 4, "cudaMemcpy2DAsync": 7, "cudaMemcpy3DAsync": 1,
    "cudaMemcpyToSymbolAsync": 5, "cudaMemcpyFromSymbolAsync": 5, "cudaMemcpyPeerAsync": 5,
    "cudaMemcpy2DToArrayAsync": 8, "cudaMemcpy2DFromArrayAsync": 8,
    "cudaMemsetAsync": 3, "cudaMemset2DAsync": 5, "cudaMemset3DAsync": 3,
    "cudaMemPrefetchAsync": 3, "cudaMallocAsync": 2, "cudaFreeAsync": 1,
})

# HIP names hipify writes for CUDA structs that HIP declares as a typedef of a struct of another tag: after
# `struct`, C++ refuses them (`typedef 'hipGraphicsResource' cannot be referenced with a struct specifier`;
# GPUJPEG's `struct cudaGraphicsResource*`) -> the tag HIP's typedef names, which buildport.source.fix writes
# after `struct` instead: an opaque pointer to it is valid in C and C++, with or without HIP's headers (ROCm
# 5.2 and 6.x: `typedef struct _hipGraphicsResource hipGraphicsResource;`).
TYPEDEF_NOT_TAG: Mapping[str, str] = MappingProxyType({"hipGraphicsResource": "_hipGraphicsResource"})

# The warp *_sync builtins HIP gained in ROCm 6.2 -> the forms without a mask every ROCm has (buildport.source.fix
# rewrites them for an older ROCm where the mask names the whole warp; human ports of HeCBench do the same).
UNSYNCED_WARP_FUNCTIONS: Mapping[str, str] = MappingProxyType({
    "__shfl_sync": "__shfl", "__shfl_up_sync": "__shfl_up", "__shfl_down_sync": "__shfl_down",
    "__shfl_xor_sync": "__shfl_xor", "__any_sync": "__any", "__all_sync": "__all", "__ballot_sync": "__ballot",
})
# The shuffles among them: a shuffle's mask only says which lanes take part (CUDA leaves a read from a lane
# outside it undefined), and HIP's shuffle without a mask reads the source lane the same way, so any mask can go;
# a vote's mask narrows its result, so only one naming the whole warp can.
MASK_FREE_SHUFFLES = frozenset(("__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync"))
WARP_SYNC_SINCE = (6, 2)
# __syncwarp() (or over the whole warp's mask) before ROCm 6.2: the wavefront's barrier between a release and an
# acquire fence, as ROCm 6.2's own __syncwarp is written (a comma expression: it stands where the call stood).
SYNCWARP = "__syncwarp"
WARP_BARRIER = ('(__builtin_amdgcn_fence(__ATOMIC_RELEASE, "wavefront"), __builtin_amdgcn_wave_barrier(), '
                '__builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "wavefront"))')
# A lane mask that names every lane (of a 32-lane warp, or of any): the mask argument can go.
FULL_LANE_MASK = re.compile(
    r"(?:0[xX][fF]{8}(?:[fF]{8})?|~0|-1|4294967295)(?:[uU]?[lL]{0,2}|[lL]{0,2}[uU]?)|__activemask\(\)"
    r"|~0[uU]?[lL]{0,2}|\(\s*~0[uU]?[lL]{0,2}\s*\)|\(\s*unsigned(?:\s+int)?\s*\)\s*-1"
)

# Functions that take or return a lane mask.
WARP_MASK_FIRST_ARG = frozenset((
    "__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync", "__ballot_sync",
    "__any_sync", "__all_sync", "__uni_sync", "__syncwarp", "__match_any_sync", "__match_all_sync",
    "__reduce_add_sync", "__reduce_min_sync", "__reduce_max_sync", "__reduce_and_sync",
    "__reduce_or_sync", "__reduce_xor_sync",
))
MASK_RESULT = frozenset(("__ballot", "__ballot_sync", "__activemask", "__match_any_sync",
                         "__match_all_sync", "__match_any", "__match_all"))
MASK_32BIT_CONSUMERS = frozenset(("__popc", "__ffs", "__clz", "__brev"))
WARP_INTRINSICS = WARP_MASK_FIRST_ARG | MASK_RESULT | frozenset((
    "__shfl", "__shfl_up", "__shfl_down", "__shfl_xor", "__any", "__all", "__lane_id"))

# Identifier families: (pattern, rule id, family name, report once per file per "name" or "family").
API_FAMILIES: tuple[tuple[re.Pattern[str], str, str, str], ...] = (
    (re.compile(r"cudaGraph(?!ics)[A-Z_]\w*|cudaStream(Begin|End)Capture\w*|cudaStreamIsCapturing"
                r"|cudaStreamGetCaptureInfo\w*|cudaStreamUpdateCaptureDependencies\w*"
                r"|cudaUserObject\w*|cudaThreadExchangeStreamCaptureMode|cuGraph[A-Z]\w*"
                r"|cuStream(Begin|End)Capture\w*"), "cuda-graph", "CUDA graphs", "name"),
    (re.compile(r"npp[isc]?[A-Z]\w*|Npp[is]?[A-Z0-9]\w*|NPP_[A-Z0-9_]+"), "library-no-equivalent", "NPP", "family"),
    (re.compile(r"nvjpeg[A-Z]\w*|NVJPEG_\w+"), "library-no-equivalent", "nvJPEG", "family"),
    (re.compile(r"cuFile[A-Z]\w*|CUfile\w+|CU_FILE_\w+"), "library-no-equivalent", "cuFile", "family"),
    (re.compile(r"cupti[A-Z]\w*|CUpti_\w+|CUPTI_\w+"), "library-no-equivalent", "CUPTI", "family"),
    (re.compile(r"nvml[A-Z]\w*|NVML_\w+"), "library-no-equivalent", "NVML", "family"),
    (re.compile(r"cudnn[A-Z]\w*|CUDNN_\w+"), "library-different-api", "cuDNN", "family"),
    (re.compile(r"nvtx[A-Z]\w*|NVTX_\w+"), "library-different-api", "NVTX", "family"),
)

# What a macro pastes a name onto to make a CUDA API name: a prefix of the runtime's, the driver API's or a
# library's (``cuda##fn``, ``cu##fn``, ``cublas##op``), or a longer start of one (``cudaMemcpy##Kind``,
# ``cufftExec##T``).
CUDA_PASTE_HEAD = re.compile(
    r"(?:cuda|cublas(?:Lt)?|cufft|curand|cusparse|cusolver(?:Dn|Sp)?|cudnn|nccl|nvrtc|nvjpeg|npp|nvml|cupti"
    r"|cuFile)(?:[A-Z]\w*)?|cu(?:[A-Z]\w*)?|CU")

# Macros only CUDA's headers define (include guards, version macros) -> the macro ROCm's
# counterpart header defines ("" where there is none to name: a version).
CUDA_HEADER_MACROS: Mapping[str, str] = MappingProxyType({
    "__CUDA_RUNTIME_H__": "HIP_INCLUDE_HIP_HIP_RUNTIME_H",
    "__CUDA_RUNTIME_API_H__": "HIP_INCLUDE_HIP_HIP_RUNTIME_API_H",
    "__DRIVER_TYPES_H__": "HIP_INCLUDE_HIP_DRIVER_TYPES_H",
    "__cuda_cuda_h__": "HIP_INCLUDE_HIP_HIP_RUNTIME_API_H",
    "__CUDA_FP16_H__": "HIP_INCLUDE_HIP_HIP_FP16_H",
    "CU_COMPLEX_H_": "HIP_INCLUDE_HIP_HIP_COMPLEX_H",
    "CURAND_H_": "HIPRAND_H_",
    "CUSPARSE_H_": "_HIPSPARSE_H_",
    "CUSPARSEAPI": "_HIPSPARSE_H_",
    **dict.fromkeys(("CUBLAS_API_H_", "CUBLAS_H_", "CUBLAS_V2_H_"), "HIPBLAS_H"),
    **dict.fromkeys(("_CUFFT_H_", "CUFFT_H_"), "HIPFFT_H_"),
    **dict.fromkeys(("CUSOLVER_COMMON_H_", "CUSOLVERDN_H_"), "HIPSOLVER_H"),
    **dict.fromkeys(("CUDART_VERSION", "__CUDA_API_VERSION", "__CUDART_API_VERSION"), ""),
})

# Headers a hipified source includes by a name ROCm does not install, and the one it does
# (buildport.source.fix): CUDA toolkit headers hipify-perl (6.0.2) has no mapping for, whose
# declarations HIP's runtime header holds (builtin_types.h gathers the device, driver, surface,
# texture and vector types), and hipRTC's header, which hipify writes bare but ROCm installs
# under hip/ (5.2 and 6.x alike).
HEADER_RENAMES: Mapping[str, str] = MappingProxyType({
    **dict.fromkeys(("builtin_types.h", "device_types.h", "surface_types.h", "texture_types.h", "host_defines.h",
                     "device_launch_parameters.h"), "hip/hip_runtime.h"),
    "vector_functions.h": "hip/hip_vector_types.h",  # make_float3 and friends
    "hiprtc.h": "hip/hiprtc.h",
    "nccl.h": "rccl/rccl.h",  # RCCL keeps NCCL's API; its header is rccl/rccl.h (hipify-perl 6.0.2 has no mapping)
})

# ... and CUDA toolkit headers of names a project may give a header of its own (its "math_functions.h"): renamed
# where a source includes them with angle brackets only. HIP's runtime header declares the device math functions,
# atomics and intrinsics they declare (nvcc's compile of a .cu file includes them itself).
SYSTEM_HEADER_RENAMES: Mapping[str, str] = MappingProxyType(dict.fromkeys((
    "math_functions.h", "device_atomic_functions.h", "sm_20_atomic_functions.h", "sm_32_atomic_functions.h",
    "sm_35_atomic_functions.h", "sm_60_atomic_functions.h", "sm_20_intrinsics.h", "sm_30_intrinsics.h",
    "sm_32_intrinsics.h", "sm_35_intrinsics.h", "sm_61_intrinsics.h",
), "hip/hip_runtime.h"))

# CUB's headers hipify leaves (it renames <cub/cub.cuh> only) -> hipCUB's of the same path, which hipCUB 5.7
# installs as hipcub/<path>.hpp; another cub/ header (util_debug.cuh, ...) -> the whole library, hipcub.hpp.
HIPCUB_HEADERS = frozenset((
    *(f"block/block_{n}" for n in ("adjacent_difference", "discontinuity", "exchange", "histogram", "load",
                                   "merge_sort", "radix_rank", "radix_sort", "raking_layout", "reduce",
                                   "run_length_decode", "scan", "shuffle", "store")),
    "block/radix_rank_sort_operations", "config",
    *(f"device/device_{n}" for n in ("adjacent_difference", "histogram", "merge_sort", "partition", "radix_sort",
                                     "reduce", "run_length_encode", "scan", "segmented_radix_sort",
                                     "segmented_reduce", "segmented_sort", "select", "spmv")),
    *(f"grid/grid_{n}" for n in ("barrier", "even_share", "mapping", "queue")),
    *(f"iterator/{n}" for n in ("arg_index_input_iterator", "cache_modified_input_iterator",
                                "cache_modified_output_iterator", "constant_input_iterator",
                                "counting_input_iterator", "discard_output_iterator", "tex_obj_input_iterator",
                                "tex_ref_input_iterator", "transform_input_iterator")),
    *(f"thread/thread_{n}" for n in ("load", "operators", "reduce", "scan", "search", "sort", "store")),
    "util_allocator", "util_ptx", "util_type",
    *(f"warp/warp_{n}" for n in ("exchange", "load", "merge_sort", "reduce", "scan", "store")),
))


def hipcub_header(name: str) -> str | None:
    """What ``#include <cub/...>`` becomes (``cub/util_type.cuh`` → ``hipcub/util_type.hpp``); None for other names."""
    if not name.startswith("cub/") or not name.endswith((".cuh", ".h", ".hpp")):
        return None
    path = name[len("cub/"):].rsplit(".", 1)[0]
    return f"hipcub/{path}.hpp" if path in HIPCUB_HEADERS else "hipcub/hipcub.hpp"


# HIP functions a hipified C file calls with fewer arguments than their C declaration takes, where C++ has a
# default (a template, or a __dparm parameter) and the CUDA function hipify mapped from took fewer in C:
# name -> (the arguments given, the defaults written after them) (buildport.source.fix).
C_DEFAULT_ARGUMENTS: Mapping[str, tuple[int, tuple[str, ...]]] = MappingProxyType({
    "hipHostMalloc": (2, ("hipHostMallocDefault",)),  # cudaMallocHost(void **ptr, size_t size)
})

# HIP functions that take a kernel as `const void*` only, where CUDA's runtime header adds a template overload
# for any function pointer (`cudaFuncSetCacheConfig(kernel<T>, ...)` compiles with nvcc): name -> the index of
# that argument, which buildport.source.fix casts in C++ files (as human ports write it; HIP 5.2 measured).
KERNEL_POINTER_ARGUMENTS: Mapping[str, int] = MappingProxyType({
    "hipFuncSetCacheConfig": 0, "hipFuncSetSharedMemConfig": 0, "hipFuncSetAttribute": 0,
    "hipFuncGetAttributes": 1,
})

# HIP functions that return memory through a `void**` only, where CUDA's runtime header adds a template overload
# for any `T**` (`cudaHostAlloc(&floats, n, flags)` compiles with nvcc; HIP 5.2 has templates for hipMalloc,
# hipHostMalloc and hipMallocManaged, not for these: "no known conversion from 'int **' to 'void **'", HeCBench's
# mallocFree): name -> the index of that argument, which buildport.source.fix casts to `void**` in C++ files.
VOID_POINTER_ARGUMENTS: Mapping[str, int] = MappingProxyType({
    "hipHostAlloc": 0, "hipHostGetDevicePointer": 0, "hipMallocPitch": 0,
})

# Device functions HIP's runtime header defines for these parameter types, which CUDA has not (float
# atomicMin/atomicMax) or had not before sm_60 (double atomicAdd): a project's own definition conflicts with
# HIP's ("static declaration of 'atomicMin' follows non-static declaration", InfiniTAM). buildport.source.fix
# keeps the project's definition for CUDA only (HIP 5.2 and 6.x define them all).
HIP_DEFINED_DEVICE_FUNCTIONS: Mapping[str, frozenset[tuple[str, ...]]] = MappingProxyType({
    "atomicMin": frozenset({("float*", "float"), ("double*", "double")}),
    "atomicMax": frozenset({("float*", "float"), ("double*", "double")}),
    "atomicAdd": frozenset({("double*", "double")}),
})

# Operators HIP's vector types (float3, int2, ...) define as members that are not templates, so a project's own
# free definition for the same type (`void operator-=(float3 &a, const float3 &b)`, as CUDA samples' helper_math.h
# and its copies have) makes every use ambiguous ("use of overloaded operator '-=' is ambiguous", GPUSPH).
# HIP's does the same component by component; buildport.source.fix keeps the project's for CUDA only (HIP 5.2
# measured: the integer-only ones and unary minus are member templates there, which a free function outranks).
HIP_VECTOR_MEMBER_OPERATORS = frozenset({"+=", "-=", "*=", "/="})
# The vector types of HIP's runtime header: a scalar name and a width.
HIP_VECTOR_TYPES = frozenset(
    f"{scalar}{width}"
    for scalar in ("char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "longlong", "ulonglong",
                   "float", "double")
    for width in (1, 2, 3, 4)
)

# CUB's macros hipify leaves (hipify-perl 6.0 has no HIP name) and hipCUB lacks, as an expression of hipCUB's own
# (CUB: `if (cub::Debug(e, __FILE__, __LINE__)) exit(1)`): buildport.source.fix writes the call `{0}` with its
# argument in place (GOMC's CubDebugExit).
CUB_MACRO_FALLBACKS: Mapping[str, str] = MappingProxyType({
    "CubDebugExit": "(HipcubDebug({0}) ? exit(1) : (void)0)",
})

# Device intrinsics CUDA declares for one integer type and HIP overloads for the signed and the unsigned one (5.2
# and 6.x): a call with another integer type (a uint64_t to __ffsll) converts in CUDA and is ambiguous in HIP ("call
# to '__ffsll' is ambiguous", HeCBench langford). name -> CUDA's parameter type, which buildport.source.fix casts
# the argument to (what the call meant with nvcc).
SINGLE_TYPE_INTRINSICS: Mapping[str, str] = MappingProxyType({
    "__ffs": "int",
    "__ffsll": "long long int",
})

# Functions a hipified source calls that the installed HIP may lack, with a definition of the same meaning:
# name -> (the condition under which HIP lacks it, the header it needs, the definition). buildport.source.fix puts
# the definition, under that condition and a guard of its own, before the file's first use.
@dataclass(frozen=True)
class Fallback:
    lacking: str  # a preprocessor condition, true where HIP lacks the function
    header: str  # what the condition and the definition need included first
    definition: str


def _dp4a(signature: str, parts: str) -> str:
    return f"static __device__ __forceinline__ {signature} {{\n  return c + {parts};\n}}\n"


_BYTE_PAIRS = (("a", "b"), *((f"(a >> {shift})", f"(b >> {shift})") for shift in (8, 16, 24)))
_BYTES = "\n         + ".join(f"{{0}}{a} * {{0}}{b}" for a, b in _BYTE_PAIRS)
_HIPSPARSE_STATUSES = ("SUCCESS", "NOT_INITIALIZED", "ALLOC_FAILED", "INVALID_VALUE", "ARCH_MISMATCH",
                       "MAPPING_ERROR", "EXECUTION_FAILED", "INTERNAL_ERROR", "MATRIX_TYPE_NOT_SUPPORTED",
                       "ZERO_PIVOT", "NOT_SUPPORTED", "INSUFFICIENT_RESOURCES")

FALLBACKS: Mapping[str, Fallback] = MappingProxyType({
    # CUDA's four-way byte dot product (sm_61); HIP has no such function (5.2 to 6.x): CUDA's four overloads
    "__dp4a": Fallback("1", "hip/hip_runtime.h", "".join((
        _dp4a("int __dp4a(int a, int b, int c)", _BYTES.format("(signed char)")),
        _dp4a("unsigned int __dp4a(unsigned int a, unsigned int b, unsigned int c)",
              _BYTES.format("(unsigned char)")),
        _dp4a("int __dp4a(char4 a, char4 b, int c)", "a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w"),
        _dp4a("unsigned int __dp4a(uchar4 a, uchar4 b, unsigned int c)",
              "a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w"),
    ))),
    # hipify maps cusparseGetErrorString to it; hipSPARSE has it from 3.0 (ROCm 6.0) on
    "hipsparseGetErrorString": Fallback(
        "hipsparseVersionMajor < 3", "hipsparse/hipsparse.h",
        "static inline const char* hipsparseGetErrorString(hipsparseStatus_t status) {\n  switch (status) {\n"
        + "".join(f"  case HIPSPARSE_STATUS_{name}: return \"HIPSPARSE_STATUS_{name}\";\n"
                  for name in _HIPSPARSE_STATUSES)
        + "  default: return \"unknown hipSPARSE status\";\n  }\n}\n"),
})

# atomicAdd_system, atomicCAS_block, ...: (scope) -> what it is.
SCOPED_ATOMIC = re.compile(r"atomic[A-Z][A-Za-z]*_(system|block)")

# Included headers, as written with their delimiters: (pattern, rule id, library name).
LIBRARY_HEADERS: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (re.compile(r'[<"]npp(?:core|defs|i\w*|s\w*)?\.h[>"]'), "library-no-equivalent", "NPP"),
    (re.compile(r'[<"]nvjpeg\.h[>"]'), "library-no-equivalent", "nvJPEG"),
    (re.compile(r'[<"]cufile\.h[>"]'), "library-no-equivalent", "cuFile"),
    (re.compile(r'[<"]cupti(?:_\w+)?\.h[>"]'), "library-no-equivalent", "CUPTI"),
    (re.compile(r'[<"]nvml\.h[>"]'), "library-no-equivalent", "NVML"),
    (re.compile(r"<cuda/(?:std/)?atomic>"), "cuda-atomic", "libcu++ atomics"),
    (re.compile(r"<cuda/.+>"), "library-no-equivalent", "libcu++"),
    (re.compile(r'[<"](?:cudnn(?:_v\d+|_ops\w*|_adv\w*|_cnn\w*|_backend|_graph|_version)?\.h'
                r'|cudnn_frontend\w*\.h|cudnn_frontend/.+)[>"]'), "library-different-api", "cuDNN"),
    (re.compile(r'[<"](?:nvToolsExt\w*\.h|nvtx3/.+)[>"]'), "library-different-api", "NVTX"),
    (re.compile(r"<mma\.h>"), "library-different-api", "WMMA (warp matrix functions)"),
)

# Headers whose inclusion makes a C or C++ file a CUDA source.
CUDA_HEADER = re.compile(
    r"(?:cuda\w*\.h|cuda/.+|cu(?:blas|fft|rand|sparse|solver|dnn|tensor|file|pti)\w*\.h|npp\w*\.h"
    r"|nvjpeg\.h|nvml\.h|nvrtc\.h|nvToolsExt\w*\.h|nvtx3/.+|thrust/.+|cub/.+|cooperative_groups(?:\.h|/.+)"
    r"|mma\.h|device_launch_parameters\.h|cuComplex\.h|sm_\d+_intrinsics\.h|helper_cuda\.h)"
)
# The execution-space and memory-space keywords of device code: a header of `__device__` helpers that includes
# no CUDA header is device code all the same (HIP spells them alike).
DEVICE_KEYWORDS = frozenset(("__global__", "__device__", "__shared__", "__constant__"))
# Identifiers that only CUDA code uses.
CUDA_IDENTIFIER = re.compile(
    r"cuda[A-Z]\w*|__CUDACC__|__CUDA_ARCH__|(?:cublas|cufft|curand|cusparse|cusolver|cudnn|nvrtc|nvjpeg"
    r"|npp|nvml|cupti|cuFile)[A-Z]\w*|cu(?:Init|Ctx|Module|Mem|Launch|Device|Stream|Event|Func|Tex|Link)[A-Z]\w*"
    r"|CU(?:result|device|context|module|function|stream|event|deviceptr)"
)
# A necessary condition for either of the two above (or a ``<<<`` launch): a C or C++
# file that holds none of these words and matches none of these patterns is not a CUDA
# source, and is not lexed at all (buildport.source.scan.hinted). tests/test_source_rules.py
# checks them against both.
CUDA_SOURCE_WORDS = (
    "cuda", "CUDA", "<<<", "__global__", "__device__", "__shared__", "__constant__", "npp", "thrust/", "cub/", "cooperative_groups", "mma.h", "device_launch_parameters",
    *("cu" + w for w in ("blas", "fft", "rand", "sparse", "solver", "dnn", "tensor", "file", "pti", "File", "Init",
                         "Ctx", "Module", "Mem", "Launch", "Device", "Stream", "Event", "Func", "Tex", "Link",
                         "Complex")),
    *("CU" + w for w in ("result", "device", "context", "module", "function", "stream", "event", "deviceptr")),
    *("nv" + w for w in ("jpeg", "ml", "rtc", "ToolsExt", "tx3")),
)  # fmt: skip
CUDA_SOURCE_PATTERNS = (r"sm_\d",)


@dataclass(frozen=True)
class PropMember:
    """A member of CUDA's device properties that HIP's ``hipDeviceProp_t`` lacks: the HIP version from which
    a member of the same meaning exists, that member, and before it the value every AMD GPU has."""

    since: tuple[int, int]
    member: str
    value: str


# Members of cudaDeviceProp that hipDeviceProp_t lacks (hipify keeps the member's name): CUDA 13 dropped
# deviceOverlap too; HIP 6.0's asyncEngineCount counts the copy engines (true where copies overlap kernels),
# and every AMD GPU overlaps copies with kernels.
PROP_MEMBERS: Mapping[str, PropMember] = MappingProxyType({
    "deviceOverlap": PropMember((6, 0), "asyncEngineCount", "1"),
})


# NVTX, which ROCm does not have: an include of its headers becomes these definitions of its ranges, marks and
# names, which do nothing unless BUILDPORT_NVTX_ROCTX is defined (then they are roctx's: link -lroctx64). A file
# that uses more of NVTX than these (event attributes, domains) is left to the finding.
NVTX_HEADER = re.compile(r"(?:nvtx3/)?nvToolsExt(?:CudaRt|Cuda)?\.h")
NVTX_KEPT = frozenset({
    "nvtxRangePushA", "nvtxRangePush", "nvtxRangePop", "nvtxMarkA", "nvtxMark", "nvtxRangeStartA", "nvtxRangeStart",
    "nvtxRangeEnd", "nvtxRangeId_t", "nvtxNameOsThreadA", "nvtxNameCudaStreamA", "nvtxNameCudaEventA",
    "nvtxNameCudaDeviceA",
})
NVTX_DEFINITIONS = """\
#ifndef BUILDPORT_NVTX /* NVTX's ranges, marks and names: no-ops, or roctx's with BUILDPORT_NVTX_ROCTX */
#define BUILDPORT_NVTX
#include <stdint.h>
typedef uint64_t nvtxRangeId_t;
#ifdef BUILDPORT_NVTX_ROCTX
#include <roctracer/roctx.h>
static inline int nvtxRangePushA(const char *message) { return roctxRangePushA(message); }
static inline int nvtxRangePop(void) { return roctxRangePop(); }
static inline void nvtxMarkA(const char *message) { roctxMarkA(message); }
static inline nvtxRangeId_t nvtxRangeStartA(const char *message) { return roctxRangeStartA(message); }
static inline void nvtxRangeEnd(nvtxRangeId_t id) { roctxRangeStop(id); }
#else
static inline int nvtxRangePushA(const char *message) { (void)message; return 0; }
static inline int nvtxRangePop(void) { return 0; }
static inline void nvtxMarkA(const char *message) { (void)message; }
static inline nvtxRangeId_t nvtxRangeStartA(const char *message) { (void)message; return 0; }
static inline void nvtxRangeEnd(nvtxRangeId_t id) { (void)id; }
#endif
#define nvtxRangePush nvtxRangePushA
#define nvtxMark nvtxMarkA
#define nvtxRangeStart nvtxRangeStartA
#define nvtxNameOsThreadA(id, name) ((void)(id), (void)(name))
#define nvtxNameCudaStreamA(stream, name) ((void)(stream), (void)(name))
#define nvtxNameCudaEventA(event, name) ((void)(event), (void)(name))
#define nvtxNameCudaDeviceA(device, name) ((void)(device), (void)(name))
#endif"""
