"""The indented JSON writer gives exactly what the standard library gives."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from buildport.jsontext import dumps_indented

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
    from buildport.jsontext import _one_line

    assert _one_line(value) == json.dumps(value, ensure_ascii=False)
