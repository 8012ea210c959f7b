"""Passes over argument text: nvcc flags, variable names, generator expressions, paths."""

from __future__ import annotations

import re

from buildport.passes.cmake_args import inner, rename_refs, translate_flag_words, value_of, word_spans
from buildport.findings import Severity
from buildport.passes.nvcc import is_nvcc_only, split_flag
from buildport.passes.base import NO_COMMANDS, Context, Visits
from buildport.rules.cmake import (
    COMPILER_IDS, FLAG_COMMANDS, FLAG_VARIABLES, GENEX_RENAMES, LANGUAGE_GENEX, LEGACY_SWITCHES,
    REPORTED_VARIABLES, VARIABLE_FAMILIES, VARIABLES,
)
from buildport.rules.libraries import WORD_RENAMES
from buildport.rules.paths import CUDA_ENV_VARS, CUDA_ROOT_LITERAL, ROCM_DEFAULT, SUBPATHS
from buildport.syntax.cmake import Command, Leaf

_SCOPES = frozenset({"BEFORE", "PUBLIC", "PRIVATE", "INTERFACE"})

#: Separable compilation for the whole directory: nvcc -rdc → clang -fgpu-rdc, and a device link.
RDC_VARIABLES = frozenset({"CMAKE_CUDA_SEPARABLE_COMPILATION", "CUDA_SEPARABLE_COMPILATION"})
RDC_GLOBAL = (
    'string(APPEND CMAKE_HIP_FLAGS " -fgpu-rdc")\n'
    'add_link_options("$<$<LINK_LANGUAGE:HIP>:-fgpu-rdc;--hip-link>")'
)


def flag_arguments(command: Command, hip_targets: set[str] | frozenset[str] = frozenset()) -> list[Leaf]:
    """The arguments of ``command`` that hold nvcc flags, if any.

    Options of a target with CUDA sources are nvcc's; elsewhere (``add_compile_options``,
    C++ targets) only CUDA generator expressions and spellings only nvcc uses are,
    so a host ``-Werror=x`` or ``-G`` is left alone.
    """
    name = command.identifier
    args = command.arguments()
    if name in FLAG_COMMANDS:
        skip = 1 if name.startswith("target_") else 0
        options = [a for a in args[skip:] if a.value not in _SCOPES]
        if skip and args and args[0].value in hip_targets:
            return options
        chosen: list[Leaf] = []
        for i, arg in enumerate(options):
            # an nvcc flag's value may be the next argument (-Xcompiler -Wall): the two are read together
            if _cuda_option(arg.value) or (i and chosen and chosen[-1] is options[i - 1]
                                           and _wants_next(options[i - 1].value)):
                chosen.append(arg)
        return chosen
    values = [a.value for a in args]
    if name == "set" and values:
        body = [a for a in args[1:] if a.value not in ("CACHE", "PARENT_SCOPE", "FORCE")]
        if "CACHE" in values:  # set(VAR value CACHE TYPE "doc"): only the value
            body = args[1 : values.index("CACHE")]
        return body if _is_flag_list(values[0], args[1:]) else []
    if name in ("list", "string") and len(values) >= 2 and values[0] in ("APPEND", "PREPEND"):
        return args[2:] if _is_flag_list(values[1], args[2:]) else []
    return []


_CUDA_GENEX = re.compile(r"\$<(?:COMPILE_LANGUAGE|LINK_LANGUAGE|COMPILE_LANG_AND_ID|LINK_LANG_AND_ID):[^>]*CUDA")


def _cuda_option(text: str) -> bool:
    quote, content, _ = inner(text)
    if _CUDA_GENEX.search(content):
        return True
    content = content.removeprefix("SHELL:")
    return any(is_nvcc_only(content[a:b]) for a, b in word_spans(content, " \t;" if quote else ";"))


def _wants_next(text: str) -> bool:
    """Whether the argument ``text`` ends in an nvcc flag that takes the next word as its value
    (``-Xcompiler``, not ``-Xcompiler=-Wall``)."""
    quote, content, _ = inner(text)
    spans = word_spans(content.removeprefix("SHELL:"), " \t;" if quote else ";")
    if not spans:
        return False
    a, b = spans[-1]
    flag, value = split_flag(content.removeprefix("SHELL:")[a:b])
    return flag is not None and value is None and flag.action in _VALUED


#: What a flag does that takes a value (see :func:`buildport.passes.nvcc.translate`).
_VALUED = frozenset({"value", "arch", "xcompiler", "xlinker"})


def _is_flag_list(variable: str, args: list[Leaf]) -> bool:
    if variable in FLAG_VARIABLES or _family_member(variable) is not None:
        return True
    for arg in args:
        quote, content, _ = inner(arg.value)
        content = content.removeprefix("SHELL:")  # "SHELL:-Xcompiler -O3": CMake's spelling of an option pair
        if any(is_nvcc_only(content[a:b]) for a, b in word_spans(content, " \t;" if quote else ";")):
            return True
    return False


class Flags:
    description = "nvcc flags in compile options and flag variables → clang/hipcc flags"
    #: the compile and link options of every target (a flag alone, -O3, is no trigger word); elsewhere a flag
    #: variable or an nvcc-only spelling would be one
    visits = Visits(always=FLAG_COMMANDS)

    def run(self, ctx: Context, commands: list[Command]) -> None:
        for command in commands:
            leaves = [leaf for leaf in flag_arguments(command, ctx.facts.hip_targets) if leaf.type != "BRACKET_ARG"]
            if leaves:
                before = [ctx.edits.text_of(leaf) for leaf in leaves]
                translate_leaves(ctx, leaves)
                changed = before != [ctx.edits.text_of(leaf) for leaf in leaves]
                if changed and _emptied(ctx, command):
                    ctx.edits.remove_command(command)  # set(CMAKE_HIP_FLAGS "${CMAKE_HIP_FLAGS}") would be left
                elif command.identifier in FLAG_COMMANDS or _appends(command):
                    # an option whose every flag went is no option; a piece of a string(APPEND) that held only
                    # an nvcc flag (" -restrict") is no piece
                    for leaf, old in zip(leaves, before):
                        if old != '""' and ctx.edits.text_of(leaf) == '""':
                            ctx.edits.remove(leaf)


def _appends(command: Command) -> bool:
    """``string(APPEND VAR ...)`` or ``list(APPEND VAR ...)``: each argument a piece of its own."""
    head = command.arguments()[:1] if command.identifier in ("string", "list") else []
    return bool(head) and head[0].value == "APPEND"


def _emptied(ctx: Context, command: Command) -> bool:
    """Whether ``command`` does nothing now that its nvcc flags are gone: it sets a variable to itself,
    appends nothing, or gives a target no options."""
    args = command.arguments()
    values = [value_of(ctx.edits.text_of(a)).strip() for a in args]
    name = command.identifier
    if name == "set":
        return len(args) == 2 and values[1] == f"${{{args[0].value}}}"
    if name in ("list", "string"):
        return len(args) >= 3 and args[0].value == "APPEND" and all(not v for v in values[2:])
    if name in FLAG_COMMANDS:
        skip = 1 if name.startswith("target_") else 0
        return len(args) > skip and all(v in _SCOPES or not v for v in values[skip:])
    return False


#: Where a CUDA compiler named by these runs in a custom command, the command line is nvcc's.
_CUDA_COMPILERS = frozenset({"${CMAKE_CUDA_COMPILER}", "${CUDAToolkit_NVCC_EXECUTABLE}", "${CUDA_NVCC_EXECUTABLE}"})
#: The keywords of add_custom_command, add_custom_target and execute_process that end a COMMAND's words.
COMMAND_KEYWORDS = frozenset("""
    COMMAND OUTPUT DEPENDS BYPRODUCTS IMPLICIT_DEPENDS WORKING_DIRECTORY COMMENT DEPFILE JOB_POOL JOB_SERVER_AWARE
    VERBATIM APPEND USES_TERMINAL COMMAND_EXPAND_LISTS DEPENDS_EXPLICIT_ONLY MAIN_DEPENDENCY CODEGEN SOURCES ALL
    TARGET PRE_BUILD PRE_LINK POST_BUILD RESULT_VARIABLE RESULTS_VARIABLE OUTPUT_VARIABLE ERROR_VARIABLE INPUT_FILE
    OUTPUT_FILE ERROR_FILE OUTPUT_QUIET ERROR_QUIET TIMEOUT COMMAND_ECHO ECHO_OUTPUT_VARIABLE ECHO_ERROR_VARIABLE
    ENCODING COMMAND_ERROR_IS_FATAL OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_STRIP_TRAILING_WHITESPACE
""".split())
#: Words of an nvcc command line that compiles (the source may come through a variable).
_COMPILING = frozenset({"-o", "-c", "--output-file", "--compile", "-fatbin", "--fatbin", "-cubin", "--cubin", "-ptx",
                        "--ptx", "-dc", "--device-c", "-dw", "--device-w"})
#: The AMD targets of a compiler run by hand: CMake passes CMAKE_HIP_ARCHITECTURES only to its own compiles
#: (clang takes a comma-separated list).
CUSTOM_ARCH = '"--offload-arch=$<JOIN:${CMAKE_HIP_ARCHITECTURES},$<COMMA>>"'
#: The HIP flags the configure chose (CMAKE_HIP_FLAGS: --rocm-path where ROCm is not where clang looks, say), as a
#: list: CMake gives them to its own compiles only, and a command takes a string of them as one argument.
CUSTOM_FLAGS_LIST = "hip_compile_flags"
CUSTOM_FLAGS_LINE = f'separate_arguments({CUSTOM_FLAGS_LIST} NATIVE_COMMAND "${{CMAKE_HIP_FLAGS}}")'


class CustomCommands:
    description = "the CUDA compiler run by a custom command: its nvcc flags, -x hip and the AMD targets"

    visits = Visits(frozenset({"add_custom_command", "add_custom_target", "execute_process"}))

    def run(self, ctx: Context, commands: list[Command]) -> None:
        flags_set: set[int] = set()
        for command in commands:
            for compiler, words in _compiler_runs(command.arguments()):
                if not any(value_of(w.value) in _COMPILING or value_of(w.value).endswith(".cu") for w in words):
                    continue  # nvcc --version: no device code to make
                translate_leaves(ctx, [w for w in words if w.type != "BRACKET_ARG"])  # NVIDIA targets dropped
                head = f"${{CMAKE_HIP_COMPILER}} ${{{CUSTOM_FLAGS_LIST}}}"
                if command.start not in flags_set:
                    flags_set.add(command.start)
                    ctx.edits.insert_before(command, CUSTOM_FLAGS_LINE)
                if not any(w.value in ("-x", "--x") for w in words):
                    head += " -x hip"  # clang reads a .cu file as CUDA
                if "hip_runtime.h" not in " ".join(ctx.edits.text_of(w) for w in words):
                    head += " -include hip/hip_runtime.h"  # what nvcc includes in every .cu file itself
                targeted = any("--offload-arch" in ctx.edits.text_of(w) for w in words)
                if not targeted and command.identifier == "execute_process":
                    # no generator expressions at configure time: the list cannot be spelled for clang here
                    ctx.report(compiler.start, "cmake-configure-compile", Severity.WARNING,
                               f"{compiler.value} compiles device code while CMake configures; it gets no AMD "
                               "target list", "add --offload-arch=<gfx...> (comma-separated) to this command")
                elif not targeted:
                    head += " " + CUSTOM_ARCH
                ctx.edits.replace(compiler, head)
                ctx.report(compiler.start, "cmake-custom-compile", Severity.INFO,
                           f"{compiler.value} run by hand → {head}: what nvcc did by itself, and CMake passes "
                           "CMAKE_HIP_ARCHITECTURES only to its own compiles", fixable=True, replacement=head)


def _compiler_runs(args: list[Leaf]) -> list[tuple[Leaf, list[Leaf]]]:
    """Each COMMAND of ``args`` that runs a CUDA compiler: the compiler's argument and the words after it."""
    runs: list[tuple[Leaf, list[Leaf]]] = []
    i = 0
    while i < len(args):
        if args[i].value != "COMMAND" or i + 1 >= len(args) or value_of(args[i + 1].value) not in _CUDA_COMPILERS:
            i += 1
            continue
        j = i + 2
        while j < len(args) and args[j].value not in COMMAND_KEYWORDS:
            j += 1
        runs.append((args[i + 1], args[i + 2 : j]))
        i = j
    return runs


def translate_leaves(ctx: Context, leaves: list[Leaf]) -> None:
    """Translate the flags spread over ``leaves`` (words may continue across leaves)."""
    words: list[tuple[Leaf, int, int]] = []
    group_rest: dict[int, list[Leaf]] = {}  # first leaf of a cross-leaf genex → the other leaves
    texts: list[str] = []
    i = 0
    while i < len(leaves):
        leaf = leaves[i]
        text = ctx.edits.text_of(leaf)
        quote, content, _ = inner(text)
        if not quote and _open_genex(content):
            # $<$<COMPILE_LANGUAGE:CUDA>:-a -b> spans unquoted arguments that CMake joins with ';'
            j = i + 1
            parts = [content]
            while j < len(leaves) and _open_genex(";".join(parts)) and not leaves[j].value.startswith('"'):
                parts.append(ctx.edits.text_of(leaves[j]))
                j += 1
            if not _open_genex(";".join(parts)):
                group_rest[leaf.start] = leaves[i + 1 : j]
                words.append((leaf, 0, len(text)))
                texts.append(";".join(parts))
                i = j
                continue
        # "SHELL:-Xcompiler -O3" is one option (CMake splits it for the compiler): one word here
        spans = [(0, len(content))] if content.startswith("SHELL:") else word_spans(content, " \t;" if quote else ";")
        for a, b in spans:
            words.append((leaf, a + len(quote), b + len(quote)))
            texts.append(text[a + len(quote) : b + len(quote)])
        i += 1
    new, translation = translate_flag_words(texts, [])
    for index, rule, message in translation.notes:
        ctx.report(words[index][0].start, rule, Severity.WARNING, message)
    if translation.architectures:
        first = next(leaf for (leaf, _, _), w in zip(words, new) if w is not None)
        ctx.report(first.start, "cmake-arch-flag", Severity.INFO,
                   f"NVIDIA architectures {', '.join(translation.architectures)} dropped from the flags: "
                   "CMAKE_HIP_ARCHITECTURES chooses the AMD targets", fixable=True)
    by_leaf: dict[int, list[tuple[int, int, str]]] = {}
    for (leaf, a, b), changed in zip(words, new):
        if changed is None:
            continue
        if leaf.start in group_rest:
            for other in group_rest[leaf.start]:
                ctx.edits.remove(other)
            b = len(ctx.edits.text_of(leaf))
        by_leaf.setdefault(leaf.start, []).append((a, b, changed))
    for leaf in leaves:
        changes = by_leaf.get(leaf.start)
        if changes:
            _apply_word_changes(ctx, leaf, changes)


def _open_genex(text: str) -> bool:
    """Does ``text`` leave a ``$<`` unclosed?"""
    if "$<" not in text:
        return False
    depth = 0
    for m in _GENEX_MARK.finditer(text):  # "$<" and ">", left to right, as a scan would meet them
        if m.group() == "$<":
            depth += 1
        elif depth:
            depth -= 1
    return depth > 0


_GENEX_MARK = re.compile(r"\$<|>")


def _apply_word_changes(ctx: Context, leaf: Leaf, changes: list[tuple[int, int, str]]) -> None:
    old = ctx.edits.text_of(leaf)
    quote = '"' if old.startswith('"') and len(old) >= 2 else ""
    text = word_changes_applied(old, quote, changes)
    if not quote and ";" in text and "$<" in text and ";" not in old:
        text = f'"{text}"'  # a genex body that became a list must stay one argument
    elif not quote and _NOT_UNQUOTED.search(text):
        text = f'"{text}"'  # a word from a quoted argument (-Xcompiler "-DX=(") that no unquoted one may hold
    if text == "" and not quote:
        ctx.edits.remove(leaf)
    else:
        ctx.edits.replace(leaf, text)
    ctx.report(leaf.start, "cmake-nvcc-flag", Severity.INFO, f"{old} → {text or '(removed)'}", fixable=True,
               replacement=text)


#: What an unquoted argument cannot hold unescaped: parentheses, ``#`` (blanks part the new words, as they
#: should: ``-x cu`` → ``-x hip``).
_NOT_UNQUOTED = re.compile(r"(?<!\\)[()#]")


def word_changes_applied(old: str, quote: str, changes: list[tuple[int, int, str]]) -> str:
    """``old`` with each ``(start, end, new)`` of ``changes`` (spans of ``old``, none overlapping) made,
    right to left, each at its offsets in the text as the changes to its right left it; an empty
    ``new`` drops the word and one separator next to it (the one before it, else the one after),
    never the ``quote`` around the whole.

    The text is kept as its unchanged head and the pieces after the last change made, so a long
    argument with many flags costs its length once, not once per change.
    """
    cut = len(old)  # the text is old[:cut] followed by the pieces
    pieces: list[str] = []  # what follows old[:cut], leftmost piece last; none empty
    size = 0  # their length

    def at(offset: int) -> str:
        """The character at ``offset`` of the text ("" past its end)."""
        if offset < cut:
            return old[offset]
        offset -= cut
        for piece in reversed(pieces):
            if offset < len(piece):
                return piece[offset]
            offset -= len(piece)
        return ""

    for a, b, new in sorted(changes, reverse=True):
        if not new:  # drop the word and one separator next to it
            if a > len(quote) and old[a - 1] in " \t;":
                a -= 1
            elif b < cut + size - len(quote) and at(b) in " \t;":
                b += 1
        if b < cut:
            pieces.append(old[b:cut])
            size += cut - b
        drop = b - cut  # characters of the pieces the change takes (past the text's end: none)
        while drop > 0 and pieces:
            if len(pieces[-1]) <= drop:
                drop -= len(pieces[-1])
                size -= len(pieces.pop())
            else:
                pieces[-1] = pieces[-1][drop:]
                size -= drop
                drop = 0
        if new:
            pieces.append(new)
            size += len(new)
        cut = a
    return old[:cut] + "".join(reversed(pieces))


_GENEX_LANG = re.compile(r"\$<(?P<head>" + "|".join(LANGUAGE_GENEX) + r"):(?P<body>[^<>$]*)>")
_GENEX_ID = re.compile(r"\$<(?P<head>" + "|".join(GENEX_RENAMES) + r")(?P<ids>:[^<>$]*)?>")


def _genex(text: str) -> str:
    def language(m: re.Match[str]) -> str:
        parts = m.group("body").split(",")
        head = m.group("head")
        if head.endswith("_AND_ID"):
            langs = ["HIP" if p == "CUDA" else p for p in parts[:1]]
            ids = [COMPILER_IDS.get(p, p) for p in parts[1:]] if parts[:1] == ["CUDA"] else parts[1:]
            parts = langs + ids
        else:
            parts = ["HIP" if p == "CUDA" else p for p in parts]
        return f"$<{head}:{','.join(parts)}>"

    text = _GENEX_LANG.sub(language, text)
    def compiler_id(m: re.Match[str]) -> str:
        ids = m.group("ids")
        if ids is not None:
            ids = ":" + ",".join(COMPILER_IDS.get(i, i) for i in ids[1:].split(","))
        return f"$<{GENEX_RENAMES[m.group('head')]}{ids or ''}>"

    return _GENEX_ID.sub(compiler_id, text)


class Names:
    description = "CUDA variables, generator expressions, environment variables and install paths → HIP/ROCm"

    visits = Visits()  # every name this pass renames is a trigger word

    def run(self, ctx: Context, commands: list[Command]) -> None:
        for command in commands:
            args = command.arguments()
            if command.identifier in ("set", "unset") and args and args[0].value in LEGACY_SWITCHES:
                ctx.edits.remove_command(command)
                ctx.report(command.start, "cmake-legacy-variable", Severity.INFO,
                           f"{args[0].value} only steered nvcc; removed", fixable=True)
                continue
            if command.identifier == "set" and args and args[0].value in RDC_VARIABLES:
                if len(args) > 1 and args[1].value.upper() in ("ON", "TRUE", "1", "YES"):
                    ctx.edits.rewrite_command(command, RDC_GLOBAL)
                    ctx.report(command.start, "cmake-rdc", Severity.INFO,
                               f"{args[0].value} ON → -fgpu-rdc for every HIP source and HIP link", fixable=True)
                else:
                    ctx.edits.remove_command(command)
                continue
            if command.identifier == "set" and args and args[0].value == "CMAKE_CUDA_COMPILER":
                ctx.edits.remove_command(command)
                ctx.report(command.start, "cmake-compiler", Severity.WARNING,
                           "CMAKE_CUDA_COMPILER set in the project; removed",
                           "the HIP compiler (ROCm's clang++) is chosen with -DCMAKE_HIP_COMPILER when configuring")
                continue
            if command.identifier in ("set", "get_filename_component") and args and not _sets_rocm_root(ctx, command):
                ctx.facts.kept.add(args[0].start)
                ctx.report(args[0].start, "cmake-cuda-variable", Severity.WARNING,
                           f"{args[0].value}: the project sets this CUDA location itself; kept under its CUDA name, "
                           f"so that it does not overwrite {location_target(args[0].value)}, ROCm's, which the port "
                           "finds",
                           "point the code that reads it at ROCm, or drop it")
            for arg in args:
                self._argument(ctx, arg)

    def _argument(self, ctx: Context, arg: Leaf) -> None:
        text = ctx.edits.text_of(arg)
        if arg.type == "BRACKET_ARG" or arg.start in ctx.facts.kept:
            return
        new = renamed(ctx, text, arg.start)
        if new != text:
            ctx.edits.replace(arg, new)
            ctx.report(arg.start, "cmake-name", Severity.INFO, f"{text} → {new}", fixable=True, replacement=new)


def _sets_rocm_root(ctx: Context, command: Command) -> bool:
    """Whether a set() or get_filename_component() that writes a CUDA location variable (one the port renames
    ROCM_PATH, HIP_INCLUDE_DIRS, ...; ``ENV{CUDA_HOME}`` too) is not one (True), or sets it to what is ROCm's
    once renamed (True): CUDA's usual place (``/usr/local/cuda``, with a subfolder for the folders below the
    root) or another such variable. A CUDA location set otherwise (a compiler's folder, a folder of the
    project's, NVIDIA's HPC SDK, an environment variable that may be unset) would overwrite the ROCm location
    the port finds: False."""
    args = command.arguments()
    target = location_target(args[0].value)
    if target is None:
        return True
    if command.identifier != "set":
        return False  # get_filename_component(CUDA_DIR ...): computed from something else
    values = []
    for arg in args[1:]:
        value = value_of(arg.value)
        if value in ("CACHE", "PARENT_SCOPE"):
            break
        values.append(value.rstrip("/"))
    if len(values) != 1:
        # a root is one folder; a folder list (set(CUDA_INCLUDE_DIRS ${CUDA_INCLUDE_DIRS} extra)) is renamed whole
        return target != "ROCM_PATH"
    value = values[0]
    reference = _LEADING_REFERENCE.match(value)
    if reference is not None:
        kind, referred = reference.groups()
        whole = reference.end() == len(value)
        return kind is None and VARIABLES.get(referred) in _LOCATIONS and (whole or target != "ROCM_PATH")
    root = CUDA_ROOT_LITERAL.search(value)
    return root is not None and root.start() == 0 and (root.end() == len(value) or target != "ROCM_PATH")


def location_target(name: str) -> str | None:
    """The ROCm location variable the port renames the CUDA one ``name`` to (``ENV{CUDA_HOME}`` → ROCM_PATH);
    None for another name."""
    env = _ENV_NAME.fullmatch(name)
    target = "ROCM_PATH" if env is not None and env.group(1) in CUDA_ENV_VARS else VARIABLES.get(name)
    return target if target in _LOCATIONS else None


#: The variables the port names CUDA's locations by (the root, its include, library and program folders).
_LOCATIONS = frozenset({"ROCM_PATH", "HIP_INCLUDE_DIRS", "HIP_LIB_INSTALL_DIR", "HIP_BIN_INSTALL_DIR"})
_ENV_NAME = re.compile(r"ENV\{(\w+)\}")
#: A value that begins with one reference: ``${CUDA_PATH}``, ``$ENV{CUDA_HOME}``, ``${CUDA_PATH}/include``.
_LEADING_REFERENCE = re.compile(r"\$(ENV)?\{(\w+)\}")



def renamed(ctx: Context, text: str, at: int) -> str:
    """``text``, an argument's (the user's, at offset ``at``), with the CUDA names in it renamed as :class:`Names`
    renames them: also for an argument a pass copies into a line of its own, which Names never reads, and a
    second run would (``cuda_add_executable(... OPTIONS $<$<COMPILE_LANGUAGE:CUDA>:-G>)``)."""
    if "CUDA" not in text and "cuda" not in text and "NVIDIA" not in text:
        return text
    new = text
    bare = VARIABLES.get(text) or _family_member(text)
    if bare:  # the variable named as a word: set(CMAKE_CUDA_FLAGS ...), if(CUDA_FOUND)
        new = bare
    elif text in REPORTED_VARIABLES:  # if(CUDAToolkit_VERSION VERSION_LESS 11): the CUDA branch is no guide
        ctx.report(at, "cmake-cuda-variable", Severity.WARNING, f"{text}: {REPORTED_VARIABLES[text]}")
    elif text.startswith("ENV{") and text[4:-1] in CUDA_ENV_VARS:  # if(DEFINED ENV{CUDA_PATH})
        new = "ENV{ROCM_PATH}"
    for cuda, hip in WORD_RENAMES.items():  # -DTHRUST_DEVICE_SYSTEM=THRUST_DEVICE_SYSTEM_CUDA
        new = new.replace(cuda, hip)
    new = rename_refs(new, lambda kind, name: _ref(ctx, at, kind, name))
    new = _FAMILY_REFERENCE.sub(lambda m: m.group(1) + VARIABLE_FAMILIES[m.group(2)], new)  # ${CUDA_NVCC_FLAGS_${C}}
    new = _genex(new)
    new = _paths(new)
    if "${ROCM_PATH}" in new and new != text:
        ctx.facts.uses_rocm_path = True
    return new


#: A reference to a member of a variable family, its name computed or not: ``${CUDA_NVCC_FLAGS_${CONFIG}}``.
_FAMILY_REFERENCE = re.compile(r"(\$\{)(" + "|".join(map(re.escape, VARIABLE_FAMILIES)) + r")(?=[\w$])")
#: A member of a variable family named as a word: ``CUDA_NVCC_FLAGS_PROFILE``, ``CUDA_NVCC_FLAGS_${CONFIG}``.
_FAMILY_WORD = re.compile("(" + "|".join(map(re.escape, VARIABLE_FAMILIES)) + r")((?:\w|\$\{\w+\})+)")


def _family_member(name: str) -> str | None:
    """The new name of a member of a variable family (see :data:`VARIABLE_FAMILIES`); None for another name."""
    m = _FAMILY_WORD.fullmatch(name)
    return None if m is None else VARIABLE_FAMILIES[m.group(1)] + m.group(2)


def _ref(ctx: Context, at: int, kind: str, name: str) -> str | None:
    if kind == "ENV":
        return "$ENV{ROCM_PATH}" if name in CUDA_ENV_VARS else None
    if name in REPORTED_VARIABLES:
        ctx.report(at, "cmake-cuda-variable", Severity.WARNING, f"${{{name}}}: {REPORTED_VARIABLES[name]}")
        return None
    new = VARIABLES.get(name)
    if not new:
        return None
    return f"${kind}{{{new}}}" if kind else f"${{{new}}}"


def _paths(text: str) -> str:
    def root(m: re.Match[str]) -> str:
        return "${ROCM_PATH}"

    new = CUDA_ROOT_LITERAL.sub(root, text)
    if new != text or "${ROCM_PATH}" in new:
        for cuda, rocm in SUBPATHS.items():
            new = new.replace("${ROCM_PATH}" + cuda, "${ROCM_PATH}" + rocm)
    return new


#: ROCM_PATH from the environment, else the root of hipcc, looked for in /opt/rocm/bin first and then on PATH
#: (Debian's and Ubuntu's packages put it in /usr/bin, and have no /opt/rocm), else /opt/rocm.
ROCM_PATH_BLOCK = f"""if(NOT DEFINED ROCM_PATH)
  if(DEFINED ENV{{ROCM_PATH}})
    set(ROCM_PATH "$ENV{{ROCM_PATH}}" CACHE PATH "ROCm installation root")
  else()
    find_program(rocm_hipcc hipcc HINTS "{ROCM_DEFAULT}/bin" NO_CACHE)
    if(rocm_hipcc)
      get_filename_component(rocm_root "${{rocm_hipcc}}/../.." ABSOLUTE)
    else()
      set(rocm_root "{ROCM_DEFAULT}")
    endif()
    set(ROCM_PATH "${{rocm_root}}" CACHE PATH "ROCm installation root")
  endif()
endif()"""


class Prelude:
    description = "define ROCM_PATH (from the environment, else hipcc's root) where the rewrite uses it"
    visits = NO_COMMANDS

    def run(self, ctx: Context, commands: list[Command]) -> None:
        if not ctx.facts.uses_rocm_path or ctx.facts.defines_rocm_path:
            return
        commands = ctx.commands()
        project = next((c for c in commands if c.identifier == "project"), None)
        if project is not None:
            ctx.edits.insert_after(project, ROCM_PATH_BLOCK)
        elif commands:
            ctx.edits.insert_before(commands[0], ROCM_PATH_BLOCK)
