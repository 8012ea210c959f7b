"""The toolchain variables a ported Makefile defines, and where they go."""

from __future__ import annotations

import re
from collections.abc import Collection

from buildport.passes.make import MakeContext
from buildport.passes.make_facts import ROOT_REF
from buildport.rules.arch import MAKE_KNOWN_TARGETS
from buildport.rules.make import HIPCC_DEFAULT_STANDARD, HIPCC_RUNTIME_INCLUDE, PRELUDE, ROOT_VARIABLES
from buildport.syntax.make import MakeFile
from buildport.syntax.make_nodes import SELECTABLE, Assignment, Conditional


def prelude(ctx: MakeContext, new_text: str) -> str:
    """The toolchain variables the ported text uses and does not define."""
    wanted = [name for name, _ in PRELUDE
              if f"$({name})" in new_text or f"${{{name}}}" in new_text or f"$(call {name}," in new_text]
    # hipcc with no --offload-arch builds for gfx803 (PORTING-FACTS): a file that launches the HIPCC it
    # defines and names no target, as nvcc with its default architecture did, gets the overridable list
    # ... and so does a file that names targets only in some of its conditional branches (nvcc's version, a
    # GPU_COMPUTE_CAPABILITY given or not): the others would build for gfx803 too
    untargeted = ("HIPCC" in wanted and not _defines(new_text, "HIPCC")
                  and not (ctx.facts.arch_vars and not _conditional_targets(new_text))
                  and not _named_at_top(new_text))
    if untargeted:
        wanted += [name for name in ("HIP_OFFLOAD_ARCH", "HIP_ARCH_FLAGS") if name not in wanted]
    if "HIP_ARCH_FLAGS" in wanted and "HIP_OFFLOAD_ARCH" not in wanted:
        wanted.append("HIP_OFFLOAD_ARCH")
    if ctx.probe_targets and "HIP_OFFLOAD_ARCH" in wanted and "HIPCC" not in wanted:
        wanted.append("HIPCC")  # the compiler asked which targets it knows
    if wanted and "ROCM_PATH" not in wanted:
        wanted.append("ROCM_PATH")
    targets = " ".join(ctx.offload_arch)
    lines = [
        MAKE_KNOWN_TARGETS.format(targets=targets) if name == "HIP_OFFLOAD_ARCH" and ctx.probe_targets
        else template.replace("{arch}", targets)
        for name, template in PRELUDE
        if name in wanted and not _defines(new_text, name)
    ]
    extra = [f"-I$(ROCM_PATH)/include/{d}" for d in ctx.include_subdirs if f"include/{d}" not in new_text]
    if untargeted:
        extra.insert(0, "$(HIP_ARCH_FLAGS)")
    runs_hipcc = _runs_hipcc(new_text)
    if ctx.compiles_c and runs_hipcc:
        # hipcc compiles .c files as C, where HIP's headers need the platform, and clang refuses a C++ standard
        # (so no default one either, though the define is given already: a second run would find the standard
        # and take it for the file's own)
        if "__HIP_PLATFORM_AMD__" not in new_text:
            extra.append("-D__HIP_PLATFORM_AMD__")
    elif runs_hipcc and HIPCC_DEFAULT_STANDARD not in new_text:
        # nvcc's dialect unless the build names one (a later -std= wins): hipcc before ROCm 6 adds -std=c++11
        extra.append(HIPCC_DEFAULT_STANDARD)
    if runs_hipcc and "hip/hip_runtime.h" not in new_text:
        # nvcc includes cuda_runtime.h in every .cu file; hipcc needs to be told (hipify adds it only
        # to files it changes), but not for a host source
        # (for every file where nvcc compiled C++ sources as CUDA: -x cu, now -x hip)
        header = ctx.runtime_header
        extra.insert(0, f"-include {header}" if _X_HIP.search(new_text)
                     else HIPCC_RUNTIME_INCLUDE.replace("hip/hip_runtime.h", header))
    if extra:
        lines.append("HIPCC += " + " ".join(extra))
    return "\n".join(lines)


_X_HIP = re.compile(r"(?:^|\s)-x\s*hip\b")
#: How the targets' probe (:data:`~buildport.rules.arch.MAKE_KNOWN_TARGETS`) names the compiler it asks.
_PROBED_HIPCC = "$(or $(HIPCC),hipcc)"


def _runs_hipcc(text: str) -> bool:
    """Whether ``text`` runs ``$(HIPCC)`` elsewhere than in the targets' probe, which a first run may write
    for a file that never runs it: read again, the probe alone must not ask for HIPCC's flags."""
    return text.count("$(HIPCC)") > text.count(_PROBED_HIPCC)


def _conditional_targets(text: str) -> bool:
    """Whether the targets the text names are all inside conditionals (read from the ported text)."""
    depth, inside, outside = 0, False, False
    for line in text.splitlines():
        word = line.strip().split(" ", 1)[0]
        if word in ("ifeq", "ifneq", "ifdef", "ifndef"):
            depth += 1
        elif word == "endif":
            depth = max(0, depth - 1)
        elif "offload-arch" in line or "HIP_ARCH_FLAGS" in line or "HIP_OFFLOAD_ARCH" in line:
            inside, outside = inside or depth > 0, outside or depth == 0
    return inside and not outside


def _named_at_top(text: str) -> bool:
    """Whether the targets are named outside every conditional (a line the port did not touch may do it)."""
    return ("offload-arch" in text or "HIP_ARCH_FLAGS" in text) and not _conditional_targets(text)


def _defines(text: str, name: str) -> bool:
    return re.search(rf"^[ \t]*(?:(?:export|override)[ \t]+)*{name}[ \t]*(?:\?|:|::|\+|!)?=", text, re.M) is not None


def prelude_offset(tree: MakeFile, own: Collection[str] = ()) -> tuple[int, bool]:
    """Where the toolchain variables go, and whether that is right after the CUDA root's line.

    After the first top-level assignment of a CUDA root (now ``ROCM_PATH ?=``; not one of ``own``, the
    root-named variables of the project's own folders); otherwise before the first line that is not a
    comment or blank (the header comment stays on top).
    """
    depth = 0
    roots = any(variable in ROOT_VARIABLES and variable not in own for _, variable, _ in tree.variables().values())
    for line in tree.select(_NESTING_AND_ASSIGNMENTS) if roots else ():
        if isinstance(line, Conditional):
            depth += {"endif": -1, "else": 0}.get(line.directive, 1)
        elif depth == 0 and isinstance(line, Assignment) and line.variable in ROOT_VARIABLES and line.variable not in own:
            if not ROOT_REF.search(line.value_text) and not line.is_target_specific:
                return line.end, True
    for line in tree.select(SELECTABLE):  # the first line that is not a comment or blank
        return line.start, False
    return len(tree.source), False


_NESTING_AND_ASSIGNMENTS = frozenset({Conditional, Assignment})
