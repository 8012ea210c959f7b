"""The pre-scan skips only what no rule could change: table-driven, and checked against full runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from buildport import prescan
from buildport.engine import port_cmake
from buildport.findings import Finding
from buildport.prescan import cmake_words, disabled, may_need_cmake_port
from buildport.rules import cmake as cmake_rules
from buildport.rules.libraries import LIBRARIES
from buildport.rules.tools import TOOLS
from buildport.syntax.errors import ParseError

ROOT = Path(__file__).resolve().parent.parent
CMAKE_SOURCES = sorted(
    p for base in ("fixtures/cmake", "fixtures/projects", "fixtures/migrate", "fixtures/audit")
    for p in (ROOT / base).rglob("*")
    if p.is_file() and (p.name in ("CMakeLists.txt", "input.cmake") or p.suffix == ".cmake")
)  # fmt: skip


def _full_and_skipping(text: str) -> tuple[tuple[str, list[Finding]], tuple[str, list[Finding]]]:
    skipping = port_cmake(text, "CMakeLists.txt")
    with disabled():
        full = port_cmake(text, "CMakeLists.txt")
    return (skipping.text, skipping.findings), (full.text, full.findings)


def test_the_corpus_is_there() -> None:
    assert len(CMAKE_SOURCES) > 50


@pytest.mark.parametrize("path", CMAKE_SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_skipping_changes_nothing_on_any_fixture(path: Path) -> None:
    text = path.read_bytes().decode("utf-8", "surrogateescape")
    skipping, full = _full_and_skipping(text)
    assert skipping == full
    if full[0] != text or full[1]:
        assert may_need_cmake_port(text), "a file the passes change or report on was not matched"


@pytest.mark.parametrize("word", sorted(set(cmake_words())))
def test_every_table_word_is_a_trigger_in_any_case(word: str) -> None:
    for spelling in (word, word.upper(), word.lower()):
        assert may_need_cmake_port(f"set(X {spelling})\n")


def test_the_words_come_from_the_tables() -> None:
    words = {w.lower() for w in cmake_words()}
    assert {w.lower() for w in cmake_rules.VARIABLES} <= words
    assert {w.lower() for w in cmake_rules.PROPERTIES} <= words
    assert {w.lower() for w in cmake_rules.FLAG_VARIABLES} <= words
    assert {t.lower() for lib in LIBRARIES for t in lib.cmake_targets} <= words
    assert {n.lower() for lib in LIBRARIES for n in lib.link_names} <= words
    assert {n.lower() for tool in TOOLS for n in tool.names} <= words


def test_a_library_a_project_adds_widens_the_search(tmp_path: Path) -> None:
    from buildport import config
    from buildport.rules import ruleset

    text = "add_executable(a a.cpp)\ntarget_link_libraries(a PRIVATE Acme::fastmath)\nset(LIBS -lacmefm)\n"
    assert not may_need_cmake_port(text)
    (tmp_path / "buildport.toml").write_text(
        '[libraries.fastmath]\ncmake-targets = ["Acme::fastmath"]\nlink-names = ["acmefm"]\n'
        'rocm-package = "hipfm"\nrocm-target = "roc::hipfm"\nrocm-link = "hipfm"\n'
    )
    try:
        ruleset.use(config.load(tmp_path).rules)
        assert may_need_cmake_port(text)
        ported = port_cmake(text).text
        assert "roc::hipfm" in ported
        assert "set(LIBS -lhipfm)" in ported
    finally:
        ruleset.use(ruleset.BUILT_IN)
    assert not may_need_cmake_port(text)


@pytest.mark.parametrize("text", [
    "project(p CXX)\nadd_executable(a a.cpp)\n",
    "set(CMAKE_CXX_FLAGS \"-O2 -Wall\")\nmessage(STATUS \"current dir ${CMAKE_CURRENT_SOURCE_DIR}\")\n",
    "include(CTest)\nadd_test(NAME t COMMAND a --verbose)\n",
])  # fmt: skip
def test_plain_cmake_is_skipped(text: str) -> None:
    assert not may_need_cmake_port(text)
    result = port_cmake(text)
    assert result.text == text and not result.findings


def test_a_skipped_file_is_still_parsed_so_bad_input_is_an_error() -> None:
    text = "project(p CXX)\nadd_executable(a a.cpp\n"
    assert not may_need_cmake_port(text)
    with pytest.raises(ParseError) as error:
        port_cmake(text, "CMakeLists.txt")
    assert error.value.line == 2 and error.value.path == "CMakeLists.txt"


def test_a_hip_only_file_has_nothing_to_report() -> None:
    text = "project(p LANGUAGES CXX HIP)\nadd_executable(a a.hip)\n"
    assert port_cmake(text).findings == []
    mixed = "project(p LANGUAGES CXX HIP)\nadd_executable(a a.hip)\nadd_executable(b b.cu)\n"
    assert [f.rule for f in port_cmake(mixed).findings] == ["cmake-hip-present"]


@pytest.mark.parametrize("text", [
    "find_package(CUDAToolkit REQUIRED)\nadd_executable(a a.cu)\ntarget_compile_options(a PRIVATE -G -O3)\n"
    "message(STATUS plain)\ntarget_link_libraries(a PRIVATE ${LIBS})\nset(LIBS CUDA::cublas)\n",
    "add_library(k STATIC k.cu)\nset_target_properties(k PROPERTIES CUDA_ARCHITECTURES 80)\n"
    "add_compile_options(-Wall)\nif(WIN32)\n  set(X y)\nendif()\n",
])  # fmt: skip
def test_commands_without_trigger_words_in_a_cuda_file(text: str) -> None:
    skipping, full = _full_and_skipping(text)
    assert skipping == full
    assert full[0] != text


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.lists(st.sampled_from(["cu", "da", "nv", "cc", "-", "--", ".", "x", "rand", "CUDA", "b", " ", "ptx"]),
                max_size=12))
def test_the_trie_matches_what_a_plain_alternation_matches(parts: list[str]) -> None:
    text = "".join(parts).lower()
    words = sorted(set(w.lower() for w in cmake_words()))
    plain = re.compile("|".join(re.escape(w) for w in words))
    assert prescan.cmake_trigger().found_in(text) == (plain.search(text) is not None)


_PIECES = ["cuda", "CUDA::cublas", "-lcufft", "${CUDA_LIBRARIES}", "nvcc", "x", " ", "\n", "İ", "ß", "set(",
           "foo(", ")", "# .cu\n", '"', "a.cu", "cub"]


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=30))
def test_one_search_of_the_file_answers_as_a_search_per_command(parts: list[str]) -> None:
    from buildport.prescan import spans_with_trigger
    from buildport.syntax.cmake import parse_cmake

    text = "".join(parts)
    try:
        commands = parse_cmake(text).commands()
    except ParseError:
        return
    starts, ends = [c.start for c in commands], [c.end for c in commands]
    assert spans_with_trigger(text, starts, ends) == [may_need_cmake_port(text, s, e) for s, e in zip(starts, ends)]


def test_spans_a_match_reaches_across_are_searched_alone() -> None:
    from buildport.prescan import spans_with_trigger

    text = "abc nvcc def"  # spans that cut the word: only a search of each span alone can say
    assert spans_with_trigger(text, [0, 6], [6, 12]) == [False, False]
    assert spans_with_trigger(text, [0, 4], [4, 12]) == [False, True]
    assert spans_with_trigger("İnvcc nvcc", [0, 6], [5, 10]) == [True, True]  # lower() lengthens İ


# --- audit: files without any residue word skip the residue search ----------------------

RESIDUE_SAMPLES = [
    "/usr/local/cuda", "/usr/local/cuda-12.4/lib64", "/opt/cuda", "$(CUDA_PATH)", "${CUDA_TOOLKIT_ROOT_DIR}",
    "CUDATOOLKIT_HOME", "CUDAROOT", "nvcc", "sm_80", "compute_90a", "lto_89", "CUDA::cublas", "USE_CUDA",
    "cuda_add_executable(x)", "-lnvToolsExt", "libnvrtc", "-lnppc", "-lnccl", "libcudnn",
]


@pytest.mark.parametrize("sample", RESIDUE_SAMPLES)
def test_every_residue_pattern_needs_a_hint_word(sample: str) -> None:
    from buildport.audit.residue import _residue_hits
    from buildport.prescan import may_have_residue

    assert list(_residue_hits(sample)), "the sample must be a residue hit"
    assert may_have_residue(sample)


@pytest.mark.parametrize("sample", RESIDUE_SAMPLES)
def test_an_audited_cmake_file_with_a_residue_word_is_not_skipped(sample: str) -> None:
    from buildport.prescan import may_need_cmake_audit

    assert may_need_cmake_audit(f"set(X {sample})\n")


def test_a_cmake_file_the_audit_skips_is_still_parsed() -> None:
    from buildport.audit import audit_text
    from buildport.prescan import may_need_cmake_audit

    assert not may_need_cmake_audit("project(p CXX)\nadd_executable(a a.cpp\n")
    with pytest.raises(ParseError):
        audit_text("project(p CXX)\nadd_executable(a a.cpp\n", "CMakeLists.txt", "cmake")
    assert [f.rule for f in audit_text("set(ARCH sm_80)\n", "CMakeLists.txt", "cmake").findings]  # no rule word


@pytest.mark.parametrize("path", CMAKE_SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_audit_skips_nothing_it_would_report(path: Path) -> None:
    from buildport.audit import audit_text

    text = path.read_bytes().decode("utf-8", "surrogateescape")
    try:
        skipping = audit_text(text, str(path), "cmake")
    except ParseError:
        return
    with disabled():
        assert audit_text(text, str(path), "cmake") == skipping


def test_link_names_are_residue_hints() -> None:
    from buildport.prescan import may_have_residue
    from buildport.rules.libraries import BY_LINK_NAME

    for name in BY_LINK_NAME:
        assert may_have_residue(f"LIBS = -l{name}\n")


@pytest.mark.parametrize("path", sorted(
    p for base in ("fixtures/cmake", "fixtures/make", "fixtures/audit", "fixtures/projects", "fixtures/migrate")
    for p in (ROOT / base).rglob("*") if p.is_file() and p.suffix not in (".cu", ".cuh", ".cpp", ".h", ".txt")
    or p.name == "CMakeLists.txt"
), ids=lambda p: str(p.relative_to(ROOT)))  # fmt: skip
def test_no_fixture_with_residue_is_skipped(path: Path) -> None:
    from buildport.audit.residue import _residue_hits, code_only
    from buildport.prescan import may_have_residue

    text = path.read_bytes().decode("utf-8", "surrogateescape")
    kind = "cmake" if path.name == "CMakeLists.txt" or path.suffix == ".cmake" else "make"
    if list(_residue_hits(code_only(text, kind))):
        assert may_have_residue(text)


def _reference_residue_hits(code: str) -> list[tuple[str, int, str]]:
    """The residue search written plainly: every word of the name pattern, every claim compared."""
    import re as regex

    from buildport.rules.build_rules import RESIDUE_PATTERNS

    claimed: list[tuple[int, int]] = []
    hits = []
    for rule, pattern in RESIDUE_PATTERNS:
        for m in pattern.finditer(code):
            word = m.group()
            if rule == "build-cuda-name" and not (
                regex.search("CUDA", word)
                or (word.lower().startswith("cuda_") and code[m.end():m.end() + 64].lstrip(" \t").startswith("("))
            ):
                continue
            if rule == "build-cuda-name" and (code[m.start() - 1 : m.start()] == "/" or regex.match(
                    r"/|\.[A-Za-z]\w*(?![\w$({])", code[m.end():])):
                continue  # a part of a path: a folder, or a file with its extension
            if any(a < m.end() and m.start() < b for a, b in claimed):
                continue
            claimed.append(m.span())
            hits.append((m.start(), rule, word))
    return [(rule, start, token) for start, rule, token in sorted(hits)]


@settings(max_examples=500, derandomize=True, deadline=None)
@given(st.lists(st.sampled_from([
    "CUDA", "cuda_", "Cuda_add(", "cuda", "_", "9", "é", "x", " ", "(", "\n", "-l", "cublas", "/usr/local/cuda",
    "sm_80", "nvcc", "CUDA::", "lib", "$(", "CUDA_PATH", ")", "\t", "_CUDA",
]), max_size=16))  # fmt: skip
def test_the_residue_search_finds_what_the_plain_one_finds(parts: list[str]) -> None:
    from buildport.audit.residue import _residue_hits

    code = "".join(parts)
    assert list(_residue_hits(code)) == _reference_residue_hits(code)


@pytest.mark.parametrize("path", sorted(
    p for base in ("fixtures/cmake", "fixtures/make", "fixtures/audit")
    for p in (ROOT / base).rglob("*") if p.is_file() and p.suffix != ".txt"
), ids=lambda p: str(p.relative_to(ROOT)))  # fmt: skip
def test_the_residue_search_agrees_on_every_fixture(path: Path) -> None:
    from buildport.audit.residue import _residue_hits

    text = path.read_bytes().decode("utf-8", "surrogateescape")
    assert list(_residue_hits(text)) == _reference_residue_hits(text)


def test_one_switch_turns_every_skip_off_for_both_languages() -> None:
    from buildport.passes.make_prescan import Names, Prescan, hint_free, may_hold_rule_words
    from buildport.prescan import may_need_cmake_audit, skipping, spans_with_trigger

    plain_cmake, plain_make = "add_library(x x.cpp)\n", "all:\n\tcc -o x x.c\n"
    assert skipping() and not may_need_cmake_port(plain_cmake) and not may_need_cmake_audit(plain_cmake)
    assert Prescan(plain_make).hits == [] and hint_free(plain_make) and not may_hold_rule_words(plain_make)
    with disabled():
        assert not skipping()
        assert may_need_cmake_port(plain_cmake) and may_need_cmake_audit(plain_cmake)
        assert spans_with_trigger(plain_cmake, [0], [len(plain_cmake)]) == [True]
        assert Prescan(plain_make).hits is None and Names(plain_make).hits is None
        assert not hint_free(plain_make) and may_hold_rule_words(plain_make)
    assert skipping() and not may_need_cmake_port(plain_cmake)


@pytest.mark.parametrize("text", [
    "include(${PROJECT_SOURCE_DIR}/cmake/Flags.cmake)\nadd_library(${targetname} STATIC ${sources} ${headers})\n",
    "# CUDA kernels are added elsewhere\nadd_executable(app ${SOURCES})\n",
])
def test_a_target_of_variables_in_a_file_without_cuda_is_left_alike_without_skipping(text: str) -> None:
    """Whether a file names CUDA decides if a target's .cu sources from variables are marked: a rule's
    question, which skipping switched off must not answer otherwise (InfiniTAM's SetLibTarget.cmake)."""
    skipping, full = _full_and_skipping(text)
    assert skipping == full == (text, [])
