"""What each Makefile says that the others need: compiler, architecture and flag variables.

A run reads every Makefile on its own (:func:`file_facts`, in the worker pool),
then :func:`combine` merges the parts in any order into one
:class:`~buildport.options.MakeFacts`; the port of each file reads that.

Only the files that make reads together share their variables: a Makefile and
what it includes, and what those include (:func:`buildport.passes.includes.scopes`). Two Makefiles of
one tree that include nothing of each other (a benchmark suite's ``foo-cuda``
and ``foo-hip``) are ported each with its own facts, as if alone.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field

from buildport.passes.includes import scopes
from buildport.options import MakeFacts
from buildport.passes.make_prescan import Prescan
from buildport.prescan import skipping
from buildport.rules.make import DIR_VARIABLES, HOST_LINKERS, NVCC_WORD, PORTED_NVCC, PRELUDE, ROOT_VARIABLES
from buildport.rules.paths import CUDA_ROOT_LITERAL, SUBPATHS
from buildport.syntax.make import MakeFile
from buildport.syntax.make_nodes import Assignment, Define, Line, RecipeLine
from buildport.syntax.make_words import iter_words

#: A reference to a CUDA root variable: $(CUDA_PATH), ${CUDA_HOME}...
ROOT_REF = re.compile(r"\$([({])(" + "|".join(sorted(ROOT_VARIABLES)) + r")[)}]")
_ARCH_NAME = re.compile(r"^(?:sm|compute|lto)_\d+[a-z]?$")
#: A word that is one variable reference, and every reference in a text.
REFERENCE = re.compile(r"^\$\$?[({]([A-Za-z_][A-Za-z0-9_]*)[)}]$")
REFERENCES = re.compile(r"\$\$?[({]([A-Za-z_][A-Za-z0-9_]*)[)}]")
#: What every root variable's name holds, and every literal root :data:`CUDA_ROOT_LITERAL` matches.
_ROOT_MARK = "CUDA"
_LITERAL_MARK = "cuda"
#: The lines whose commands may launch a compiler, and the marks of one that may link or run a program.
_COMMANDS = frozenset({RecipeLine, Define})
_LINKS = re.compile(r"-o")
_LINKS_OR_RUNS = re.compile(r"-o|\$[({]")


@dataclass(slots=True)
class FileFacts:
    """What one Makefile says, read alone: the run's :class:`MakeFacts` combine those of all its files.

    ``launches`` holds, for each recipe command, the words that may launch the
    compiler, in order: a variable reference (its name) or nvcc itself (``""``),
    each with the variables referred to after it. Which of them does launch
    nvcc depends on the compiler variables of every file, so that is decided
    in :func:`combine`.
    """

    compiler_vars: set[str] = field(default_factory=set)
    arch_vars: set[str] = field(default_factory=set)
    uses: dict[str, set[str]] = field(default_factory=dict)  # variable → the variables its value refers to (if any)
    host_links: bool = False
    launches: list[list[tuple[str, tuple[str, ...]]]] = field(default_factory=list)
    #: the variables a link command starts with, whose program another file's value may name
    link_programs: set[str] = field(default_factory=set)
    #: variable → the first word of its value(s), read only where a link command starts with a variable
    first_words: dict[str, set[str]] = field(default_factory=dict)
    #: variables named like a CUDA root set to a folder of the project (:func:`own_folder`), and set otherwise
    own_roots: set[str] = field(default_factory=set)
    cuda_roots: set[str] = field(default_factory=set)


def gather(tree: MakeFile, facts: MakeFacts) -> None:
    """Compiler, architecture and flag variables, and whether a host compiler links: one file into ``facts``."""
    combine(facts, [file_facts(tree, facts.compiler_vars)])


def file_facts(tree: MakeFile, known: set[str] | None = None) -> FileFacts:
    """The facts of one Makefile on its own (see :class:`FileFacts`).

    ``known``: every compiler variable there can be besides the file's own
    (when it is read alone, or last); then only recipes that run one of them,
    nvcc, or may link are read. Without it, every recipe that runs a program a
    variable names is read too, since another file may make that a compiler.
    """
    text = tree.source
    scan = Prescan(text)
    out = FileFacts()
    if _ROOT_MARK in text:
        out.own_roots, out.cuda_roots = _roots(tree)
    # every assignment holds "=" (a file without one need not be outlined: its outline is a tuple a line)
    for start, end in tree.iter_spans(Assignment) if "=" in text else ():  # no line need be built
        hot = scan.hot(start, end)  # nvcc, hipcc or an architecture name in it
        if not hot and text.find("$", start, end) < 0:
            continue  # neither a compiler nor an architecture list, and made of no other variable
        _, variable, value = tree.variable(start)
        if hot:
            words = [w.of(text) for w in iter_words(text, value.start, value.end)]
            if _names_compiler(words):
                out.compiler_vars.add(variable)
            if words and all(_ARCH_NAME.match(w) for w in words):
                out.arch_vars.add(variable)
        refs = REFERENCES.findall(text, value.start, value.end)
        if refs:
            out.uses.setdefault(variable, set()).update(refs)
    if known is not None:
        scan = Prescan(text, known | out.compiler_vars)
    marks = _LINKS if known is not None else _LINKS_OR_RUNS

    def commands_that_matter(cls: type[Line], start: int, end: int) -> bool:
        # a recipe matters if it may link (-o) or run nvcc (or, unless known, a program a variable names)
        return cls is Define or scan.hot(start, end) or marks.search(text, start, end) is not None

    def may_matter() -> bool:  # what commands_that_matter asks of a line, asked of the whole text
        return "define" in text or scan.hits is None or bool(scan.hits) or marks.search(text) is not None

    for line in tree.select(_COMMANDS, commands_that_matter) if may_matter() else ():
        commands: list[str] = []
        if isinstance(line, RecipeLine):
            commands = [line.command_text]
        elif isinstance(line, Define):
            commands = line.body_text.splitlines()
        for command in commands:
            words = _CONTINUATION.sub(" ", command).split()  # rm -f x; \ <newline> $(NVCC) ...: one command line
            if words and "-o" in words and "-c" not in words:
                first = words[0].lstrip("@-+")
                if HOST_LINKERS.match(first):
                    out.host_links = True
                elif (m := REFERENCE.match(first)) is not None:
                    out.link_programs.add(m.group(1))
            if "$" not in command and "nvcc" not in command:
                continue  # nothing in it can launch nvcc or a variable's program
            launches: list[tuple[str, tuple[str, ...]]] = []
            positions: list[bool] | None = None  # command_positions(words), once a word asks
            for i, word in enumerate(words):
                if "$" not in word and not word.endswith("nvcc"):
                    continue  # neither a reference (REFERENCE) nor nvcc (NVCC_WORD)
                bare = word.lstrip("@-+")
                nvcc = NVCC_WORD.match(bare) is not None
                m = REFERENCE.match(bare)
                if nvcc or m is not None:
                    positions = command_positions(words) if positions is None else positions
                    if not positions[i]:
                        continue
                    after = tuple(REFERENCES.findall(" ".join(words[i + 1 :])))
                    launches.append(("" if nvcc else m.group(1), after))  # type: ignore[union-attr]
            if launches:
                out.launches.append(launches)
    if out.link_programs or known is None:
        for m in _FIRST_WORD.finditer(text):
            out.first_words.setdefault(m.group(1), set()).add(m.group(2))
    return out


#: An assignment (target-specific too: ``app: LINK = $(MPICC) $(CFLAGS)``) and the first word of its value.
_FIRST_WORD = re.compile(
    r"^[ \t]*(?:[^\s:#=]+[ \t]*:[ \t]*)?(?:(?:override|export|private)[ \t]+)*([A-Za-z_][A-Za-z0-9_]*)[ \t]*"
    r"(?::{1,3}=|[+?!]?=)[ \t]*(\S+)", re.M)


def _links_on_host(programs: set[str], first_words: dict[str, set[str]]) -> bool:
    """Whether a variable a link command starts with names a host compiler, through the values it is made of."""
    pending, seen = list(programs), set(programs)
    while pending:
        for word in first_words.get(pending.pop(), ()):
            if HOST_LINKERS.match(word):
                return True
            m = REFERENCE.match(word)
            if m is not None and m.group(1) not in seen:
                seen.add(m.group(1))
                pending.append(m.group(1))
    return False


def _roots(tree: MakeFile) -> tuple[set[str], set[str]]:
    """The root-named variables a file sets to a folder of the project (:func:`own_folder`), and those it
    sets otherwise (at least once)."""
    own: set[str] = set()
    cuda: set[str] = set()
    for _, variable, value in tree.variables().values():
        if variable in ROOT_VARIABLES:
            (own if own_folder(value.of(tree.source)) else cuda).add(variable)
    return own, cuda


def own_roots(tree: MakeFile) -> set[str]:
    """The root-named variables the file sets to a folder of the project wherever it sets them (a file read
    alone: :attr:`MakeFacts.own_roots` of that file)."""
    own, cuda = _roots(tree)
    return own - cuda


def own_folder(value: str) -> bool:
    """Whether a CUDA root's value names a folder of the project rather than a CUDA install: one relative
    path, made of no reference, whose last part is not named like an install (``device``, ``src/kernels``;
    not ``/usr/local/cuda``, ``$(HOME)/cuda``, ``../cuda-12.2`` or nothing)."""
    value = value.strip()
    return _RELATIVE_WORD.fullmatch(value) is not None and _INSTALL_NAME.search(value) is None


_RELATIVE_WORD = re.compile(r"[^\s$/~`'\"][^\s$`'\"]*")
_INSTALL_NAME = re.compile(r"(?:^|/)(?:cuda|cudatoolkit|nvhpc|nvidia)[\w.+-]*/*$", re.I)


def combine(facts: MakeFacts, files: list[FileFacts]) -> None:
    """Add what ``files`` say to ``facts``: compilers and architectures first, then the flag
    variables of every command that launches nvcc or a compiler variable of any of them, then
    the variables those flag variables are made of. A CUDA root's name is the project's own where
    every file that sets it sets it to a folder of the project."""
    for part in files:
        facts.compiler_vars |= part.compiler_vars
        facts.arch_vars |= part.arch_vars
        facts.host_links = facts.host_links or part.host_links
        facts.own_roots |= part.own_roots
    for part in files:
        facts.own_roots -= part.cuda_roots
    if not facts.host_links:
        programs = {name for part in files for name in part.link_programs}
        if programs:
            first_words: dict[str, set[str]] = {}
            for part in files:
                for variable, words in part.first_words.items():
                    first_words.setdefault(variable, set()).update(words)
            facts.host_links = _links_on_host(programs - facts.compiler_vars, first_words)
    for part in files:
        for launches in part.launches:
            for name, after in launches:
                if not name or name in facts.compiler_vars:
                    facts.flag_vars.update(after)
                    break
    # flags flow: ALL_CCFLAGS += $(NVCCFLAGS) makes NVCCFLAGS a flag variable too
    uses: dict[str, set[str]] = {}
    for part in files:
        for variable, refs in part.uses.items():
            uses.setdefault(variable, set()).update(refs)
    pending = list(facts.flag_vars)
    while pending:
        for used in uses.get(pending.pop(), ()):
            if used not in facts.flag_vars:
                facts.flag_vars.add(used)
                pending.append(used)


def scope_facts(parts: Iterable[FileFacts | None]) -> MakeFacts:
    """The facts the files of one scope (the files make reads together) give each of them: their parts
    combined, in order; None for a file that could not be read."""
    facts = MakeFacts()
    combine(facts, [part for part in parts if part is not None])
    return facts


def scoped_facts(parts: Sequence[FileFacts | None], includes: Sequence[Sequence[int]]) -> list[MakeFacts]:
    """Each file's :class:`MakeFacts`: the parts of its :func:`scopes` combined. Files whose facts are
    equal share one object (most files of a tree say nothing of CUDA: the default facts), so that
    what depends on the facts alone is worked out once for them. ``parts[i]`` is None for a file
    that could not be read."""
    made: dict[frozenset[int], MakeFacts] = {}
    equal: dict[str, MakeFacts] = {}  # by the facts' canonical data
    out: list[MakeFacts] = []
    for scope in scopes(includes):
        facts = made.get(scope)
        if facts is None:
            facts = scope_facts([parts[j] for j in sorted(scope)])
            facts = made[scope] = equal.setdefault(repr(facts.as_json()), facts)
        out.append(facts)
    return out


_SHELL_LEADS = frozenset({"&&", "||", ";", "|", "then", "do", "else", "time", "exec", "env", "xargs"})
#: Shells, which run the command ``-c`` gives them (``sh -c nvcc``; not ``$(CC) -c nvcc``, nor the ``-c``
#: a port writes for nvcc's ``-dc``).
_SHELLS = re.compile(r"^(?:\S*/)?(?:sh|bash|dash|zsh|ksh)$|^\$[({]SHELL[)}]$")


def command_position(words: list[str], i: int) -> bool:
    """Is word ``i`` where a shell runs a program: first, after a separator, or after a make prefix like
    $(EXEC) or the environment a command is given (``PATH=$(CUDA)/bin:$$PATH nvcc``) that are themselves
    where a program runs? (``$(CC) $(NVCCFLAGS) nvcc`` gives nvcc to the compiler as an argument: read as
    a program, it was one once a port removed a flag before it, ``$(CC) -arch=sm_70 $(NVCCFLAGS) nvcc``.)"""
    while i > 0 and _passes_position(words[i - 1]):
        i -= 1
    return i == 0 or _leads(words, i)


def command_positions(words: list[str]) -> list[bool]:
    """:func:`command_position` of every word, in one pass over them."""
    out: list[bool] = []
    for i in range(len(words)):
        out.append(i == 0 or (out[i - 1] if _passes_position(words[i - 1]) else _leads(words, i)))
    return out


def _passes_position(word: str) -> bool:
    """Whether the word after ``word`` is where a program runs if ``word`` is: an environment assignment or
    a prefix reference."""
    return _ENV_ASSIGNMENT.match(word) is not None or _prefix_reference(word)


def _leads(words: list[str], i: int) -> bool:
    """Whether the word before word ``i`` starts a shell command after it: a separator, a keyword, a shell's ``-c``."""
    before = words[i - 1]
    if before == "-c":
        return i >= 2 and _SHELLS.match(words[i - 2].lstrip("@-+")) is not None
    return before in _SHELL_LEADS or before.endswith((";", "&&"))


def _prefix_reference(word: str) -> bool:
    """Whether ``word`` is a reference that may run the program after it (``$(EXEC) nvcc``): not a host
    compiler (``$(CC)``, whose arguments follow it), nor a folder or flags that a port writes or rewrites
    (``$(CUDA_PATH)`` → ``$(ROCM_PATH)``, ``-arch=sm_70`` → ``$(HIP_ARCH_FLAGS)``), so that the word after
    it is a program in the port's output as in its input."""
    bare = word.lstrip("@-+")
    m = REFERENCE.match(bare)
    return m is not None and m.group(1) not in _NO_PROGRAMS and HOST_LINKERS.match(bare) is None


#: Variables that never name a program: CUDA's folders, and the port's own variables but its compiler (ROCm's
#: folder, the AMD targets and their flags).
_NO_PROGRAMS = ROOT_VARIABLES | DIR_VARIABLES.keys() | ({name for name, _ in PRELUDE} - {"HIPCC"})


#: A recipe line continued on the next (the shell reads one line).
_CONTINUATION = re.compile(r"\\\r?\n")

#: ``NAME=value`` before a command: its environment, not the program.
_ENV_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def _names_compiler(words: list[str]) -> bool:
    """Whether a variable's words run nvcc (or hipcc): first, or after prefixes (``$(PREFIX) nvcc``,
    ``ccache nvcc``). What a port makes of nvcc (:data:`PORTED_NVCC`) counts too: a second run must
    read the ported variable as the compiler the first read (``$(X) nvcc`` with ``X = nvcc`` then
    runs ``nvcc`` as the compiler's argument, after ``X = $(HIPCC)`` as before it)."""
    for i, word in enumerate(words[:4]):
        path = root_paths(word)
        if NVCC_WORD.match(path) or path.endswith("/bin/hipcc") or PORTED_NVCC.match(word):
            return i == 0 or command_position(words, i) or words[i - 1] in _LAUNCHERS
    return False


#: Programs that run a compiler given after them.
_LAUNCHERS = frozenset({"ccache", "sccache", "distcc", "time", "env", "nice"})


def root_paths(word: str, own: Collection[str] = ()) -> str:
    """``word`` with CUDA roots (variables and literal paths) made ROCM_PATH, and their sub-paths; ``own``:
    root-named variables of the project's own (:attr:`MakeFacts.own_roots`), left."""
    if _ROOT_MARK not in word and _LITERAL_MARK not in word and skipping():
        return word  # most words: neither pattern can match (tests/test_make_prescan.py checks the marks)
    new = ROOT_REF.sub(lambda m: m.group(0) if m.group(2) in own else "$(ROCM_PATH)" if m.group(1) == "(" else "${ROCM_PATH}",
                       word)
    new = CUDA_ROOT_LITERAL.sub("$(ROCM_PATH)", new)
    if new != word:
        for cuda, rocm in SUBPATHS.items():
            new = new.replace("ROCM_PATH)" + cuda, "ROCM_PATH)" + rocm).replace("ROCM_PATH}" + cuda, "ROCM_PATH}" + rocm)
    return new
