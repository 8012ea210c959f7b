"""A rule's documentation as Markdown: what it finds and why, what to do, and for a source rule an example.

One text per rule, made from its row in the catalogues (:mod:`buildport.rules.source_rules`,
:mod:`buildport.rules.build_rules`): ``scripts/gen_rules_doc.py`` writes a source rule's as the body of
its section of ``docs/source-rules.md``, and the SARIF output gives every reported rule's as its
``help.markdown``, which GitHub code scanning shows beside an alert.
"""

from __future__ import annotations

from buildport.rules import build_rules, source_rules
from buildport.rules.build_rules import BuildRule
from buildport.rules.source_rules import SourceRule

#: The command that ports each kind of build file (``build`` rules are reported in all of them).
_PORT = {"cmake": "`buildport cmake --in-place`", "make": "`buildport make --in-place`",
         "python": "`buildport python --in-place`"}
_ANY_PORT = "`buildport cmake`, `buildport make` or `buildport python` (the one for the file, `--in-place`)"


def markdown(rule: str) -> str:
    """The documentation of any rule id an audit reports (empty for an id in neither catalogue)."""
    if rule in build_rules.BY_ID:
        return build_rule(build_rules.BY_ID[rule])
    if rule in source_rules.BY_ID:
        return source_rule(source_rules.BY_ID[rule])
    return ""


def source_rule(rule: SourceRule) -> str:
    """Its rationale, what to do, a before and after example, and where the fact comes from."""
    return (
        f"{rule.rationale}\n\n"
        f"**What to do.** {rule.suggestion}\n\n"
        f"Before:\n\n{_code(rule.before)}\n"
        f"After:\n\n{_code(rule.after)}\n"
        f"Source: {rule.source}.\n"
    )


def build_rule(rule: BuildRule) -> str:
    """Its rationale and what to do, which its ``fixable`` says: the port rewrites it, or a person does."""
    port = _PORT.get(rule.kind, _ANY_PORT)
    if rule.fixable == "yes":
        todo = f"{port} rewrites it, as `buildport migrate` does."
    elif rule.fixable == "varies":
        todo = f"Where a finding is auto-fixable, {port} rewrites it, as `buildport migrate` does; port the others " \
               "by hand, as their message says."
    else:
        todo = "Port it by hand, as each finding's message says: no rewrite settles it."
    return f"{rule.rationale}\n\n**What to do.** {todo}\n"


def _code(text: str) -> str:
    return f"```cuda\n{text.rstrip()}\n```\n"
