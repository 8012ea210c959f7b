"""NVIDIA's profilers, debugger and sanitizers in CMake: the commands that run them and ``find_program``."""

from __future__ import annotations

import re

from buildport.findings import Severity
from buildport.passes.base import Context, Visits
from buildport.passes.cmake_args import value_of
from buildport.passes.cmake_text import COMMAND_KEYWORDS
from buildport.passes.tools import port_call, rocm_program, tool_name
from buildport.rules.tools import BY_NAME
from buildport.syntax.cmake import Command, Leaf

#: The commands whose ``COMMAND`` runs a program (``add_custom_target`` also its first, unnamed one).
RUNNERS = frozenset({"add_custom_command", "add_custom_target", "add_test", "execute_process"})
#: Keywords that end a command's words, besides those of the custom commands: add_test's own.
_KEYWORDS = COMMAND_KEYWORDS | {"NAME", "CONFIGURATIONS"}
#: find_program's keywords: what ends its NAMES.
_FIND_KEYWORDS = frozenset("""
    NAMES NAMES_PER_DIR HINTS PATHS PATH_SUFFIXES VALIDATOR DOC NO_CACHE REQUIRED OPTIONAL NO_DEFAULT_PATH
    NO_PACKAGE_ROOT_PATH NO_CMAKE_PATH NO_CMAKE_ENVIRONMENT_PATH NO_SYSTEM_ENVIRONMENT_PATH NO_CMAKE_SYSTEM_PATH
    NO_CMAKE_INSTALL_PREFIX CMAKE_FIND_ROOT_PATH_BOTH ONLY_CMAKE_FIND_ROOT_PATH NO_CMAKE_FIND_ROOT_PATH ENV
    REGISTRY_VIEW
""".split())
_VARIABLE = re.compile(r"^\$\{(\w+)\}$")


class FindPrograms:
    description = "find_program() or set() of a variable naming NVIDIA's profiler, debugger or sanitizer → ROCm's"
    visits = Visits(frozenset({"find_program", "set"}))  # a tool's name is a rule word

    def run(self, ctx: Context, commands: list[Command]) -> None:
        for command in commands:
            if command.identifier == "find_program" or _sets_a_program(command):
                _find_program(ctx, command, ctx.facts.programs)


class ToolCommands:
    description = "NVIDIA's profilers, debugger and sanitizers run by custom commands and tests → ROCm's"
    #: a variable's use need not name the tool (``${PROFILER}``): every such command, once a program was found
    visits = Visits(RUNNERS, every_when=lambda facts: bool(facts.programs))

    def run(self, ctx: Context, commands: list[Command]) -> None:
        for command in commands:
            for leaves, name, literal in _calls(command, ctx.facts.programs):
                _port(ctx, leaves, name, literal)


def _sets_a_program(command: Command) -> bool:
    """``set(PROFILER nvprof)`` (or ``set(NSYS nsys CACHE FILEPATH "...")``): a variable that names one program."""
    args = command.arguments()
    return command.identifier == "set" and len(args) >= 2 and (len(args) == 2 or args[2].value == "CACHE")


def _find_program(ctx: Context, command: Command, found: dict[str, str]) -> None:
    """``find_program(VAR nsys)`` → ``find_program(VAR rocprof)``, and ``set(VAR nsys)`` alike: the variable's
    uses get the mode's words."""
    args = command.arguments()
    if len(args) < 2:
        return
    names = args[2:] if args[1].value == "NAMES" and command.identifier == "find_program" else args[1:2]
    for leaf in names:
        if leaf.value in _FIND_KEYWORDS:
            break
        name = tool_name(value_of(leaf.value))
        if name is None or value_of(leaf.value) != name:
            continue
        found[args[0].value] = name  # its uses are ported, or reported, as the tool's
        program = rocm_program(name)
        if program is None:
            ctx.report(leaf.start, "gpu-tool-unported", Severity.WARNING,
                       f"{command.name.value}({args[0].value} {name}): {BY_NAME[name][0].note}",
                       "port its uses by hand")
            continue
        new = leaf.value.replace(name, program)
        ctx.edits.replace(leaf, new)
        ctx.report(leaf.start, "gpu-tool", Severity.INFO, f"{command.name.value}({args[0].value} {name}) → "
                   f"{program}, and where the variable runs, the tool's options are ported", fixable=True,
                   replacement=new)


def _calls(command: Command, found: dict[str, str]) -> list[tuple[list[Leaf], str, bool]]:
    """Each program ``command`` runs that is a tool: its words, the tool, and whether they name it
    (else a variable of ``found`` does)."""
    args = command.arguments()
    starts = [i + 1 for i, arg in enumerate(args) if arg.value == "COMMAND"]
    if command.identifier == "add_custom_target" and len(args) > 1:
        starts.insert(0, 2 if args[1].value == "ALL" else 1)  # add_custom_target(profile nsys profile ./app)
    calls: list[tuple[list[Leaf], str, bool]] = []
    for start in starts:
        if start >= len(args) or args[start].value in _KEYWORDS:
            continue
        first = value_of(args[start].value)
        ref = _VARIABLE.match(first)
        name = found.get(ref.group(1)) if ref is not None else tool_name(first)
        if name is None:
            continue
        end = start + 1
        while end < len(args) and args[end].value not in _KEYWORDS:
            end += 1
        leaves = args[start:end]
        if any(leaf.type == "BRACKET_ARG" for leaf in leaves):
            continue  # (a bracket argument's words are no shell words)
        calls.append((leaves, name, ref is None))
    return calls


def _port(ctx: Context, leaves: list[Leaf], name: str, literal: bool) -> None:
    """Apply :func:`~buildport.passes.tools.port_call` to one call's arguments, and report it."""
    ported = port_call([value_of(leaf.value) for leaf in leaves], name, literal=literal)
    if all(new is None for new in ported.words):  # no ROCm equivalent: the call stays as it is, paths and all
        ctx.facts.kept.update(leaf.start for leaf in leaves)
    for leaf, new in zip(leaves, ported.words):
        if new is None:
            continue
        if not new:
            ctx.edits.remove(leaf)
        elif leaf.value.startswith('"'):  # a quoted argument stays quoted, one argument a word
            ctx.edits.replace(leaf, " ".join(f'"{word}"' for word in new.split(" ")))
        else:
            ctx.edits.replace(leaf, new)
    for note in ported.notes:
        ctx.report(leaves[note.index].start, note.rule, note.severity, note.message, note.suggestion,
                   fixable=note.fixable, replacement=note.replacement)
