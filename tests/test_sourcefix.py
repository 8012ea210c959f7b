"""migrate's change to a source after hipify: tests of CUDA header macros made tests of ROCm's."""

from __future__ import annotations

from buildport.source.fix import port_source
from buildport.source.scan import scan_source

HELPER = """\
#ifndef COMMON_HELPER_CUDA_H_
#define COMMON_HELPER_CUDA_H_
#ifdef __DRIVER_TYPES_H__
#define checkCudaErrors(val) check((val), #val, __FILE__, __LINE__)
#endif
#if defined(__CUDA_RUNTIME_H__) && CUDART_VERSION >= 4000
inline int findCudaDevice() { return 0; }
#elif defined(CURAND_H_)
#endif
// #ifdef __CUDA_RUNTIME_H__ in a comment, and a string: "__CUDA_RUNTIME_H__"
#endif
"""


def test_guards_rocm_names_are_turned_and_the_rest_left_to_the_finding() -> None:
    new, fixes = port_source(HELPER)
    assert fixes == {"header_tests": 3}
    assert new == (HELPER.replace("#ifdef __DRIVER_TYPES_H__", "#ifdef HIP_INCLUDE_HIP_DRIVER_TYPES_H")
                   .replace("defined(__CUDA_RUNTIME_H__)", "defined(HIP_INCLUDE_HIP_HIP_RUNTIME_H)")
                   .replace("defined(CURAND_H_)", "defined(HIPRAND_H_)"))
    left = [f.message for f in scan_source(new, "helper_cuda.h") if f.rule == "cuda-header-macro"]
    assert len(left) == 1 and "CUDART_VERSION" in left[0]  # a version: no ROCm name to put there
    assert port_source(new) == (new, {})  # a second run changes nothing


def test_a_file_that_defines_the_macro_itself_is_left_alone() -> None:
    text = "#define __cuda_cuda_h__ 1\n#ifdef __cuda_cuda_h__\n#endif\n"
    assert port_source(text) == (text, {})
    assert port_source("int x;\n") == ("int x;\n", {})


def test_register_specifiers_are_dropped_in_code_only() -> None:
    """HeCBench's s3d: `register double x` is an error for clang under C++17 (a warning for g++)."""
    text = ("#define FAST register\n"  # a macro's body: not code of this file
            "// register in a comment\n"
            "__device__ void f(register const double* p) {\n"
            "  register\tdouble a = p[0];\n"
            '  const char* s = "register";\n'
            "}\n")
    new, fixes = port_source(text)
    assert fixes == {"register": 2}
    assert new == text.replace("(register const", "(const").replace("  register\tdouble", "  double")
    assert port_source(new) == (new, {})


def test_port_source_counts_each_fix() -> None:
    text = "#ifdef __CUDA_RUNTIME_H__\nregister int i;\n#endif\n"
    assert port_source(text) == ("#ifdef HIP_INCLUDE_HIP_HIP_RUNTIME_H\nint i;\n#endif\n",
                                 {"header_tests": 1, "register": 1})


def test_hiprtc_is_included_where_rocm_installs_it() -> None:
    """hipify-perl writes <hiprtc.h> for <nvrtc.h> (cuda-samples' nvrtc_helper.h); ROCm has <hip/hiprtc.h>."""
    assert port_source("#include <hiprtc.h>\n") == ("#include <hip/hiprtc.h>\n", {"headers": 1})


def test_nccl_header_is_rccls() -> None:
    """RCCL keeps NCCL's API under its own header; hipify-perl leaves <nccl.h> (nccl-tests' common.h)."""
    assert port_source('#include "nccl.h"\n') == ('#include "rccl/rccl.h"\n', {"headers": 1})


def test_headers_hipify_leaves_become_hips() -> None:
    """cuda-samples' vectorAddDrv.cpp: `#include <builtin_types.h>` is left by hipify-perl and not in ROCm."""
    text = '#include <hip/hip_runtime.h>\n#include <builtin_types.h>\n#  include "texture_types.h"\n' \
           '// #include <builtin_types.h>\n#include <my_builtin_types.h>\n'
    new, fixes = port_source(text)
    assert fixes == {"headers": 2}
    assert new == ('#include <hip/hip_runtime.h>\n#include <hip/hip_runtime.h>\n#  include "hip/hip_runtime.h"\n'
                   '// #include <builtin_types.h>\n#include <my_builtin_types.h>\n')
    assert port_source(new) == (new, {})


def test_cuda_device_headers_with_common_names_are_renamed_in_angle_brackets_only() -> None:
    """caffe's math_functions.cu: `#include <math_functions.h>` (CUDA's, for fabs) is left by hipify-perl; a
    project's own "math_functions.h" is its own."""
    text = ('#include <hip/hip_runtime.h>\n#include <math_functions.h>  // fabs\n#include <sm_35_intrinsics.h>\n'
            '#include "math_functions.h"\n')
    new, fixes = port_source(text)
    assert fixes == {"headers": 2}
    assert new == ('#include <hip/hip_runtime.h>\n#include <hip/hip_runtime.h>  // fabs\n'
                   '#include <hip/hip_runtime.h>\n#include "math_functions.h"\n')
    assert port_source(new) == (new, {})


def test_a_kernel_file_without_the_runtime_header_gets_it() -> None:
    """nvcc includes cuda_runtime.h in every .cu file; hipify adds hip_runtime.h only where it converts."""
    kernel = 'extern "C" __global__ void k(float* x) { x[threadIdx.x] = 1.0f; }\n'
    assert port_source(kernel, "k.cu") == ('#include "hip/hip_runtime.h"\n' + kernel, {"runtime_include": 1})
    assert port_source(kernel, "k.cpp") == (kernel, {})  # not a CUDA source: nvcc did not compile it so
    crlf = "\ufeff// kernels\r\n__global__ void k() {}\r\n"
    assert port_source(crlf, "k.cu")[0] == ('\ufeff#include "hip/hip_runtime.h"\r\n'
                                           "// kernels\r\n__global__ void k() {}\r\n")
    included = '#include <hip/hip_runtime.h>\n' + kernel
    assert port_source(included, "k.cu") == (included, {})
    assert port_source('// not hip_runtime.h itself\n' + kernel, "k.cu")[1] == {"runtime_include": 1}


def test_callback_calling_convention_macros_are_dropped_unless_defined_here() -> None:
    """cuda-samples' simpleCallback: `void CUDART_CB myStreamCallback(...)` after hipify has no macro to expand."""
    text = "void CUDART_CB done(hipStream_t s, hipError_t e, void* d);\n"
    assert port_source(text) == ("void done(hipStream_t s, hipError_t e, void* d);\n", {"callback_macro": 1})
    own = "#define CUDA_CB\ntypedef void(CUDA_CB *cb_t)(void*);\n"  # a stand-in for cuda.h defines its own
    assert port_source(own) == (own, {})


C_PINNED = """\
#include "hip/hip_runtime.h"
void alloc(float **p, int *a, size_t n) {
  hipHostMalloc((void**)p, n * sizeof(float));
  hipHostMalloc(&a[pick(1, 2)], n);
  hipHostMalloc(p, n, hipHostMallocPortable);
  /* hipHostMalloc(x, y) in a comment, and a name alone: */ use(hipHostMalloc);
}
"""


def test_a_c_file_gets_the_arguments_only_cxx_defaults() -> None:
    """hipify maps cudaMallocHost(&p, n) to hipHostMalloc(&p, n): C++ finds a template with a default flag,
    C only the three-parameter function (a C file then fails: GPUJPEG's sources did)."""
    new, fixes = port_source(C_PINNED, "src/buffers.c")
    assert fixes == {"c_defaults": 2}
    assert new == (C_PINNED.replace("n * sizeof(float));", "n * sizeof(float), hipHostMallocDefault);")
                   .replace("pick(1, 2)], n);", "pick(1, 2)], n, hipHostMallocDefault);"))
    assert port_source(C_PINNED, "src/buffers.cpp") == (C_PINNED, {})  # C++ has the default


WARPS = """\
#define FULL_MASK 0xffffffffu
#define HALF 0x0000ffff
__device__ float reduce(float v, int p) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xFFFFFFFF, v, o);
  v += __shfl_xor_sync(FULL_MASK, v, 1, 32);
  unsigned long long b = __ballot_sync(__activemask(), p);
  int a = __any_sync(~0u, p) + __all_sync(HALF, p);
  __syncwarp();
  return __shfl_sync( 0xffffffff , v, 0);  // __shfl_sync(0xffffffff, v, 0) in a comment
}
"""


def test_warp_sync_calls_over_the_whole_warp_become_what_an_older_rocm_has() -> None:
    """ROCm before 6.2 has no __shfl_*_sync/__any_sync/__all_sync/__ballot_sync; over the whole warp the forms
    without a mask are the same (HeCBench's human ports did this); __syncwarp() a wavefront barrier. A partial
    mask stays."""
    from buildport.rules.source_rules import WARP_BARRIER

    new, fixes = port_source(WARPS, "reduce.cuh", (5, 2))
    assert fixes == {"warp_sync": 6}
    assert new == (WARPS.replace("__shfl_down_sync(0xFFFFFFFF, v, o)", "__shfl_down(v, o)")
                   .replace("__syncwarp()", WARP_BARRIER)
                   .replace("__shfl_xor_sync(FULL_MASK, v, 1, 32)", "__shfl_xor(v, 1, 32)")
                   .replace("__ballot_sync(__activemask(), p)", "__ballot(p)")
                   .replace("__any_sync(~0u, p)", "__any(p)")
                   .replace("return __shfl_sync( 0xffffffff , v, 0)", "return __shfl(v, 0)"))
    assert port_source(WARPS, "reduce.cuh", (6, 2)) == (WARPS, {})  # ROCm 6.2 has them
    assert port_source(WARPS, "reduce.cuh") == (WARPS, {})  # the installed ROCm unknown: left
    left = {f.rule for f in scan_source(new, "reduce.cuh")}
    assert {"warp-sync-intrinsic", "warp-mask-32bit"} <= left  # __all_sync(HALF..); the 64-bit ballot


def test_device_launch_parameters_and_vector_functions_become_hips() -> None:
    """hipify-perl 6.0.2 leaves both; HIP's runtime header declares threadIdx and friends, its vector types
    header make_float3 and friends."""
    text = '#include <device_launch_parameters.h>\n#include "vector_functions.h"\n'
    assert port_source(text) == ('#include <hip/hip_runtime.h>\n#include "hip/hip_vector_types.h"\n', {"headers": 2})


def test_a_launch_written_with_spaces_is_closed_up() -> None:
    """nvcc reads `k << <g, b >> >(...)`; clang does not. A shift followed by a comparison stays."""
    text = "void f(){ k << <1, 1 >> >(p); g<T> << < grid(1, 2), b >> >(p); x = a << <b; k<<<2, 3>>>(p); }\n"
    new, fixes = port_source(text, "launch.cpp")
    assert fixes == {"launch_spacing": 2}
    assert new == ("void f(){ k <<<1, 1 >>>(p); g<T> <<< grid(1, 2), b >>>(p); x = a << <b; "
                   "k<<<2, 3>>>(p); }\n")


def test_struct_before_a_hip_typedef_goes() -> None:
    """CUDA declares struct cudaGraphicsResource; HIP's hipGraphicsResource is a typedef of another struct."""
    text = "struct hipGraphicsResource* resource; /* struct hipGraphicsResource */ struct hipArray* a;\n"
    assert port_source(text) == (
        "struct _hipGraphicsResource* resource; /* struct hipGraphicsResource */ struct hipArray* a;\n",
        {"struct_typedef": 1})


def test_forward_declaration_of_a_typedef_names_its_tag() -> None:
    """``struct hipGraphicsResource;`` conflicts with HIP's typedef of the same name (clang: an error); a C header
    that includes no HIP header keeps its opaque pointer (GPUJPEG's gpujpeg_common.h, read by gcc)."""
    text = "struct hipGraphicsResource;\nstruct hipGraphicsResource *r;\n"
    assert port_source(text) == ("struct _hipGraphicsResource;\nstruct _hipGraphicsResource *r;\n",
                                 {"struct_typedef": 2})


def test_kernels_given_as_function_pointers_are_cast_for_hip() -> None:
    """HIP declares hipFuncSetCacheConfig(const void*, ...) only; CUDA adds a template for any kernel (GPUJPEG)."""
    text = ("hipFuncSetCacheConfig(huffman_kernel<true, 4>, hipFuncCachePreferShared);\n"
            "hipFuncSetCacheConfig((const void*)k, hipFuncCachePreferL1);\n"
            "hipFuncGetAttributes(&attributes, scale);\n")
    assert port_source(text, "a.cu") == (
        "#include \"hip/hip_runtime.h\"\n"
        "hipFuncSetCacheConfig(reinterpret_cast<const void*>(huffman_kernel<true, 4>), hipFuncCachePreferShared);\n"
        "hipFuncSetCacheConfig((const void*)k, hipFuncCachePreferL1);\n"
        "hipFuncGetAttributes(&attributes, reinterpret_cast<const void*>(scale));\n",
        {"kernel_pointer": 2, "runtime_include": 1})
    # a choice of kernels, a directive among the arguments, a shift inside a template argument
    chosen = "hipFuncSetAttribute(smem < 49152 ? kA : kB, attr, n);\n"
    assert port_source(chosen, "a.hip") == (chosen, {})
    split = "hipFuncSetCacheConfig(\n#if A\n  kA,\n#else\n  kB,\n#endif\n  hipFuncCachePreferL1);\n"
    assert port_source(split, "a.hip") == (split, {})
    shifted = "hipFuncSetCacheConfig(k<(S>>1), 2>, c);\n"
    assert port_source(shifted, "a.hip")[0] == "hipFuncSetCacheConfig(reinterpret_cast<const void*>(k<(S>>1), 2>), c);\n"
    # C has no template overload to miss, and no reinterpret_cast
    assert port_source("hipFuncSetCacheConfig(k, hipFuncCachePreferL1);\n", "a.c")[1] == {}


def test_device_functions_hip_defines_are_kept_for_cuda_only() -> None:
    """InfiniTAM defines atomicMin(float*, float), which CUDA lacks and HIP's runtime has: clang refuses both."""
    text = ("__device__ static inline void atomicMin(float* address, float val)\n{\n  spin(address, val);\n}\n"
            "__device__ int atomicMin(int* a, int v) { return 0; }\n"
            "__global__ void k(float *p) { atomicMin(p, 1.0f); }\n")
    assert port_source(text, "a.hip") == (
        "#ifndef __HIP_PLATFORM_AMD__  // HIP defines it\n"
        "__device__ static inline void atomicMin(float* address, float val)\n{\n  spin(address, val);\n}\n#endif\n"
        "__device__ int atomicMin(int* a, int v) { return 0; }\n"
        "__global__ void k(float *p) { atomicMin(p, 1.0f); }\n", {"hip_defines": 1})


def test_compound_operators_hip_vector_types_have_are_kept_for_cuda_only() -> None:
    """GPUSPH's vector_math.h (like CUDA samples' helper_math.h) defines `operator-=(float3&, const float3&)`;
    HIP's float3 has that member, and clang calls every `a -= b` ambiguous."""
    text = ("static __forceinline__ __host__ __device__ void operator-=(float3 &a, const float3 &b)\n"
            "{\n\ta.x -= b.x;\n}\n"
            "inline __host__ __device__ void operator+=(int2 &a, int2 b) { a.x += b.x; } // adds\n"
            "__host__ __device__ void operator*=(double4 &a, const double4 &b);\n"
            # left: a scalar operand, two types, a binary operator, a template, a member, a const target
            "inline __host__ __device__ void operator*=(float3 &a, float b) { a.x *= b; }\n"
            "inline __host__ __device__ void operator+=(float4 &a, float3 b) { a.x += b.x; }\n"
            "inline __host__ __device__ float3 operator+(float3 a, float3 b) { return a; }\n"
            "template <typename T> void operator/=(float2 &a, float2 b) {}\n"
            "void Vec::operator-=(float3 &a, float3 b) {}\n"
            "void operator-=(const float3 &a, float3 b);\n")
    fixed, counts = port_source(text, "vector_math.h")
    assert counts == {"vector_operators": 3}
    assert fixed == (
        "#ifndef __HIP_PLATFORM_AMD__  // HIP's vector types define it\n"
        "static __forceinline__ __host__ __device__ void operator-=(float3 &a, const float3 &b)\n"
        "{\n\ta.x -= b.x;\n}\n#endif\n"
        "#ifndef __HIP_PLATFORM_AMD__  // HIP's vector types define it\n"
        "inline __host__ __device__ void operator+=(int2 &a, int2 b) { a.x += b.x; }\n#endif // adds\n"
        "#ifndef __HIP_PLATFORM_AMD__  // HIP's vector types define it\n"
        "__host__ __device__ void operator*=(double4 &a, const double4 &b);\n#endif\n"
    ) + text.split("// adds\n", 1)[1].split(";\n", 1)[1]
    # a second run finds them kept for CUDA already
    assert port_source(fixed, "vector_math.h") == (fixed, {})
    # code before it on its line: left to a person
    crowded = "int x; void operator+=(float3 &a, float3 b) {}\n"
    assert port_source(crowded, "a.hip") == (crowded, {})


def test_a_warp_mask_macro_another_header_defines_counts() -> None:
    """bmf's kernels header calls __shfl_down_sync(FULLMASK, ...); helper/cuda_helpers.cuh defines FULLMASK."""
    from buildport.source.fix import full_mask_macros

    helper = "#define FULLMASK 0xffffffff\n#define LOW_HALF 0x0000ffff\n#define ALL (~0u)\n"
    assert full_mask_macros(helper) == {"FULLMASK", "ALL"}
    assert full_mask_macros("int x = 0xffffffff;\n") == set()
    kernel = "__device__ int f(int v) { return __any_sync(FULLMASK, v) + __any_sync(LOW_HALF, v); }\n"
    masks = frozenset(full_mask_macros(helper))
    assert port_source(kernel, "k.cuh", (5, 2), masks) == (
        "__device__ int f(int v) { return __any(v) + __any_sync(LOW_HALF, v); }\n", {"warp_sync": 1})
    # this file's own definition decides
    assert port_source("#define FULLMASK 0x1\n" + kernel, "k.cuh", (5, 2), masks)[1] == {}


def test_syncwarp_over_the_whole_warp_becomes_a_wavefront_barrier_before_rocm_6_2() -> None:
    """HeCBench's lsqt calls __syncwarp() between volatile shared-memory steps; ROCm 5.2 has no __syncwarp."""
    from buildport.rules.source_rules import WARP_BARRIER

    text = "__device__ void f(volatile float *s, int t) {\n  s[t] += s[t + 32]; __syncwarp();\n" \
           "  s[t] += s[t + 16]; __syncwarp(0xffffffff);\n  s[t] += s[t + 8]; __syncwarp(lanes);\n}\n"
    fixed, counts = port_source(text, "a.hip", (5, 2))
    assert counts == {"warp_sync": 2}
    assert fixed == text.replace("__syncwarp()", WARP_BARRIER).replace("__syncwarp(0xffffffff)", WARP_BARRIER)
    assert "__syncwarp(lanes)" in fixed  # a partial mask: left to the finding
    assert port_source(text, "a.hip", (6, 2)) == (text, {})  # ROCm 6.2 has it


def test_cub_macros_hipcub_lacks_are_written_with_hipcubs() -> None:
    """GOMC checks CUB calls with CubDebugExit, which hipify leaves and hipCUB 5.7 does not define."""
    text = "void f() {\n  CubDebugExit(hipcub::DeviceReduce::Sum(tmp, bytes, in, out, n));\n}\n"
    assert port_source(text, "a.hip") == (
        "void f() {\n  (HipcubDebug(hipcub::DeviceReduce::Sum(tmp, bytes, in, out, n)) ? exit(1) : (void)0);\n}\n",
        {"cub_macros": 1})
    own = "#define CubDebugExit(e) check(e)\n" + text
    assert port_source(own, "a.hip") == (own, {})  # the project's own macro


def test_cub_headers_hipify_leaves_become_hipcubs() -> None:
    """hipify renames <cub/cub.cuh> only; HeCBench's moe includes <cub/util_type.cuh> too."""
    text = ('#include <cub/util_type.cuh>\n#include "cub/block/block_reduce.cuh"\n#include <cub/util_debug.cuh>\n'
            "#include <cubature.h>\n")
    assert port_source(text, "kernels.h") == (
        '#include <hipcub/util_type.hpp>\n#include "hipcub/block/block_reduce.hpp"\n#include <hipcub/hipcub.hpp>\n'
        "#include <cubature.h>\n", {"headers": 3})


def test_functions_hip_lacks_are_defined_before_their_first_use() -> None:
    text = ('#include <cstdio>\n#include "hip/hip_runtime.h"\n#ifdef USE_SPARSE\n#include <hipsparse.h>\n#endif\n'
            '#define CHECK(s) printf("%s", hipsparseGetErrorString(s))\n'
            "__global__ void k(const int *a, int *c) { c[0] = __dp4a(a[0], a[1], c[0]); }\n")
    new, fixes = port_source(text, "main.cu")
    assert fixes == {"fallbacks": 2}
    includes = '#include <cstdio>\n#include "hip/hip_runtime.h"\n'
    assert new.startswith(includes)  # after the last include outside a conditional, before the first use
    block = new[len(includes):new.index("#ifdef USE_SPARSE")]
    assert "#if (defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)) && !defined(BUILDPORT_FALLBACK_HIPSPARSEGETERRORSTRING)\n" in block
    assert "#include <hipsparse/hipsparse.h>\n#if hipsparseVersionMajor < 3\n" in block
    assert "case HIPSPARSE_STATUS_ZERO_PIVOT: return \"HIPSPARSE_STATUS_ZERO_PIVOT\";" in block
    assert "static __device__ __forceinline__ int __dp4a(int a, int b, int c)" in block  # before its first use too
    assert "unsigned int __dp4a(uchar4 a, uchar4 b, unsigned int c)" in block
    assert block.count("#if ") == 3 and block.count("#endif") == 3
    assert port_source(new, "main.cu") == (new, {})  # a second run changes nothing


def test_a_file_with_its_own_definition_or_no_include_keeps_its_shape() -> None:
    own = ("template <typename T> __device__ T __dp4a(const T a, const T b, T c) { return c; }\n"
           "__global__ void k(int *c) { c[0] = __dp4a(c[0], c[1], 0); }\n")
    assert port_source(own, "own.cuh") == (own, {})
    bare = "__device__ int dot(int a, int b) { return __dp4a(a, b, 0); }"  # a header without includes or newline
    new, fixes = port_source(bare, "dot.cuh")
    assert fixes == {"fallbacks": 1}
    assert new.startswith("#if (defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)) && !defined(BUILDPORT_FALLBACK_DP4A)\n")
    assert new.endswith("#endif\n" + bare)


def test_a_fallback_goes_inside_the_include_guard_and_past_includes_of_every_branch_of_its_use() -> None:
    text = ("#ifndef CHECKS_H\n#define CHECKS_H\n#include <cstdio>\n#ifdef DEBUG\n#include <cassert>\n#endif\n"
            "#if A\n#include <hipsparse.h>\n#else\n#define MSG(s) hipsparseGetErrorString(s)\n#endif\n#endif\n")
    new, fixes = port_source(text, "checks.h")
    assert fixes == {"fallbacks": 1}
    before, after = new.split("#if (defined(__HIP_PLATFORM_AMD__) || defined(__HIP__))", 1)
    assert before == "#ifndef CHECKS_H\n#define CHECKS_H\n#include <cstdio>\n"
    assert after.split("#endif\n#endif\n", 1)[1].startswith("#ifdef DEBUG\n")


def test_arguments_of_intrinsics_hip_overloads_are_cast_to_cudas_one_type() -> None:
    text = ("__global__ void k(const unsigned long *w, int *out, unsigned u) {\n"
            "  out[0] = __ffsll(w[0]) + __ffs(u) + __ffs(8) + __ffsll((long long int)w[1]) + __ffsll(w[2] | 1);\n}\n")
    new, fixes = port_source(text, "k.cu")
    assert fixes["intrinsic_casts"] == 3
    assert ("out[0] = __ffsll((long long int)(w[0])) + __ffs((int)(u)) + __ffs(8) + __ffsll((long long int)w[1])"
            " + __ffsll((long long int)(w[2] | 1));") in new
    assert port_source(new, "k.cu")[1] == {}


def test_a_shuffle_loses_any_mask_and_a_vote_a_constant_one() -> None:
    """A shuffle's mask only says which lanes take part (HeCBench bsw: a ballot's result); a vote's mask narrows
    its result, so only one naming the whole warp goes, a variable declared so and never assigned again too
    (HeCBench atomicAggregate)."""
    text = ("__device__ int f(int v, int p) {\n  unsigned mask = __ballot(p);\n  unsigned full = 0xFFFFFFFF;\n"
            "  unsigned moving = 0xFFFFFFFF;\n  moving &= 3;\n"
            "  v += __shfl_down_sync(mask, v, 1);\n  return __ballot_sync(full, p) + __any_sync(moving, p)"
            " + __all_sync(mask, p);\n}\n")
    new, fixes = port_source(text, "k.cu", (5, 2))
    assert fixes == {"warp_sync": 2, "runtime_include": 1}
    assert "v += __shfl_down(v, 1);" in new
    assert "return __ballot(p) + __any_sync(moving, p) + __all_sync(mask, p);" in new


def test_a_macro_that_is_device_in_nvccs_device_pass_only_is_host_device_for_hip() -> None:
    """InfiniTAM's _CPU_AND_GPU_CODE_: __device__ under a test of __CUDA_ARCH__, nothing otherwise."""
    text = ("#if defined(__HIPCC__) && defined(__CUDA_ARCH__)\n#define SHARED __device__  // device pass\n#else\n"
            "#define SHARED\n#endif\n#ifdef __CUDA_ARCH__\n#define ALSO __device__\n#else\n#define ALSO\n#endif\n"
            "#ifdef __CUDA_ARCH__\n#define INLINE __device__\n#else\n#define INLINE inline\n#endif\n"
            "#ifdef __CUDA_ARCH__\n#define MORE __device__\n#define ATOM atomicAdd\n#else\n#define MORE\n#endif\n"
            "#if defined(__CUDA_ARCH__)\n#define CONST __constant__\n#else\n#define CONST\n#endif\n"
            "#ifdef __CUDA_ARCH__\n#define BOTH __device__\n#else\n#define BOTH __host__ __device__\n#endif\n")
    new, fixes = port_source(text, "platform.h")
    assert fixes == {"device_pass_macros": 2}
    assert new.startswith("#if defined(__HIPCC__) || (defined(__HIPCC__) && defined(__CUDA_ARCH__))\n"
                          "#define SHARED __host__ __device__  // device pass\n#else\n#define SHARED\n#endif\n"
                          "#if defined(__HIPCC__) || defined(__CUDA_ARCH__)\n#define ALSO __host__ __device__\n")
    for left in ("#define CONST __constant__\n", "#define BOTH __device__\n", "#define INLINE __device__\n",
                 "#define MORE __device__\n"):
        assert left in new  # not this idiom (another keyword, an alternative that is not empty, more in the branch)
    assert port_source(new, "platform.h") == (new, {})


def test_fallbacks_go_after_includes_outside_braces_and_comments() -> None:
    text = ('#include <cstdio> /* the C library,\n   and more */\nextern "C" {\n#include "c_api.h"\n}\n'
            "__global__ void k(int *c) { c[0] = __dp4a(c[0], c[1], 0); }\n")
    new, fixes = port_source(text, "k.cu")
    assert fixes["fallbacks"] == 1
    block = new.index("#if (defined(__HIP_PLATFORM_AMD__) || defined(__HIP__))")
    assert new.index("and more */\n") < block < new.index('extern "C"')
    assert port_source(new, "k.cu") == (new, {})


def test_a_mask_name_declared_twice_is_no_constant_and_a_cast_to_another_type_is_cast_again() -> None:
    text = ("__device__ int f(int p) { unsigned mask = 0xffffffff; return __any_sync(mask, p); }\n"
            "__device__ int g(unsigned mask, int p) { return __any_sync(mask, p); }\n"
            "__device__ int h(unsigned long z) { return __ffsll((uint64_t)z) + __ffsll((long long)z); }\n")
    new, fixes = port_source(text, "k.cuh", (5, 2))
    assert new.count("__any_sync(mask, p)") == 2  # g's mask is a parameter: no constant of f's
    assert "__ffsll((long long int)((uint64_t)z)) + __ffsll((long long)z)" in new


def test_device_property_members_hip_lacks_are_read_from_what_it_has() -> None:
    text = ("hipDeviceProp_t prop, props[2]; hipDeviceProp_t *p = &prop;\n"
            "int a = !prop.deviceOverlap + props[i % 2].deviceOverlap + p->deviceOverlap + (*p).deviceOverlap\n"
            "      + get(x).deviceOverlap + s.inner.deviceOverlap;\n")
    before_6, counts = port_source(text, "a.cpp", (5, 2))
    assert counts["prop_members"] == 6
    assert before_6.splitlines()[1:] == [
        "int a = !((void)(prop), 1) + ((void)(props[i % 2]), 1) + ((void)(p), 1) + ((void)((*p)), 1)",
        "      + ((void)(get(x)), 1) + ((void)(s.inner), 1);",
    ]
    since_6, _ = port_source(text, "a.cpp", (6, 0))
    assert since_6 == text.replace("deviceOverlap", "asyncEngineCount")
    # a file that names no device-properties type keeps a project's own member of that name
    own = "struct Caps { int deviceOverlap; };\nint f(Caps c) { return c.deviceOverlap; }\n"
    assert port_source(own, "b.cpp", (5, 2)) == (own, {})
    assert port_source(text, "a.cpp", None)[1].get("prop_members") is None  # the HIP version unknown: left


def test_nvtx_includes_become_definitions_of_what_rocm_lacks() -> None:
    text = ("#include <nvtx3/nvToolsExt.h>\r\n#include <nvtx3/nvToolsExtCudaRt.h>\r\n"
            "void f(hipStream_t s) { nvtxRangePushA(\"a\"); nvtxNameCudaStreamA(s, \"x\"); nvtxRangePop(); }\r\n")
    fixed, counts = port_source(text, "a.cpp", (5, 2))
    assert counts == {"nvtx": 2}
    first, rest = fixed.split("#endif\r\n", 1)[0], fixed.split("#ifndef BUILDPORT_NVTX", 1)[1]
    assert first.startswith("#ifndef BUILDPORT_NVTX /* NVTX's ranges") and "\n" not in first.replace("\r\n", "")
    assert "nvToolsExt" not in fixed and rest.count("#ifndef BUILDPORT_NVTX") == 0
    assert fixed.endswith("\r\n\r\nvoid f(hipStream_t s) { nvtxRangePushA(\"a\"); nvtxNameCudaStreamA(s, \"x\"); "
                          "nvtxRangePop(); }\r\n")
    # more of NVTX than the definitions give: left to the finding
    attributes = "#include <nvToolsExt.h>\nvoid g() { nvtxEventAttributes_t e = {0}; nvtxRangePushEx(&e); }\n"
    assert port_source(attributes, "b.cpp", (5, 2)) == (attributes, {})


def test_a_namespace_of_the_project_named_like_cub_gets_its_name_back() -> None:
    """GPUSPH: hipify reads `using namespace cubounds` as `using namespace cub` followed by `ounds`."""
    text = ("using namespace hipcub;\n"  # CUB's own, as hipify writes it: kept
            "using namespace hipcubounds;\n"
            "using  namespace\thipcub_helpers; // using namespace hipcubic\n"
            'const char* s = "using namespace hipcubounds";\n'
            "namespace hipcubx { }\n")  # declared so: not hipify's doing, and not a using-directive
    new, fixes = port_source(text)
    assert fixes == {"cub_namespace": 2}
    assert new == ("using namespace hipcub;\n"
                   "using namespace cubounds;\n"
                   "using  namespace\tcub_helpers; // using namespace hipcubic\n"
                   'const char* s = "using namespace hipcubounds";\n'
                   "namespace hipcubx { }\n")
    assert port_source(new) == (new, {})


def test_pointers_hip_takes_as_void_only_are_cast_in_cpp() -> None:
    """HeCBench's mallocFree: `cudaHostAlloc(&Ad, size, flags)` with `int *Ad` compiles with nvcc (a template
    overload) and not against HIP's `hipHostAlloc(void**, ...)`."""
    text = ("int *a; float *b; void *c;\n"
            "hipHostAlloc(&a, n, hipHostMallocMapped);\n"
            "hipHostGetDevicePointer(&b, a, 0);\n"
            "hipMallocPitch(&arr[i], &pitch, w, h);\n"
            "hipHostAlloc((void**)&c, n, 0);\n"  # a cast already
            "hipHostAlloc(reinterpret_cast<void **>(&c), n, 0);\n"
            "// hipHostAlloc(&a, n, 0) in a comment\n")
    new, fixes = port_source(text, "main.cpp")
    assert fixes == {"void_pointer": 3}
    assert new == text.replace("hipHostAlloc(&a,", "hipHostAlloc(reinterpret_cast<void**>(&a),", 1) \
        .replace("(&b,", "(reinterpret_cast<void**>(&b),") \
        .replace("(&arr[i],", "(reinterpret_cast<void**>(&arr[i]),")
    assert port_source(new, "main.cpp") == (new, {})
    assert port_source(text, "main.c") == (text, {})  # C converts any object pointer to and from void*
