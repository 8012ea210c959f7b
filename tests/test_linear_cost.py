"""Work that must grow with the file, not with its square: counted, never timed.

Each test ports a file of many alike constructs and counts the steps a former
defect took once per construct *per construct* (benchmarks/linearity.py measures
the same shapes by the clock).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from buildport.engine import port_cmake, port_make
from buildport.syntax.make import parse_make
from buildport.syntax.make_build import variable_at


class _Counted(Sequence[Any]):
    """A token list that counts the tokens read from it and refuses to be iterated from its start."""

    def __init__(self, items: list[Any]) -> None:
        self.items = items
        self.reads = 0

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: Any) -> Any:
        self.reads += 1
        return self.items[index]

    def __iter__(self) -> Iterator[Any]:
        raise AssertionError("read from the first token on")


def test_an_assignment_is_read_from_its_own_tokens() -> None:
    text = "".join(f"CUDA_FLAGS_{i} = -O2 --use_fast_math\n" for i in range(2000))
    tree = parse_make(text, "Makefile")
    reader = tree._reader  # type: ignore[attr-defined]  # what the parser read, before any line is built
    counted = _Counted(reader.children)
    last = max(index for cls, _, _, index in reader.outline())
    name, value = variable_at(text, counted, last)  # type: ignore[arg-type]
    assert (name, value.of(text)) == ("CUDA_FLAGS_1999", "-O2 --use_fast_math")
    assert counted.reads < 10  # its own few tokens, not the 6,000 before them


def test_a_file_of_many_targets_looks_up_each_targets_commands(monkeypatch: pytest.MonkeyPatch) -> None:
    """Which commands give a target sources, or link it, is grouped once per file, not searched per target."""
    import buildport.passes.cmake_targets as targets

    count = 300
    text = "".join(f"add_executable(t{i} a{i}.cu)\ntarget_link_libraries(t{i} PRIVATE CUDA::cudart CUDA::cublas)\n"
                   f"target_include_directories(t{i} PRIVATE ${{CUDAToolkit_INCLUDE_DIRS}})\n" for i in range(count))
    calls = 0
    real = targets.target_sources

    def counting(command: Any) -> Any:
        nonlocal calls
        calls += 1
        return real(command)

    monkeypatch.setattr(targets, "target_sources", counting)
    result = port_cmake("project(p CUDA)\n" + text, "CMakeLists.txt", verify=False)
    assert "target_link_libraries(t299 PRIVATE roc::hipblas)" in result.text
    assert calls <= 4 * count  # each target's own commands, a few times: was count × count more


def test_emptied_target_specific_flags_go_whole() -> None:
    """`t: NVCCFLAGS += -gencode ...` lines, each emptied by the flag translation, go whole; each line's
    edits are looked for among the last ones made, not among all the file's edits so far."""
    from buildport.options import MakeFacts
    from buildport.passes.make import MakeContext, port_lines
    from buildport.passes.make_facts import gather

    from buildport.passes.text_edits import TextEdits

    class Edits(TextEdits):
        read = 0

        def latest(self) -> Iterator[Any]:
            for key in super().latest():
                Edits.read += 1
                yield key

        def overlapping(self, start: int, end: int) -> list[tuple[int, int]]:
            Edits.read += len(self)  # every edit so far
            return super().overlapping(start, end)

    count = 500
    text = "NVCCFLAGS = -O2\n" + "".join(f"t{i}: NVCCFLAGS += -gencode arch=compute_80,code=sm_80\n"
                                       for i in range(count))
    tree = parse_make(text, "Makefile")
    facts = MakeFacts()
    gather(tree, facts)
    ctx = MakeContext("Makefile", tree, ("gfx90a",), edits=Edits(), facts=facts)
    port_lines(ctx)
    removed = sorted((start, end) for start, end, value in ctx.edits.merged() if value == "")
    first = tree.lines[1]  # its flags become the target flags; every later line goes whole
    assert [key for key in removed if key[0] >= first.end] == [(line.start, line.end) for line in tree.lines[2:]]
    assert Edits.read <= 4 * count  # a line's own few, newest first: was count × count / 2, every edit so far
    ported = port_make(text, "Makefile").text
    assert "gencode" not in ported and ported.count("NVCCFLAGS += $(HIP_ARCH_FLAGS)") == 1


def _word_changes_one_by_one(old: str, quote: str, changes: list[tuple[int, int, str]]) -> str:
    """What word_changes_applied gives, made as it once was: the whole text copied at each change."""
    text = old
    for a, b, new in sorted(changes, reverse=True):
        if new:
            text = text[:a] + new + text[b:]
            continue
        lo = len(quote)
        hi = len(text) - len(quote)
        if a > lo and text[a - 1] in " \t;":
            a -= 1
        elif b < hi and text[b] in " \t;":
            b += 1
        text = text[:a] + text[b:]
    return text


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet='ab ;\t"', max_size=30), st.lists(st.tuples(st.integers(0, 30), st.integers(1, 4),
                                                                      st.sampled_from(["", "", "X", "YZ"])),
                                                            max_size=8))
@example(";" * 28, [(23, 4, ""), (27, 1, "")])  # the later drop takes a separator inside the earlier word
def test_word_changes_are_made_as_one_by_one(old: str, cuts: list[tuple[int, int, str]]) -> None:
    from buildport.passes.cmake_text import word_changes_applied

    quote = '"' if old.startswith('"') and len(old) >= 2 else ""
    changes: list[tuple[int, int, str]] = []
    for start, width, new in sorted(cuts):
        if start >= len(old) or (changes and start < changes[-1][1]):
            continue
        changes.append((start, min(start + width, len(old)), new))
    assert word_changes_applied(old, quote, changes) == _word_changes_one_by_one(old, quote, changes)


def test_deeply_nested_defines_cost_no_more_stack_copies_than_their_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    """The scan copies the parser's stack at each step it has not seen: with thousands of nested
    defines that was quadratic in the depth (4,000 levels: seconds). Past a few dozen levels the
    scan hands the file to Lark's parser, whose stack is a list."""
    from buildport.syntax import make_scan

    copied = {"states": 0, "steps": 0}
    real = make_scan.Tables.step

    def step(self: Any, config: Any, kind: str) -> Any:
        copied["states"] += len(config.stack)
        copied["steps"] += 1
        return real(self, config, kind)

    monkeypatch.setattr(make_scan.Tables, "step", step)
    depth = 2000
    text = "".join(f"define V{i}\n" for i in range(depth)) + "nvcc a.cu\n" + "endef\n" * depth
    tree = parse_make(text, "nested.mk")
    assert str(tree) == text
    assert copied["states"] <= 64 * 4 * depth, copied  # was about depth² / 2
