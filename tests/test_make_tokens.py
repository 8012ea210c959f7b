"""The tokens of a large Makefile in flat arrays (buildport.syntax.make_tokens) read as their list."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from buildport.engine import port_make
from buildport.syntax import make, make_reader, make_scan
from buildport.syntax.make import parse_make
from buildport.syntax.make_scan import scan
from buildport.syntax.make_tokens import PACK_AFTER, PackedTokens
from buildport.textio import decode
from tests.support.makefiles import ALPHABET, IDS, MAKEFILES, makefile_texts


def _scanned(text: str, every: int) -> tuple[Any, list[int]] | None:
    """``scan`` packing runs of ``every`` tokens (as it does for a file of many)."""
    before = make_scan.PACK_AFTER
    make_scan.PACK_AFTER = every
    try:
        return scan(text, make._tables(make.TAB), make._CHECKED)
    finally:
        make_scan.PACK_AFTER = before


def same_reading(text: str, every: int = 3) -> bool:
    """Packed or listed, the scanner's tokens read the same: each, in slices, in order, and their marks.
    Whether they were packed (at a line break past ``every`` tokens, outside a define)."""
    listed = scan(text, make._tables(make.TAB), make._CHECKED)
    packed = _scanned(text, every)
    if listed is None:
        assert packed is None
        return False
    assert packed is not None
    tokens, marks = listed
    kept, kept_marks = packed
    assert kept_marks == marks
    assert len(kept) == len(tokens)
    assert list(kept) == tokens
    assert [kept[i] for i in range(len(tokens))] == tokens
    assert [kept[-i] for i in range(1, len(tokens) + 1)] == [tokens[-i] for i in range(1, len(tokens) + 1)]
    assert kept[1:-1] == tokens[1:-1] and kept[::2] == tokens[::2]
    return isinstance(kept, PackedTokens)


@pytest.mark.parametrize("path", MAKEFILES, ids=IDS)
def test_packed_tokens_read_as_the_list_on_fixtures(path: Path) -> None:
    text = decode(path.read_bytes(), str(path))
    assert same_reading(text) or text.count("\n") < 5


@pytest.mark.parametrize(
    "text",
    ["", "\n", "a\n\n\nb", "define x\nendef\n\n", "define a\n  define b\n  endef\nendef\nz\n",
     "x = 1\n" * 5 + "define y\nA\nendef\n" + "b:\n\tc\n" * 4, "\ufeff\na:\n", "define a\nb\nendef"],
)  # fmt: skip
@pytest.mark.parametrize("every", [1, 2, 3, 7])
def test_packed_tokens_read_as_the_list_on_edge_cases(text: str, every: int) -> None:
    same_reading(text, every)


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(makefile_texts(), st.integers(1, 9))
def test_packed_tokens_read_as_the_list_on_generated_makefiles(text: str, every: int) -> None:
    same_reading(text, every)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.text(alphabet=ALPHABET, max_size=80))
def test_packed_tokens_read_as_the_list_on_arbitrary_text(text: str) -> None:
    same_reading(text, 2)


@pytest.mark.parametrize("path", MAKEFILES, ids=IDS)
def test_a_packed_makefile_is_read_and_ported_as_a_listed_one(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = decode(path.read_bytes(), str(path))
    listed = parse_make(text, str(path))
    expected_lines = [(type(n).__name__, n.start, n.end) for n in listed.lines]
    expected = port_make(text, "Makefile")
    monkeypatch.setattr(make_scan, "PACK_AFTER", 5)
    monkeypatch.setattr(make_reader, "_KEPT_NODES", 2)  # a large file's nodes let go and built again
    packed = parse_make(text, str(path))
    assert [(type(n).__name__, n.start, n.end) for n in packed.lines] == expected_lines
    assert str(packed) == text
    ported = port_make(text, "Makefile")
    assert (ported.text, ported.findings) == (expected.text, expected.findings)


def test_a_makefile_of_many_tokens_keeps_them_packed() -> None:
    """A file of the shortest lines past PACK_AFTER tokens: one byte and one offset a token."""
    text = "all:\n\techo\n" * (PACK_AFTER // 2)
    tree = parse_make(text, "Makefile")
    tokens = tree._reader.children  # type: ignore[attr-defined]  # what the parser read
    assert isinstance(tokens, PackedTokens) and len(tokens) >= PACK_AFTER
    assert tokens[-1] == ("NEWLINE", len(text) - 1, len(text))
    assert str(tree) == text
    assert len(tree.lines) == text.count("\n")


def test_more_kinds_than_a_byte_holds_are_refused() -> None:
    packed = PackedTokens()
    with pytest.raises(ValueError):
        packed.pack([(f"K{i}", i, i + 1) for i in range(300)], False)


@pytest.mark.parametrize("path", MAKEFILES, ids=IDS)
def test_spans_read_as_the_outline_is_made_equal_the_kept_ones(path: Path) -> None:
    from buildport.syntax.make_nodes import SELECTABLE

    text = decode(path.read_bytes(), str(path))
    fresh = parse_make(text, str(path))
    for cls in SELECTABLE:
        assert list(fresh.iter_spans(cls)) == parse_make(text, str(path)).spans(cls)
    assert fresh._reader._outline is None  # type: ignore[attr-defined]  # read as it was made, not kept
    first = next(iter(SELECTABLE))
    kept = fresh.spans(first)
    assert list(fresh.iter_spans(first)) == kept  # from the outline kept now


def test_facts_of_a_file_of_assignments_keep_no_outline() -> None:
    from buildport.passes.make_facts import file_facts

    tree = parse_make("A=1\n" * 100 + "all:\n\techo\n", "Makefile")
    facts = file_facts(tree)
    assert not (facts.uses or facts.compiler_vars or facts.arch_vars or facts.host_links)
    assert tree._reader._outline is None  # type: ignore[attr-defined]
    # an assignment whose value refers to a variable is read: then the lines are outlined and kept
    tree = parse_make("A=1\n" * 100 + "B = $(A)\n", "Makefile")
    assert file_facts(tree).uses == {"B": {"A"}}


@pytest.mark.parametrize("path", MAKEFILES, ids=IDS)
def test_the_outline_of_packed_tokens_reads_as_the_list(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The outline of a file whose tokens are packed is kept in arrays: the same entries, by index,
    slice and in order; the same starts; each assignment's variable found by its start."""
    from buildport.syntax.make_nodes import Assignment

    text = decode(path.read_bytes(), str(path))
    listed = parse_make(text, str(path))._reader  # type: ignore[attr-defined]
    monkeypatch.setattr(make_scan, "PACK_AFTER", 3)
    packed = parse_make(text, str(path))._reader  # type: ignore[attr-defined]
    entries = listed.outline()
    outline = packed.outline()
    assert isinstance(outline, make_reader.PackedOutline) or len(listed.children) <= 3
    assert list(outline) == entries and len(outline) == len(entries)
    assert [outline[i] for i in range(len(entries))] == entries
    assert outline[1:-1] == entries[1:-1] and outline[::3] == entries[::3]
    assert list(packed.starts()) == listed.starts()
    for cls, start, _, _ in entries:
        if cls is Assignment:
            assert packed.variable(start) == listed.variable(start)
        else:
            with pytest.raises(KeyError):
                packed.variable(start)
    assert packed.variables() == listed.variables()
    with pytest.raises(KeyError):
        packed.variable(len(text) + 1)
