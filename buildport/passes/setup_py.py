"""Port a ``setup.py`` that builds PyTorch C++/CUDA extensions (``torch.utils.cpp_extension``).

On ROCm, PyTorch builds the same ``CUDAExtension``: it hipifies the sources itself when the
extension is built and hands ``extra_compile_args["nvcc"]`` to hipcc. So the ``CUDAExtension``
and its ``"nvcc"`` key stay; what changes is the list's words (the nvcc flag table, as for CMake
and make: :func:`buildport.passes.nvcc.translate`) and the CUDA library names of ``libraries=``
(the library table's ``-l`` names). The lists may stand in the call, or in names the call uses
(``nvcc_flags = [...]``, extended with ``+=``, ``.append``, ``.extend`` under conditions).

The file is read with LibCST, a lossless syntax tree: the rewrite replaces string elements of
those lists and nothing else, so every other byte (comments, layout) stays. What is not
understood is left as it is and reported: elements that are not string literals, a custom
``build_ext`` class, ``CUDA_HOME`` (``None`` on ROCm), architectures read from the environment
or the GPU.

NVIDIA architecture flags become ``--offload-arch`` for each target the run names
(``--offload-arch``); with no targets named they are dropped, and PyTorch adds its own: those
``PYTORCH_ROCM_ARCH`` names, else those PyTorch was built for (``torch.utils.cpp_extension``
adds them only when the ``"nvcc"`` list names none).
"""

from __future__ import annotations

from typing import Mapping, Sequence, Union

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from buildport.findings import Finding, Severity
from buildport.passes.nvcc import split_flag, translate
from buildport.passes.setup_py_lists import closed, elements, string
from buildport.rules.libraries import BY_LINK_NAME
from buildport.rules.python import (
    ARCH_CALLS, ARCH_VARIABLES, BUILD_EXT, CUDA_ROOTS, EXTENSION_CLASSES, EXTENSION_MODULE, JIT_FUNCTIONS,
    MARKER, ROCM_ARCH_NOTE,
)
from buildport.syntax.errors import ParseError

#: Flag actions whose value may be the next word.
_TAKES_VALUE = frozenset({"value", "arch", "xcompiler", "xlinker"})

NVCC, LIBRARIES = "nvcc", "libraries"
Expr = cst.BaseExpression
_Binding = Union[cst.Assign, cst.AugAssign, cst.AnnAssign, cst.Call]


def port_setup_text(text: str, path: str, targets: Sequence[str]) -> tuple[str, list[Finding]]:
    """The new text of ``text`` and what was found in it. ``targets``: the AMD targets the run named
    (empty: PyTorch chooses). Raises ``ParseError`` for text that is not Python."""
    wrapper = _wrapped(text, path)
    positions = wrapper.resolve(PositionProvider)
    survey = _Survey(positions, path)
    wrapper.visit(survey)
    if not survey.extension_import:
        return text, []
    plan = _Plan(survey, list(targets))
    plan.resolve()
    if not plan.lists and not plan.appends:
        return text, sorted(plan.findings, key=Finding.sort_key)
    new = wrapper.module.visit(_Rewrite(plan)).code
    return new, sorted(plan.findings, key=Finding.sort_key)


def extension_sources(text: str, path: str) -> list[str]:
    """The sources the ``CUDAExtension`` calls of ``text`` name as string literals (``sources=[...]`` or the
    second argument), as written (relative to the file's folder); none for a file that does not use
    ``torch.utils.cpp_extension``. Raises ``ParseError`` for text that is not Python."""
    if MARKER not in text:
        return []
    wrapper = _wrapped(text, path)
    survey = _Survey(wrapper.resolve(PositionProvider), path)
    wrapper.visit(survey)
    if not survey.extension_import:
        return []
    found: list[str] = []
    for call in survey.calls:
        if _called(call.func) not in EXTENSION_CLASSES:
            continue
        positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
        given = [arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value == "sources"]
        for value in given or [arg.value for arg in positional[1:2]]:
            if isinstance(value, cst.List):
                found += [word for e in value.elements if isinstance(e, cst.Element)
                          if (word := _literal(e.value)) is not None]
    return list(dict.fromkeys(found))


def _wrapped(text: str, path: str) -> MetadataWrapper:
    """``text`` parsed, ready for the visitors' positions; raises ``ParseError`` for text that is not Python."""
    try:
        return MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True)
    except cst.ParserSyntaxError as exc:
        lines = text.splitlines()
        line = lines[exc.raw_line - 1] if 0 < exc.raw_line <= len(lines) else ""
        raise ParseError(f"not Python: {exc.message}", exc.raw_line, exc.raw_column + 1, line, path) from None


class _Survey(cst.CSTVisitor):
    """What the file holds: the extension calls, how each name is bound and changed, and the
    constructs a person must look at (reported as they are met)."""

    def __init__(self, positions: Mapping[cst.CSTNode, CodeRange], path: str) -> None:
        super().__init__()
        self.positions = positions
        self.path = path
        self.extension_import = False
        self.calls: list[cst.Call] = []
        #: name → the statements and calls that bind or change it, in order.
        self.bindings: dict[str, list[_Binding]] = {}
        self.findings: list[Finding] = []
        self._in_import = 0

    def at(self, node: cst.CSTNode) -> tuple[int, int]:
        """The 1-based line and column where ``node`` starts."""
        where = self.positions[node]
        return where.start.line, where.start.column + 1

    def report(self, node: cst.CSTNode, rule: str, severity: Severity, message: str, suggestion: str = "",
               fixable: bool = False, replacement: str = "") -> None:
        line, col = self.at(node)
        self.findings.append(Finding(self.path, line, col, rule, severity, message, suggestion, fixable, replacement))

    def visit_Import(self, node: cst.Import) -> None:
        self._in_import += 1
        if any(_dotted(alias.name) == EXTENSION_MODULE for alias in node.names):
            self.extension_import = True

    def leave_Import(self, original_node: cst.Import) -> None:
        self._in_import -= 1

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self._in_import += 1
        module = _dotted(node.module) if node.module is not None else ""
        if module == EXTENSION_MODULE:
            self.extension_import = True
        elif module == "torch.utils" and not isinstance(node.names, cst.ImportStar) and any(
                _dotted(alias.name) == "cpp_extension" for alias in node.names):
            self.extension_import = True

    def leave_ImportFrom(self, original_node: cst.ImportFrom) -> None:
        self._in_import -= 1

    def visit_Call(self, node: cst.Call) -> None:
        name = _called(node.func)
        if name in EXTENSION_CLASSES or name in JIT_FUNCTIONS:
            self.calls.append(node)
        if isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Name):
            self.bindings.setdefault(node.func.value.value, []).append(node)
        if name in ARCH_CALLS:
            self.report(node, "setup-py-arch-env", Severity.WARNING,
                        f"{name}(): NVIDIA architectures worked out at build time; left as it is",
                        ROCM_ARCH_NOTE)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._bind(target.target, node)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind(node.target, node)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._bind(node.target, node)

    def _bind(self, target: cst.BaseExpression, node: _Binding) -> None:
        if isinstance(target, cst.Subscript):
            target = target.value  # nvcc_args["nvcc"] = [...]: a change of nvcc_args
        if isinstance(target, cst.Name):
            self.bindings.setdefault(target.value, []).append(node)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        for base in node.bases:
            name = _called(base.value)
            if name in BUILD_EXT:
                self.report(node, "setup-py-build-ext", Severity.WARNING,
                            f"class {node.name.value}({name}): a custom build step; left as it is",
                            "on ROCm, BuildExtension hipifies the sources and runs hipcc: check what the class "
                            "changes (compilers, flags, CUDA paths) by hand")

    def visit_Name(self, node: cst.Name) -> None:
        if node.value in CUDA_ROOTS and not self._in_import:
            self._cuda_root(node, node.value)

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        value = _literal(node)
        if value in CUDA_ROOTS:
            self._cuda_root(node, value)
        elif value in ARCH_VARIABLES:
            self.report(node, "setup-py-arch-env", Severity.WARNING,
                        f"{value}: NVIDIA architectures read from the environment; left as it is",
                        ROCM_ARCH_NOTE)

    def _cuda_root(self, node: cst.CSTNode, name: str) -> None:
        self.report(node, "setup-py-cuda-home", Severity.WARNING,
                    f"{name}: the CUDA install root; on ROCm torch.utils.cpp_extension.CUDA_HOME is None "
                    "(ROCM_HOME is set); left as it is",
                    "test torch.version.hip or ROCM_HOME where the build asks for CUDA")


#: Each list that changes (by the id of its node), as it becomes.
ListEdits = dict[int, cst.List]


class _Plan:
    """Which lists hold nvcc flags and library names (followed through the names that hold them),
    and what each of their elements becomes."""

    def __init__(self, survey: _Survey, targets: list[str]) -> None:
        self.survey = survey
        self.findings = survey.findings
        self.arch_words = [f"--offload-arch={target}" for target in targets]
        self.lists: ListEdits = {}
        self.appends: dict[int, list[str]] = {}  # id(Call of .append) → the words it adds instead
        self._seen: set[tuple[int, str]] = set()
        self._names: set[tuple[str, str]] = set()

    def resolve(self) -> None:
        for call in self.survey.calls:
            for arg in call.args:
                keyword = arg.keyword.value if arg.keyword is not None else ""
                if keyword == "extra_compile_args" and _called(call.func) in EXTENSION_CLASSES:
                    self._compile_args(arg.value)
                elif keyword == "extra_cuda_cflags" and _called(call.func) in JIT_FUNCTIONS:
                    self._value(arg.value, NVCC)
                elif keyword == LIBRARIES and _called(call.func) in EXTENSION_CLASSES:
                    self._value(arg.value, LIBRARIES)

    def _dynamic(self, node: cst.CSTNode, what: str) -> None:
        self.survey.report(node, "setup-py-dynamic", Severity.WARNING, f"{what}; left as it is",
                           "translate its nvcc flags and CUDA library names by hand")

    def _compile_args(self, value: Expr) -> None:
        """``extra_compile_args``: a dict literal, ``dict(...)``, or a name bound to one."""
        if isinstance(value, cst.Dict):
            for element in value.elements:
                if isinstance(element, cst.DictElement) and _literal(element.key) == NVCC:
                    self._value(element.value, NVCC)
            return
        if isinstance(value, cst.Call) and _called(value.func) == "dict":
            for arg in value.args:
                if arg.keyword is not None and arg.keyword.value == NVCC:
                    self._value(arg.value, NVCC)
            return
        if isinstance(value, cst.Name):
            if (value.value, "args") in self._names:
                return
            self._names.add((value.value, "args"))
            for binding in self.survey.bindings.get(value.value, []):
                if isinstance(binding, cst.Call):
                    continue  # args.update(...), args.get(...): not followed
                target = _target(binding)
                if isinstance(target, cst.Subscript):
                    if _subscript_key(target) == NVCC and binding.value is not None:
                        self._value(binding.value, NVCC)
                elif binding.value is not None:
                    self._compile_args(binding.value)
            return
        self._dynamic(value, "extra_compile_args that is not a dict buildport can read")

    def _value(self, value: Expr, role: str) -> None:
        """A list of flags or library names: a literal, a sum of them, or a name that holds one."""
        if isinstance(value, cst.List):
            self._list(value, role)
        elif isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add):
            self._value(value.left, role)
            self._value(value.right, role)
        elif isinstance(value, cst.Name):
            self._name(value, role)
        else:
            self._dynamic(value, f"{_what(role)} list that is not a list of strings buildport can read")

    def _name(self, name: cst.Name, role: str) -> None:
        if (name.value, role) in self._names:
            return
        self._names.add((name.value, role))
        bindings = self.survey.bindings.get(name.value, [])
        if not any(not isinstance(b, cst.Call) for b in bindings):
            self._dynamic(name, f"{name.value}: {_what(role)} list bound where buildport does not follow it")
            return
        for binding in bindings:
            if isinstance(binding, cst.Call):
                self._method(binding, role)
            elif isinstance(_target(binding), cst.Name) and binding.value is not None:
                self._value(binding.value, role)

    def _method(self, call: cst.Call, role: str) -> None:
        assert isinstance(call.func, cst.Attribute)
        method = call.func.attr.value
        if method == "extend" and len(call.args) == 1:
            self._value(call.args[0].value, role)
        elif method in ("append", "insert") and call.args:
            item = call.args[-1].value
            word = _literal(item)
            if word is None:
                self._dynamic(item, f"{_what(role)} that is not a string literal")
            elif method == "append" and role == NVCC:
                self._append(call, item, word)
            elif role == LIBRARIES and method == "append":
                words = self._library(item, word)
                if words is not None:
                    self.appends[id(call)] = words

    def _list(self, node: cst.List, role: str) -> None:
        if (id(node), role) in self._seen:
            return
        self._seen.add((id(node), role))
        words: list[str | None] = []
        for element in node.elements:
            word = _literal(element.value) if isinstance(element, cst.Element) else None
            if word is None:
                self._dynamic(element.value, f"{_what(role)} that is not a string literal")
            words.append(word)
        if role == NVCC:
            new = self._flags(words, list(node.elements))
        else:
            new = [self._library(e.value, w) if w is not None else None for e, w in zip(node.elements, words)]
        if any(w is not None for w in new):
            self.lists[id(node)] = closed(node, elements(list(node.elements), new), new[-1] == [])

    def _flags(self, words: list[str | None], nodes: list[cst.BaseElement]) -> list[list[str] | None]:
        """Each word's new words (None: kept), from the flag table; a flag whose value is not a literal is kept."""
        hole = "\0"  # no flag's spelling: a flag never takes it for its own, only for its value
        result = translate([w if w is not None else hole for w in words], self.arch_words)
        new = list(result.words)
        for index, rule, message in result.notes:
            self.survey.report(nodes[index].value, rule, Severity.WARNING, message)
        i = 0
        while i < len(words):
            word, replaced = words[i], new[i]
            flag, attached = split_flag(word) if word is not None else (None, None)
            span = 2 if flag is not None and flag.action in _TAKES_VALUE and attached is None else 1
            if replaced is None or word is None or flag is None:
                i += 1
                continue
            value = words[i + 1] if span == 2 and i + 1 < len(words) else None
            if span == 2 and i + 1 < len(words) and value is None:
                new[i] = new[i + 1] = None  # -gencode f"arch=...": the value is not known (reported as such)
                i += 2
                continue
            shown = " ".join(replaced)
            said = f"{word} {value}" if value is not None else word
            if flag.action == "arch":
                rule = "setup-py-arch"
                message = f"NVIDIA architecture flag {said} → {shown or '(removed)'}" + (
                    "" if self.arch_words else ": PyTorch adds --offload-arch for PYTORCH_ROCM_ARCH, else for "
                    "the targets it was built for")
            else:
                rule, message = "setup-py-nvcc-flag", f"{said} → {shown or '(removed)'}"
            self.survey.report(nodes[i].value, rule, Severity.INFO, message, fixable=True, replacement=shown)
            i += span
        return new

    def _append(self, call: cst.Call, item: cst.BaseExpression, word: str) -> None:
        if id(call) in self.appends:
            return
        new = self._flags([word], [cst.Element(item)])
        if new[0] is not None:
            self.appends[id(call)] = new[0]

    def _library(self, node: cst.BaseExpression, word: str) -> list[str] | None:
        lib = BY_LINK_NAME.get(word)
        if lib is None:
            return None
        new = ("amdhip64" if lib.rocm_link else "") if lib.runtime else lib.rocm_link
        if not new and not lib.runtime:
            self.survey.report(node, "setup-py-library-unported", Severity.WARNING, f"{word}: {lib.note}",
                               "port the code that uses it by hand")
            return None
        if new == word:
            return None
        self.survey.report(node, "setup-py-library", Severity.INFO, f"library name {word} → {new or '(removed)'}",
                           fixable=True, replacement=new)
        return [new] if new else []


class _Rewrite(cst.CSTTransformer):
    """Puts the planned elements in their lists, and the words of each changed ``.append`` in its call
    (one word: the string replaced; none or several: ``.extend([...])``)."""

    def __init__(self, plan: _Plan) -> None:
        super().__init__()
        self.plan = plan

    def leave_List(self, original_node: cst.List, updated_node: cst.List) -> cst.List:
        new = self.plan.lists.get(id(original_node))
        return updated_node if new is None else updated_node.with_changes(elements=new.elements, rbracket=new.rbracket)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        words = self.plan.appends.get(id(original_node))
        if words is None:
            return updated_node
        arg = updated_node.args[0]
        assert isinstance(arg.value, cst.SimpleString) and isinstance(updated_node.func, cst.Attribute)
        if len(words) == 1:
            return updated_node.with_changes(args=[arg.with_changes(value=string(words[0], arg.value))])
        items = [cst.Element(string(w, arg.value)) for w in words]
        func = updated_node.func.with_changes(attr=cst.Name("extend"))
        return updated_node.with_changes(func=func, args=[arg.with_changes(value=cst.List(items))])


def _target(binding: cst.Assign | cst.AugAssign | cst.AnnAssign) -> cst.BaseExpression:
    if isinstance(binding, cst.Assign):
        return binding.targets[0].target
    return binding.target


def _subscript_key(node: cst.Subscript) -> str | None:
    if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
        return None
    return _literal(node.slice[0].slice.value)


def _literal(node: cst.BaseExpression) -> str | None:
    """The value of a plain string literal (not bytes, not an f-string); None for anything else."""
    if not isinstance(node, cst.SimpleString) or "b" in node.prefix.lower():
        return None
    value = node.evaluated_value
    return value if isinstance(value, str) else None


def _called(node: cst.BaseExpression) -> str:
    """The last name of ``a.b.C`` or ``C``; empty for anything else."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return ""


def _dotted(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr.value}" if head else ""
    return ""


def _what(role: str) -> str:
    return "an nvcc flag" if role == NVCC else "a library name"
