"""A call of an NVIDIA profiler, debugger or sanitizer, ported by :data:`buildport.rules.tools.TOOLS`.

Shared by the make and the CMake rewrites, which find the calls (a recipe's
command, a variable's value, a custom command's ``COMMAND``) and apply what
:func:`port_call` says word by word, so that every byte of the call no row
names stays.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from buildport.findings import Severity
from buildport.rules.tools import BY_NAME, OUTPUT_SUFFIX, REPORT_SUFFIXES, TOOL_WORD, Tool, ToolOption


@dataclass(frozen=True, slots=True)
class ToolNote:
    """A finding about word ``index`` of a call."""

    index: int
    rule: str
    severity: Severity
    message: str
    suggestion: str = ""
    fixable: bool = False
    replacement: str = ""


@dataclass(slots=True)
class ToolPort:
    """What becomes of a call's words: None keeps a word, "" removes it (with the blank before it)."""

    words: list[str | None]
    notes: list[ToolNote] = field(default_factory=list)


def tool_name(word: str) -> str | None:
    """The tool ``word`` runs (``nsys``, ``/usr/local/cuda/bin/nvprof``), if it names one."""
    m = TOOL_WORD.search(word)
    return None if m is None else m.group(1)


def port_call(words: list[str], name: str, *, literal: bool = True, with_added: bool = True,
              value: bool = False, path: Callable[[str], str] | None = None) -> ToolPort:
    """Port the call ``words`` of the tool ``name``: ``words[0]`` runs it, the rest up to the end of
    the shell command are its arguments (options, then the program it runs and that program's own).

    ``literal``: ``words[0]`` names the tool (else it is a variable that holds it, ported where it is
    set). ``with_added``: the words of the tool's mode go after the program word (else the variable
    holds them). ``value``: the words are a variable's value, whose uses may give the subcommand.
    ``path``: what the language makes of a path in the program word (a CUDA root made ROCm's).
    """
    rows = BY_NAME[name]
    tool, sub = rows[-1], 0
    for row in rows:
        if not row.subcommand or row.subcommand == "*":
            tool = row
            break
        if len(words) > 1 and words[1] == row.subcommand:
            tool, sub = row, 1
            break
    if value and len(words) == 1 and tool.subcommand == "*":  # NSYS = nsys: `$(NSYS) profile` where it runs
        return _program_only(words, name, rows, path)
    head = " ".join(words[: sub + 1])
    new: list[str | None] = [None] * len(words)
    if tool.program is None:
        return ToolPort(new, [ToolNote(0, "gpu-tool-unported", Severity.WARNING, f"{head}: {tool.note}",
                                       "port the command by hand")])
    notes: list[ToolNote] = []
    produced = list(tool.added)
    i = sub + 1
    while not tool.keeps_options and i < len(words) and words[i].startswith("-") and words[i] not in ("-", "--"):
        word = words[i]
        flag, equals, given = word.partition("=")
        option = _option(tool, flag)
        at = i + 1 if option is not None and option.takes_value and not equals else None
        if option is None or option.action == "report" or (at is not None and at >= len(words)):
            why = f"an option the table of {name} does not list" if option is None else (
                option.note if option.action == "report" else "its value is missing")
            wanted = " ".join([tool.program, *tool.added])
            return ToolPort([None] * len(words), [ToolNote(
                i, "gpu-tool-option", Severity.WARNING, f"{head} {word}: {why}; the command is left as it is",
                f"port the command by hand: {wanted} ...")])
        shown = word if at is None else f"{word} {words[at]}"
        if at is not None and option.action != "keep":
            new[at] = ""
        if option.action == "map":
            to = [w for w in option.to if w not in produced]
            produced += to
            new[i] = " ".join(to)
            notes.append(ToolNote(i, "gpu-tool-option", Severity.INFO, f"{shown} → {' '.join(option.to)}: "
                                  f"{option.note}", fixable=True, replacement=new[i] or ""))
        elif option.action == "drop":
            new[i] = ""
            severity = Severity.WARNING if option.warn else Severity.INFO
            notes.append(ToolNote(i, "gpu-tool-option", severity, f"{shown} dropped: {option.note}", fixable=True))
        elif option.action == "output":
            out = output_name(given if at is None else words[at])
            new[i] = f"-o {out}"
            notes.append(ToolNote(i, "gpu-tool-option", Severity.WARNING, f"{shown} → -o {out}: {option.note}",
                                  "check what reads the report", fixable=True, replacement=new[i] or ""))
        i = (i if at is None else at) + 1
    added = " ".join(tool.added)
    program = words[0]
    if literal:
        m = TOOL_WORD.search(program)
        assert m is not None
        program = program[: m.start(1)] + tool.program
        program = program if path is None else path(program)
    if sub:
        new[sub] = added
    elif with_added and added:
        program = f"{program} {added}"
    new[0] = None if program == words[0] else program
    shown = " ".join(w for w in (program, new[sub] if sub else "") if w)
    if shown != head:  # (a variable's use with no subcommand: the variable is ported where it is set)
        notes.insert(0, ToolNote(0, "gpu-tool", Severity.INFO, f"{head} → {shown}: {tool.note}", fixable=True,
                                 replacement=shown))
    return ToolPort(new, notes)


def rocm_program(name: str) -> str | None:
    """The ROCm program of the tool ``name`` (of its first row that has one): what a variable that holds the
    tool's path (``find_program``) finds instead."""
    return next((row.program for row in BY_NAME[name] if row.program is not None), None)


def _program_only(words: list[str], name: str, rows: tuple[Tool, ...],
                  path: Callable[[str], str] | None) -> ToolPort:
    """A variable that names a tool whose uses give its subcommand: its program, renamed to the ROCm one."""
    tool = next(row for row in rows if row.program is not None)
    assert tool.program is not None
    m = TOOL_WORD.search(words[0])
    assert m is not None
    program = words[0][: m.start(1)] + tool.program
    program = program if path is None else path(program)
    return ToolPort([program], [ToolNote(
        0, "gpu-tool", Severity.INFO, f"{words[0]} → {program}; where the variable runs `{name} {tool.subcommand}`, "
        f"the subcommand becomes {' '.join(tool.added)}", fixable=True, replacement=program)])


def _option(tool: Tool, flag: str) -> ToolOption | None:
    return next((option for option in tool.options if flag in option.names), None)


def output_name(name: str) -> str:
    """The file rocprof writes for NVIDIA's report ``name``: its NVIDIA suffix made ``.csv``."""
    for suffix in REPORT_SUFFIXES:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return name if name.endswith(OUTPUT_SUFFIX) else name + OUTPUT_SUFFIX
