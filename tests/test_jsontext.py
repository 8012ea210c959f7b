"""The indented JSON writer gives exactly what the standard library gives."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from buildport.report.jsontext import dumps_indented

pytestmark = pytest.mark.slow  # property tests over many generated inputs

SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text()
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
                      max_leaves=30)


@settings(max_examples=800, deadline=None)
@given(VALUES)
def test_same_text_as_the_standard_library(value: object) -> None:
    assert dumps_indented(value) == json.dumps(value, indent=2, ensure_ascii=False)


def test_a_report_like_value() -> None:
    value = {"version": 1, "files": [{"path": "a/CMakeLists.txt", "findings": [], "ok": True, "x": None}], "é": "\u2028"}
    assert dumps_indented(value) == json.dumps(value, indent=2, ensure_ascii=False)


@settings(max_examples=300, deadline=None)
@given(VALUES, st.integers(min_value=0, max_value=3))
def test_one_line_containers_read_back_the_same(value: object, depth: int) -> None:
    text = dumps_indented(value, one_line_at=depth)
    assert json.dumps(json.loads(text), sort_keys=True) == json.dumps(value, sort_keys=True)


def test_containers_that_deep_take_one_line_each() -> None:
    value = {"findings": [{"line": 1, "rule": "a"}, {"line": 2, "rule": "b"}], "summary": {"n": 2}}
    assert dumps_indented(value, one_line_at=2) == (
        '{\n  "findings": [\n    {"line": 1, "rule": "a"},\n    {"line": 2, "rule": "b"}\n  ],\n'
        '  "summary": {\n    "n": 2\n  }\n}'
    )


@settings(max_examples=300, deadline=None)
@given(VALUES)
def test_one_line_is_what_json_dumps_writes(value: object) -> None:
    from buildport.report.jsontext import _one_line

    assert _one_line(value) == json.dumps(value, ensure_ascii=False)


@settings(max_examples=300, deadline=None)
@given(st.lists(VALUES, max_size=6), st.integers(min_value=2, max_value=4))
def test_raw_json_is_written_as_it_is(items: list[object], depth: int) -> None:
    from buildport.report.jsontext import RawJSON

    raw = [RawJSON(json.dumps(item, ensure_ascii=False)) for item in items]
    expected = dumps_indented({"items": items}, one_line_at=2)
    assert dumps_indented({"items": raw}, one_line_at=2, end="\n") == expected + "\n"
    mixed = [*raw, 1]  # not every item raw: each written on its own
    read = json.loads(dumps_indented({"items": mixed}, one_line_at=depth))
    assert json.dumps(read, sort_keys=True) == json.dumps({"items": [*items, 1]}, sort_keys=True)  # NaN != NaN


FINDINGS = st.builds(
    lambda path, line, col, rule, severity, message, suggestion, fixable, replacement: __import__(
        "buildport.findings", fromlist=["Finding"]).Finding(
        path, line, col, rule, severity, message, suggestion, fixable, replacement),
    st.text(), st.integers(min_value=0, max_value=10**9), st.integers(min_value=0, max_value=10**6), st.text(),
    st.sampled_from(list(__import__("buildport.findings", fromlist=["Severity"]).Severity)), st.text(), st.text(),
    st.booleans(), st.text(),
)


@settings(max_examples=500, deadline=None)
@given(FINDINGS, st.text(), st.sampled_from([None, "line", "span", "unknown"]))
def test_a_finding_line_is_json_dumps_of_its_entry(finding: object, kind: str, scope: str | None) -> None:
    from buildport.report.render import finding_json, finding_line

    assert finding_line(finding, kind, scope) == json.dumps(finding_json(finding, kind, scope), ensure_ascii=False)
