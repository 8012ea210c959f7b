"""migrate's change to a source after hipify: tests of CUDA header macros made tests of ROCm's."""

from __future__ import annotations

from buildport.sourcefix import port_header_tests
from buildport.sourcescan import scan_source

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
    new, count = port_header_tests(HELPER)
    assert count == 3
    assert new == (HELPER.replace("#ifdef __DRIVER_TYPES_H__", "#ifdef HIP_INCLUDE_HIP_DRIVER_TYPES_H")
                   .replace("defined(__CUDA_RUNTIME_H__)", "defined(HIP_INCLUDE_HIP_HIP_RUNTIME_H)")
                   .replace("defined(CURAND_H_)", "defined(HIPRAND_H_)"))
    left = [f.message for f in scan_source(new, "helper_cuda.h") if f.rule == "cuda-header-macro"]
    assert len(left) == 1 and "CUDART_VERSION" in left[0]  # a version: no ROCm name to put there
    assert port_header_tests(new) == (new, 0)  # a second run changes nothing


def test_a_file_that_defines_the_macro_itself_is_left_alone() -> None:
    text = "#define __cuda_cuda_h__ 1\n#ifdef __cuda_cuda_h__\n#endif\n"
    assert port_header_tests(text) == (text, 0)
    assert port_header_tests("int x;\n") == ("int x;\n", 0)
