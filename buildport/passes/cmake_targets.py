"""Target-level CMake passes: CUDA sources, libraries, properties, architectures."""

from __future__ import annotations

import re

from buildport.passes.cmake_args import rename_refs, value_of
from buildport.findings import Severity
from buildport.passes.base import Context, Visits, expand, is_cuda_source, target_sources
from buildport.passes.cmake_project import arch_cache_line
from buildport.rules.cmake import (
    BUILTIN_COMMANDS, LANGUAGE_PROPERTIES, LEGACY_COMMANDS, LEGACY_LINK_HELPERS, LEGACY_LOOKUPS,
    LEGACY_OBJECT_COMMANDS, MANUAL_COMMANDS, PROPERTIES, TARGET_COMMANDS, VARIABLES,
)
from buildport.rules.libraries import BY_LEGACY_VAR, BY_LINK_NAME, BY_TARGET, Library
from buildport.syntax.cmake import Command, Leaf

LEGACY_NAMES = (frozenset(LEGACY_COMMANDS) | frozenset(LEGACY_LINK_HELPERS) | frozenset(MANUAL_COMMANDS)
                | LEGACY_OBJECT_COMMANDS | LEGACY_LOOKUPS)
#: A namespaced target name (``CUDA::cublas``, a project row's ``cuFOO::cufoo``): a CUDA library's where the
#: library table has it (BY_TARGET, the rule set's rows among them).
_CUDA_TARGET = re.compile(r"(?<![\w])[A-Za-z_][A-Za-z0-9_]*::[A-Za-z0-9_]+")
_LINK_FLAG = re.compile(r'(?P<lead>^|(?<=[\s;"]))-l(?P<name>[A-Za-z0-9_-]+)(?=$|[\s;"])')
_LINK_KEYWORDS = frozenset({"PUBLIC", "PRIVATE", "INTERFACE", "LINK_PUBLIC", "LINK_PRIVATE",
                            "LINK_INTERFACE_LIBRARIES", "debug", "optimized", "general"})
_RDC_COMPILE = "$<$<COMPILE_LANGUAGE:HIP>:-fgpu-rdc>"
_RDC_LINK = '"$<$<LINK_LANGUAGE:HIP>:-fgpu-rdc;--hip-link>"'


class CudaSources:
    description = ".cu sources of a target get LANGUAGE HIP (CMake would compile them as C++ or skip them)"
    #: a target's commands and the project's own functions and macros (which may build one), when a source could
    #: be among their arguments: a trigger word (``.cu``) or a variable (which may hold one or a glob of them)
    visits = Visits(variables=True,
                    skips=(BUILTIN_COMMANDS | LEGACY_NAMES) - TARGET_COMMANDS - {"target_sources"})

    def run(self, ctx: Context, commands: list[Command]) -> None:
        listed: set[int] = set()  # where a target's .cu sources are marked from its list (once each place)
        for command in commands:
            name = command.identifier
            targets = name in TARGET_COMMANDS or name == "target_sources"
            # a target's sources, or every argument of a user function or macro that builds one
            target, sources = target_sources(command) if targets else (None, command.arguments())
            # a source's properties are its directory's: target_sources() of a target another folder created marks
            # them where that target is (UppASD's ${UppASD_LIB}), as CMake 3.18 and later can
            where = (f" TARGET_DIRECTORY {target.value}" if name == "target_sources" and target is not None
                     and target.value not in ctx.facts.target_kinds else "")
            marked: dict[str, None] = {}  # in order, each once
            unknown = False  # a variable this file does not set: its .cu files are marked as CMake reads them
            for source in sources:
                for text in expand(ctx, source.value):
                    if _GLOB_CHARS.search(value_of(text)):
                        continue  # a pattern a function globs (caffe_source_group(... GLOB "${root}/*.cu")), no file
                    if text != source.value and _unknown_variable(ctx, value_of(text)) and _names_cuda_itself(ctx):
                        unknown = True  # list(APPEND srcs ${cuda}) with ${cuda} set in another file or by a function
                    if is_cuda_source(text) and "${" in text and text != source.value:
                        # a variable's value names another (kernels/${solver}.cu, set in a loop): what it held
                        # there is not what it holds here; marked as CMake has the names
                        unknown = True
                    elif is_cuda_source(text) and text + where not in ctx.facts.hip_sources:
                        marked[text] = None
                value = value_of(source.value)
                if _unknown_variable(ctx, value):
                    unknown = True
                if value.startswith("${") and value[2:-1] in ctx.facts.globbed:
                    patterns = ctx.facts.globbed[value[2:-1]]
                    if patterns and all(value_of(p).endswith(".cu") for p in patterns):
                        if source.value + where not in ctx.facts.hip_sources:
                            marked[source.value] = None
                    elif any(value_of(p).endswith(".cu") for p in patterns):
                        unknown = True  # .cu files globbed with others: marked from the target's list
                        if target is None:
                            ctx.report(source.start, "cmake-cuda-glob", Severity.WARNING,
                                       f"{source.value} globs .cu files together with others",
                                       "mark the .cu files with set_source_files_properties(... LANGUAGE HIP)")
            if marked:
                ctx.facts.hip_sources.update(text + where for text in marked)
                line = f"set_source_files_properties({' '.join(marked)}{where} PROPERTIES LANGUAGE HIP)"
                ctx.edits.insert_after(command, line)
                ctx.report(command.start, "cmake-cu-language", Severity.INFO,
                           f"{', '.join(marked)}: compiled as HIP", fixable=True, replacement=line)
            if unknown and target is not None and (_gpu_file(ctx, command) or _globs_cu(ctx, sources)):
                line = CU_SOURCES_OF.format(target=target.value, where=where)
                place = _last_sources_of(ctx, command, target.value)
                if ctx.text_holds(line.splitlines()[0]) or place.start in listed:
                    continue  # ported before, or marked there for an earlier command already
                listed.add(place.start)
                ctx.edits.insert_after(place, line)
                ctx.report(command.start, "cmake-cu-language", Severity.INFO,
                           f"the .cu sources of {target.value} that variables set elsewhere hold: compiled as HIP",
                           fixable=True, replacement=line.splitlines()[0])


#: The .cu files among a target's sources, as CMake has them (variables set in other files, functions,
#: branches): compiled as HIP, where the port cannot name them.
CU_SOURCES_OF = """get_target_property(hip_cu_sources {target} SOURCES)
list(FILTER hip_cu_sources INCLUDE REGEX "\\\\.cu$")
if(hip_cu_sources)
  set_source_files_properties(${{hip_cu_sources}}{where} PROPERTIES LANGUAGE HIP)
endif()"""


#: The characters of a glob pattern: an argument holding one names files a function globs, not a file.
_GLOB_CHARS = re.compile(r"[*?[]")

#: An imported target of CUDA's toolkit (FindCUDAToolkit's ``CUDA::nvml``).
_IMPORTED_CUDA_TARGET = re.compile(r"CUDA::\w+")

#: Commands whose arguments are files' paths, never a link item (``get_filename_component(dir ${CUDA_CUDART_LIBRARY}
#: PATH)``): a ROCm target's name there would be read as a path.
_PATH_COMMANDS = frozenset({"get_filename_component", "cmake_path", "file", "configure_file", "install"})

#: ... of which these take one path in a fixed place (a missing argument is an error).
_ONE_PATH_COMMANDS = frozenset({"get_filename_component", "cmake_path"})

#: Properties whose value is a file's path (an imported library's).
_PATH_PROPERTY = re.compile(r"^IMPORTED_(?:LOCATION|IMPLIB)(?:_\w+)?$")


def _names_a_cuda_library(text: str) -> bool:
    """Whether ``text`` names a CUDA library the link rewrite would turn into a ROCm target."""
    return _whole_library(text) is not None or bool(_legacy_references(text)) or bool(
        _IMPORTED_CUDA_TARGET.search(text))


def _refers_to_cuda_library(ctx: Context, text: str) -> bool:
    """Whether ``text`` refers to a CUDA library's legacy variable (one the file does not find itself) or target."""
    return any(name not in ctx.facts.located for name in _legacy_references(text)) or bool(
        _IMPORTED_CUDA_TARGET.search(text))


def _legacy_references(text: str) -> list[str]:
    """The CUDA libraries' legacy variables ``text`` refers to (``${CUDA_CUDART_LIBRARY}``)."""
    return [name for name in _REFERENCE.findall(text) if name in BY_LEGACY_VAR] if "${" in text else []


_REFERENCE = re.compile(r"\$\{(\w+)\}")


def _last_sources_of(ctx: Context, command: Command, target: str) -> Command:
    """Where ``target`` has all the sources the file gives it in the block ``command`` stands in: after
    ``command``, after a later target_sources(), or after the end of a branch that holds one."""
    last, depth, in_branch = command, 0, False
    for later in ctx.commands():
        if later.start <= command.start:
            continue
        name = later.identifier
        if name in _BRANCH_ENDS and depth == 0:
            break  # another branch of command's own if(): it does not run with command
        if name in _BLOCK_OPENERS:
            depth += 1
        elif name in _BLOCK_CLOSERS:
            depth -= 1
            if depth < 0:
                break  # the end of command's own block
            if depth == 0 and in_branch:
                last, in_branch = later, False
        elif name == "target_sources" and later.arguments()[:1] and later.arguments()[0].value == target:
            if depth == 0:
                last = later
            else:
                in_branch = True
    return last


_BRANCH_ENDS = frozenset({"else", "elseif"})
_BLOCK_OPENERS = frozenset({"if", "foreach", "while", "function", "macro", "block"})
_BLOCK_CLOSERS = frozenset({"endif", "endforeach", "endwhile", "endfunction", "endmacro", "endblock"})


def _unknown_variable(ctx: Context, value: str) -> bool:
    """Whether ``value`` is one variable (``${SRCS}``) that this file neither sets nor globs."""
    if not (value.startswith("${") and value.endswith("}") and value.count("${") == 1):
        return False
    name = value[2:-1]
    if name.startswith(("CMAKE_", "ARGV")) or name == "ARGN":
        return False  # a function's arguments are marked where it is called
    return ctx.facts.values_of(name) is None and name not in ctx.facts.globbed


def _names_cuda_itself(ctx: Context) -> bool:
    """Whether the file writes CUDA's name (``HAVE_CUDA``, ``cuda_compile``): more than a rule's trigger word, which
    ``CubeRenderer.cpp`` or ``current=0`` holds too."""
    return ctx.text_holds("CUDA") or ctx.text_holds("cuda") or ctx.text_holds("Cuda")


def _globs_cu(ctx: Context, sources: list[Leaf]) -> bool:
    """Whether a source argument is a variable a file(GLOB) of .cu files filled."""
    for source in sources:
        value = value_of(source.value)
        patterns = ctx.facts.globbed.get(value[2:-1]) if value.startswith("${") else None
        if patterns and any(value_of(p).endswith(".cu") for p in patterns):
            return True
    return False


def _gpu_file(ctx: Context, command: Command) -> bool:
    """A legacy CUDA target, or a target in a file with CUDA in it (not every C++ target of a project)."""
    return command.identifier.startswith("cuda_") or ctx.names_cuda()


#: Commands that evaluate no generator expression: a library target is named plainly in them.
_NO_GENEX = frozenset({"if", "elseif", "else", "endif", "while", "endwhile", "message", "option", "foreach"})


def library_replacement(lib: Library, hip_target: bool | None) -> str | None:
    """What a CUDA library becomes in a link list; ``""`` removes it, ``None`` keeps it."""
    if lib.runtime:
        if not lib.rocm_target or hip_target:
            return ""
        return lib.rocm_target
    return lib.cmake_link or None


class Libraries:
    description = "CUDA libraries → ROCm ones wherever they appear (targets, legacy variables, -l flags)"
    visits = Visits()  # a library, legacy variable or -l flag of the table is a trigger word

    def run(self, ctx: Context, commands: list[Command]) -> None:
        for command in commands:
            name = command.identifier
            args = command.arguments()
            if name in ("target_link_libraries", "link_libraries"):
                target = args[0].value if name == "target_link_libraries" and args else None
                start = 1 if target is not None else 0
                # a target of HIP sources alone needs no runtime library; one with C++ files does (hip::host)
                hip = None if target is None else target in ctx.facts.hip_targets and _only_cuda_sources(ctx, target)
                self._link_list(ctx, args[start:], hip, target)
                items = [a for a in args[start:] if value_of(a.value) not in _LINK_KEYWORDS]
                if items and all(ctx.edits.is_removed(a) for a in items):
                    ctx.edits.remove_command(command)  # only the CUDA runtime was linked
                else:
                    _drop_empty_scopes(ctx, args[start:])
            elif name == "find_library":
                self._find_library(ctx, args)
            else:
                path_slot = False
                for arg in args:
                    text = ctx.edits.text_of(arg)
                    if (path_slot and _names_a_cuda_library(text)) or (
                            name in _PATH_COMMANDS and _refers_to_cuda_library(ctx, text)):
                        # a file's path belongs here, which a ROCm target name is not
                        ctx.report(arg.start, "cmake-library-path", Severity.WARNING,
                                   f"{arg.value}: the path of a CUDA library file, kept",
                                   "point it at the ROCm library's file, or link the ROCm package's target")
                        if name in _ONE_PATH_COMMANDS and arg.type == "UNQUOTED_ARG" and _REFERENCE.fullmatch(text):
                            # without CUDA's toolkit it is empty, and an empty unquoted argument is none at all
                            ctx.edits.replace(arg, f'"{text}"')
                    else:
                        self._embedded(ctx, arg, name in _NO_GENEX)
                    path_slot = name in ("set_target_properties", "set_property") and bool(
                        _PATH_PROPERTY.match(value_of(arg.value)))

    def _link_list(self, ctx: Context, args: list[Leaf], hip: bool | None, target: str | None) -> None:
        has_host = False
        scope = ""
        for arg in args:
            text = ctx.edits.text_of(arg)
            if value_of(text) in _LINK_KEYWORDS:
                scope = value_of(text)
                continue
            lib = _whole_library(text)
            if lib is None:
                self._embedded(ctx, arg)
                continue
            # a HIP target needs no runtime library itself, but what it passes on (PUBLIC,
            # INTERFACE, the plain signature) reaches C++ consumers, which need hip::host
            private = scope in ("PRIVATE", "LINK_PRIVATE")
            new = library_replacement(lib, hip and private)
            if new is None:
                imported = _IMPORTED_CUDA_TARGET.fullmatch(value_of(text))
                if imported is not None:
                    # nothing defines CUDA:: targets once CUDA's toolkit is not found: linked where one exists,
                    # so the configure goes on and only the code that uses the library waits for a person
                    ctx.edits.replace(arg, f"$<TARGET_NAME_IF_EXISTS:{value_of(text)}>")
                ctx.report(arg.start, "cmake-library-unported", Severity.WARNING,
                           f"{text}: {lib.note}" + (" (linked only where the target exists)" if imported else ""),
                           "port the code that uses it by hand")
                continue
            if new == "hip::host":
                if has_host:
                    new = ""
                has_host = True
            if new:
                ctx.edits.replace(arg, new)
            else:
                ctx.edits.remove(arg)
            if lib.rocm_package and new:
                ctx.facts.packages.add(lib.rocm_package)
            ctx.report(arg.start, "cmake-library", Severity.INFO, f"{text} → {new or '(nothing: HIP target)'}",
                       fixable=True, replacement=new)

    def _embedded(self, ctx: Context, arg: Leaf, plain: bool = False) -> None:
        """CUDA targets and legacy variables inside any argument, e.g. in set(LIBS ...); ``plain``: in a
        command that evaluates no generator expression (a condition, a message), a target is named plainly."""
        text = ctx.edits.text_of(arg)
        if arg.type == "BRACKET_ARG":
            return  # literal text
        if "::" not in text and "${" not in text and "-l" not in text:
            return  # what each of the three rewrites below needs to match

        def target(m: re.Match[str]) -> str:
            lib = BY_TARGET.get(m.group(0).lower())
            return self._use(ctx, arg, lib, m.group(0), plain)

        def legacy(kind: str, name: str) -> str | None:
            if kind or name in ctx.facts.located:
                return None  # the file finds the library itself (find_library(NCCL_LIBRARY ...)): its own variable
            lib = BY_LEGACY_VAR.get(name)
            return None if lib is None else self._use(ctx, arg, lib, f"${{{name}}}", plain)

        def link_flag(m: re.Match[str]) -> str:
            lib = BY_LINK_NAME.get(m.group("name"))
            if lib is None:
                return m.group(0)
            if lib.runtime:
                return m.group(0) if not lib.rocm_link else f"{m.group('lead')}-l{lib.rocm_link}"
            replacement = self._use(ctx, arg, lib, m.group(0).strip())
            return m.group(0) if replacement == m.group(0).strip() else f"{m.group('lead')}-l{lib.rocm_link}"

        new = _CUDA_TARGET.sub(target, text) if "::" in text else text
        new = rename_refs(new, legacy) if "${" in new else new
        new = _LINK_FLAG.sub(link_flag, new) if "-l" in new else new
        if new != text:
            ctx.edits.replace(arg, new)

    def _use(self, ctx: Context, arg: Leaf, lib: Library | None, original: str, plain: bool = False) -> str:
        if lib is None:
            return original
        new = library_replacement(lib, None)
        if plain and new and new.startswith("$<"):
            new = lib.rocm_target  # if(TARGET ...), message(...): CMake reads no generator expression there
        if new is None:
            ctx.report(arg.start, "cmake-library-unported", Severity.WARNING, f"{original}: {lib.note}",
                       "port the code that uses it by hand")
            return original
        if lib.rocm_package:
            ctx.facts.packages.add(lib.rocm_package)
        return new

    def _find_library(self, ctx: Context, args: list[Leaf]) -> None:
        for arg in args[1:]:
            lib = BY_LINK_NAME.get(value_of(arg.value))
            if lib is None:
                continue
            if lib.rocm_link:
                ctx.edits.replace(arg, lib.rocm_link)
                ctx.report(arg.start, "cmake-library", Severity.INFO, f"find_library {arg.value} → {lib.rocm_link}",
                           fixable=True, replacement=lib.rocm_link)
            else:
                ctx.report(arg.start, "cmake-library-unported", Severity.WARNING, f"{arg.value}: {lib.note}")


def _drop_empty_scopes(ctx: Context, args: list[Leaf]) -> None:
    """``PUBLIC`` followed by nothing but removed items goes too."""
    for i, arg in enumerate(args):
        if value_of(arg.value) not in ("PUBLIC", "PRIVATE", "INTERFACE", "LINK_PUBLIC", "LINK_PRIVATE"):
            continue
        following = []
        for later in args[i + 1 :]:
            if value_of(later.value) in _LINK_KEYWORDS:
                break
            following.append(later)
        if following and all(ctx.edits.is_removed(a) for a in following):
            ctx.edits.remove(arg)


def _whole_library(text: str) -> Library | None:
    """The library an argument names as a whole: CUDA::x, ${LEGACY_VAR}, -lx or a bare name."""
    value = value_of(text)
    if value in _LINK_KEYWORDS:
        return None
    if value.lower() in BY_TARGET:
        return BY_TARGET[value.lower()]
    if value.startswith("${") and value.endswith("}") and value[2:-1] in BY_LEGACY_VAR:
        return BY_LEGACY_VAR[value[2:-1]]
    name = value[2:] if value.startswith("-l") else value
    return BY_LINK_NAME.get(name)


_PROPERTY_COMMANDS = frozenset({
    "set_target_properties", "set_property", "set_source_files_properties", "set_tests_properties",
    "get_target_property", "get_property", "target_compile_features",
})


def _property_names(identifier: str, values: list[str]) -> list[tuple[int, int]]:
    """Where a property command names properties: each name's index and how many values follow it. Only
    those places hold names; a value is never read as one (``CUDA_STANDARD CUDA_STANDARD_REQUIRED`` sets
    CUDA_STANDARD to a word; read as two names, the port's ``HIP_STANDARD CUDA_STANDARD_REQUIRED`` would be
    ported again)."""
    if identifier in ("set_property", "get_property"):
        if "PROPERTY" not in values[:-1]:
            return []
        at = values.index("PROPERTY") + 1
        return [(at, len(values) - at - 1 if identifier == "set_property" else 0)]
    if identifier == "get_target_property":
        return [(2, 0)] if len(values) > 2 else []
    if "PROPERTIES" not in values:
        return []
    first = values.index("PROPERTIES") + 1  # then name, value, name, value...
    return [(i, min(1, len(values) - i - 1)) for i in range(first, len(values), 2)]


#: The variables that hold CUDA's include directories: those the table renames to HIP_INCLUDE_DIRS.
_CUDA_INCLUDE_NAMES = "|".join(re.escape(name) for name, new in VARIABLES.items() if new == "HIP_INCLUDE_DIRS")
#: A reference to one of them.
_CUDA_INCLUDE_VARS = re.compile(r"\$\{(?:" + _CUDA_INCLUDE_NAMES + r")\}")
_SCOPES = frozenset({"PRIVATE", "PUBLIC", "INTERFACE"})
#: What hip::host defines for C and C++ files that include HIP's headers.
_PLATFORM = "-D__HIP_PLATFORM_AMD__"
#: Commands that set compile flags: for C and C++ files where they set CMAKE_C_FLAGS or CMAKE_CXX_FLAGS.
_FLAG_SETTERS = frozenset({"set", "string", "list", "add_compile_options", "add_definitions"})
_HOST_FLAGS = re.compile(r"CMAKE_(?:C|CXX)_FLAGS(?:_[A-Z]+)?")
#: CUDA's include folder given by a flag (``-I${CUDAToolkit_INCLUDE_DIRS}``, ``-isystem ${CUDA_INCLUDE_DIRS}``).
_CUDA_INCLUDE_FLAG = re.compile(r"(?:-I|-isystem\s*)\s*\$\{(?:" + _CUDA_INCLUDE_NAMES + r")\}")


class HostHeaders:
    description = "a target given CUDA's include directories links hip::host: its C++ files include HIP's headers"

    visits = Visits(frozenset({"include_directories", "target_include_directories"}) | _FLAG_SETTERS)

    def run(self, ctx: Context, commands: list[Command]) -> None:
        done: set[str] = set()
        ported = ctx.text_holds(_LINK_HOST_HERE)
        for command in commands:
            args = command.arguments()
            if command.identifier in _FLAG_SETTERS:
                self._flags(ctx, command, args)
                continue
            if command.identifier == "include_directories" and _cuda_include_scope(args) is not None:
                if not ported:  # each such command (branches may hold one each)
                    self._directory(ctx, command)
                continue
            if command.identifier != "target_include_directories" or len(args) < 2:
                continue
            target = args[0].value
            if "::" in target:
                continue  # an imported target a find module defines (a copy of FindCUDAToolkit.cmake's CUDA::x)
            scope = _cuda_include_scope(args[1:])
            if scope is None or target in done or _links_host(ctx, target) or _only_cuda_sources(ctx, target):
                continue
            # hip_runtime.h compiled as C++ needs __HIP_PLATFORM_AMD__ (and the library), which hip::host
            # carries; CMake's CUDA language linked cudart for the target by itself
            plain = _plain_links(ctx, target)
            line = f"target_link_libraries({target} {'' if plain else scope + ' '}hip::host)"
            ctx.edits.insert_after(command, line)
            ctx.facts.packages.add("hip")
            done.add(target)
            ctx.report(command.start, "cmake-host-headers", Severity.INFO,
                       f"{target} gets CUDA's include directories: its C++ files link hip::host",
                       fixable=True, replacement=line)


    @staticmethod
    def _flags(ctx: Context, command: Command, args: list[Leaf]) -> None:
        """``set(CMAKE_CXX_FLAGS "... -I${CMAKE_CUDA_TOOLKIT_INCLUDE_DIRECTORIES}")``, ``add_compile_options(-I${...})``:
        the C and C++ files include CUDA's headers by a flag, HIP's once ported, which need ``__HIP_PLATFORM_AMD__``
        (hip::host's definition): it is written beside the folder (UppASD)."""
        name = command.identifier
        if name in ("set", "string", "list"):
            at = 0 if name == "set" else 1
            if len(args) <= at or not _HOST_FLAGS.fullmatch(value_of(args[at].value)):
                return
        if ctx.text_holds("__HIP_PLATFORM_AMD__"):
            return
        for arg in args:
            text = ctx.edits.text_of(arg)
            if _CUDA_INCLUDE_FLAG.search(text) is None or "$<" in text:
                continue  # (inside a generator expression a blank would split it)
            if name in ("set", "string", "list") and arg.type == "QUOTED_ARG":
                new = f"{text[:-1]} {_PLATFORM}{text[-1]}"  # one string of flags: inside it, at its end
            elif name == "string":
                new = f'{text} " {_PLATFORM}"'  # string(APPEND) joins its arguments with nothing between
            else:
                new = f"{text} {_PLATFORM}"  # an option, or a list item, of its own
            ctx.edits.replace(arg, new)
            ctx.report(arg.start, "cmake-host-headers", Severity.INFO,
                       f"{arg.value}: CUDA's headers for C and C++ files, HIP's once ported: they need {_PLATFORM}",
                       fixable=True, replacement=new)
            return

    @staticmethod
    def _directory(ctx: Context, command: Command) -> None:
        """CUDA's include directories for the whole directory: every C++ target made after it may include
        HIP's headers, which g++ compiles only with hip::host's definitions."""
        ctx.edits.insert_after(command, _LINK_HOST_HERE)
        ctx.facts.packages.add("hip")
        ctx.report(command.start, "cmake-host-headers", Severity.INFO,
                   "CUDA's include directories for every target here: the targets made after it link hip::host",
                   fixable=True, replacement=_LINK_HOST_HERE)


_LINK_HOST_HERE = "link_libraries(hip::host)"



def _cuda_include_scope(args: list[Leaf]) -> str | None:
    """The scope (PRIVATE when none is given) of the first CUDA include directory among ``args``."""
    scope = "PRIVATE"
    for arg in args:
        value = value_of(arg.value)
        if value in _SCOPES:
            scope = value
        elif _CUDA_INCLUDE_VARS.search(arg.value):
            return scope
    return None


def _links_host(ctx: Context, target: str) -> bool:
    """Whether a target_link_libraries of ``target`` in this file links hip::host (as ported so far)."""
    return any("hip::host" in ctx.edits.text_of(a) for c in _link_commands(ctx, target) for a in c.arguments()[1:])


def _plain_links(ctx: Context, target: str) -> bool:
    """Whether ``target`` is linked with the plain signature here (CMake refuses to mix it with keywords)."""
    return any(not any(value_of(a.value) in _LINK_KEYWORDS for a in c.arguments()[1:])
               for c in _link_commands(ctx, target))


_LINKING = frozenset({"target_link_libraries"})
_GIVING_SOURCES = frozenset({*TARGET_COMMANDS, "target_sources"})


def _link_commands(ctx: Context, target: str) -> list[Command]:
    return ctx.commands_of(target, _LINKING)


def _only_cuda_sources(ctx: Context, target: str) -> bool:
    """Whether this file gives ``target`` sources and every one is a CUDA source (a HIP target has HIP's
    headers; an INTERFACE library's consumers may be C++)."""
    found = False
    for command in ctx.commands_of(target, _GIVING_SOURCES):
        for source in target_sources(command)[1]:
            found = True
            values = expand(ctx, source.value)
            if not values or not all(is_cuda_source(v) for v in values):
                return False
    return found


class Properties:
    description = "CUDA_* target properties, cuda_std_NN features and LANGUAGE CUDA → HIP"

    #: CUDA_* properties, LANGUAGE CUDA and cuda_std_NN are trigger words
    visits = Visits(_PROPERTY_COMMANDS)

    def run(self, ctx: Context, commands: list[Command]) -> None:
        for command in commands:
            name = command.identifier
            args = command.arguments()
            if name != "target_compile_features":
                self._properties(ctx, command, args)
            else:
                for arg in args:
                    m = re.fullmatch(r"cuda_std_(\d+)", arg.value)
                    if m:
                        ctx.edits.replace(arg, f"hip_std_{m.group(1)}")

    def _properties(self, ctx: Context, command: Command, args: list[Leaf]) -> None:
        values = [a.value for a in args]
        targets = values[: values.index("PROPERTIES")] if "PROPERTIES" in values else values[1:2]
        for i, count in _property_names(command.identifier, values):
            value = args[i].value
            given = args[i + 1 : i + 1 + count]  # the property's values
            if value in LANGUAGE_PROPERTIES and given and given[0].value == "CUDA":
                ctx.edits.replace(given[0], "HIP")
                if value != "LANGUAGE":  # (a source's language is reported where .cu files are marked)
                    ctx.report(given[0].start, "cmake-property", Severity.INFO, f"{value} CUDA → HIP",
                               fixable=True, replacement="HIP")
            new = PROPERTIES.get(value)
            if new is None:
                continue
            if value == "CUDA_SEPARABLE_COMPILATION" and given:
                if value_of(given[0].value).upper() in ("ON", "TRUE", "1", "YES"):
                    for target in targets:
                        if target not in ("TARGET", "PROPERTY", "APPEND", "APPEND_STRING"):
                            self._rdc(ctx, command, target)
            if new:
                ctx.edits.replace(args[i], new)
                if value == "CUDA_ARCHITECTURES" and given:
                    ctx.edits.replace(given[0], '"${CMAKE_HIP_ARCHITECTURES}"')
                    for later in given[1:]:  # set_property(... CUDA_ARCHITECTURES 70 80): one list
                        ctx.edits.remove(later)
            elif command.identifier == "set_property":
                ctx.edits.remove_command(command)
            else:
                for arg in (args[i], *given):
                    ctx.edits.remove(arg)
            ctx.report(args[i].start, "cmake-property", Severity.INFO, f"{value} → {new or '(removed)'}",
                       fixable=True, replacement=new)
        self._drop_empty(ctx, command, args)

    @staticmethod
    def _rdc(ctx: Context, command: Command, target: str) -> None:
        """Relocatable device code: -fgpu-rdc to compile, -fgpu-rdc --hip-link to link.

        A static library is device-linked where it is consumed; clang only takes device
        code out of an archive named with -l, so consumers get -L/-l for it (measured with
        clang 15: an archive given by path fails the device link).
        """
        ctx.edits.insert_after(command, f"target_compile_options({target} PRIVATE {_RDC_COMPILE})")
        if ctx.facts.target_kinds.get(target, "STATIC") == "STATIC":
            archive = f"-L$<TARGET_FILE_DIR:{target}>;-l$<TARGET_FILE_BASE_NAME:{target}>"
            link = f'"$<$<LINK_LANGUAGE:HIP>:-fgpu-rdc;--hip-link;{archive}>"'
            ctx.edits.insert_after(command, f"target_link_options({target} INTERFACE {link})")
        else:
            ctx.edits.insert_after(command, f"target_link_options({target} PRIVATE {_RDC_LINK})")

    @staticmethod
    def _drop_empty(ctx: Context, command: Command, args: list[Leaf]) -> None:
        """set_target_properties(t PROPERTIES) with nothing left is an error in CMake."""
        if command.identifier != "set_target_properties":
            return
        values = [a.value for a in args]
        if "PROPERTIES" in values:
            rest = args[values.index("PROPERTIES") + 1 :]
            if rest and all(ctx.edits.is_removed(a) for a in rest):
                ctx.edits.remove_command(command)


class Architectures:
    description = "CMAKE_CUDA_ARCHITECTURES → the overridable CMAKE_HIP_ARCHITECTURES cache list"

    visits = Visits()

    def run(self, ctx: Context, commands: list[Command]) -> None:
        introducer = ctx.facts.hip_introduced_at
        for command in commands:
            args = command.arguments()
            if command.identifier not in BUILTIN_COMMANDS:
                self._given_to_a_function(ctx, command, args)
                continue
            if not _writes_cuda_architectures(command.identifier, [a.value for a in args[:2]]):
                continue
            if (command.identifier == "set" and introducer is not None and command.start < introducer.start
                    and ctx.facts.arch_set_before):
                ctx.edits.rewrite_command(command, arch_cache_line(ctx))
            else:
                ctx.edits.remove_command(command)
            shown = " ".join(a.value for a in args[1 if command.identifier in ("set", "option") else 2 :])
            ctx.report(command.start, "cmake-architectures", Severity.INFO,
                       f"CUDA architectures {shown} → CMAKE_HIP_ARCHITECTURES cache list "
                       f"({';'.join(ctx.options.targets)}), overridable with -DCMAKE_HIP_ARCHITECTURES=...",
                       fixable=True)
        self._emptied_blocks(ctx)

    @staticmethod
    def _given_to_a_function(ctx: Context, command: Command, args: list[Leaf]) -> None:
        """``detect_architectures(CMAKE_CUDA_ARCHITECTURES)``: a function of the project's that is given the
        NVIDIA list's name may set it (to compute capabilities): renamed, it would put them in HIP's list.
        The name stays the NVIDIA list's, which HIP does not read, and a person is told."""
        for arg in args:
            if arg.value == "CMAKE_CUDA_ARCHITECTURES":
                ctx.facts.kept.add(arg.start)
                ctx.report(arg.start, "cmake-architectures", Severity.WARNING,
                           f"{command.identifier}() is given CMAKE_CUDA_ARCHITECTURES, which it may set to NVIDIA "
                           "architectures: kept, as HIP reads CMAKE_HIP_ARCHITECTURES "
                           f"({';'.join(ctx.options.targets)})",
                           "if the function chooses the GPU targets, make it choose AMD ones for HIP")

    @staticmethod
    def _emptied_blocks(ctx: Context) -> None:
        """An ``if()`` about the NVIDIA list (``if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)``) with no other
        branch, whose every command went with the list: the block goes too."""
        commands = list(ctx.tree.commands())  # the gone ones too: the body is what went
        for i, command in enumerate(commands):
            if command.identifier != "if" or ctx.edits.is_gone(command) or not any(
                    "CMAKE_CUDA_ARCHITECTURES" in a.value for a in command.arguments()):
                continue
            depth, body = 0, list[Command]()
            for later in commands[i + 1:]:
                name = later.identifier
                if name in _BLOCK_OPENERS:
                    depth += 1
                elif name in _BLOCK_CLOSERS:
                    if depth == 0:
                        if name == "endif" and body and all(c.start in ctx.edits.removed_commands for c in body):
                            ctx.edits.remove_command(command)
                            ctx.edits.remove_command(later)
                        break
                    depth -= 1
                elif name in _BRANCH_ENDS and depth == 0:
                    break  # another branch: the block stays
                body.append(later)


def _writes_cuda_architectures(command: str, head: list[str]) -> bool:
    """Does the command set or extend the NVIDIA target list? (NVIDIA values never reach HIP's list.)"""
    if command in ("set", "option", "unset"):
        return head[:1] == ["CMAKE_CUDA_ARCHITECTURES"]
    if command in ("list", "string"):
        return len(head) == 2 and head[1] == "CMAKE_CUDA_ARCHITECTURES" and head[0] in _LIST_WRITES
    return False


#: list()/string() sub-commands that change the variable they name.
_LIST_WRITES = frozenset({"APPEND", "PREPEND", "INSERT", "REMOVE_ITEM", "REMOVE_AT", "REMOVE_DUPLICATES",
                          "TRANSFORM", "FILTER", "SORT", "REVERSE", "POP_BACK", "POP_FRONT", "JOIN"})
