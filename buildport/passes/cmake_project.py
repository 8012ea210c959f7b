"""Project-level CMake passes: languages, minimum version, packages, legacy commands."""

from __future__ import annotations

import re
import textwrap

from buildport.passes.cmake_args import inner, translate_flag_words, value_of, word_spans
from buildport.findings import Severity
from buildport.passes.base import NO_COMMANDS, Context, Visits, offload_arch_list
from buildport.passes.cmake_text import renamed
from buildport.rules.arch import CACHE_HELP, CMAKE_DEFAULT_TARGETS, CMAKE_KNOWN_TARGETS
from buildport.rules.cmake import (
    CMAKE_DEFAULT_STANDARD, CUDA_PACKAGES, FIND_PACKAGE_KEYWORDS, HIP_MIN_VERSION, LEGACY_COMMANDS,
    LEGACY_LINK_HELPERS, LEGACY_LOOKUPS, LEGACY_OBJECT_COMMANDS, MANUAL_COMMANDS,
)
from buildport.rules.libraries import BY_LINK_NAME, LIBRARIES, named
from buildport.syntax.cmake import Command, Leaf



def arch_set_before(ctx: Context, introducer: Command) -> bool:
    """Is CMAKE_CUDA_ARCHITECTURES set before HIP is enabled? Then that line becomes the list."""
    return any(
        c.identifier == "set" and c.arguments() and c.arguments()[0].value == "CMAKE_CUDA_ARCHITECTURES"
        for c in ctx.commands() if c.start < introducer.start
    )


def arch_cache_line(ctx: Context) -> str:
    """What sets the AMD targets before HIP is enabled: the user's list, or the defaults to narrow."""
    if ctx.options.probe_targets:
        return CMAKE_DEFAULT_TARGETS.format(targets=" ".join(ctx.options.targets))
    return f'set(CMAKE_HIP_ARCHITECTURES "{offload_arch_list(ctx)}" CACHE STRING "{CACHE_HELP}")'


def introduce_targets(ctx: Context, introducer: Command, *, enable: str = "") -> None:
    """The AMD target list around the command that enables HIP (``enable``: a line that does, put
    before ``introducer``): set before it, narrowed after it to what the compiler knows."""
    ctx.facts.arch_set_before = arch_set_before(ctx, introducer)
    if not ctx.facts.arch_set_before:
        ctx.edits.insert_before(introducer, arch_cache_line(ctx))
    if not ctx.text_holds("CMAKE_CUDA_STANDARD") and not ctx.text_holds("CMAKE_HIP_STANDARD"):
        ctx.edits.insert_before(introducer, CMAKE_DEFAULT_STANDARD)
    known = CMAKE_KNOWN_TARGETS if ctx.options.probe_targets else ""
    if enable:
        # the targets are asked of the compiler only where the line enables HIP
        ctx.edits.insert_before(introducer, _with_known(enable, known))
    elif known:
        ctx.edits.insert_after(introducer, known)


def _with_known(enable: str, known: str) -> str:
    """``enable`` with ``known`` put after its line ``{known}``, at that line's indentation."""
    line = next(line for line in enable.splitlines() if "{known}" in line)
    indent = line[: len(line) - len(line.lstrip())]
    return enable.format(known="".join(f"\n{indent}{row}" for row in known.splitlines()))


class Languages:
    description = "project()/enable_language(): CUDA → HIP (with CXX), and an overridable AMD target list"
    visits = Visits(frozenset({"project", "enable_language", "check_language"}), triggered=False)

    def run(self, ctx: Context, commands: list[Command]) -> None:
        project_langs: list[str] | None = None
        for command in commands:
            name = command.identifier
            if name == "project":
                project_langs = self._project(ctx, command)
            elif name == "enable_language":
                self._enable_language(ctx, command, project_langs)
            elif name == "check_language":
                for arg in command.arguments():
                    if arg.value == "CUDA":
                        ctx.edits.replace(arg, "HIP")
                        ctx.report(arg.start, "cmake-language", Severity.INFO,
                                   "check_language(CUDA) → check_language(HIP): whether a HIP compiler is there",
                                   fixable=True, replacement="HIP")

    def _project(self, ctx: Context, command: Command) -> list[str] | None:
        args = command.arguments()
        values = [a.value for a in args]
        if "CUDA" not in values:
            if "LANGUAGES" in values:
                return values[values.index("LANGUAGES") + 1 :]
            return None
        cuda = args[values.index("CUDA")]
        has_cxx = "CXX" in values
        ctx.edits.replace(cuda, "HIP" if has_cxx else "CXX HIP")
        self._introduce(ctx, command, cuda)
        return [v for v in values if v in ("C", "CXX", "CUDA", "Fortran", "ASM")]

    def _enable_language(self, ctx: Context, command: Command, project_langs: list[str] | None) -> None:
        for arg in command.arguments():
            if arg.value != "CUDA":
                continue
            needs_cxx = project_langs is not None and "CXX" not in project_langs and "CXX" not in [
                a.value for a in command.arguments()
            ]
            ctx.edits.replace(arg, "CXX HIP" if needs_cxx else "HIP")
            self._introduce(ctx, command, arg)

    @staticmethod
    def _introduce(ctx: Context, command: Command, leaf: Leaf) -> None:
        if ctx.facts.hip_introduced_at is not None:
            return
        ctx.facts.hip_introduced_at = command
        ctx.report(leaf.start, "cmake-language", Severity.INFO, "CUDA language → HIP", fixable=True, replacement="HIP")
        introduce_targets(ctx, command)


class MinimumVersion:
    description = "cmake_minimum_required(): at least 3.21 where the HIP language is introduced"
    visits = Visits(frozenset({"cmake_minimum_required"}), triggered=False)

    def run(self, ctx: Context, commands: list[Command]) -> None:
        if ctx.facts.hip_introduced_at is None:
            return
        for command in commands:
            args = command.arguments()
            for i, arg in enumerate(args[:-1]):
                if arg.value.upper() == "VERSION":
                    self._raise(ctx, args[i + 1])
            return

    @staticmethod
    def _raise(ctx: Context, leaf: Leaf) -> None:
        text = value_of(ctx.edits.text_of(leaf))
        low, dots, high = text.partition("...")
        if _version(low) >= HIP_MIN_VERSION:
            return
        wanted = ".".join(map(str, HIP_MIN_VERSION))
        new = wanted + (dots + (high if _version(high) >= HIP_MIN_VERSION else wanted) if dots else "")
        ctx.edits.replace(leaf, new)
        ctx.report(leaf.start, "cmake-minimum-version", Severity.INFO,
                   f"CMake {low} → {wanted}: the HIP language needs CMake 3.21", fixable=True, replacement=new)


def _version(text: str) -> tuple[int, ...]:
    parts = re.findall(r"\d+", text)[:3]
    return tuple(int(p) for p in parts) if parts else (0,)


def package_lines(ctx: Context, mode: str) -> str:
    """find_package(hip) and the ROCm packages the file (and the folders below it) link, ``mode`` (REQUIRED,
    QUIET or nothing) for each; with the include folders of the libraries hipify names bare."""
    # (a package the file finds itself, where it did, is not found again here: an optional NCCL stays optional)
    packages = sorted((ctx.facts.packages | set(ctx.options.extra_packages)) - {"hip", ""} - ctx.facts.found_in_place)
    out = [f"find_package(hip{mode})"] + [f"find_package({p}{_QUIET if p in _IN_RUNTIME else mode})"
                                          for p in packages]
    subdirs = [
        f"${{{lib.rocm_package}_INCLUDE_DIR}}/{lib.include_subdir}"
        for p in packages for lib in LIBRARIES if lib.rocm_package == p and lib.include_subdir
    ]
    if subdirs:
        out.append("# hipify writes <x.h>; ROCm installs these headers as <x/x.h>")
        out.append(f"include_directories({' '.join(dict.fromkeys(subdirs))})")
    if any(lib.links_hip_device and lib.rocm_package in packages for lib in LIBRARIES):
        out.append(ROCPRIM_WITHOUT_HIP_DEVICE)
    return "\n".join(out)


#: After rocThrust's or hipCUB's package: their rocPRIM target without hip::device, whose ``-x hip`` the C++
#: compiler of the targets that link them refuses (the HIP language compiles the device code without it).
ROCPRIM_WITHOUT_HIP_DEVICE = """\
# roc::rocprim_hip links hip::device, whose options are for C++ compiled by clang as HIP (-x hip);
# here the HIP language compiles the device code, and the C++ compiler the C++ files
if(TARGET roc::rocprim_hip)
  set_property(TARGET roc::rocprim_hip PROPERTY INTERFACE_LINK_LIBRARIES roc::rocprim hip::host)
endif()"""


#: Packages older ROCm releases fold into the HIP runtime (and install no package for): looked for quietly.
_IN_RUNTIME = frozenset(lib.rocm_package for lib in LIBRARIES if lib.in_runtime_before)
_QUIET = " QUIET"


class FindHip:
    description = "find_package(hip) after the command that enables HIP, where nothing found CUDA's toolkit"
    visits = NO_COMMANDS

    def run(self, ctx: Context, commands: list[Command]) -> None:
        """A project of the CUDA language alone (no find_package(CUDAToolkit)) had no imported targets to link;
        the port's hip::host and ROCm library targets need the packages found, in the branch HIP is enabled in,
        where the folders below it see them."""
        introducer = ctx.facts.hip_introduced_at
        if introducer is None or ctx.facts.finds_toolkit or introducer.identifier == "find_package":
            return
        line = "find_package(hip REQUIRED)"
        ctx.edits.insert_after(introducer, lambda: package_lines(ctx, " REQUIRED"))
        ctx.report(introducer.start, "cmake-find-package", Severity.INFO,
                   f"the HIP language enabled here: {line} for hip::host and the ROCm libraries", fixable=True,
                   replacement=line)


ENABLE_HIP = "enable_language(HIP){known}"
#: An optional legacy find_package(CUDA): the HIP language only where there is a HIP compiler.
ENABLE_HIP_IF_FOUND = """include(CheckLanguage)
check_language(HIP)
if(CMAKE_HIP_COMPILER)
  enable_language(HIP){known}
endif()"""


def _if_hip_compiler(lines: str) -> str:
    return "if(CMAKE_HIP_COMPILER)\n" + textwrap.indent(lines, "  ") + "\nendif()"


class FindPackages:
    description = "find_package(CUDA/CUDAToolkit/...) → find_package(hip) and the ROCm packages linked"
    visits = Visits(frozenset({"find_package"}), triggered=False)

    def run(self, ctx: Context, commands: list[Command]) -> None:
        for command in commands:
            args = command.arguments()
            if not args:
                continue
            kind = CUDA_PACKAGES.get(value_of(args[0].value).lower())
            if kind is None:
                continue
            if kind:
                self._library_package(ctx, command, kind)
                continue
            self._toolkit(ctx, command, value_of(args[0].value).lower() == "cuda")

    @staticmethod
    def _toolkit(ctx: Context, command: Command, legacy: bool) -> None:
        """Each find of the toolkit, where it stands (in its branch) and as required as it was: an optional
        CUDA stays optional, and a build without ROCm configures as one without CUDA did."""
        words = {value_of(a.value) for a in command.arguments()[1:]}
        mode = " REQUIRED" if "REQUIRED" in words else " QUIET" if "QUIET" in words else ""
        find_hip = f"find_package(hip{mode})"
        ctx.facts.finds_toolkit = True
        optional_language = False
        if legacy and ctx.facts.hip_introduced_at is None:
            # FindCUDA compiled .cu files itself; now the HIP language does (where there is a HIP compiler,
            # when CUDA was optional)
            ctx.facts.hip_introduced_at = command
            optional_language = mode != " REQUIRED"
            introduce_targets(ctx, command, enable=ENABLE_HIP_IF_FOUND if optional_language else ENABLE_HIP)
        if optional_language:
            # hip_FOUND (the old CUDA_FOUND) only where the language is there to compile the .cu files
            ctx.edits.rewrite_command(command, lambda: _if_hip_compiler(package_lines(ctx, mode)))
        else:
            ctx.edits.rewrite_command(command, lambda: package_lines(ctx, mode))
        ctx.report(command.start, "cmake-find-package", Severity.INFO,
                   f"find_package({command.arguments()[0].value}) → {find_hip}", fixable=True, replacement=find_hip)

    @staticmethod
    def _library_package(ctx: Context, command: Command, kind: str) -> None:
        lib = named(kind)
        args = command.arguments()
        ctx.edits.replace(args[0], lib.rocm_package)
        if lib.links_hip_device and not any(
                other.links_hip_device and other.rocm_package in ctx.facts.found_in_place for other in LIBRARIES):
            ctx.edits.insert_after(command, ROCPRIM_WITHOUT_HIP_DEVICE)
        ctx.facts.packages.add(lib.rocm_package)
        ctx.facts.found_in_place.add(lib.rocm_package)
        ctx.report(args[0].start, "cmake-find-package", Severity.INFO,
                   f"find_package({args[0].value}) → find_package({lib.rocm_package})", fixable=True)
        _drop_version(ctx, args, lib.rocm_package)
        found = f"{value_of(args[0].value)}_FOUND"
        if ctx.text_holds(found) and not ctx.text_holds(f"set({found} "):
            # the project tests what the old package's module set (if(NCCL_FOUND)): the ROCm package's answer
            line = f"set({found} ${{{lib.rocm_package}_FOUND}})"
            ctx.edits.insert_after(command, line)
            ctx.report(args[0].start, "cmake-find-package", Severity.INFO,
                       f"{found} → whether {lib.rocm_package} was found", fixable=True, replacement=line)


def _drop_version(ctx: Context, args: list[Leaf], package: str) -> None:
    """``find_package(cuDNN 8.0 [EXACT] [MODULE])`` asks for a version of NVIDIA's library, which is no version of
    the ROCm package that replaces it (MIOpen 2.x or 3.x): the version goes, and so does ``MODULE`` (the ROCm
    packages install config files, no find module). A variable in the version's place goes only when the file
    sets it to a version; else it stays, reported."""
    rest = args[1:]
    head = value_of(rest[0].value) if rest else ""
    if head and head.upper() not in FIND_PACKAGE_KEYWORDS:
        variable = re.fullmatch(r"\$\{(\w+)\}", head)
        held = ctx.facts.values_of(variable.group(1)) if variable else [head]
        if held and len(held) == 1 and _VERSION.fullmatch(value_of(held[0])):
            ctx.edits.remove(rest[0])
            ctx.report(rest[0].start, "cmake-find-package", Severity.INFO,
                       f"the version {rest[0].value} is {args[0].value}'s, not {package}'s: removed", fixable=True)
            rest = rest[1:]
            if rest and rest[0].value == "EXACT":
                ctx.edits.remove(rest[0])
                rest = rest[1:]
        elif variable:
            ctx.report(rest[0].start, "cmake-cuda-variable", Severity.WARNING,
                       f"{rest[0].value}: if it holds a version of {args[0].value}, it is none of {package}'s",
                       f"remove it, or give a version of {package}")
    for arg in rest:
        if arg.value == "MODULE":
            ctx.edits.remove(arg)


#: What ends the sources of cuda_compile(): a library kind, or the nvcc options.
_OBJECT_KEYWORDS = frozenset({"STATIC", "SHARED", "MODULE", "OPTIONS"})

#: A version as find_package() takes it: ``8``, ``1.17.2``, a range ``2.7...<3``.
_VERSION = re.compile(r"\d+(?:\.\d+)*(?:\.\.\.<?\d+(?:\.\d+)*)?")


class LegacyCommands:
    description = "FindCUDA commands: cuda_add_executable → add_executable and friends; report the rest"
    visits = Visits(frozenset(LEGACY_COMMANDS) | {"thrust_create_target"} | frozenset(LEGACY_LINK_HELPERS)
                    | frozenset(MANUAL_COMMANDS) | LEGACY_OBJECT_COMMANDS | LEGACY_LOOKUPS, triggered=False)

    def run(self, ctx: Context, commands: list[Command]) -> None:
        for command in commands:
            name = command.identifier
            if name in LEGACY_COMMANDS:
                new = LEGACY_COMMANDS[name]
                ctx.edits.replace(command.name, new)
                ctx.report(command.start, "cmake-legacy-command", Severity.INFO, f"{command.name.value} → {new}",
                           fixable=True, replacement=new)
                self._options(ctx, command)
                if name in ("cuda_add_executable", "cuda_add_library"):
                    self._runtime(ctx, command)
            elif name == "thrust_create_target" and command.arguments():
                # Thrust's CMake package makes a target of the chosen systems; rocThrust exports one already
                target = command.arguments()[0].value
                line = f"add_library({target} INTERFACE)\ntarget_link_libraries({target} INTERFACE roc::rocthrust)"
                ctx.edits.rewrite_command(command, line)
                ctx.facts.packages.add("rocthrust")
                ctx.report(command.start, "cmake-thrust-target", Severity.INFO,
                           f"thrust_create_target({target}) → an interface target linking roc::rocthrust",
                           fixable=True, replacement=line)
            elif name in LEGACY_LINK_HELPERS:
                lib = named(LEGACY_LINK_HELPERS[name])
                target = command.arguments()[0].value if command.arguments() else "<target>"
                ctx.edits.rewrite_command(command, f"target_link_libraries({target} {lib.cmake_link})")
                ctx.facts.packages.add(lib.rocm_package)
            elif name in LEGACY_OBJECT_COMMANDS:
                self._objects(ctx, command)
            elif name in LEGACY_LOOKUPS:
                self._lookup(ctx, command)
            elif name in MANUAL_COMMANDS:
                ctx.report(command.start, "cmake-manual-command", Severity.WARNING,
                           f"{command.name.value}() has no HIP translation", MANUAL_COMMANDS[name])

    @staticmethod
    def _objects(ctx: Context, command: Command) -> None:
        """``cuda_compile(OUT sources... [STATIC|SHARED|MODULE] [OPTIONS flags...])`` built objects with nvcc, which
        OUT named for a target: the sources become HIP sources (with the nvcc flags FindCUDA gave them, translated),
        and OUT names them, so that a target listing OUT compiles them."""
        args = command.arguments()
        values = [value_of(a.value) for a in args]
        if len(args) < 2:
            ctx.report(command.start, "cmake-manual-command", Severity.WARNING,
                       f"{command.name.value}() with no sources", "add the sources to a target with LANGUAGE HIP")
            return
        end = next((i for i, v in enumerate(values) if i and v in _OBJECT_KEYWORDS), len(args))
        out, sources = args[0], args[1:end]
        at = values.index("OPTIONS", end) if "OPTIONS" in values[end:] else len(args)
        flags = []
        if ctx.text_holds("CUDA_NVCC_FLAGS"):  # FindCUDA gave the objects CUDA_NVCC_FLAGS[_<CONFIG>]
            flags.append("${HIP_COMPILE_OPTIONS}")
            flags += [f'"$<$<CONFIG:{config}>:${{HIP_COMPILE_OPTIONS_{config.upper()}}}>"'
                      for config in _configs_with_flags(ctx)]
        flags += [f'"{w}"' if any(c in w for c in ' ;"') else w for w in _translated_options(ctx, args[at + 1 :])]

        def text() -> str:
            files = " ".join(ctx.edits.text_of(a) for a in sources)
            lines = [f"set_source_files_properties({files} PROPERTIES LANGUAGE HIP)"]
            if flags:
                lines.append(f"set_property(SOURCE {files} APPEND PROPERTY COMPILE_OPTIONS {' '.join(flags)})")
            # FindCUDA's OUT held full paths of objects: the sources' full paths, for a target in another folder
            lines += [f"set({ctx.edits.text_of(out)})", f"foreach(hip_source IN ITEMS {files})",
                      '  get_filename_component(hip_source "${hip_source}" ABSOLUTE)',
                      f'  list(APPEND {ctx.edits.text_of(out)} "${{hip_source}}")', "endforeach()"]
            return "\n".join(lines)

        ctx.edits.rewrite_command(command, text)
        ctx.report(command.start, "cmake-legacy-command", Severity.INFO,
                   f"{command.name.value}({out.value} ...): its sources compiled as HIP by the targets that list "
                   f"{out.value}", fixable=True)

    @staticmethod
    def _lookup(ctx: Context, command: Command) -> None:
        """``find_cuda_helper_libs(curand)``: FindCUDA's lookup of CUDA_curand_LIBRARY goes; the port links the
        ROCm package's target where the file uses that variable."""
        args = command.arguments()
        lib = BY_LINK_NAME.get(value_of(args[0].value)) if args else None
        ctx.edits.remove_command(command)
        if lib is not None and lib.rocm_target:
            ctx.report(command.start, "cmake-legacy-command", Severity.INFO,
                       f"{command.name.value}({args[0].value}): FindCUDA's own lookup, removed ({lib.rocm_target} "
                       "is linked where its variable is used)", fixable=True)
        else:
            what = args[0].value if args else ""
            ctx.report(command.start, "cmake-library-unported", Severity.WARNING,
                       f"{command.name.value}({what}): FindCUDA's own lookup, removed; "
                       f"{lib.note if lib is not None else 'no ROCm library is known for it'}",
                       "port the code that uses the library by hand")

    @staticmethod
    def _runtime(ctx: Context, command: Command) -> None:
        """FindCUDA's targets linked the CUDA runtime by themselves (CUDA_LIBRARIES, with the signature
        CUDA_LINK_LIBRARIES_KEYWORD names): their C++ files include its headers, which need hip::host."""
        args = command.arguments()
        if not args:
            return
        keyword = value_of(" ".join(ctx.facts.values_of("CUDA_LINK_LIBRARIES_KEYWORD") or []))
        line = f"target_link_libraries({args[0].value} {keyword + ' ' if keyword else ''}hip::host)"
        if not ctx.text_holds(line):
            ctx.edits.insert_after(command, line)
            ctx.facts.packages.add("hip")

    @staticmethod
    def _options(ctx: Context, command: Command) -> None:
        """cuda_add_*(... OPTIONS flags): the flags become HIP compile options of the target."""
        args = command.arguments()
        values = [a.value for a in args]
        if command.identifier.startswith("cuda_add") and ctx.text_holds("CUDA_NVCC_FLAGS"):
            ctx.edits.insert_after(command, _nvcc_flags_line(ctx, args[0].value))
        if "OPTIONS" not in values:
            return
        at = values.index("OPTIONS")
        kept = _translated_options(ctx, args[at + 1 :])
        for arg in args[at:]:
            ctx.edits.remove(arg)
        if kept:
            body = ";".join(kept)
            line = f'target_compile_options({args[0].value} PRIVATE "$<$<COMPILE_LANGUAGE:HIP>:{body}>")'
            ctx.edits.insert_after(command, line)


#: FindCUDA's configuration keywords among OPTIONS (the flags after one are that configuration's), and the
#: configurations of its CUDA_NVCC_FLAGS_<CONFIG>.
_CONFIG_KEYWORDS = {"DEBUG": "Debug", "RELEASE": "Release", "RELWITHDEBINFO": "RelWithDebInfo",
                    "MINSIZEREL": "MinSizeRel"}


def _configs_with_flags(ctx: Context) -> list[str]:
    """The configurations whose CUDA_NVCC_FLAGS_<CONFIG> the file names (FindCUDA gave them to its targets)."""
    return [config for keyword, config in _CONFIG_KEYWORDS.items() if ctx.text_holds(f"CUDA_NVCC_FLAGS_{keyword}")]


def _translated_options(ctx: Context, args: list[Leaf]) -> list[str]:
    """The nvcc flags of a FindCUDA command's ``OPTIONS`` (the arguments after it), translated, each as a value of a
    generator expression list (``-O3``; ``$<$<CONFIG:Debug>:-g>`` for the flags after ``DEBUG``)."""
    segments: list[tuple[str | None, list[tuple[int, str]]]] = [(None, [])]
    for arg in args:
        for word in _quoted_words(ctx.edits.text_of(arg)):
            if word in _CONFIG_KEYWORDS:
                segments.append((_CONFIG_KEYWORDS[word], []))
            else:
                segments[-1][1].append((arg.start, word))
    out: list[str] = []
    for config, words in segments:
        translated, _ = translate_flag_words([word for _, word in words], [])
        # renamed here as the Names pass renames arguments: it never reads these, a second run would
        kept = [renamed(ctx, w, start) for (start, old), new in zip(words, translated)
                for w in ([old] if new is None else new.split())]
        out += [_in_genex(w) if config is None else f"$<$<CONFIG:{config}>:{_in_genex(w)}>" for w in kept]
    return out


def _quoted_words(text: str) -> list[str]:
    """The words of an argument as they are written inside a quoted argument: the new command holds them
    in one (``"-DX=("`` gives ``-DX=(``, not its quotes, which would end that argument; an unquoted
    argument's bare ``"`` is escaped). A quoted argument's blanks part words too: the flags are translated
    word by word (``"-Xcompiler -fPIC"``)."""
    quote, content, _ = inner(text)
    if not quote:
        content = _BARE_QUOTE.sub(lambda m: m.group(1) or '\\"', content)
    return [content[a:b] for a, b in word_spans(content, " \t;" if quote else ";")]


#: An escape sequence (kept as it is) or a quote that no backslash escapes.
_BARE_QUOTE = re.compile(r'(\\.)|"')


def _in_genex(word: str) -> str:
    """``word`` as the value of a generator expression: a ``>`` that closes none of its own (``-DX=a>b``)
    would end the outer one there, and is written ``$<ANGLE-R>``."""
    if ">" not in word:
        return word
    stray: list[int] = []
    depth = 0
    for m in _GENEX_MARK.finditer(word):
        if m.group() == "$<":
            depth += 1
        elif depth:
            depth -= 1
        else:
            stray.append(m.start())
    for at in reversed(stray):
        word = word[:at] + "$<ANGLE-R>" + word[at + 1 :]
    return word


_GENEX_MARK = re.compile(r"\$<|>")


def _nvcc_flags_line(ctx: Context, target: str) -> str:
    """Legacy targets got CUDA_NVCC_FLAGS[_<CONFIG>] from FindCUDA; HIP targets get the renamed lists."""
    options = ['"$<$<COMPILE_LANGUAGE:HIP>:${HIP_COMPILE_OPTIONS}>"']
    options += [f'"$<$<AND:$<COMPILE_LANGUAGE:HIP>,$<CONFIG:{config}>>:${{HIP_COMPILE_OPTIONS_{config.upper()}}}>"'
                for config in _configs_with_flags(ctx)]
    return f"target_compile_options({target} PRIVATE {' '.join(options)})"
