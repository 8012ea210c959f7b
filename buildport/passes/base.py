"""What every CMake pass gets (the tree, the edits, the options and the facts), and the driver that runs them.

Facts are gathered once, before any pass runs, by reading the whole file: which
targets have CUDA sources, what simple variables hold, where HIP is introduced.
A pass may add a fact a later one reads (where HIP is introduced, the programs
``find_program`` found): the order of ``engine.CMAKE_PASSES`` says who comes first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Iterable, Protocol

from buildport.passes.cmake_args import value_of
from buildport.passes.cmake_edit import Edits
from buildport.findings import Finding, Severity
from buildport.options import Options
from buildport.prescan import has_cmake_trigger, may_need_cmake_port, skipping, spans_with_trigger
from buildport.rules.cmake import CUDA_SUFFIXES, TARGET_COMMANDS, TARGET_KEYWORDS, VARIABLES
from buildport.syntax.cmake import CMakeFile, Command, Leaf


@dataclass(slots=True)
class Facts:
    """What the file says, read before rewriting (and what a pass learns for the passes after it)."""

    #: name → the set()/list(APPEND) commands that assign it, in order; read on demand by values_of
    assignments: dict[str, list[Command]] = field(default_factory=dict)
    _values: dict[str, list[str]] = field(default_factory=dict)
    globbed: dict[str, list[str]] = field(default_factory=dict)  # name → file(GLOB) patterns
    hip_targets: set[str] = field(default_factory=set)  # targets with .cu sources (raw name text)
    hip_sources: set[str] = field(default_factory=set)  # sources already marked LANGUAGE HIP
    has_hip_already: Command | None = None  # HIP support present before buildport
    language_variable: Command | None = None  # enable_language(${VAR})
    packages: set[str] = field(default_factory=set)  # ROCm packages the rewrite links
    found_in_place: set[str] = field(default_factory=set)  # ROCm packages a rewritten find_package() finds
    hip_introduced_at: Command | None = None  # command that now enables HIP
    finds_toolkit: bool = False  # a find_package(CUDA/CUDAToolkit) of the file became find_package(hip)
    arch_set_before: bool = False  # CMAKE_*_ARCHITECTURES set before that command
    uses_rocm_path: bool = False
    defines_rocm_path: bool = False
    target_kinds: dict[str, str] = field(default_factory=dict)  # target → STATIC, SHARED, EXECUTABLE...
    kept: set[int] = field(default_factory=set)  # arguments left as they are on purpose (leaf starts): not renamed
    programs: dict[str, str] = field(default_factory=dict)  # a variable find_program() or set() gave a GPU tool → it
    located: set[str] = field(default_factory=set)  # variables the file's find_library/find_path/find_file set

    def values_of(self, name: str) -> list[str] | None:
        """The raw argument texts a simple variable holds after its last set() and later list(APPEND)s."""
        known = self._values.get(name)
        if known is None:
            commands = self.assignments.get(name)
            if commands is None:
                return None
            known = []
            for command in commands:
                values = [a.value for a in command.arguments()]
                if command.identifier == "set":
                    known = [v for v in values[1:] if v not in ("CACHE", "PARENT_SCOPE", "FORCE")]
                else:
                    known = known + values[2:]
            self._values[name] = known
        return known


@dataclass(slots=True)
class Context:
    """One file being ported."""

    path: str
    tree: CMakeFile
    options: Options
    edits: Edits
    facts: Facts = field(default_factory=Facts)
    findings: list[Finding] = field(default_factory=list)
    _mentions: dict[int, bool] | None = None
    _cuda: list[Command] | None = None
    _by_target: dict[frozenset[str], tuple[tuple[int, int], dict[str, list[Command]]]] = field(default_factory=dict)
    _holds: dict[str, bool] = field(default_factory=dict)

    def report(
        self, offset: int, rule: str, severity: Severity, message: str, suggestion: str = "",
        fixable: bool = False, replacement: str = "",
    ) -> None:
        line, col = self.tree.position(offset)
        self.findings.append(
            Finding(self.path, line, col, rule, severity, message, suggestion, fixable, replacement)
        )

    def mentions_cuda(self, command: Command) -> bool:
        """Does the command's original text hold a word some rule fires on (see :mod:`buildport.prescan`)?

        The driver (:func:`handed`) hands a pass that acts only on such words the
        commands that hold one; the others are never split into arguments.
        """
        mentions = self._mentions_by_start()
        known = mentions.get(command.start)
        if known is None:
            known = mentions[command.start] = may_need_cmake_port(self.tree.text, command.start, command.end)
        return known

    def _mentions_by_start(self) -> dict[int, bool]:
        if self._mentions is None:
            self._mentions = self._search_commands()
        return self._mentions

    def may_hold_cuda_sources(self, command: Command) -> bool:
        """Could a ``.cu`` source be among the command's arguments? Only if it names one (a trigger
        word) or refers to a variable, which could hold one or a glob of them."""
        return self.mentions_cuda(command) or "${" in str(command)

    def _search_commands(self) -> dict[int, bool]:
        """Command start → whether a trigger word is in it: one search of the file."""
        commands = self.tree.commands()
        starts = [c.start for c in commands]
        return dict(zip(starts, spans_with_trigger(self.tree.text, starts, [c.end for c in commands])))

    def commands(self) -> list[Command]:
        """The file's commands that no earlier pass removed or rewrote whole (not to be changed: while
        nothing is gone, this is the tree's own list)."""
        return self._present(self.tree.commands())

    def cuda_commands(self) -> list[Command]:
        """Those of :meth:`commands` that :meth:`mentions_cuda`: what the driver hands a pass of trigger words."""
        if self._cuda is None:
            mentions = self._mentions_by_start()
            self._cuda = [c for c in self.tree.commands() if mentions[c.start]]
        return self._present(self._cuda)

    def names_cuda(self) -> bool:
        """Whether a command of the file (one no earlier pass removed) holds a word some rule fires on: what a
        rule asks of the file, so the same with skipping switched off (:func:`buildport.prescan.disabled`),
        where :meth:`cuda_commands` lists every command."""
        if skipping():
            return bool(self.cuda_commands())
        text = self.tree.text
        return any(has_cmake_trigger(text[c.start : c.end]) for c in self.commands())

    def text_holds(self, word: str) -> bool:
        """Whether the file's original text holds ``word``: searched once per file, not once per command."""
        known = self._holds.get(word)
        if known is None:
            known = self._holds[word] = word in self.tree.text
        return known

    def commands_of(self, target: str, identifiers: frozenset[str]) -> list[Command]:
        """Those of :meth:`commands` named in ``identifiers`` whose first argument is ``target``, in order.

        The file's commands are grouped by target once, and again only after a
        command is removed or rewritten whole: a question asked for every target
        does not read every command each time (that made a file of many targets
        cost the square of its length).
        """
        state = (len(self.edits.removed_commands), len(self.edits.rewritten))
        known = self._by_target.get(identifiers)
        if known is None or known[0] != state:
            grouped: dict[str, list[Command]] = {}
            for command in self.commands():
                if command.identifier in identifiers:
                    args = command.arguments()
                    if args:
                        grouped.setdefault(args[0].value, []).append(command)
            known = self._by_target[identifiers] = (state, grouped)
        return known[1].get(target, [])

    def _present(self, commands: list[Command]) -> list[Command]:
        if not self.edits.removed_commands and not self.edits.rewritten:
            return commands
        return [c for c in commands if not self.edits.is_gone(c)]


@dataclass(frozen=True, slots=True)
class Visits:
    """Which commands the driver (:func:`run_passes`) hands a pass: those no earlier pass removed or rewrote
    whole, in the file's order.

    - ``names``: the commands the pass reads (lower-cased); None: any, but those in ``skips``.
    - ``triggered``: only a command that holds a word some rule fires on (:meth:`Context.mentions_cuda`), or,
      with ``variables``, one that refers to a variable (which may hold such a word); ``always``: these names
      whether or not they hold one; ``every_when``: a fact of the file under which every command of ``names``
      is handed (a variable set to a rule word, used elsewhere without naming it).

    The driver owns this skipping: with skipping switched off (:func:`buildport.prescan.disabled`) every command
    holds a word, so every command of the names is handed.
    """

    names: frozenset[str] | None = None
    triggered: bool = True
    variables: bool = False
    always: frozenset[str] = frozenset()
    skips: frozenset[str] = frozenset()
    every_when: Callable[[Facts], bool] | None = None


#: A pass that reads the facts and the file, not command by command (it is handed none).
NO_COMMANDS = Visits(names=frozenset(), triggered=False)


class Pass(Protocol):
    """A rewrite pass: a one-line ``description``, the commands it is handed (``visits``) and
    ``run(ctx, commands)``, which records edits and findings in ``ctx``."""

    description: str
    visits: Visits

    def run(self, ctx: Context, commands: list[Command]) -> None: ...


def handed(ctx: Context, visits: Visits) -> list[Command]:
    """The commands of the file :class:`Visits` names, in order."""
    names = visits.names
    if names is not None and not names and not visits.always:
        return []
    triggered = visits.triggered and not (visits.every_when is not None and visits.every_when(ctx.facts))
    if triggered and not visits.always and not visits.variables:
        pool = ctx.cuda_commands()
    else:
        pool = ctx.commands()
        if triggered:
            always, variables, mentions = visits.always, visits.variables, ctx.mentions_cuda
            pool = [c for c in pool if c.identifier in always or mentions(c) or (variables and "${" in str(c))]
    if names is not None:
        wanted = names | visits.always
        return [c for c in pool if c.identifier in wanted]
    if visits.skips:
        return [c for c in pool if c.identifier not in visits.skips]
    return pool


def run_passes(ctx: Context, passes: Iterable[Pass]) -> None:
    """Each pass in turn, over the commands it visits (each list taken when the pass starts: what an earlier
    pass removed is gone from it)."""
    for rewrite in passes:
        rewrite.run(ctx, handed(ctx, rewrite.visits))


def is_cuda_source(text: str) -> bool:
    return value_of(text).endswith(CUDA_SUFFIXES)


def target_sources(command: Command) -> tuple[Leaf | None, list[Leaf]]:
    """(target name, source arguments) of add_executable/add_library/target_sources."""
    args = command.arguments()
    if not args:
        return None, []
    name = args[0]
    rest = args[1:]
    if command.identifier in TARGET_COMMANDS:
        if any(a.value in ("IMPORTED", "ALIAS", "INTERFACE") for a in rest[:2]):
            return name, []
    sources: list[Leaf] = []
    skip_next = False
    for arg in rest:
        if skip_next:
            skip_next = False
            continue
        if arg.value in ("OPTIONS",):
            break  # cuda_add_*: nvcc options follow
        if arg.value in ("TYPE", "BASE_DIRS", "FILE_SET"):
            skip_next = arg.value != "BASE_DIRS"
            continue
        if arg.value in TARGET_KEYWORDS:
            continue
        sources.append(arg)
    return name, sources


def expand(ctx: Context, text: str, seen: frozenset[str] = frozenset()) -> list[str]:
    """The values an argument stands for: itself, or a simple variable's values.

    ``set(A ${B})`` with ``set(B ${A})`` stops where a variable comes round again.
    """
    value = value_of(text)
    if value.startswith("${") and value.endswith("}") and value.count("${") == 1:
        name = value[2:-1]
        held = ctx.facts.values_of(name) if name not in seen and len(seen) < 32 else None
        if held is not None:
            out: list[str] = []
            for item in held:
                out.extend(expand(ctx, item, seen | {name}))
            return out
    return [text]


#: The commands :func:`gather_facts` reads; others are not even split into arguments.
_FACT_COMMANDS = frozenset({"set", "list", "file", "project", "enable_language", "find_package",
                            "set_source_files_properties", "find_library", "find_path", "find_file"})


def gather_facts(ctx: Context) -> None:
    """Read the file once: variables, targets and their CUDA sources, HIP already there."""
    gather_file_facts(ctx)
    gather_target_facts(ctx)


def gather_file_facts(ctx: Context) -> None:
    """Variables, globs, HIP already there: what decides whether the file is ported at all."""
    facts = ctx.facts
    for command in ctx.commands():
        name = command.identifier
        if name not in _FACT_COMMANDS:
            continue
        if name in ("set", "list"):
            _assignment(ctx, command)
            continue
        values = [a.value for a in command.arguments()]
        if name in ("find_library", "find_path", "find_file"):
            if values:
                facts.located.add(values[0])
            continue
        if name == "file" and len(values) >= 2 and values[0] in ("GLOB", "GLOB_RECURSE"):
            facts.globbed[values[1]] = [v for v in values[2:] if not v.isupper()]
        elif name in ("project", "enable_language") and "HIP" in values:
            facts.has_hip_already = facts.has_hip_already or command
        elif name == "find_package" and values and values[0].lower() == "hip":
            facts.has_hip_already = facts.has_hip_already or command
        elif name == "enable_language" and any("${" in v for v in values):
            facts.language_variable = command
        elif name == "set_source_files_properties" and "LANGUAGE" in values:
            at = values.index("LANGUAGE")
            if at + 1 < len(values) and values[at + 1] == "HIP":
                if "PROPERTIES" in values:
                    facts.hip_sources.update(marked_sources(values[: values.index("PROPERTIES")]))
    if facts.located:
        _aliases_of_located(facts)
    if facts.has_hip_already is None and ("hip::" in ctx.tree.text or "roc::" in ctx.tree.text):
        facts.has_hip_already = _rocm_branch(ctx)


#: A word of a condition that names ROCm or HIP as a word of its own (``USE_ROCM``, ``FAISS_ENABLE_ROCM``,
#: ``Kokkos_ENABLE_HIP``, ``WITH_HIP``; not ``HIPCC``, ``CHIP_ID``).
_ROCM_WORD = re.compile(r"(?:^|_)(?:ROCM|ROCm|HIP)(?:_|$)")
_CONDITION_WORD = re.compile(r"[A-Za-z0-9_]+")


#: The names a port writes, or renames CUDA's to: no switch of the project's.
_PORT_WORDS = frozenset(VARIABLES.values()) | {"HIP_DEFAULT_ARCHITECTURES", "HIP_COMPILE_OPTIONS"}


def rocm_switch(word: str) -> bool:
    """Whether ``word`` (of an ``if()``) is a ROCm switch of the project's own: not CMake's (``CMAKE_HIP_*``)
    nor one a port writes or renames to (``ROCM_PATH``, ``HIP_INCLUDE_DIRS``, ``HIP_DEFAULT_ARCHITECTURES``)."""
    return (_ROCM_WORD.search(word) is not None and not word.startswith(("CMAKE_", "ROCM_PATH", "HIP_KNOWS_"))
            and word not in _PORT_WORDS)


def tests_rocm_switch(text: str, command: Command) -> bool:
    """Whether the condition of ``command`` (an ``if()``/``elseif()`` of the file ``text``) tests a ROCm switch of
    the project's own (:func:`rocm_switch`)."""
    return any(rocm_switch(w) for w in condition_words(text, command))


def condition_words(text: str, command: Command) -> list[str]:
    """The words of a command of the file ``text`` (its name first), as a condition names variables and values."""
    return _CONDITION_WORD.findall(text, command.start, command.end)


def _rocm_branch(ctx: Context) -> Command | None:
    """The first ``if()``/``elseif()`` that tests a ROCm switch of the project's own, in a file whose commands
    link HIP's targets (``hip::host``, ``roc::hipblas``): a file that picks its runtime itself, one branch ROCm's."""
    text = ctx.tree.text
    commands = ctx.commands()
    if not any("hip::" in text[c.start : c.end] or "roc::" in text[c.start : c.end] for c in commands):
        return None  # named in a comment only
    for command in commands:
        if command.identifier in ("if", "elseif") and tests_rocm_switch(text, command):
            return command
    return None


def _aliases_of_located(facts: Facts) -> None:
    """``set(NCCL_LIBRARIES ${NCCL_LIBRARY})`` after ``find_library(NCCL_LIBRARY ...)``: the copy is the file's
    own too (to a fixed point: a copy of a copy)."""
    grown = True
    while grown:
        grown = False
        for name, commands in facts.assignments.items():
            if name in facts.located or any(c.identifier != "set" for c in commands):
                continue
            held = facts.values_of(name)
            value = value_of(held[0]) if held and len(held) == 1 else ""
            if value.startswith("${") and value.endswith("}") and value.count("${") == 1 and value[2:-1] in facts.located:
                facts.located.add(name)
                grown = True


def marked_sources(values: list[str]) -> list[str]:
    """The keys of the sources a ``set_source_files_properties(files... [DIRECTORY dirs...] [TARGET_DIRECTORY
    targets...]`` marks (``values`` up to ``PROPERTIES``): a file's name, or ``file TARGET_DIRECTORY target`` for
    each target whose directory it is marked in."""
    scopes = [i for i, v in enumerate(values) if v in ("DIRECTORY", "TARGET_DIRECTORY")]
    files = values[: scopes[0]] if scopes else values
    if "TARGET_DIRECTORY" not in values:
        return files
    targets = values[values.index("TARGET_DIRECTORY") + 1 :]
    targets = targets[: targets.index("DIRECTORY")] if "DIRECTORY" in targets else targets
    return [f"{file} TARGET_DIRECTORY {target}" for file in files for target in targets]


def gather_target_facts(ctx: Context) -> None:
    """Targets: their kinds, and which have CUDA sources (read after :func:`gather_file_facts`)."""
    facts = ctx.facts
    for command in ctx.commands():
        if command.identifier in TARGET_COMMANDS:
            args = command.arguments()
            kinds = [a.value for a in args[1:3] if a.value in ("STATIC", "SHARED", "MODULE", "OBJECT", "INTERFACE")]
            if args:
                is_library = command.identifier.endswith("library")
                facts.target_kinds[args[0].value] = (kinds[0] if kinds else "STATIC") if is_library else "EXECUTABLE"
        if command.identifier in TARGET_COMMANDS or command.identifier == "target_sources":
            if not ctx.may_hold_cuda_sources(command):
                continue
            target, sources = target_sources(command)
            if target is not None and any(
                is_cuda_source(v) or _globs_cuda(ctx, v) for s in sources for v in expand(ctx, s.value)
            ):
                facts.hip_targets.add(target.value)


#: The first two arguments of a command when both are plain words (no quotes, escapes, semicolons or
#: parentheses; a variable reference such as ``${name}`` is plain: the argument's value is its text).
_PLAIN_HEAD = re.compile(
    r"[A-Za-z_][A-Za-z0-9_]*[ \t]*\([ \t]*([A-Za-z0-9_.+${}-]+)(?:[ \t]+([A-Za-z0-9_.+${}-]+))?(?=[\s)])")


def _assignment(ctx: Context, command: Command) -> None:
    """Note which variable a set() or list(APPEND|PREPEND) assigns; its values are read only if needed."""
    m = _PLAIN_HEAD.match(ctx.tree.text, command.start, command.end)
    if m is not None and (command.identifier == "set" or m.group(2) is not None):
        head = [m.group(1)] if command.identifier == "set" else [m.group(1), m.group(2)]
    else:
        head = [a.value for a in command.arguments()[:2]]
    if command.identifier == "set" and head:
        ctx.facts.assignments[head[0]] = [command]
        ctx.facts.defines_rocm_path = ctx.facts.defines_rocm_path or head[0] == "ROCM_PATH"
    elif command.identifier == "list" and len(head) == 2 and head[0] in ("APPEND", "PREPEND"):
        ctx.facts.assignments.setdefault(head[1], []).append(command)


def _globs_cuda(ctx: Context, text: str) -> bool:
    value = value_of(text)
    if value.startswith("${") and value.endswith("}"):
        patterns = ctx.facts.globbed.get(value[2:-1], [])
        return bool(patterns) and any(value_of(p).endswith(CUDA_SUFFIXES) for p in patterns)
    return False


def offload_arch_list(ctx: Context) -> str:
    return ";".join(ctx.options.targets)
