"""Line diffs read from the regions a rewrite changed (buildport.report.linediff)."""

from __future__ import annotations

import difflib

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from buildport.report import linediff
from buildport.engine import port_cmake, port_make
from buildport.passes.text_edits import regions as _regions
from buildport.report.linediff import line_blocks, lines, opcodes, unified
from buildport.textio import spliced

_LINE_TEXT = st.text(alphabet="ab \n", max_size=40)


def _cut(original: str, cuts: list[tuple[int, int, str]]) -> tuple[str, list[tuple[int, int, int, int]]]:
    merged: list[tuple[int, int, str]] = []
    for start, width, new in sorted(cuts):
        start = min(start, len(original))
        if merged and start < merged[-1][1]:
            continue
        merged.append((start, min(start + width, len(original)), new))
    return spliced(original, merged), _regions(merged)


@settings(max_examples=400, deadline=None)
@given(_LINE_TEXT, st.lists(st.tuples(st.integers(0, 40), st.integers(0, 6), st.text(alphabet="xy\n", max_size=6)),
                            max_size=5))
@example("a" * 27 + "\n\na", [(22, 6, ""), (28, 2, "")])  # a line joined to the next region's: one block
def test_line_blocks_leave_equal_lines_outside(original: str, cuts: list[tuple[int, int, str]]) -> None:
    """Outside the blocks both texts have the same lines; each block is whole lines of both."""
    text, regions = _cut(original, cuts)
    blocks = list(line_blocks(original, text, regions))
    outside_old: list[str] = []
    outside_new: list[str] = []
    at = new_at = 0
    for start, end, new_start, new_end in blocks:
        assert start in (0, len(original)) or original[start - 1] == "\n"
        assert end in (0, len(original)) or original[end - 1] == "\n"
        assert new_start in (0, len(text)) or text[new_start - 1] == "\n"
        assert new_end in (0, len(text)) or text[new_end - 1] == "\n"
        outside_old += lines(original[at:start])
        outside_new += lines(text[new_at:new_start])
        at, new_at = end, new_end
    assert outside_old + lines(original[at:]) == outside_new + lines(text[new_at:])


def _patched(original: str, diff: list[str]) -> str:
    """``diff`` (unified, as :func:`unified` writes it) applied to ``original``, checking every
    context and removed line against it."""
    old = lines(original)
    out: list[str] = []
    at = 0
    for line in diff[2:]:
        if line.startswith("@@"):
            start = int(line.split()[1][1:].split(",")[0])
            length = line.split()[1].split(",")
            first = start - 1 if len(length) == 1 or length[1] != "0" else start
            out += old[at:first]
            at = first
        elif line[0] in " -":
            assert old[at] == line[1:], (old[at], line)
            at += 1
            if line[0] == " ":
                out.append(line[1:])
        else:
            assert line[0] == "+"
            out.append(line[1:])
    return "".join(out + old[at:])


@settings(max_examples=400, deadline=None)
@given(_LINE_TEXT, st.lists(st.tuples(st.integers(0, 40), st.integers(0, 6), st.text(alphabet="xy\n", max_size=6)),
                            max_size=5))
def test_diff_from_regions_turns_the_original_into_the_text(original: str, cuts: list[tuple[int, int, str]]) -> None:
    text, regions = _cut(original, cuts)
    diff = list(unified(original, text, regions, "a/f", "b/f"))
    assert (diff == []) == (original == text)
    if diff:
        assert diff[:2] == ["--- a/f\n", "+++ b/f\n"]
        assert _patched(original, diff) == text
    joined, linediff._JOINED = linediff._JOINED, 0  # every block compared alone, as in a large file
    try:
        alone = list(unified(original, text, regions, "a/f", "b/f"))
    finally:
        linediff._JOINED = joined
    assert _patched(original, alone) == text if alone else original == text
    codes = opcodes(original, text, regions)
    old, new = lines(original), lines(text)
    assert codes[0][1] == codes[0][3] == 0 if codes else not old
    for (tag, i1, i2, j1, j2), following in zip(codes, codes[1:] + [None]):
        if tag == "equal":
            assert old[i1:i2] == new[j1:j2]
        if following is not None:
            assert (following[1], following[3]) == (i2, j2)
            assert not (tag == following[0] == "equal")  # equal runs merged
    if codes:
        assert (codes[-1][2], codes[-1][4]) == (len(old), len(new))


@settings(max_examples=300, deadline=None)
@given(_LINE_TEXT, _LINE_TEXT)
def test_without_regions_the_diff_is_difflibs(original: str, text: str) -> None:
    """Where the changes are not known (a result read back from the cache), the files are compared whole:
    for files of under 200 lines (difflib's junk heuristic aside) the same lines as difflib's."""
    expected = list(difflib.unified_diff(lines(original), lines(text), "a/f", "b/f"))
    assert list(unified(original, text, None, "a/f", "b/f")) == expected


def test_a_port_diffed_by_its_regions_has_the_lines_difflib_finds() -> None:
    text = (
        "project(p CUDA)\n# keep\nadd_executable(a a.cu)\n" + "message(STATUS x)\n" * 12
        + "target_link_libraries(a PRIVATE CUDA::cublas)\nset_target_properties(a PROPERTIES\n  CUDA_ARCHITECTURES 80)\n"
    )
    result = port_cmake(text, "CMakeLists.txt")
    assert result.regions
    ours = list(unified(result.original, result.text, result.regions, "a/CMakeLists.txt", "b/CMakeLists.txt"))
    theirs = list(difflib.unified_diff(lines(result.original), lines(result.text), "a/CMakeLists.txt",
                                       "b/CMakeLists.txt"))
    assert ours == theirs
    assert sum(line.startswith("@@") for line in ours) == 2


def test_a_file_of_many_alike_changed_lines_is_diffed_block_by_block(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rules repeated many times: every block holds one rule's lines; the whole files are never compared
    (difflib over them took the square of their lines)."""
    rules = "".join(f"o{i}.o: s{i}.cu\n\tnvcc -arch=sm_80 -c $< -o $@\n" for i in range(3000))
    result = port_make(rules, "Makefile")
    assert result.regions is not None and len(result.regions) >= 3000
    compared: list[int] = []

    class Counting(difflib.SequenceMatcher):  # type: ignore[type-arg]
        def __init__(self, isjunk: object, a: list[str], b: list[str], autojunk: bool = True) -> None:
            compared.append(len(a) + len(b))
            super().__init__(isjunk, a, b, autojunk)  # type: ignore[arg-type]

    monkeypatch.setattr(difflib, "SequenceMatcher", Counting)
    diff = list(unified(result.original, result.text, result.regions, "a/Makefile", "b/Makefile"))
    monkeypatch.undo()
    assert _patched(result.original, diff) == result.text
    assert compared and max(compared) <= 16  # the toolchain lines and a rule or two, never the file
