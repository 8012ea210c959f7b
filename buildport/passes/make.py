"""The Makefile rewrite: nvcc → hipcc, CUDA paths → ROCM_PATH, flags, libraries, targets.

Edits are (start, end, text) spans on the original text, applied back to front
(pyupgrade's way), so a byte no rule touches never moves. Words come from the
make parser's lossless spans; ``$(...)`` references stay whole.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Callable, Iterable
from itertools import pairwise
from dataclasses import dataclass, field

from buildport.findings import Finding, Severity
from buildport.options import MakeFacts
from buildport.passes.text_edits import TextEdits
from buildport.passes.nvcc import is_nvcc_only, translate
from buildport.passes.make_facts import REFERENCE, ROOT_REF, command_position, root_paths
from buildport.passes.make_prescan import Names, Prescan, hint_free
from buildport.prescan import skipping
from buildport.passes.tools import port_call, tool_name
from buildport.rules.flags import BY_NAME
from buildport.rules.libraries import BY_LINK_NAME, WORD_RENAMES
from buildport.rules.make import (
    DEVICE_LINK_SUFFIX,
    DIR_VARIABLES,
    FLAG_VARIABLE,
    HOST_LINKERS,
    HIPCC_WORD,
    LOCATED_HIPCC,
    NVCC_LOCATED,
    NVCC_WORD,
    PLATFORM_HINTS,
    PRELUDE,
    ROCM_ROOT_LINE,
    ROOT_VARIABLES,
)
from buildport.rules.paths import NVHPC_PATHS, NVHPC_ROOT, ROCM_DEFAULT_MAKE
from buildport.rules.tools import TOOL_HINT
from buildport.syntax.make import MakeFile
from buildport.syntax.make_nodes import (
    SELECTABLE,
    Assignment,
    Conditional,
    Define,
    Directive,
    Expansion,
    Include,
    Line,
    Other,
    RecipeLine,
    Rule,
)
from buildport.syntax.make_words import Span, iter_references, iter_words

_ADDPREFIX_XCOMPILER = re.compile(r"^\$[({]addprefix\s+(?:-Xcompiler|--compiler-options)\s*,(.*)[)}]$", re.S)
_EVAL_ASSIGN = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(\+=|:=|\?=|=)\s*(.*?)\s*$", re.S)
_HIP_ARCH = "$(HIP_ARCH_FLAGS)"


@dataclass(slots=True)
class MakeContext:
    """One Makefile being ported."""

    path: str
    tree: MakeFile
    offload_arch: tuple[str, ...]
    probe_targets: bool = False  # the default targets: HIP_OFFLOAD_ARCH keeps those the compiler knows
    runtime_header: str = "hip/hip_runtime.h"  # what hipcc is told to include in each HIP source (-include)
    edits: TextEdits = field(default_factory=TextEdits)
    findings: list[Finding] = field(default_factory=list)
    facts: MakeFacts = field(default_factory=MakeFacts)
    arch_given: set[str] = field(default_factory=set)
    include_subdirs: list[str] = field(default_factory=list)
    root_defined: bool = False
    depth: int = 0  # conditional nesting of the line being ported
    names: Names | None = None  # where the names of variables the rules read by name may be
    c_pattern: bool | None = None  # whether the file has a pattern rule (with a recipe) for .c files
    relocatable: bool = False  # whether a command of the file compiles with nvcc -dc (relocatable device code)
    holds: dict[str, bool] = field(default_factory=dict)  # see text_holds
    compiles_c: bool = False  # whether a rule compiles a .c file with nvcc (now hipcc)
    library_vars: frozenset[str] | None = None  # variables of library names (see _library_name_variables)
    reported_words: set[str] = field(default_factory=set)  # what is reported once a file
    tool_vars: dict[str, str] | None = None  # variables whose value runs an NVIDIA tool → the tool (see tool_variables)

    def text_holds(self, word: str) -> bool:
        """Whether the file's text holds ``word``: searched once per file, not once per word ported."""
        known = self.holds.get(word)
        if known is None:
            known = self.holds[word] = word in self.text
        return known

    def name_scan(self) -> Names:
        """Where a name of :func:`~buildport.passes.make_prescan.name_words` may be (not the run's
        own variables: see :func:`_named_assignments`)."""
        if self.names is None:
            self.names = Names(self.text)
        return self.names

    @property
    def text(self) -> str:
        return self.tree.source

    def report(self, offset: int, rule: str, severity: Severity, message: str, suggestion: str = "",
               fixable: bool = False, replacement: str = "") -> None:
        line, col = self.tree.line_col(offset)
        self.findings.append(
            Finding(self.path, line, col, rule, severity, message, suggestion, fixable, replacement)
        )

    def replace(self, span: Span, text: str) -> None:
        if span.of(self.text) != text:
            self.edits.replace(span.start, span.end, text)


def nothing_to_port(text: str, facts: MakeFacts) -> bool:
    """Whether no rule can change or report a line of ``text`` read with ``facts``, known without
    reading a line: no word a rule looks for and no name it reads a variable by (:func:`hint_free`),
    no ``$(foreach ...)`` (whose ``$(eval ...)`` may set architecture flags with no such word), and
    facts that name no variable besides ``NVCC`` (whose name holds such a word)."""
    return _names_only_nvcc(facts) and "foreach" not in text and hint_free(text)


def _names_only_nvcc(facts: MakeFacts) -> bool:
    """Whether ``facts`` name no compiler, architecture or flag variable but ``NVCC``, as the
    default facts of a file read alone do."""
    return facts.compiler_vars <= _NVCC_ONLY and not facts.arch_vars and not facts.flag_vars


_NVCC_ONLY = frozenset({"NVCC"})


def port_lines(ctx: MakeContext) -> None:
    scan = Prescan(ctx.text, ctx.facts.compiler_vars)
    ctx.relocatable = _compiles_relocatable(ctx)
    tree = ctx.tree
    offsets = None  # None: every line may change
    if scan.hits is not None:
        # a line that holds a word a rule looks for; an assignment whose variable alone makes the
        # rules read it; whatever their words, an include that may name a platform-detecting file
        # (make-platform) and a $(foreach ... $(eval VAR += ...)) (ported as flags; -arch is no word
        # of the search); every conditional where the nesting depth matters (a CUDA root is set).
        # A define is read only if a line of its body holds a word, and only those lines are ported.
        # (an assignment read only for its variable's name whose value no rule can change is left out)
        text = ctx.text
        named = [(start, variable) for start, variable, value in _named_assignments(ctx)
                 if _by_name(ctx, variable) and not _inert(ctx, variable, value.of(text))]  # fmt: skip
        offsets = scan.hits + [start for start, _ in named]
        if "include" in text and not hint_free(text):  # the directive of every include line
            offsets += (start for start, end in tree.spans(Include) if PLATFORM_HINTS.search(text, start, end))
        if "foreach" in text:
            offsets += (start for start, end in tree.spans(Expansion) if text.find("foreach", start, end) >= 0)
        if any(variable in ROOT_VARIABLES for _, variable in named):
            offsets += (start for start, _ in tree.spans(Conditional))
        if tool_variables(ctx):  # `$(PROFILER) ./app` runs the tool its variable names
            offsets += (m.start() for m in _references_to(tool_variables(ctx)).finditer(text))
        offsets.sort()

    for line in tree.lines_at(offsets, SELECTABLE):
        HANDLERS[type(line)](ctx, line, scan)
    _host_compiles(ctx)


def _on_assignment(ctx: MakeContext, line: Line, scan: Prescan) -> None:
    assert isinstance(line, Assignment)
    _assignment(ctx, line)


def _on_recipe_line(ctx: MakeContext, line: Line, scan: Prescan) -> None:
    assert isinstance(line, RecipeLine)
    _command(ctx, line.command)


def _on_rule(ctx: MakeContext, line: Line, scan: Prescan) -> None:
    assert isinstance(line, Rule)
    if line.recipe is not None:
        _command(ctx, line.recipe)
    _plain(ctx, line.prerequisites)


def _on_expansion(ctx: MakeContext, line: Line, scan: Prescan) -> None:
    assert isinstance(line, Expansion)
    if not _foreach_eval(ctx, line) and scan.hot(line.span.start, line.span.end):
        _plain(ctx, line.span)


def _on_define(ctx: MakeContext, line: Line, scan: Prescan) -> None:
    assert isinstance(line, Define)
    _define(ctx, line, scan)


def _on_include(ctx: MakeContext, line: Line, scan: Prescan) -> None:
    assert isinstance(line, Include)
    if scan.hot(line.span.start, line.span.end):
        _plain(ctx, line.files)
    if PLATFORM_HINTS.search(line.text_of(line.files)):
        ctx.report(line.start, "make-platform", Severity.WARNING,
                   f"includes {line.text_of(line.files).strip()}, which finds CUDA libraries",
                   "remove it once the build links ROCm libraries")


def _on_conditional(ctx: MakeContext, line: Line, scan: Prescan) -> None:
    assert isinstance(line, Conditional)
    ctx.depth += {"endif": -1, "else": 0}.get(line.directive, 1)
    _on_directive(ctx, line, scan)


def _on_directive(ctx: MakeContext, line: Line, scan: Prescan) -> None:
    assert isinstance(line, (Conditional, Directive))
    if scan.hot(line.span.start, line.span.end):
        _plain(ctx, line.arguments)


def _on_other(ctx: MakeContext, line: Line, scan: Prescan) -> None:
    """A line make would refuse (kept as it is: the parser reports what it must)."""


#: What ports each kind of line :func:`port_lines` reads (every kind of ``SELECTABLE``), the handler of
#: each kind in one place, as the CMake passes each read the commands they port.
HANDLERS: dict[type[Line], Callable[[MakeContext, Line, Prescan], None]] = {
    Assignment: _on_assignment, RecipeLine: _on_recipe_line, Rule: _on_rule, Expansion: _on_expansion,
    Define: _on_define, Include: _on_include, Conditional: _on_conditional, Directive: _on_directive,
    Other: _on_other,
}


#: A CUDA runtime library on a link line (what a host linker linking it says of the host code).
_RUNTIME_LINK = re.compile(r"(?<!\S)-l(?:cudart|cudart_static|cuda)(?!\S)")
#: What a host compiler compiles: C and C++ sources, by a rule's prerequisite or an old suffix rule's name.
_HOST_SOURCE = re.compile(r"\.(?:c|cc|cpp|cxx|C)$")
_HOST_SUFFIX_RULE = re.compile(r"^\.(?:c|cc|cpp|cxx|C)\.o$")
#: References before the one that names the program: ``$(CMDECHO)$(CXX)`` (an echo switch, a launcher).
_PREFIX_REFERENCES = re.compile(r"^(?:\$[({]\w+[)}])+(?=\$[({]\w+[)}]$)")
#: What makes a host compiler read the headers: compile (``-c``), or preprocess alone (``-E``, or ``-M``/``-MM``
#: writing a dependency file, which stops at the same ``#error`` as the compile).
_READS_HEADERS = frozenset({"-c", "-E", "-M", "-MM"})
#: An environment assignment before the program: ``OMPI_CXX=$(CXX) $(MPICXX) ...``.
_ENV_ASSIGNMENT = re.compile(r"^[@+-]*(?:\$[({]\w+[)}])*[A-Za-z_]\w*=")
_PLATFORM_DEFINE = "-D__HIP_PLATFORM_AMD__"
_HOST_HIP_FLAGS = f"{_PLATFORM_DEFINE} -I$(ROCM_PATH)/include"


def _host_compiles(ctx: MakeContext) -> None:
    """Where the build links the CUDA runtime by name (nvcc links it by itself), the host code calls it:
    hipified, it includes HIP's headers, which a host compiler reads only with the HIP platform defined.
    Each command of a rule that compiles or preprocesses C or C++ (:data:`_READS_HEADERS`) with a host compiler
    gets the define after the compiler."""
    text = ctx.text
    if _RUNTIME_LINK.search(text) is None or ctx.text_holds("__HIP_PLATFORM_AMD__"):
        return
    if any(_PLATFORM_DEFINE in new for new in ctx.edits.texts()):
        return  # given with CUDA's include folders, to the host compiles that read its headers
    for rule in ctx.tree.select(_RULES):
        assert isinstance(rule, Rule)
        if not (any(_HOST_SOURCE.search(w.of(text)) for w in rule.prerequisite_words)
                or any(_HOST_SUFFIX_RULE.match(w.of(text)) for w in rule.target_words)):
            continue
        commands = ([] if rule.recipe is None else [rule.recipe]) + [r.command for r in ctx.tree.recipe_lines(rule)]
        for command in commands:
            spans = list(iter_words(text, command.start, command.end))
            words = [s.of(text) for s in spans]
            if _READS_HEADERS.isdisjoint(words) or _runs_gpu_compiler(ctx, command.of(text)):
                continue
            at = 0
            while at + 1 < len(words) and _ENV_ASSIGNMENT.match(words[at]):
                at += 1  # OMPI_CXX=$(CXX) $(MPICXX): the program comes after the environment
            program = _PREFIX_REFERENCES.sub("", words[at].lstrip("@-+"))  # $(CMDECHO)$(CXX), $(Q)$(CC)
            if HOST_LINKERS.match(program) or REFERENCE.match(program):
                ctx.replace(Span(spans[at].end, spans[at].end), " " + _HOST_HIP_FLAGS)
                ctx.report(spans[at].start, "make-host-compile", Severity.INFO,
                           "C/C++ compiled by a host compiler in a build whose host code links the CUDA runtime: "
                           f"{_HOST_HIP_FLAGS} for HIP's headers", fixable=True, replacement=_HOST_HIP_FLAGS)


def _named_assignments(ctx: MakeContext) -> list[tuple[int, str, Span]]:
    """Assignments among which are all those :func:`_by_name` keeps. Its names hold a word of
    :func:`~buildport.passes.make_prescan.name_words`, or are the run's own compiler, architecture
    and flag variables: with no such variable but ``NVCC`` (which holds one), the assignments at
    the name search's hits; else every assignment, each told by its name (cheaper than searching
    the text for hundreds of names)."""
    if _names_only_nvcc(ctx.facts):
        return ctx.tree.assignments_at(ctx.name_scan().hits)
    return ctx.tree.assignments_at(None)


def _by_name(ctx: MakeContext, name: str) -> bool:
    """Whether an assignment's variable alone makes the rules read it (whatever its value says)."""
    facts = ctx.facts
    return (
        not skipping() or name in ROOT_VARIABLES or name in facts.arch_vars or name in facts.compiler_vars
        or name in facts.flag_vars or FLAG_VARIABLE.match(name) is not None
    )  # fmt: skip


def _inert(ctx: MakeContext, variable: str, value: str) -> bool:
    """Whether :func:`_assignment` changes nothing and reports nothing for ``variable = value``,
    told from the value's blank-separated pieces: no nvcc flag of the table (alone or before
    ``=``), no CUDA root or path, no CUDA library, no ``-Xcompiler`` prefix or ``$(foreach``,
    and the variable neither an architecture list, a compiler nor a CUDA root.

    A word :func:`_assignment` reads is one piece or several (a reference holding blanks), and
    each test finds in the pieces whatever it would find in such a word.
    """
    facts = ctx.facts
    if variable in facts.arch_vars or variable in facts.compiler_vars or variable in ROOT_VARIABLES:
        return False
    return _inert_words(value)


def _inert_words(text: str) -> bool:
    """Whether :func:`_words` changes no word of ``text`` and reports nothing, as flags or not, as a
    command or not (see :func:`_inert`): no nvcc or hipcc either, which a command's first word may be."""
    if not skipping():
        return False
    for word in text.split():
        if "CUDA" in word or "cuda" in word or "nvcc" in word or "hipcc" in word:
            return False
        if word.startswith(_CHANGING_PREFIXES) or word in BY_NAME or word.partition("=")[0] in BY_NAME:
            return False
        if word.startswith("-l") and word[2:] in BY_LINK_NAME:
            return False
    return True


_ADDPREFIX = ("$(addprefix", "${addprefix")
_FOREACH = ("$(foreach", "${foreach")
#: What a word :func:`_word` may rewrite whatever else it holds begins with.
_CHANGING_PREFIXES = _ADDPREFIX + _FOREACH
_OWN = frozenset(name for name, _ in PRELUDE)
_ASSIGNMENTS = frozenset({Assignment})


def _assignment(ctx: MakeContext, line: Assignment) -> None:
    name = line.variable
    if name in _OWN:
        return  # the HIP toolchain variables are already what they should be
    if name in ctx.facts.own_roots:
        ctx.report(line.start, "make-path", Severity.INFO,
                   f"{name} names a folder of the project ({line.value_text.strip()}), not a CUDA install: left as it is")
        return
    if name in ROOT_VARIABLES:
        value = line.value_text
        if ROOT_REF.search(value) or (ctx.root_defined and ctx.depth == 0 and not line.modifiers):
            ctx.replace(Span(line.start, line.end), "")  # CUDA_PATH ?= $(CUDA_HOME): one root is enough
        else:
            ctx.replace(line.name, "ROCM_PATH")
            ctx.replace(line.op, "?=")
            ctx.replace(line.value, ROCM_DEFAULT_MAKE)
            ctx.root_defined = ctx.root_defined or ctx.depth == 0
        ctx.report(line.start, "make-path", Severity.INFO,
                   f"{name} → ROCM_PATH (default /opt/rocm, else the root of hipcc on PATH)", fixable=True,
                   replacement=ROCM_ROOT_LINE)
        return
    if tool_variables(ctx).get(name) and _tool_calls(ctx, line.value, value=True):
        return  # PROFILER = nvprof --print-gpu-trace
    spans = line.words(line.value)
    words = [w.of(ctx.text) for w in spans]
    if name in _library_name_variables(ctx):
        _library_names(ctx, spans, words)
        return
    if name in ctx.facts.arch_vars:
        targets = "$(HIP_OFFLOAD_ARCH)" if ctx.probe_targets else " ".join(ctx.offload_arch)
        ctx.replace(line.value, targets)
        ctx.report(line.value.start, "make-arch", Severity.INFO,
                   f"{name}: NVIDIA architectures {' '.join(words)} → AMD targets {' '.join(ctx.offload_arch)}"
                   + (" (those the HIP compiler knows: $(HIP_OFFLOAD_ARCH))" if ctx.probe_targets else ""),
                   fixable=True, replacement=targets)
        return
    flags = (
        bool(FLAG_VARIABLE.match(name)) or any(is_nvcc_only(w) for w in words)
        or name in ctx.facts.compiler_vars or name in ctx.facts.flag_vars
    )
    emptied = _words(ctx, spans, flags=flags, command=name in ctx.facts.compiler_vars, variable=name)
    if emptied and line.operator == "+=":
        # `GENCODE_FLAGS += -gencode ...` after the target list is already there: the line goes
        inside = []
        for key in ctx.edits.latest():  # lines are ported in order: this line's edits are the last made
            if key[0] < line.start:
                break
            if key[1] <= line.end:
                inside.append(key)
        for key in inside:
            ctx.edits.drop(key)
        ctx.edits.remove(line.start, line.end)


def _command(ctx: MakeContext, span: Span) -> None:
    """A recipe's command line: each nvcc it launches is ported with the flags of its own shell command
    (:func:`_pieces`); the other programs' words only as nvcc flags where one of them is nvcc's alone; each
    NVIDIA tool it runs by the tools table (:func:`_tool_calls`)."""
    text = span.of(ctx.text)
    tools = _tool_calls(ctx, span) if TOOL_HINT.search(text) or tool_variables(ctx) else []
    inert = _inert_words(text)
    if inert and not ctx.relocatable:
        return  # a line that launches a compiler variable with nothing to change: $(CC) -O2 -c a.c
    spans = list(iter_words(ctx.text, span.start, span.end))
    words = [s.of(ctx.text) for s in spans]
    launches = _launches(ctx, words)
    if ctx.relocatable:
        _device_links(ctx, spans, words, launches)
    if inert:
        return
    for begin, end in _pieces(words, sorted({*launches, *tools})):
        if begin in tools and begin not in launches:
            continue  # ported as the tool's call
        piece = [_before_separator(ctx.text, span) for span in spans[begin:end]]
        piece = [span for span in piece if span.start < span.end]
        if begin in launches:  # the compiler and the words it is given
            after = _pipeline_end(ctx, spans, words, end)
            _words(ctx, _device_link_step(ctx, piece, after), flags=True, command=True, variable="", at=0)
        else:  # another program, or what comes before the compiler: nvcc flags only if one says so
            _words(ctx, piece, flags=any(is_nvcc_only(w) for w in words[begin:end]), command=False, variable="")


def tool_variables(ctx: MakeContext) -> dict[str, str]:
    """The file's variables whose value starts with an NVIDIA tool (``PROFILER = nvprof``) → the tool: where a
    recipe runs one, it runs the tool."""
    if ctx.tool_vars is None:
        found: dict[str, str] = {}
        text = ctx.text
        if TOOL_HINT.search(text):
            for _, name, value in ctx.tree.variables().values():
                first = value.of(text).split(None, 1)[:1]
                tool = tool_name(first[0]) if first else None
                if tool is not None:
                    found[name] = tool
        ctx.tool_vars = found
    return ctx.tool_vars


def _references_to(names: dict[str, str]) -> re.Pattern[str]:
    return re.compile(rf"\$[({{](?:{'|'.join(re.escape(n) for n in sorted(names))})[)}}]")


def _tool_calls(ctx: MakeContext, span: Span, value: bool = False) -> list[int]:
    """Each NVIDIA tool the command line runs (by name, or by a variable of :func:`tool_variables`), ported
    with the words of its shell command (:func:`~buildport.passes.tools.port_call`): where their words start."""
    text = ctx.text
    raw = list(iter_words(text, span.start, span.end))
    words = [s.of(text) for s in raw]
    variables = tool_variables(ctx)
    starts: list[int] = []
    i = 0
    while i < len(words):
        word = words[i].lstrip("@-+")
        ref = REFERENCE.match(word)
        name = variables.get(ref.group(1)) if ref is not None else tool_name(_separator_free(word))
        if name is None or not command_position(words, i):
            i += 1
            continue
        end = i
        while end < len(words) and words[end] not in _SEPARATORS and not words[end].startswith("#"):
            end += 1
            if _separator_end(words[end - 1]):
                break  # `./app;`: the call's last word
        call = [_before_separator(text, s) for s in raw[i:end]]
        call = [s for s in call if s.start < s.end]
        _tool_call(ctx, call, [s.of(text) for s in call], name, literal=ref is None, value=value)
        starts.append(i)
        i = end
    return starts


def _separator_free(word: str) -> str:
    return word[: len(word) - len(_separator_end(word))]


def _tool_call(ctx: MakeContext, spans: list[Span], words: list[str], name: str, literal: bool,
               value: bool = False) -> None:
    """Apply :func:`~buildport.passes.tools.port_call` to one call's words, and report it."""
    # $(CUDA_PATH)/bin/nvprof: the root as every other word has it
    ported = port_call(words, name, literal=literal, with_added=literal, value=value, path=root_paths)
    for span, new in zip(spans, ported.words):
        if new is not None:
            _replace_word(ctx, span, new, spans[0].start - 1)
    for note in ported.notes:
        ctx.report(spans[note.index].start, note.rule, note.severity, note.message, note.suggestion,
                   fixable=note.fixable, replacement=note.replacement)


def _device_links(ctx: MakeContext, spans: list[Span], words: list[str], launches: list[int]) -> None:
    """nvcc links the device code of -dc objects by itself; clang needs to be told (PORTING-FACTS): each
    shell command of the line that links objects with the GPU compiler, nvcc or the hipcc a port made of it
    (so that a second run reads the same commands), gets the flags after its last word."""
    for begin, end in _pieces(words, launches):
        compiler = next((i for i in range(begin, end) if i in launches or (
            _names_gpu_compiler(words[i].lstrip("@-+")) and command_position(words, i))), None)
        if compiler is None:
            continue
        last = end - 1
        while last > compiler and words[last] in _SEPARATORS:
            last -= 1
        command = [words[i][: len(words[i]) - len(_separator_end(words[i]))] for i in range(compiler + 1, last + 1)]
        if not _links_objects(command):
            continue
        at = _before_separator(ctx.text, spans[last]).end
        ctx.replace(Span(at, at), " " + _DEVICE_LINK)
        ctx.report(spans[compiler].start, "make-nvcc-flag", Severity.INFO,
                   f"a link of objects compiled with -dc → {_DEVICE_LINK} added, for the device code",
                   fixable=True, replacement=_DEVICE_LINK)


#: nvcc's flags for its separate device-link step, and those naming its output.
_DEVICE_LINK_STEP = frozenset({"-dlink", "--device-link"})
_OUTPUT = ("-o", "--output-file")


def _pipeline_end(ctx: MakeContext, spans: list[Span], words: list[str], end: int) -> int | None:
    """Where the pipeline that the command ending before ``end`` starts ends (``nvcc ... 2>&1 | tee log``: the
    end of ``log``), as an offset in the text; None when the command is no pipeline's first."""
    if end == 0 or words[end - 1] != "|":
        return None
    last = None
    for i in range(end, len(words)):
        word = words[i]
        if word in _SEPARATORS and word != "|" or word.startswith("#"):
            break
        if word != "|":
            last = i
        if _separator_end(word):
            break
    return None if last is None else _before_separator(ctx.text, spans[last]).end


def _device_link_step(ctx: MakeContext, piece: list[Span], pipeline_end: int | None = None) -> list[Span]:
    """``nvcc ... -dlink -o OUT`` → ``$(HIPCC) ... $(HIP_DEVICE_LINK) -o OUT.hiplink && $(call
    hip_device_object,OUT)``: the object nvcc's step makes, for the host compiler that links the program
    (:data:`~buildport.rules.make.DEVICE_OBJECT`). The piece's other words are ported as before; without a
    named output (nvcc's default ``a_dlink.o``), or with one quoted, the flag stays, and is reported.
    ``pipeline_end``: where the pipeline the command starts ends (the step goes after it)."""
    words = [span.of(ctx.text) for span in piece]
    step = next((i for i, word in enumerate(words) if word in _DEVICE_LINK_STEP), None)
    if step is None:
        return piece
    output = _output_word(words)
    if output is None:
        return piece
    flag, index = output
    out = words[index].partition("=")[2] if flag == index else words[index]
    if not out or any(c in out for c in ",'\"") or out.endswith(DEVICE_LINK_SUFFIX):
        return piece  # a comma would cut $(call)'s argument, a quote the shell's word
    last = _last_command_word(words)
    ctx.replace(piece[step], "$(HIP_DEVICE_LINK)")
    if flag == index:  # --output-file=OUT
        ctx.replace(piece[index], f"-o {out}{DEVICE_LINK_SUFFIX}")
    else:
        ctx.replace(piece[flag], "-o")
        ctx.replace(piece[index], out + DEVICE_LINK_SUFFIX)
    # after the command's own redirections (> log 2>&1), or the pipeline it starts (| tee log), before a comment
    end = pipeline_end if pipeline_end is not None else piece[last].end
    ctx.replace(Span(end, end), f" && $(call hip_device_object,{out})")
    ctx.report(piece[step].start, "make-device-link", Severity.INFO,
               f"nvcc's device-link step → a program linked from the same objects (host symbols left unresolved), "
               f"whose device code becomes {out}, for the host linker",
               fixable=True, replacement="$(HIP_DEVICE_LINK)")
    return [span for i, span in enumerate(piece) if i not in (step, flag, index)]


def _last_command_word(words: list[str]) -> int:
    """The last word of a command before a shell comment (``# ...``): its redirections are its own."""
    end = next((i for i, word in enumerate(words) if word.startswith("#")), len(words))
    return max(end - 1, 0)


def _output_word(words: list[str]) -> tuple[int, int] | None:
    """Which words name the output of a command: the flag's and the name's (one word for
    ``--output-file=OUT`` and ``-o=OUT``, two for ``-o OUT`` and ``--output-file OUT``)."""
    for i, word in enumerate(words):
        if word in _OUTPUT and i + 1 < len(words):
            return i, i + 1
        name, equals, _ = word.partition("=")
        if equals and name in _OUTPUT:
            return i, i
    return None


def _pieces(words: list[str], launches: list[int]) -> list[tuple[int, int]]:
    """The words of a command line cut where a shell command ends (after ``&&``, ``;``, ``|``...: what
    another program is given, ``&& echo -dc``, is no nvcc flag) and where a compiler starts: every
    launch is ported alike, the first or not (``$(CC) -o app app.cu && nvcc --version``: a nvcc left
    for the second run to port is not stable)."""
    cuts = {0, len(words), *launches}
    cuts.update(i + 1 for i, word in enumerate(words) if word in _SEPARATORS or _separator_end(word))
    return list(pairwise(sorted(cuts)))


def _separator_end(word: str) -> str:
    """The separator that ends ``word`` (``a.cu;``), if any: not an escaped one (``-exec rm {} \\;``)."""
    for separator in _SEPARATOR_ENDS:
        if word.endswith(separator) and not word.endswith("\\" + separator):
            return separator
    return ""


def _before_separator(text: str, span: Span) -> Span:
    """A word's span without the separator that ends it: ``-arch=sm_70;`` is ported as ``-arch=sm_70``, and
    the shell still finds its command's end after the new words."""
    word = span.of(text)
    if word in _SEPARATORS:
        return Span(span.start, span.start)
    return Span(span.start, span.end - len(_separator_end(word)))


#: What ends a shell command: a word of its own, or the end of a word (``a.cu;``).
_SEPARATORS = frozenset({"&&", "||", ";", "|", "&"})
_SEPARATOR_ENDS = (";", "&&", "||")


def _launches(ctx: MakeContext, words: list[str]) -> list[int]:
    """Where the words of a command line run nvcc (or a compiler variable), each launch. The words after a
    compiler (:func:`_names_gpu_compiler` too), up to the end of its shell command, are its arguments, not
    programs it runs: ``nvcc nvcc``, and the ``$(HIPCC) nvcc`` it becomes (``$(X) nvcc`` runs nvcc only where
    ``X`` is not itself a compiler); ``nvcc -dc nvcc``, and the ``-c nvcc`` it becomes (``sh -c nvcc``)."""
    launches: list[int] = []
    in_compiler = False  # whether the words are a compiler's arguments
    for i, word in enumerate(words):
        bare = word.lstrip("@-+")
        if not in_compiler and _is_nvcc(ctx, bare) and command_position(words, i):
            launches.append(i)
            in_compiler = True
        elif not in_compiler:
            in_compiler = _names_gpu_compiler(bare)
        if word in _SEPARATORS or _separator_end(word):
            in_compiler = False
    return launches


#: What a link of objects with relocatable device code needs from clang.
_DEVICE_LINK = "-fgpu-rdc --hip-link"
#: nvcc's compile-only flags for relocatable device code, as a word of a command.
_DEVICE_C = re.compile(r"(?<!\S)(?:-dc|--device-c)(?!\S)")
#: ROCm's library folder, named by a word (not a folder below it: ``-L$(ROCM_PATH)/lib/stubs``).
_ROCM_LIB_DIR = re.compile(r"(?:^|\s)-L\$\(ROCM_PATH\)/lib/?(?:\s|$)")
#: Words after the compiler that make a command something else than a link of objects into a program.
_NOT_A_LINK = frozenset({"-c", "-dc", "--device-c", "-E", "-S", "-M", "-MM", "-dlink", "--device-link", "-lib", "--lib",
                         "-fgpu-rdc", "--hip-link", "-ptx", "-cubin", "-fatbin", "$(HIP_DEVICE_LINK)",
                         "--emit-static-lib"})


def _compiles_relocatable(ctx: MakeContext) -> bool:
    """Whether a line of the file runs nvcc (or a compiler variable) with ``-dc``: its objects are then
    linked with their device code, which nvcc does on its own in any link of them."""
    text = ctx.text
    if "-dc" not in text and "--device-c" not in text:
        return False  # what the pattern needs, found by a plain search (its look-behind is tried everywhere)
    for m in _DEVICE_C.finditer(text):
        start = text.rfind("\n", 0, m.start()) + 1
        end = text.find("\n", m.end())
        if _runs_gpu_compiler(ctx, text[start : end if end >= 0 else len(text)]):
            return True
    return False


def _links_objects(words: list[str]) -> bool:
    """Whether the words after the compiler make a link (``-o``, and no compile-only, device-link or
    relocatable-code flag)."""
    return "-o" in words and not any(
        w in _NOT_A_LINK or w.startswith(("-rdc", "--relocatable-device-code", "-M")) for w in words)


def _plain(ctx: MakeContext, span: Span | None) -> None:
    if span is not None:
        _words(ctx, list(iter_words(ctx.text, span.start, span.end)), flags=False, command=False, variable="")


def _is_nvcc(ctx: MakeContext, word: str) -> bool:
    m = REFERENCE.match(word)
    return bool(NVCC_WORD.match(root_paths(word, ctx.facts.own_roots))) or (m is not None and m.group(1) in ctx.facts.compiler_vars)


def _names_gpu_compiler(word: str) -> bool:
    """Whether ``word`` names nvcc or hipcc by name or path, before its port or after it
    (``$(CUDA_PATH)/bin/nvcc``, which becomes ``$(ROCM_PATH)/bin/hipcc``): a rule read again reads the same."""
    return NVCC_WORD.match(word) is not None or HIPCC_WORD.match(word) is not None


def _define(ctx: MakeContext, line: Define, scan: Prescan) -> None:
    """A define body is make code once evaluated: each of its lines is ported like a command
    (those that hold a word a rule looks for: on another line, as on a recipe line, none can fire)."""
    body = line.body
    pos = body.start
    prefixes = _recipe_prefixes(ctx)
    for raw in line.body_text.splitlines(keepends=True):
        end = pos + len(raw.rstrip("\r\n"))
        if scan.hot(pos, end):
            _command(ctx, Span(pos + 1 if raw[:1] in prefixes else pos, end))
        pos += len(raw)


def _recipe_prefixes(ctx: MakeContext) -> frozenset[str]:
    """The characters the file makes recipe prefixes besides the tab (``.RECIPEPREFIX = >``): a define body's
    ``>nvcc ...`` is a recipe line once evaluated, whose command starts after the prefix."""
    if not ctx.text_holds(".RECIPEPREFIX"):
        return frozenset()
    return frozenset(value.of(ctx.text)[:1] for _, name, value in ctx.tree.variables().values()
                     if name == ".RECIPEPREFIX") - {""}


def _foreach_eval(ctx: MakeContext, line: Expansion) -> bool:
    """``$(foreach sm,$(SMS),$(eval GENCODE_FLAGS += -gencode ...))`` → one ``GENCODE_FLAGS += ...``."""
    if ctx.text.find("foreach", line.expansion.start, line.expansion.end) < 0:
        return False
    refs = list(iter_references(ctx.text, line.expansion.start, line.expansion.end, nested=False))
    if len(refs) != 1 or refs[0].name_text != "foreach" or len(refs[0].args) != 3:
        return False
    body = refs[0].arg_texts[2].strip()
    inner = list(iter_references(body, 0, len(body), nested=False))
    if len(inner) != 1 or inner[0].name_text != "eval" or not inner[0].args:
        return False
    m = _EVAL_ASSIGN.match(inner[0].arg_texts[0])
    if m is None:
        return False
    variable, _, value = m.groups()
    result = translate(value.split(), [_HIP_ARCH])
    kept = [w for old, new in zip(value.split(), result.words) for w in ([old] if new is None else new)]
    if not result.changed or any(w != _HIP_ARCH for w in kept):
        return False
    given = variable in ctx.arch_given
    ctx.arch_given.add(variable)
    ctx.replace(line.expansion, "" if given else f"{variable} += {_HIP_ARCH}")
    ctx.report(line.start, "make-arch", Severity.INFO,
               f"per-architecture loop over NVIDIA targets → {variable} += {_HIP_ARCH}", fixable=True)
    return True


def _words(ctx: MakeContext, spans: list[Span], *, flags: bool, command: bool, variable: str,
           at: int | None = None) -> bool:
    """Port a run of words; true when every word was removed. With ``command``, the word at ``at`` runs the
    compiler (by default :func:`_compiler_at`)."""
    if not spans:
        return False
    words = [s.of(ctx.text) for s in spans]
    new: list[list[str] | None] = [None] * len(words)
    current = list(words)
    runtime_seen = define_seen = False
    if not command:
        at = -1
    elif at is None:
        at = _compiler_at(words)
    for i, word in enumerate(words):
        changed = _word(ctx, word, i == at, spans[i].start, flags)
        if changed.endswith("-lamdhip64") and changed != word:
            changed = "" if runtime_seen else changed  # -lcuda -lcudart: one HIP runtime
            runtime_seen = True
        if changed.endswith(" -D__HIP_PLATFORM_AMD__"):
            if define_seen:
                changed = changed[: -len(" -D__HIP_PLATFORM_AMD__")]
            define_seen = True
        if changed != word:
            new[i] = [changed] if changed else []
            current[i] = changed
    if flags:
        arch_words = [] if variable and variable in ctx.arch_given else [_HIP_ARCH]
        result = translate(current, arch_words, lambda value: _arch_for(ctx, value))
        for i, words_i in enumerate(result.words):
            if words_i is not None:
                new[i] = words_i
        for index, rule, message in result.notes:
            ctx.report(spans[index].start, rule, Severity.WARNING, message)
        if result.architectures and variable:
            ctx.arch_given.add(variable)
        for i, words_i in enumerate(result.words):
            if words_i is not None:
                shown = " ".join(words_i)
                ctx.report(spans[i].start, "make-nvcc-flag", Severity.INFO,
                           f"{current[i]} → {shown or '(removed)'}", fixable=True, replacement=shown)
    # the library folder once: where another word of the line names it already (-L$(CUDA_PATH)/lib64 ported)
    if any(w and _ROCM_LIB_DIR.search(w) and not w.endswith("-lamdhip64") for w in current) \
            or any(_ROCM_LIB_DIR.search(w) for w in words):
        new = [[x.replace("-L$(ROCM_PATH)/lib -lamdhip64", "-lamdhip64") for x in w] if w else w for w in new]
    for span, words_i in zip(spans, new):
        if words_i is not None:
            _replace_word(ctx, span, " ".join(words_i), spans[0].start - 1)
    return all(w is not None and not " ".join(w) for w in new)


def _compiler_at(words: list[str]) -> int:
    """The compiler word of a compiler variable's value: the first, or the first after prefixes
    (``$(PREFIX) nvcc``, ``ccache nvcc``). Hipcc counts as well as nvcc, so that in ``$(HIPCC) nvcc``,
    what ``nvcc nvcc`` becomes, the second word stays the argument it was."""
    for i, word in enumerate(words[:4]):
        path = root_paths(word)
        if NVCC_WORD.match(path) or HIPCC_WORD.match(path):
            return i
    return 0


#: Where a variable holds library names that a link line turns into -l flags: -l$(LIB), $(LIBS:%=-l%),
#: $(addprefix -l,$(LIBS)), $(patsubst %,-l%,$(LIBS)).
_LIBRARY_NAME_USES = re.compile(
    r"-l\$[({](\w+)[)}]|\$[({](\w+):%=-l%[)}]|\$[({](?:addprefix\s+-l,|patsubst\s+%,-l%,)\s*\$[({](\w+)[)}]"
)


def _library_subdirs(ctx: MakeContext) -> list[str]:
    """The include folders of the libraries the file names (by link name), in table order."""
    words = set(re.findall(r"[A-Za-z0-9_]+", ctx.text)) if "cu" in ctx.text else set()
    return list(dict.fromkeys(lib.include_subdir for name, lib in BY_LINK_NAME.items()
                              if lib.include_subdir and (name in words or f"l{name}" in words)))


def _library_name_variables(ctx: MakeContext) -> frozenset[str]:
    if ctx.library_vars is None:
        found: set[str] = set()
        if "-l" in ctx.text:
            for m in _LIBRARY_NAME_USES.finditer(ctx.text):
                found.update(g for g in m.groups() if g)
        ctx.library_vars = frozenset(found)
    return ctx.library_vars


def _library_names(ctx: MakeContext, spans: list[Span], words: list[str]) -> None:
    """``LIBRARIES = cudart curand``, made -l flags where they are used: each CUDA name → the ROCm one (the
    runtime → amdhip64, which a host linker needs by name and hipcc takes as well)."""
    for span, word in zip(spans, words):
        lib = BY_LINK_NAME.get(word)
        if lib is None:
            continue
        new = ("amdhip64" if lib.rocm_link else "") if lib.runtime else lib.rocm_link
        if not new and not lib.runtime:
            ctx.report(span.start, "make-library-unported", Severity.WARNING, f"{word}: {lib.note}",
                       "port the code that uses it by hand")
            continue
        if lib.include_subdir and lib.include_subdir not in ctx.include_subdirs:
            ctx.include_subdirs.append(lib.include_subdir)
        ctx.report(span.start, "make-library", Severity.INFO, f"library name {word} → {new or '(removed)'}",
                   fixable=True, replacement=new)
        _replace_word(ctx, span, new, spans[0].start - 1)


def _arch_for(ctx: MakeContext, value: str) -> list[str] | None:
    """``-arch=$(ARCH)`` keeps ``ARCH`` as the user's knob, now holding AMD targets."""
    m = REFERENCE.match(value)
    if m is not None and m.group(1) in ctx.facts.arch_vars:
        return [f"$(addprefix --offload-arch=,{value})"]
    return None


_HOST_INCLUDE = re.compile(r"^-I\$[({](?:ROCM_PATH[)}]/include|CUDA_INC(?:LUDE)?_(?:DIR|PATH)[)}])/?$")


def _foreach_arch(word: str) -> bool:
    """``$(foreach sm,$(SMS),-gencode arch=compute_$(sm),code=sm_$(sm))``: architecture flags only."""
    refs = list(iter_references(word, 0, len(word), nested=False))
    if len(refs) != 1 or refs[0].span != Span(0, len(word)) or refs[0].name_text != "foreach":
        return False
    if len(refs[0].args) != 3:
        return False
    body = refs[0].arg_texts[2].split()
    result = translate(body, [_HIP_ARCH])
    kept = [w for old, new in zip(body, result.words) for w in ([old] if new is None else new)]
    return result.changed and all(w == _HIP_ARCH for w in kept)


def _word(ctx: MakeContext, word: str, command: bool, offset: int, flags: bool = False) -> str:
    """One word: -Xcompiler prefixes, paths, libraries, the nvcc command itself."""
    if word.startswith(_ADDPREFIX):  # what the pattern begins with
        m = _ADDPREFIX_XCOMPILER.match(word)
        if m:
            return m.group(1)
    if flags and word.startswith(_FOREACH) and _foreach_arch(word):
        ctx.report(offset, "make-arch", Severity.INFO, "per-architecture -gencode loop → $(HIP_ARCH_FLAGS)",
                   fixable=True, replacement=_HIP_ARCH)
        return _HIP_ARCH
    new = root_paths(word, ctx.facts.own_roots)
    if "_CUDA" in new:
        for cuda, hip in WORD_RENAMES.items():  # -DTHRUST_DEVICE_SYSTEM=THRUST_DEVICE_SYSTEM_CUDA
            new = new.replace(cuda, hip)
    nvhpc = False
    if ctx.text_holds("hpc_sdk") and "/" in word:
        ported = _nvhpc_path(ctx, new, offset)
        nvhpc, new = ported != new, ported
    program = new.lstrip("@-+") if command else new  # @nvcc: the recipe's prefixes stay (silent, ignore errors)
    if command and (NVCC_WORD.match(program) or program.endswith("/bin/hipcc")):
        # nvcc located by the shell is empty where it is not installed (a CPU-only build): so is hipcc
        hipcc = new[: len(new) - len(program)] + (LOCATED_HIPCC if NVCC_LOCATED.match(program) else "$(HIPCC)")
        ctx.report(offset, "make-compiler", Severity.INFO, f"{word} → {hipcc}", fixable=True, replacement=hipcc)
        return hipcc
    if new.startswith("-l"):
        return _library(ctx, new, offset)
    if new != word and not nvhpc:
        ctx.report(offset, "make-path", Severity.INFO, f"{word} → {new}", fixable=True, replacement=new)
    # (in a variable of nvcc flags too: it may reach a host compiler as well, as darknet's COMMON does)
    if new.startswith("-I$") and _HOST_INCLUDE.match(new) and (new != word or "CUDA" in word) \
            and not ctx.text_holds("__HIP_PLATFORM_AMD__"):
        # a host compiler that includes hip/hip_runtime.h must say which platform it targets, and find the
        # headers hipify names bare (<hiprand.h>) where ROCm keeps them (hiprand/hiprand.h)
        subdirs = "".join(f" -I$(ROCM_PATH)/include/{d}" for d in _library_subdirs(ctx))
        return f"{new} -D__HIP_PLATFORM_AMD__{subdirs}"
    return new


def _nvhpc_path(ctx: MakeContext, word: str, offset: int) -> str:
    """A path into NVIDIA's HPC SDK (:data:`~buildport.rules.paths.NVHPC_PATHS`) made the machine's; one the
    table has no row for is reported (once a file), the SDK's root alone is not (its uses are)."""
    root = _VARIABLE_ROOT.match(word)
    if root is not None and not _names_the_sdk(ctx, root.group(1)):
        return word  # $(TOP)/cuda/include: a folder of the project's own
    for pattern, replacement in NVHPC_PATHS:
        new = pattern.sub(replacement, word, count=1)
        if new != word:
            ctx.report(offset, "make-nvhpc-path", Severity.INFO, f"{word} → {new}", fixable=True, replacement=new)
            return new
    if _NVHPC_LEFT.search(word) and not _NVHPC_SDK_ROOT.match(word) and "hpc_sdk" not in ctx.reported_words:
        ctx.reported_words.add("hpc_sdk")
        ctx.report(offset, "make-nvhpc-path", Severity.WARNING,
                   f"{word}: a path into NVIDIA's HPC SDK with no ROCm counterpart buildport knows; a ROCm machine "
                   "has no such folder", "point it at the system's (MPI: the folder of mpicxx, or `mpicxx -show`)")
    return word


_VARIABLE_ROOT = re.compile(r"^(?:-[IL])?\$[({](\w+)[)}]/")


def _names_the_sdk(ctx: MakeContext, variable: str) -> bool:
    """Whether the file assigns ``variable`` a path into NVIDIA's HPC SDK."""
    return any(name == variable and _SDK_VALUE.match(value.of(ctx.text)) is not None
               for _, name, value in ctx.tree.variables().values())


_SDK_VALUE = re.compile(r"[ \t]*/opt/nvidia/hpc_sdk\b")


_NVHPC_LEFT = re.compile(rf"hpc_sdk|{NVHPC_ROOT}/(?:comm_libs|math_libs|cuda|compilers)\b")
_NVHPC_SDK_ROOT = re.compile(r"^/opt/nvidia/hpc_sdk(?:/[^/\s]+){0,2}/?$")


def _library(ctx: MakeContext, word: str, offset: int) -> str:
    lib = BY_LINK_NAME.get(word[2:])
    if lib is None:
        return word
    if lib.runtime:
        if not lib.rocm_link:
            ctx.report(offset, "make-library", Severity.INFO, f"{word} dropped: {lib.note}", fixable=True,
                       replacement="")
            return ""
        if ctx.facts.host_links and lib.rocm_link:
            ctx.report(offset, "make-library", Severity.INFO, f"{word} → -lamdhip64 (a host compiler links)",
                       fixable=True, replacement="-lamdhip64")
            return "-L$(ROCM_PATH)/lib -lamdhip64" if not ctx.text_holds("ROCM_PATH)/lib") else "-lamdhip64"
        ctx.report(offset, "make-library", Severity.INFO, f"{word} dropped: hipcc links the HIP runtime",
                   fixable=True, replacement="")
        return ""
    if not lib.rocm_link:
        ctx.report(offset, "make-library-unported", Severity.WARNING, f"{word}: {lib.note}",
                   "port the code that uses it by hand")
        return word
    if lib.include_subdir and lib.include_subdir not in ctx.include_subdirs:
        ctx.include_subdirs.append(lib.include_subdir)
    ctx.report(offset, "make-library", Severity.INFO, f"{word} → -l{lib.rocm_link}", fixable=True,
               replacement=f"-l{lib.rocm_link}")
    return f"-l{lib.rocm_link}"


def _replace_word(ctx: MakeContext, span: Span, text: str, floor: int) -> None:
    """Replace a word; an empty text removes it with the blanks (and continuation) before it."""
    if text:
        ctx.replace(span, text)
        return
    source = ctx.text
    start = span.start
    while start > floor and source[start - 1] in " \t":
        start -= 1
    for join in ("\\\r\n", "\\\n"):  # a word alone on a continuation line takes the line with it
        if start - len(join) >= floor and source.startswith(join, start - len(join)):
            start -= len(join)
            while start > floor and source[start - 1] in " \t":
                start -= 1
            break
    end = span.end
    if start == span.start:
        while end < len(source) and source[end] in " \t":
            end += 1
    ctx.edits.remove(start, end)


def report_platform(ctx: MakeContext) -> None:
    text = ctx.text
    tree = ctx.tree
    lines: Iterable[Line | tuple[int, str]]
    if not skipping():
        lines = tree.select(_REPORTED)
    else:
        # an assignment whose name may hint at a platform, a rule whose prerequisites may end in .c
        # (".c" followed by a word's character is no word's end: .cu, .cpp, .cc)
        dot_c = [m.start() for m in _DOT_C_END.finditer(text)]
        hinted = [(start, variable) for start, variable, _ in tree.assignments_at(ctx.name_scan().hits)
                  if PLATFORM_HINTS.search(variable)]  # fmt: skip
        lines = heapq.merge(hinted, tree.lines_at(dot_c, _RULES),
                            key=lambda item: item[0] if isinstance(item, tuple) else item.start)  # fmt: skip
    for line in lines:
        if isinstance(line, tuple):  # an assignment, by its start and variable
            _platform(ctx, *line)
        elif isinstance(line, Assignment) and PLATFORM_HINTS.search(line.variable):
            _platform(ctx, line.start, line.variable)
        if isinstance(line, Rule) and _builds_c(ctx, line) and _compiles_for_gpu(ctx, line):
            # hipcc compiles a .c file as C, as nvcc did, but defines no HIP platform for it: HIP's headers
            # (hipified includes, the forced runtime header) refuse to compile without one
            ctx.compiles_c = True
            if ctx.text_holds("std=c++") or ctx.text_holds("std=gnu++"):
                _c_without_cxx_standard(ctx, line)
            else:
                ctx.report(line.start, "make-c-source", Severity.INFO,
                           "a .c file compiled by the GPU compiler: hipcc compiles it as C, as nvcc did, with "
                           "-D__HIP_PLATFORM_AMD__ for HIP's headers", fixable=True)


#: Variables that hold no C++ standard: CUDA's folders, which a port makes ROCm's, and the port's own.
_NO_STANDARD = ROOT_VARIABLES | DIR_VARIABLES.keys() | _OWN
_CXX_STANDARDS = "-std=c++% -std=gnu++%"
_CXX_STANDARD = re.compile(r"-std=(?:c|gnu)\+\+\w+")
_AUTOMATIC = frozenset("@<^+*?%|")


def _c_without_cxx_standard(ctx: MakeContext, rule: Rule) -> None:
    """nvcc gave a C++ ``-std=`` only to its C++ compiles; clang refuses one for a C file. In the commands of a rule
    that compiles ``.c`` files with the GPU compiler, each variable it reads is read without C++ standards
    (``$(filter-out -std=c++% -std=gnu++%,$(CFLAGS))``) and a standard written there goes."""
    text = ctx.text
    spans = [] if rule.recipe is None else [(rule.recipe.start, rule.recipe.end)]
    spans += [(line.command.start, line.command.end) for line in ctx.tree.recipe_lines(rule)]
    compilers = ctx.facts.compiler_vars | {"HIPCC", "CC"}
    changed = False
    for start, end in spans:
        edited = _edited_spans(ctx, start, end)
        words = {(w.start, w.end) for w in iter_words(text, start, end)}
        for ref in iter_references(text, start, end, nested=False):
            name = ref.name.of(text)
            if ref.kind != "variable" or name in _AUTOMATIC or name in compilers or "$" in name:
                continue
            if (ref.span.start, ref.span.end) not in words or name in _NO_STANDARD:
                continue  # a path ($(CUDA_PATH)/bin/nvcc, -I$(INC), $(ROCM_PATH)) or the port's own flags
            if _overlaps(edited, ref.span.start, ref.span.end):
                continue  # a word another rule rewrote, and reads as it does
            ctx.replace(ref.span, f"$(filter-out {_CXX_STANDARDS},{ref.span.of(text)})")
            changed = True
        for match in _CXX_STANDARD.finditer(text, start, end):
            if _inside_reference(text, start, match.start()) or _overlaps(edited, match.start(), match.end()):
                continue
            _replace_word(ctx, Span(match.start(), match.end()), "", start)
            changed = True
    if changed:
        ctx.report(rule.start, "make-c-source-std", Severity.INFO,
                   "a .c file compiled by the GPU compiler: its commands read their flags without C++ -std= "
                   "(nvcc gave those to C++ files only; clang refuses them for C)", fixable=True)
    else:  # the standard is in the compiler's own variable (NVCC := nvcc -std=c++17), or nowhere this rule reads
        ctx.report(rule.start, "make-c-source-std", Severity.WARNING,
                   "a .c file compiled by the GPU compiler, and a C++ -std= in the file: if the compiler's variable "
                   "holds it, hipcc fails on the C file (nvcc passed it to C++ files only)",
                   "keep -std=c++NN out of the .c files' commands")


def _edited_spans(ctx: MakeContext, start: int, end: int) -> list[tuple[int, int]]:
    """The spans of the edits made so far that overlap ``[start, end)`` (a word another rule rewrote: two
    edits of one word would overlap)."""
    return ctx.edits.overlapping(start, end)


def _overlaps(spans: list[tuple[int, int]], start: int, end: int) -> bool:
    """Whether ``[start, end)`` overlaps one of ``spans``: a word one rule has rewritten is not another's."""
    return any(s < end and start < e for s, e in spans)


def _inside_reference(text: str, start: int, at: int) -> bool:
    return any(ref.span.start <= at < ref.span.end for ref in iter_references(text, start, at + 1, nested=False))


def _platform(ctx: MakeContext, start: int, variable: str) -> None:
    ctx.report(start, "make-platform", Severity.INFO,
               f"{variable}: platform detection kept as it is; check its NVIDIA-only branches")


def _builds_c(ctx: MakeContext, rule: Rule) -> bool:
    """A rule with a ``.c`` prerequisite, or the old suffix rule ``.c.o:``."""
    return any(w.of(ctx.text).endswith(".c") for w in rule.prerequisite_words) or _is_c_suffix_rule(ctx, rule)


def _is_c_suffix_rule(ctx: MakeContext, rule: Rule) -> bool:
    return any(w.of(ctx.text).startswith(".c.") for w in rule.target_words)


def _compiles_for_gpu(ctx: MakeContext, rule: Rule) -> bool:
    """Whether ``rule``'s recipe runs nvcc or hipcc. A rule that only lists prerequisites is built
    by a pattern rule for ``.c`` files (reported where it stands) or, if the file has none, by make's
    built-in one, ``$(CC) -c``: reported when ``CC`` is a compiler variable (nvcc)."""
    commands = _recipe_commands(ctx, rule)
    if commands:
        return any(_runs_gpu_compiler(ctx, command) for command in commands)
    if ctx.c_pattern is None:
        text = ctx.text
        ctx.c_pattern = any(
            isinstance(line, Rule) and _is_c_pattern(ctx, line) and bool(_recipe_commands(ctx, line))
            for line in ctx.tree.select(_RULES, lambda cls, start, end: text.find("%", start, end) >= 0
                                        or text.startswith(".c.", start))
        )  # fmt: skip
    return not ctx.c_pattern and "CC" in ctx.facts.compiler_vars


def _recipe_commands(ctx: MakeContext, rule: Rule) -> list[str]:
    commands = [] if rule.recipe is None else [rule.text_of(rule.recipe)]
    return commands + [line.command_text for line in ctx.tree.recipe_lines(rule)]


def _is_c_pattern(ctx: MakeContext, rule: Rule) -> bool:
    """``%.o: %.c``, ``$(OBJS): %.o: %.c`` or the old suffix rule ``.c.o:``."""
    text = ctx.text
    return any("%" in w.of(text) and w.of(text).endswith(".c") for w in rule.prerequisite_words) or (
        _is_c_suffix_rule(ctx, rule)
    )


def _runs_gpu_compiler(ctx: MakeContext, command: str) -> bool:
    words = command.split()
    for i, word in enumerate(words):
        bare = word.lstrip("@-+")
        if (_is_nvcc(ctx, bare) or _names_gpu_compiler(bare)) and command_position(words, i):
            return True
    return False


_REPORTED = frozenset({Assignment, Rule})
_DOT_C_END = re.compile(r"\.c(?![A-Za-z0-9_])")
_RULES = frozenset({Rule})
