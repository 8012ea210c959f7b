"""Port one file: parse, run the passes in order, render, and verify the result.

The result is reparsed and ported again; a second run must change nothing
(black's stability check). A rewrite that is not stable is an internal error,
never silently written.
"""

from __future__ import annotations

import functools
from bisect import bisect_right
from pathlib import PurePath
from typing import TYPE_CHECKING, Callable

from buildport.passes.cmake_edit import Edits
from buildport.passes.text_edits import regions
from buildport.findings import Finding, Severity
from buildport.options import MakeFacts, Options
from buildport.passes.base import (
    Context, Pass, condition_words, gather_file_facts, gather_target_facts, rocm_switch, run_passes, tests_rocm_switch,
)
from buildport.passes.cmake_project import FindHip, FindPackages, Languages, LegacyCommands, MinimumVersion
from buildport.passes.cmake_targets import Architectures, CudaSources, HostHeaders, Libraries, Properties
from buildport.passes.cmake_text import CustomCommands, Flags, Names, Prelude
from buildport.passes.cmake_tools import FindPrograms, ToolCommands
from buildport.prescan import may_need_cmake_port, names_cuda_beyond_flags
from buildport.dual import is_dual
from buildport.rules.python import MARKER
from buildport.result import Region, Result, UnstableRewrite
from buildport.rules.cmake import CUDA_MODULE_FILES, CUDA_MODULE_FOLDER, CUDA_PACKAGES
from buildport.rules.libraries import named
from buildport.syntax.cmake import Command, parse_cmake
from buildport.syntax.errors import ParseError
from buildport.textio import spliced

if TYPE_CHECKING:  # the make parser loads with the first Makefile
    from buildport.syntax.make import MakeFile

#: The CMake passes, in the order they run.
CMAKE_PASSES: tuple[Pass, ...] = (
    Languages(),
    FindPackages(),
    MinimumVersion(),
    LegacyCommands(),
    CudaSources(),
    Libraries(),
    HostHeaders(),
    FindHip(),
    Properties(),
    Architectures(),
    CustomCommands(),
    FindPrograms(),
    ToolCommands(),
    Flags(),
    Names(),
    Prelude(),
)


def port_cmake(text: str, path: str = "<input>", options: Options | None = None, verify: bool = True) -> Result:
    """Port the CMake source ``text``; raises ``ParseError`` for input that is not CMake."""
    options = options or Options()
    name = PurePath(path)
    if name.name in CUDA_MODULE_FILES or name.parent.name == CUDA_MODULE_FOLDER:
        # not read: FindCUDA's helpers include configure_file templates (@CUDA_NVCC_FLAGS_CONFIG@)
        return Result(path, text, text, [Finding(path, 1, 1, "cmake-cuda-module", Severity.INFO,
                                                 "a copy of CMake's CUDA module, used by find_package(CUDA), which "
                                                 "the port replaces; left as it is")])
    replaced = _replaced_find_module(name.name)
    if replaced is not None:
        # FindNCCL.cmake: find_package(NCCL) becomes find_package(rccl), which never reads it
        return Result(path, text, text, [Finding(
            path, 1, 1, "cmake-cuda-module", Severity.INFO,
            f"the project's find module of {name.name[4:-6]}, whose find_package() the port makes "
            f"find_package({replaced}); no longer read, left as it is")])
    hot = may_need_cmake_port(text)
    tree = parse_cmake(text, path, cut=hot)
    if not hot:
        return Result(path, text, text)  # no rule can fire: parsed only, to reject bad input
    if is_dual(text, "cmake"):
        return Result(path, text, text)  # picks CUDA or HIP (migrate --keep-cuda): both are written
    if _host_project(tree.commands(), text):
        return Result(path, text, text)
    ctx = Context(path, tree, options, Edits(tree))
    gather_file_facts(ctx)
    if ctx.facts.has_hip_already is not None or ctx.facts.language_variable is not None:
        at = ctx.facts.has_hip_already or ctx.facts.language_variable
        assert at is not None
        if not ctx.cuda_commands() or _nothing_to_port(ctx):
            return Result(path, text, text)  # HIP only (a port's output, say): nothing of CUDA to review
        message, fix = _hip_present(ctx, at)
        ctx.report(at.start, "cmake-hip-present", Severity.WARNING, message, fix)
        return Result(path, text, text, ctx.findings)
    gather_target_facts(ctx)
    run_passes(ctx, CMAKE_PASSES)
    try:
        new, regions = ctx.edits.rendered() if not ctx.edits.empty else (text, [])
    except ParseError as exc:  # a line a pass wrote is not CMake: buildport's error, not one of the file's text
        raise UnstableRewrite(f"{path}: the rewrite produced a line that is not CMake ({exc.message}: "
                              f"{exc.source_line.strip()})") from None
    result = Result(path, text, new, ctx.findings, set(ctx.facts.packages), regions=regions)
    del ctx, tree  # the tree is not kept while the new text is read
    if verify and new != text:
        _check_stable(result, "text that is not CMake", lambda: port_cmake(new, path, options, verify=False))
    return result


def _hip_present(ctx: Context, at: Command) -> tuple[str, str]:
    """What a file left because it supports HIP already says, and what to do: the switch it builds for ROCm with
    where it has one (``if(WITH_HIP)``: ``-DWITH_HIP=ON``)."""
    at = _rocm_condition_around(ctx, at) or at
    shown = " ".join(ctx.tree.text[at.start : at.end].split())
    if at.identifier in ("if", "elseif"):
        on = _switch_setting(condition_words(ctx.tree.text, at)[1:])
        return (f"this file builds for ROCm itself where `{shown}` holds; left unchanged",
                f"configure it with that switch{on} to build for AMD GPUs; review its CUDA branch by hand")
    if at is ctx.facts.language_variable:
        return (f"this file picks its GPU language through a variable (`{shown}`); left unchanged",
                "set that variable to HIP to build for AMD GPUs; review its CUDA branch by hand")
    return f"this file already supports HIP (`{shown}`); left unchanged", "review its CUDA branch by hand"


def _switch_setting(words: list[str]) -> str:
    """How a condition's ROCm switch is set, said in a parenthesis: ``WITH_HIP`` → `-DWITH_HIP=ON`, ``GPU_BACKEND
    STREQUAL HIP`` → `-DGPU_BACKEND=HIP`; nothing for a negated one or one this cannot tell."""
    for i, word in enumerate(words):
        if not rocm_switch(word):
            continue
        before = words[i - 1] if i else ""
        after = words[i + 1] if i + 1 < len(words) else ""
        if before in ("STREQUAL", "MATCHES", "EQUAL") and i >= 2:
            return f" (`-D{words[i - 2]}={word}`)"
        if after == "IN_LIST" and i + 2 < len(words):
            return f" (`-D{words[i + 2]}={word}`)"
        if (before in _NOT_A_SWITCH or after in _COMPARISONS or after.startswith("VERSION_")
                or word.endswith(_FOUND_OR_FOLDER)):
            return ""  # a package found, a folder, a version, an environment variable: nothing to set ON
        return f" (`-D{word}=ON`)"
    return ""


_NOT_A_SWITCH = frozenset({"NOT", "DEFINED", "ENV", "EXISTS", "IS_DIRECTORY", "TARGET", "COMMAND", "POLICY"})
_COMPARISONS = frozenset({"STREQUAL", "MATCHES", "EQUAL", "LESS", "GREATER", "LESS_EQUAL", "GREATER_EQUAL",
                          "STRLESS", "STRGREATER"})
_FOUND_OR_FOLDER = ("_FOUND", "_DIR", "_PATH", "_ROOT", "_VERSION", "_HOME", "_PREFIX")


def _rocm_condition_around(ctx: Context, at: Command) -> Command | None:
    """The innermost ``if()``/``elseif()`` whose branch holds ``at`` and whose condition tests a ROCm switch
    (``elseif(WITH_HIP)`` around ``enable_language(HIP)``)."""
    branches: list[Command] = []  # the condition of each open if() block, innermost last
    for command in ctx.commands():
        if command.start >= at.start:
            break
        name = command.identifier
        if name == "if":
            branches.append(command)
        elif name in ("elseif", "else") and branches:
            branches[-1] = command
        elif name == "endif" and branches:
            branches.pop()
    return next((branch for branch in reversed(branches)
                 if branch.identifier != "else" and tests_rocm_switch(ctx.tree.text, branch)), None)


def _replaced_find_module(file_name: str) -> str | None:
    """The ROCm package that replaces the one ``Find<name>.cmake`` finds, when the port replaces it
    (:data:`~buildport.rules.cmake.CUDA_PACKAGES`); None for another file."""
    if not (file_name.startswith("Find") and file_name.endswith(".cmake")):
        return None
    kind = CUDA_PACKAGES.get(file_name[4:-6].lower())
    if not kind:
        return None  # not a package the port replaces; FindCUDA(Toolkit).cmake are CMake's own (above)
    return named(kind).rocm_package


def _host_project(commands: list[Command], text: str) -> bool:
    """Whether the file is a project of host languages alone: its ``project()`` names no CUDA (a word of
    :func:`~buildport.prescan.names_cuda_beyond_flags`), and nothing else in it says CUDA but nvcc-only
    flags. Its compilers are the host's, and those flags theirs (``-Xcompiler -Wall`` given to g++ is
    the project's own error, or a compiler set elsewhere): the file is left as it is, byte for byte.
    A file without ``project()`` (a subdirectory's) may be part of a CUDA project: its flags are ported."""
    return any(c.identifier == "project" for c in commands) and not names_cuda_beyond_flags(text)


def _nothing_to_port(ctx: Context) -> bool:
    """Whether the passes, run on a file that has HIP already, would change nothing in it (buildport's own
    output, which they leave as it is): then it holds nothing of CUDA to review."""
    trial = Context(ctx.path, ctx.tree, ctx.options, Edits(ctx.tree))
    gather_file_facts(trial)
    gather_target_facts(trial)
    run_passes(trial, CMAKE_PASSES)
    return trial.edits.empty


def port_make(
    text: str, path: str = "<input>", options: Options | None = None, verify: bool = True,
    facts: MakeFacts | None = None, tree: MakeFile | None = None,
) -> Result:
    """Port the GNU make source ``text``; raises ``ParseError`` for input make would reject.

    ``facts`` carries what the other Makefiles of the same run define (compiler and
    flag variables of an included common.mk); without it the file is read alone.
    ``tree`` is ``text`` already parsed (by the same path), if it is.
    """
    make = make_modules()
    options = options or Options()
    if tree is None or tree.source != text:
        tree = make.parse_make(text, path)
    if is_dual(text, "make"):
        return Result(path, text, text, regions=[])  # picks CUDA or HIP (migrate --keep-cuda): both are written
    if facts is None:
        facts = MakeFacts()
        if make.may_hold_rule_words(text):  # otherwise the file alone defines no variable the rules use
            make.gather(tree, facts)
    if make.nothing_to_port(text, facts):
        return Result(path, text, text, regions=[])  # parsed, to reject bad input; no line can change
    ctx = make.MakeContext(path, tree, options.targets, probe_targets=options.probe_targets, facts=facts,
                           runtime_header=options.runtime_header)
    make.port_lines(ctx)
    make.report_platform(ctx)
    merged = ctx.edits.merged() if ctx.edits else []
    new = spliced(text, merged) if merged else text
    head = make.prelude(ctx, new) if new != text else ""  # an unchanged file needs no toolchain variables
    if head:
        origin, after_root = make.prelude_offset(tree, facts.own_roots)
        at = _shifted(origin, merged)
        newline = "\r\n" if "\r\n" in text else "\n"
        block = head.replace("\n", newline) + newline
        if not after_root and not new.startswith(("\n", "\r\n"), at):
            block += newline
        # the block goes where _shifted put it: after the edits that end at or before its origin
        merged.insert(bisect_right([end for _, end, _ in merged], origin), (origin, origin, block))
        new = ""  # let go before the text with the block is made (not new[:at] + block + new[at:]: three copies)
        new = spliced(text, merged)
    result = Result(path, text, new, ctx.findings, regions=regions(merged))
    del ctx, tree, merged  # the lines read (a large file's nodes) are not kept while the new text is read
    if verify and new != text:
        _check_stable(result, "text make would reject",
                      lambda: port_make(new, path, options, verify=False, facts=facts))
    return result


def port_setup_py(text: str, path: str = "<input>", options: Options | None = None, verify: bool = True) -> Result:
    """Port a ``setup.py`` that builds PyTorch CUDA extensions (:mod:`buildport.passes.setup_py`); raises
    ``ParseError`` for text that is not Python. A file that does not use ``torch.utils.cpp_extension``
    is left as it is, unparsed (LibCST is imported with the first file that does)."""
    options = options or Options()
    if MARKER not in text:
        return Result(path, text, text, regions=[])
    from buildport.passes.setup_py import port_setup_text

    new, findings = port_setup_text(text, path, options.offload_arch)
    result = Result(path, text, new, findings, regions=line_regions(text, new))
    if verify and new != text:
        _check_stable(result, "text that is not Python", lambda: port_setup_py(new, path, options, verify=False))
    return result


def _check_stable(result: Result, not_parsed: str, port_again: Callable[[], Result]) -> None:
    """The stability check of every engine: ``port_again`` ports the result's text again, which must parse
    (else the rewrite produced ``not_parsed``) and come out unchanged; its result is kept as ``rerun``."""
    try:
        again = port_again()
    except ParseError as exc:
        raise UnstableRewrite(f"{result.path}: the rewrite produced {not_parsed} ({exc.message} "
                              f"at {exc.line}:{exc.col} of the output)") from None
    if again.text != result.text:
        raise UnstableRewrite(f"{result.path}: the rewrite is not stable; a second run changes it again")
    result.rerun = again


def line_regions(old: str, new: str) -> list[Region]:
    """The regions (see :data:`~buildport.result.Region`) where ``new`` differs from ``old``, line by line."""
    if old == new:
        return []
    import difflib

    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    a_at, b_at = _line_offsets(a), _line_offsets(b)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return [(a_at[i1], a_at[i2], b_at[j1], b_at[j2])
            for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def _line_offsets(lines: list[str]) -> list[int]:
    """Where each line starts, and the end."""
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    return offsets


class _MakeModules:
    """The make parser and passes, loaded with the first Makefile (a CMake run never needs them)."""

    def __init__(self) -> None:
        from buildport.passes.make import MakeContext, nothing_to_port, port_lines, report_platform
        from buildport.passes.make_facts import gather
        from buildport.passes.make_prescan import may_hold_rule_words
        from buildport.passes.make_prelude import prelude, prelude_offset
        from buildport.syntax.make import parse_make

        self.MakeContext = MakeContext
        self.port_lines, self.report_platform, self.nothing_to_port = port_lines, report_platform, nothing_to_port
        self.gather, self.may_hold_rule_words = gather, may_hold_rule_words
        self.prelude, self.prelude_offset = prelude, prelude_offset
        self.parse_make = parse_make


@functools.cache
def make_modules() -> _MakeModules:
    """The make modules, imported once (an import statement run per file costs microseconds)."""
    return _MakeModules()


def _shifted(offset: int, merged: list[tuple[int, int, str]]) -> int:
    """Where ``offset`` of the original text lands once the edits are applied."""
    return offset + sum(len(new) - (end - start) for start, end, new in merged if end <= offset)
