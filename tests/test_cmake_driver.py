"""The CMake driver hands each pass the commands its ``visits`` names, and owns the skipping."""

from __future__ import annotations

from buildport import engine
from buildport.passes.base import NO_COMMANDS, Context, Facts, Visits, gather_file_facts, handed, run_passes
from buildport.passes.cmake_edit import Edits
from buildport.options import Options
from buildport.prescan import disabled
from buildport.rules.cmake import BUILTIN_COMMANDS
from buildport.syntax.cmake import Command, parse_cmake

TEXT = """\
project(demo LANGUAGES CXX CUDA)
set(FLAGS -O2)
set(LIBS CUDA::cublas)
add_executable(app main.cu)
add_executable(host main.cpp ${MORE})
target_compile_options(app PRIVATE -O3)
target_link_libraries(app ${LIBS})
add_custom_target(run COMMAND ${PROFILER} ./app)
my_function(app)
my_function(${SOURCES})
"""


def context(text: str = TEXT) -> Context:
    tree = parse_cmake(text, "CMakeLists.txt")
    ctx = Context("CMakeLists.txt", tree, Options(), Edits(tree))
    gather_file_facts(ctx)
    return ctx


def names(commands: list[Command]) -> list[str]:
    return [f"{c.identifier}:{c.arguments()[0].value if c.arguments() else ''}" for c in commands]


def test_triggered_visits_hand_only_commands_with_a_rule_word() -> None:
    ctx = context()
    assert names(handed(ctx, Visits())) == ["project:demo", "set:LIBS", "add_executable:app"]
    assert names(handed(ctx, Visits(frozenset({"set"})))) == ["set:LIBS"]


def test_untriggered_visits_hand_every_command_of_their_names_in_order() -> None:
    ctx = context()
    assert names(handed(ctx, Visits(frozenset({"set", "add_executable"}), triggered=False))) == [
        "set:FLAGS", "set:LIBS", "add_executable:app", "add_executable:host"]


def test_always_and_variables_and_skips() -> None:
    ctx = context()
    flags = handed(ctx, Visits(always=frozenset({"target_compile_options"})))
    assert names(flags) == ["project:demo", "set:LIBS", "add_executable:app", "target_compile_options:app"]
    sources = handed(ctx, Visits(variables=True, skips=BUILTIN_COMMANDS - {"add_executable"}))
    # the project's functions and add_executable, with a rule word or a variable (my_function(app) has neither)
    assert names(sources) == ["add_executable:app", "add_executable:host", "my_function:${SOURCES}"]
    assert handed(ctx, NO_COMMANDS) == []


def test_every_when_a_fact_holds_hands_every_command_of_the_names() -> None:
    ctx = context()
    runners = Visits(frozenset({"add_custom_target"}), every_when=lambda facts: bool(facts.programs))
    assert handed(ctx, runners) == []
    ctx.facts.programs["PROFILER"] = "nsys"
    assert names(handed(ctx, runners)) == ["add_custom_target:run"]


def test_with_skipping_off_every_command_of_the_names_is_handed() -> None:
    ctx = context()
    with disabled():
        fresh = context()
        assert names(handed(fresh, Visits(frozenset({"set"})))) == ["set:FLAGS", "set:LIBS"]
        assert len(handed(fresh, Visits())) == len(fresh.tree.commands())
    assert names(handed(ctx, Visits(frozenset({"set"})))) == ["set:LIBS"]


def test_a_command_an_earlier_pass_removed_is_not_handed_to_a_later_one() -> None:
    ctx = context()
    seen: list[list[str]] = []

    class Remove:
        description = "removes set(LIBS)"
        visits = Visits(frozenset({"set"}))

        def run(self, ctx: Context, commands: list[Command]) -> None:
            seen.append(names(commands))
            for command in commands:
                ctx.edits.remove_command(command)

    run_passes(ctx, [Remove(), Remove()])
    assert seen == [["set:LIBS"], []]


def test_every_pass_declares_what_it_visits() -> None:
    """Each pass names real commands (lower-case identifiers) and a one-line description."""
    for rewrite in engine.CMAKE_PASSES:
        visits = rewrite.visits
        assert isinstance(visits, Visits), type(rewrite).__name__
        assert rewrite.description and "\n" not in rewrite.description
        for name in (visits.names or frozenset()) | visits.always | visits.skips:
            assert name == name.lower() and name.replace("_", "").isalnum(), (type(rewrite).__name__, name)
    assert isinstance(Facts().programs, dict)


def test_a_pass_comes_after_the_passes_whose_facts_it_reads() -> None:
    """ToolCommands reads the programs FindPrograms found; MinimumVersion, FindHip and Architectures read
    where Languages (or FindPackages) introduced HIP; Prelude reads whether any pass used ROCM_PATH."""
    order = [type(rewrite).__name__ for rewrite in engine.CMAKE_PASSES]
    assert order.index("FindPrograms") < order.index("ToolCommands")
    for reader in ("MinimumVersion", "FindHip", "Architectures"):
        assert order.index("Languages") < order.index(reader) and order.index("FindPackages") < order.index(reader)
    assert order[-1] == "Prelude"
