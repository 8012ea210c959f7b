"""nvcc command-line flags and what hipcc/clang takes instead.

One table for CMake and make. ``action``:

- ``map``: replace by ``to`` (empty ``to`` drops the flag);
- ``value``: the flag takes a value; ``values`` maps it (``"*"`` for any other value);
- ``arch``: a GPU architecture flag: replaced by the AMD target list;
- ``xcompiler`` / ``xlinker``: host compiler/linker pass-through, unwrapped;
- ``report``: kept, and reported as needing a human.

Facts: nvcc's ``--help`` (CUDA 13) for the spellings; clang's HIP options
(``-fgpu-rdc``, ``-fgpu-default-stream``, ``-fgpu-flush-denormals-to-zero``);
measured: clang errors on nvcc's double-dash spellings and ignores many
single-dash ones with a warning, so both spellings are listed.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Flag:
    """One nvcc option in all its spellings."""

    names: tuple[str, ...]
    action: str
    to: tuple[str, ...] = ()
    values: dict[str, tuple[str, ...]] = field(default_factory=dict)
    note: str = ""
    #: Only the listed values are nvcc's; with another one the word is not this flag.
    known_values_only: bool = False
    #: What a ``map`` flag becomes where clang itself is the compiler (CMake's HIP compiler), when
    #: hipcc spells it otherwise (``to``).
    clang_to: tuple[str, ...] | None = None
    #: Spellings of another flag that make this one void where both are given (nvcc ignores ``-lineinfo``
    #: beside ``-G``): it is then dropped, as clang's last ``-g`` option wins (``-g -gline-tables-only``
    #: would leave line tables alone).
    void_with: tuple[str, ...] = ()


def _drop(*names: str, note: str = "no HIP equivalent needed") -> Flag:
    return Flag(names, "map", (), note=note)


def _drop_value(*names: str, note: str = "no HIP equivalent needed") -> Flag:
    return Flag(names, "value", values={"*": ()}, note=note)


FLAGS: tuple[Flag, ...] = (
    Flag(("--use_fast_math", "-use_fast_math", "--use-fast-math"), "map", ("-ffast-math",)),
    _drop("--expt-relaxed-constexpr", "-expt-relaxed-constexpr", note="clang allows constexpr calls across host/device"),
    _drop("--expt-extended-lambda", "-expt-extended-lambda", "--extended-lambda", "-extended-lambda",
          note="clang supports __device__ lambdas by default"),
    Flag(("-G", "--device-debug"), "map", ("-g", "-O0"), note="device debug info; clang has no separate switch"),
    Flag(("-lineinfo", "--generate-line-info"), "map", ("-gline-tables-only",),
         void_with=("-G", "--device-debug", "-g", "--debug"),
         note="line tables only; beside -G or -g, whose full debug information includes them (clang's -g is "
              "for device code too), dropped"),
    Flag(("-dc", "--device-c"), "map", ("-fgpu-rdc", "-c"),
         note="compile with relocatable device code; the link then needs -fgpu-rdc --hip-link"),
    Flag(("-dw", "--device-w"), "map", ("-c",)),
    Flag(("-rdc", "--relocatable-device-code"), "value",
         values={"true": ("-fgpu-rdc",), "false": ()}),
    Flag(("-res-usage", "--resource-usage"), "map", ("-Rpass-analysis=kernel-resource-usage",)),
    Flag(("--disable-warnings",), "map", ("-w",)),
    Flag(("-default-stream", "--default-stream"), "value",
         values={"per-thread": ("-fgpu-default-stream=per-thread",),
                 "legacy": ("-fgpu-default-stream=legacy",), "null": ()}),
    Flag(("-x", "--x"), "value", values={"cu": ("-x", "hip"), "*": ("-x", "{value}")},
         note="-x cu makes clang compile CUDA, not HIP"),
    Flag(("-ftz", "--ftz"), "value", values={"true": ("-fgpu-flush-denormals-to-zero",), "false": ()}),
    Flag(("-fmad", "--fmad"), "value", values={"false": ("-ffp-contract=off",), "true": ()}),
    _drop_value("-prec-div", "--prec-div", "-prec-sqrt", "--prec-sqrt"),
    # rocPRIM, rocThrust and hipCUB refuse a dialect before C++14 (#error), where CUB and Thrust in CUDA 11 took
    # C++11 with a deprecation warning: a C++11 GPU compile becomes C++14 (nearly a superset: it compiles the same)
    Flag(("-std", "--std"), "value",
         values={"c++11": ("-std=c++14",), "gnu++11": ("-std=gnu++14",), "c++03": ("-std=c++14",),
                 "*": ("-std={value}",)},
         note="C++11 → C++14: rocPRIM, rocThrust and hipCUB need C++14"),
    Flag(("-m", "--machine"), "value", values={"64": ("-m64",), "32": ("-m32",)}),
    Flag(("--output-file",), "value", values={"*": ("-o", "{value}")}, note="clang refuses nvcc's long spelling"),
    Flag(("-Werror", "--Werror"), "value",
         values={"all-warnings": ("-Werror",), "cross-execution-space-call": (), "default-stream-launch": (),
                 "missing-launch-bounds": (), "ext-lambda-captures-this": (),
                 "reorder": ("-Werror=reorder",), "deprecated-declarations": ("-Werror=deprecated-declarations",)},
         note="nvcc's -Werror takes warning kinds; any other value is a host compiler's -Werror=x, kept",
         known_values_only=True),
    _drop_value("-maxrregcount", "--maxrregcount", note="register limits: use __launch_bounds__ in sources"),
    _drop_value("-Xptxas", "--ptxas-options", note="ptxas does not exist for AMD GPUs"),
    _drop_value("-Xnvlink", "--nvlink-options"),
    _drop_value("-Xfatbin", "--fatbin-options"),
    _drop_value("-Xcudafe"),
    _drop_value("-diag-suppress", "--diag-suppress", "--diag_suppress", "-diag_suppress"),
    _drop_value("-ccbin", "--compiler-bindir", note="hipcc uses clang for host code too"),
    _drop_value("-cudart", "--cudart", "-cudadevrt", "--cudadevrt"),
    _drop_value("-t", "--threads", "--split-compile", "-split-compile"),
    _drop_value("-keep-dir", "--keep-dir"),
    _drop("-use-local-env", "--use-local-env", note="the caller's MSVC environment for nvcc's host compiler; clang needs none"),
    _drop("-keep", "--keep", "-dlto", "--dlink-time-opt", "--display-error-number", "-err-no",
          "--no-display-error-number", "-no-err-no", "--allow-unsupported-compiler", "-allow-unsupported-compiler",
          "--forward-unknown-to-host-compiler", "-forward-unknown-to-host-compiler", "--source-in-ptx",
          "-restrict", "--restrict", "-Wno-deprecated-gpu-targets", "--Wno-deprecated-gpu-targets",
          "--extensible-whole-program", "-ewp", "-Wext-lambda-captures-this", "--Wext-lambda-captures-this"),
    Flag(("-arch", "--gpu-architecture", "-code", "--gpu-code", "-gencode", "--generate-code"), "arch",
         note="NVIDIA architectures have no AMD counterpart: the target list comes from --offload-arch"),
    Flag(("-Xcompiler", "--compiler-options"), "xcompiler", note="host options go straight to clang"),
    Flag(("-Xlinker", "--linker-options"), "xlinker"),
    Flag(("-fatbin", "--fatbin", "-cubin", "--cubin"), "map", ("--genco",), clang_to=("--cuda-device-only",),
         note="device code alone, for the module API: hipModuleLoad reads clang's bundle of code objects"),
    Flag(("-lib", "--lib"), "map", ("--emit-static-lib",),
         note="a static library of the objects (device code kept for a later link with -fgpu-rdc)"),
    Flag(("-ptx", "--ptx", "-dlink", "--device-link", "-run", "--run", "-cuda", "--cuda"), "report",
         note="an nvcc-specific compilation phase; the build step needs a human"),
)

#: Spelling → row.
BY_NAME: dict[str, Flag] = {name: flag for flag in FLAGS for name in flag.names}

#: Spellings that occur only in nvcc command lines; seeing one marks its context
#: as a list of nvcc flags even where the command or variable is unknown.
UNAMBIGUOUS: frozenset[str] = frozenset(
    name for name in BY_NAME
    if (name.startswith("--") and name not in ("--std", "--x", "--machine", "--Werror")) or name in (
        "-use_fast_math", "-expt-relaxed-constexpr", "-expt-extended-lambda", "-extended-lambda",
        "-Xcompiler", "-Xptxas", "-Xcudafe", "-gencode", "-ccbin", "-maxrregcount", "-rdc", "-lineinfo",
        "-Wno-deprecated-gpu-targets",
    )
)
