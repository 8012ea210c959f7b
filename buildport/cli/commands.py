"""The ``buildport`` command line.

Exit codes (the same for every subcommand):

- 0: success; with ``--check``, nothing would change;
- 1: ``--check`` only: at least one file would change;
- 2: an input could not be processed (missing, binary, not valid CMake) or a
  write failed; nothing was written for that file. Also an internal error
  (a bug): one line, and a traceback only with ``--debug``.
"""

from __future__ import annotations

import gc
import os
import sys
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence

import click

from buildport import __version__
from buildport.rules.arch import DEFAULT_OFFLOAD_ARCH

if TYPE_CHECKING:  # the engine and its passes load only when a command runs (fast --version and --help)
    from buildport.audit import AuditReport
    from buildport.cache.store import Cache
    from buildport.config import Config
    from buildport.pipeline.ignore import Ignore
    from buildport.findings import Finding
    from buildport.result import Region
    from buildport.pipeline.outcomes import Run
    from buildport.textio import SourceText

EXIT_OK, EXIT_WOULD_CHANGE, EXIT_ERROR = 0, 1, 2
#: Allocations between two collections of the youngest generation during a command (Python's default: 700).
GC_THRESHOLD = 50_000
_DEBUG = "buildport.debug"


def _set_debug(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        ctx.meta[_DEBUG] = True  # meta is shared by the group and its subcommands


#: ``--debug``, accepted before and after the subcommand name.
_debug_option = click.option("--debug", is_flag=True, expose_value=False, callback=_set_debug,
                             help="On an internal error, show the traceback.")


class _Group(click.Group):
    """Turns an unexpected exception into a one-line internal error and exit 2 (``--debug`` re-raises)."""

    def invoke(self, ctx: click.Context) -> object:
        thresholds = gc.get_threshold()
        # A run makes many objects that live to its end (a source, result and outcome per file, the
        # cache's index): with the default thresholds the collector walks them again and again (a warm
        # run over CMake's tree: ~14% of its time). Reference counting frees nearly all garbage here.
        gc.set_threshold(GC_THRESHOLD, *thresholds[1:])
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except Exception as exc:
            if ctx.meta.get(_DEBUG):
                raise
            first = str(exc).splitlines()[0] if str(exc) else ""
            click.echo(f"buildport: internal error: {type(exc).__name__}: {first} (--debug shows a traceback)", err=True)
            sys.exit(EXIT_ERROR)
        finally:
            gc.set_threshold(*thresholds)


_ARCH_HELP = (f"AMD GPU targets, comma-separated (default: those of {','.join(DEFAULT_OFFLOAD_ARCH)} the HIP compiler "
              "knows, asked when the build configures).")


def _arch_list(_ctx: click.Context, _param: click.Parameter, value: str | None) -> tuple[str, ...]:
    if not value:
        return ()  # the defaults, narrowed by the build to what its compiler knows
    archs = tuple(a.strip() for a in value.replace(";", ",").split(",") if a.strip())
    bad = [a for a in archs if not a.startswith("gfx")]
    if bad:
        raise click.BadParameter(f"AMD targets look like gfx90a; got {', '.join(bad)}")
    return archs


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="buildport")
@_debug_option
def main() -> None:
    """Port the build system of a CUDA project to AMD ROCm/HIP.

    Exit codes: 0 success (with --check: nothing to change), 1 --check found
    changes, 2 an input could not be processed.
    """


def _cache_dir(_ctx: click.Context, _param: click.Parameter, value: str | None) -> Path | None:
    return Path(value) if value else None


#: ``--jobs``, ``--cache-dir`` and ``--no-cache``: how the files of a run are processed, never what comes out.
_run_options = (
    click.option("--jobs", "-j", type=click.IntRange(1), default=os.cpu_count() or 1, show_default="all cores",
                 help="Files processed in parallel (1: in this process)."),
    click.option("--cache-dir", callback=_cache_dir, default=None, metavar="DIR",
                 help="Where results of earlier runs are kept (default: $XDG_CACHE_HOME/buildport or "
                      "~/.cache/buildport)."),
    click.option("--no-cache", is_flag=True, help="Neither read nor write the cache."),
)


_config_option = click.option(
    "--config", "config_file", default=None, metavar="FILE", type=click.Path(dir_okay=False, path_type=str),
    help="The configuration file (default: buildport.toml, or pyproject.toml with [tool.buildport], in the folder "
         "that holds the paths given or above it, up to the project root).")


_exclude_options = (
    click.option("--exclude", metavar="REGEX", default=None,
                 help="Leave out of the walk the paths this regular expression finds (from the project root, "
                      "/-separated, folders ending in /), instead of those the .gitignore files name."),
    click.option("--extend-exclude", metavar="REGEX", default=None,
                 help="Leave these out too, beside what .gitignore (or --exclude) leaves out."),
    click.option("--force-exclude", metavar="REGEX", default=None,
                 help="Leave these out even where named on the command line (a pre-commit hook names every file)."),
)


def _options(*options: Callable[[Callable[..., None]], Callable[..., None]]) -> Callable[
        [Callable[..., None]], Callable[..., None]]:
    """The click options given, as one decorator (the first given is the first in ``--help``)."""
    def apply(function: Callable[..., None]) -> Callable[..., None]:
        for option in reversed(options):
            function = option(function)
        return function

    return apply


def _ignore(paths: Sequence[str], config: Config, exclude: str | None, extend_exclude: str | None,
            force_exclude: str | None) -> Ignore:
    """What the walks leave out: the .gitignore files, the exclusion options (given, else configured),
    under the project root of the folder that holds ``paths``."""
    from buildport.pipeline.ignore import ExcludeError, Ignore, pattern

    configured = config.chosen(_given("exclude", "extend-exclude", "force-exclude"))
    try:
        return Ignore(exclude=pattern("--exclude", configured.get("exclude", exclude)),
                      extend_exclude=pattern("--extend-exclude", configured.get("extend-exclude", extend_exclude)),
                      force_exclude=pattern("--force-exclude", configured.get("force-exclude", force_exclude)),
                      ).anchor(list(paths))
    except ExcludeError as exc:
        raise click.BadParameter(str(exc)) from None


def _configured(paths: Sequence[str], config_file: str | None) -> Config:
    """The project's configuration (``--config``, else found from ``paths``), its rule set made the one the
    run ports with; a file buildport cannot use ends the command (exit 2)."""
    from buildport import config as project_config
    from buildport.rules import ruleset

    try:
        config = project_config.for_paths(paths, config_file)
    except project_config.ConfigError as exc:
        click.echo(str(exc), err=True)
        sys.exit(EXIT_ERROR)
    ruleset.use(config.rules)
    return config


def _given(*names: str) -> frozenset[str]:
    """Which of the options (long names) the command line or the environment gave, whatever their value:
    click's parameter source, not a comparison with the default."""
    from click.core import ParameterSource

    ctx = click.get_current_context()
    defaulted = (None, ParameterSource.DEFAULT, ParameterSource.DEFAULT_MAP)
    return frozenset(name for name in names if ctx.get_parameter_source(name.replace("-", "_")) not in defaulted)


def _open_cache(cache_dir: Path | None, no_cache: bool) -> Cache | None:
    """The cache a command uses, or None with ``--no-cache``.

    The make parser's tables are kept in the same place (``parsers/`` inside it),
    or nowhere with ``--no-cache``; the variable reaches worker processes too.
    """
    if no_cache:
        os.environ["BUILDPORT_PARSER_CACHE"] = "0"
        return None
    from buildport.cache.store import Cache, default_dir

    if cache_dir is not None:
        os.environ["BUILDPORT_PARSER_CACHE"] = str(cache_dir / "parsers")
    return Cache(cache_dir or default_dir())


def _replayed(cache: Cache | None, command: str, options: dict[str, Any]) -> AbstractContextManager[None]:
    """Where the run may be a replay of an earlier one (see :mod:`buildport.cache.replay`): a run that
    writes nothing, with the cache and its file index in use and without ``--debug``."""
    from buildport.cache import replay

    if cache is None or cache.files is None or click.get_current_context().meta.get(_DEBUG) or not replay.enabled():
        return nullcontext()
    from buildport.cache.store import rules_fingerprint

    key = replay.key_of(rules_fingerprint(), command, options)
    return replay.session(replay.Memos(cache.root / replay.FOLDER), key, cache.files)


#: The options every rewriting subcommand shares.
_rewrite_options = _options(
    _debug_option,
    click.argument("paths", nargs=-1, required=True),
    click.option("--in-place", "-i", is_flag=True, help="Rewrite the files (atomically)."),
    click.option("--diff", "show_diff", is_flag=True, help="Print a unified diff; write nothing."),
    click.option("--check", is_flag=True, help="Exit 1 if any file would change; write nothing (with --diff: "
                 "print the diff too)."),
    click.option("--offload-arch", callback=_arch_list, default=None, metavar="LIST", help=_ARCH_HELP),
    click.option("--quiet", "-q", is_flag=True, help="Print no findings."),
    click.option("--verbose", "-v", is_flag=True, help="Print every finding, including what was rewritten."),
    _config_option,
    *_exclude_options,
    *_run_options,
)


@main.command()
@_rewrite_options
def make(paths: tuple[str, ...], in_place: bool, show_diff: bool, check: bool, offload_arch: tuple[str, ...],
         quiet: bool, verbose: bool, config_file: str | None, exclude: str | None,
         extend_exclude: str | None, force_exclude: str | None, jobs: int, cache_dir: Path | None,
         no_cache: bool) -> None:
    """Port GNU Makefiles (Makefile, makefile, GNUmakefile, *.mk, and what they include; - reads stdin).

    By default the ported text is printed. Exit codes: 0 success, 1 --check
    found changes, 2 an input could not be processed.
    """
    _rewrite("make", paths, in_place, show_diff, check, offload_arch, quiet, verbose, config_file,
             (exclude, extend_exclude, force_exclude), jobs, cache_dir, no_cache)


@main.command()
@_rewrite_options
def python(paths: tuple[str, ...], in_place: bool, show_diff: bool, check: bool, offload_arch: tuple[str, ...],
           quiet: bool, verbose: bool, config_file: str | None, exclude: str | None,
           extend_exclude: str | None, force_exclude: str | None, jobs: int, cache_dir: Path | None,
           no_cache: bool) -> None:
    """Port setup.py files that build PyTorch C++/CUDA extensions (torch.utils.cpp_extension; - reads stdin).

    The nvcc flags and CUDA libraries of each CUDAExtension are translated; the
    rest is reported. By default the ported text is printed. Exit codes: 0
    success, 1 --check found changes, 2 an input could not be processed.
    """
    _rewrite("python", paths, in_place, show_diff, check, offload_arch, quiet, verbose, config_file,
             (exclude, extend_exclude, force_exclude), jobs, cache_dir, no_cache)


def _with_config(config: Config, offload_arch: tuple[str, ...], jobs: int) -> tuple[tuple[str, ...], int]:
    """``--offload-arch`` and ``--jobs`` from the configuration where the command line did not give them."""
    configured = config.chosen(_given("offload-arch", "jobs"))
    if "offload-arch" in configured:
        offload_arch = config.offload_arch
    return offload_arch, int(configured.get("jobs", jobs))


def _rewrite(kind: str, paths: tuple[str, ...], in_place: bool, show_diff: bool, check: bool,
             offload_arch: tuple[str, ...], quiet: bool, verbose: bool, config_file: str | None,
             excludes: tuple[str | None, str | None, str | None], jobs: int, cache_dir: Path | None,
             no_cache: bool) -> None:
    """``buildport cmake``, ``buildport make`` and ``buildport python``: the configuration, the walk's exclusions (``excludes``:
    ``--exclude``, ``--extend-exclude``, ``--force-exclude``), then the run, replayed where it may be."""
    if in_place and (show_diff or check):
        raise click.UsageError("--in-place writes the files: it goes with neither --diff nor --check "
                               "(--check --diff prints the diff and exits 1 when a file would change)")
    config = _configured(paths, config_file)
    offload_arch, jobs = _with_config(config, offload_arch, jobs)
    ignore = _ignore(paths, config, *excludes)
    cache = _open_cache(cache_dir, no_cache)
    options = {"paths": list(paths), "diff": show_diff, "check": check, "offload_arch": list(offload_arch),
               "quiet": quiet, "verbose": verbose, "exclude": ignore.key(),
               "color": _color_wanted() if show_diff else None}
    with _replayed(None if in_place or "-" in paths else cache, kind, options):
        _rewrite_run(kind, paths, in_place, show_diff, check, offload_arch, quiet, verbose, ignore, jobs, cache)


def _rewrite_run(kind: str, paths: tuple[str, ...], in_place: bool, show_diff: bool, check: bool,
                 offload_arch: tuple[str, ...], quiet: bool, verbose: bool, ignore: Ignore, jobs: int,
                 cache: Cache | None) -> None:
    from buildport.options import Options
    from buildport.pipeline.discovery import included_makefiles, is_cmake_file, is_make_file, is_setup_py, iter_paths
    from buildport.pipeline.port import port_files

    wanted = {"cmake": is_cmake_file, "make": is_make_file, "python": is_setup_py}[kind]
    skipped: list[str] = []
    contents: dict[str, SourceText] = {}  # what discovery read, so that each file is read once
    index = cache.files if cache is not None else None
    stdin = sys.stdin.buffer.read() if "-" in paths else None
    files: Iterable[str]
    if kind != "make":  # ported as discovery finds them: see port_files
        files = iter_paths(list(paths), wanted, skipped, contents, index, ignore)
    outside: list[str] = []  # Makefiles the tree includes from outside the paths named: read, never written
    left_out: list[str] = []  # and those .gitignore or --exclude leave out: the same
    if kind == "make":
        roots = [os.path.realpath(p if os.path.isdir(p) else os.path.dirname(p) or ".") for p in paths if p != "-"]

        def walked() -> Iterator[str]:  # as the port asks for the files: its pool can start during the walk
            found = []
            for path in iter_paths(list(paths), wanted, skipped, contents, index, ignore):
                found.append(path)
                yield path
            for path in included_makefiles([f for f in found if f != "-"], contents, index):
                if not _within(path, roots):
                    outside.append(path)
                elif ignore.excluded(path):
                    left_out.append(path)
                yield path

        files = walked()
    run = port_files(files, Options(offload_arch), stdin, kind, jobs, cache, contents)
    if outside or left_out:  # their facts are in the run; they themselves are not the user's to rewrite here
        left = set(outside) | set(left_out)
        run.outcomes = [o for o in run.outcomes if o.path not in left]
        skipped += [f"{path}: included from outside the paths given: read for what it defines, not rewritten "
                    "(name it, or a folder that holds it, to port it)" for path in outside]
        skipped += [f"{path}: included, and left out by .gitignore or --exclude: read for what it defines, "
                    "not rewritten" for path in left_out]
    for note in skipped:
        click.echo(note, err=True)
    if not run.outcomes:  # a tree without build files: nothing to do, as black says of one without Python
        found = {"cmake": "CMake files", "make": "Makefiles", "python": "setup.py files"}[kind]
        click.echo(f"buildport: no {found} found; nothing to do", err=True)
        sys.exit(EXIT_OK)
    # what --in-place may write: below the folders named, or a file named itself (where it leads)
    writable = [p if os.path.isdir(p) else os.path.dirname(os.path.realpath(p)) for p in paths if p != "-"]
    sys.exit(_finish(run, in_place, show_diff, check, quiet, verbose, writable))


@main.command()
@_rewrite_options
def cmake(paths: tuple[str, ...], in_place: bool, show_diff: bool, check: bool, offload_arch: tuple[str, ...],
          quiet: bool, verbose: bool, config_file: str | None, exclude: str | None,
          extend_exclude: str | None, force_exclude: str | None, jobs: int, cache_dir: Path | None,
          no_cache: bool) -> None:
    """Port CMakeLists.txt / *.cmake files (or every one below a directory; - reads stdin).

    By default the ported text is printed. Exit codes: 0 success, 1 --check
    found changes, 2 an input could not be processed.
    """
    _rewrite("cmake", paths, in_place, show_diff, check, offload_arch, quiet, verbose, config_file,
             (exclude, extend_exclude, force_exclude), jobs, cache_dir, no_cache)


def _within(path: str, roots: list[str]) -> bool:
    """Whether ``path`` is below one of the folders ``roots`` (both resolved)."""
    from buildport.source.references import inside

    return any(inside(Path(path), Path(root)) for root in roots)


def _finish(run: Run, in_place: bool, show_diff: bool, check: bool, quiet: bool, verbose: bool,
            roots: Sequence[str] = ()) -> int:
    from buildport.pipeline.write import write_changes
    from buildport.textio import InputError, encode

    if click.get_current_context().meta.get(_DEBUG):
        for o in run.outcomes:
            if o.exception is not None:
                raise o.exception
    if not quiet:  # sorting every finding of a large run costs more than reading them from the cache
        _print_findings(run.findings, quiet, verbose)
    errors = list(run.errors)
    unwritten = 0
    if in_place:
        write_errors = write_changes(run, roots)
        unwritten = len(write_errors)
        errors += write_errors
        for o in run.outcomes:
            if o.path == "-" and o.result is not None:
                sys.stdout.buffer.write(encode(o.result.text))
    elif show_diff:
        color = _color_wanted()
        for o in run.changed:
            assert o.result is not None
            diff = _unified(o.result.path, o.result.original, o.result.text, o.result.regions)
            sys.stdout.write(_colored_diff(diff) if color else diff)
    elif not check:
        several = len(run.outcomes) > 1
        for o in run.outcomes:
            if o.result is None:
                continue
            try:
                text = o.result.text  # an unchanged file the cache answered is read only now
            except InputError as exc:
                errors.append(str(exc))
                continue
            if several:
                sys.stdout.write(f"# ==> {o.result.path} <==\n")
            sys.stdout.flush()
            sys.stdout.buffer.write(encode(text))
            sys.stdout.buffer.flush()
    for e in errors:
        click.echo(e, err=True)
    if check and run.changed and not quiet:
        for o in run.changed:
            click.echo(f"would rewrite {o.path}", err=True)
    if not quiet and (in_place or check or show_diff):
        click.echo(_summary(run, in_place, unwritten, len(errors)), err=True)
    if errors:
        return EXIT_ERROR
    if check and run.changed:
        return EXIT_WOULD_CHANGE
    return EXIT_OK


def _summary(run: Run, in_place: bool, unwritten: int, failed: int) -> str:
    """The closing line: ``3 files would be rewritten, 194 unchanged`` (``rewritten`` with --in-place: those
    written), and how many failed (``unwritten`` of them rewrites that could not be written)."""
    def files(n: int) -> str:
        return f"{n} file{'' if n == 1 else 's'}"

    changed = len(run.changed) - unwritten
    unchanged = sum(1 for o in run.outcomes if o.result is not None and not o.result.changed)
    parts = [f"{files(changed)} {'rewritten' if in_place else 'would be rewritten'}", f"{unchanged} unchanged"]
    if failed:
        parts.append(f"{failed} failed")
    return ", ".join(parts)


def _diff_names(path: str) -> tuple[str, str]:
    """The ``---``/``+++`` names of a file's diff: ``a/`` and ``b/`` before its path from the working folder
    (``../x`` and ``/abs/x`` below it made plain, so that ``git apply`` takes the diff there), else its
    absolute path on both lines (a file outside the working folder)."""
    absolute = os.path.abspath(path)
    relative = os.path.relpath(absolute, os.getcwd())
    if relative == os.pardir or relative.startswith(os.pardir + os.sep) or os.path.isabs(relative):
        return absolute, absolute
    name = relative.replace(os.sep, "/")
    return f"a/{name}", f"b/{name}"


def _unified(path: str, old: str, new: str, regions: list[Region] | None) -> str:
    from buildport.report.linediff import unified

    a, b = _diff_names(path)
    out = []
    for line in unified(old, new, regions, a, b):
        out.append(line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def _colored_diff(diff: str) -> str:
    """A unified diff with git's colours: file headers bold, hunk headers cyan, removed lines red, added green."""
    out = []
    for line in diff.splitlines(keepends=True):
        body, end = line.rstrip("\r\n"), line[len(line.rstrip("\r\n")):]
        if line.startswith(("--- ", "+++ ")):
            out.append(click.style(body, bold=True) + end)
        elif line.startswith("@@"):
            out.append(click.style(body, fg="cyan") + end)
        elif line.startswith("-"):
            out.append(click.style(body, fg="red") + end)
        elif line.startswith("+"):
            out.append(click.style(body, fg="green") + end)
        else:
            out.append(line)
    return "".join(out)


def _print_findings(findings: list[Finding], quiet: bool, verbose: bool) -> None:
    if quiet:
        return
    from buildport.findings import Severity

    for f in findings:
        if verbose or f.severity >= Severity.WARNING:
            click.echo(f.format(), err=True)


@main.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--format", "output_format", type=click.Choice(["text", "json", "sarif", "github"]), default="text",
              show_default=True, help="text for people; json (schema buildport/schemas/audit-v1.json); sarif 2.1.0; "
              "github: GitHub Actions annotations.")
@click.option("--fail-on", type=click.Choice(["info", "warning", "error"]), default="warning", show_default=True,
              help="Exit 1 when a finding of this severity or a higher one remains; a finding `buildport "
                   "cmake`/`make` would fix (CUDA left in a build file) counts as a warning.")
@click.option("--select", default="", metavar="RULES", help="Report only these rule ids or id prefixes (comma list).")
@click.option("--ignore", default="", metavar="RULES", help="Do not report these rule ids or id prefixes (comma list).")
@click.option("--color/--no-color", default=None,
              help="Colour the text output (default: when stdout is a terminal; NO_COLOR turns it off, FORCE_COLOR on).")
@click.option("--quiet", "-q", is_flag=True, help="Text output: the totals alone.")
@click.option("--verbose", "-v", is_flag=True, help="Text output: name every file audited, with findings or not.")
@_options(_config_option, *_exclude_options, *_run_options)
def audit(paths: tuple[str, ...], output_format: str, fail_on: str, select: str, ignore: str,
          color: bool | None, quiet: bool, verbose: bool, config_file: str | None, exclude: str | None,
          extend_exclude: str | None, force_exclude: str | None, jobs: int, cache_dir: Path | None,
          no_cache: bool) -> None:
    """List every CUDA dependency in build files and sources; writes nothing.

    PATHS are directories (walked; hidden directories and build trees skipped)
    or files (CMake, Makefiles, *.mk, .cu/.cuh and C/C++ sources; other files
    are skipped, so a pre-commit hook can pass every staged file).

    Exit codes: 0 no finding at or above --fail-on; 1 findings at or above it
    (auto-fixable findings count as warnings: CUDA left that the port rewrites);
    2 usage error or an input that could not be read or parsed.
    """
    from buildport.audit import RuleFilter, UsageError, audit as run_audit

    try:
        rules = RuleFilter.parse(select, ignore)
    except UsageError as exc:
        raise click.UsageError(str(exc)) from None
    config = _configured(paths, config_file)
    _, jobs = _with_config(config, (), jobs)
    walk = _ignore(paths, config, exclude, extend_exclude, force_exclude)  # (--ignore is the rules')
    cache = _open_cache(cache_dir, no_cache)
    options = {"paths": list(paths), "format": output_format, "fail_on": fail_on, "select": select,
               "ignore": ignore, "color": color, "verbosity": verbose - quiet, "exclude": walk.key(),
               "color_env": [bool(os.environ.get("NO_COLOR")), bool(os.environ.get("FORCE_COLOR"))]}
    with _replayed(cache, "audit", options):
        _audit_run(run_audit(paths, rules, jobs, cache, walk), output_format, fail_on, color, verbose - quiet)


def _color_wanted() -> bool:
    """Colour by the conventions: ``NO_COLOR`` (set, not empty) turns it off, ``FORCE_COLOR`` on (a CI log
    that shows colours), else only on a terminal."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return sys.stdout.isatty()


def _audit_run(report: AuditReport, output_format: str, fail_on: str, color: bool | None, verbosity: int = 0) -> None:
    from buildport.findings import Severity
    from buildport.report.render import render_github, render_json, render_sarif, render_text

    if output_format == "json":
        click.echo(render_json(report), nl=False)
    elif output_format == "github":
        click.echo(render_github(report), nl=False)
    elif output_format == "sarif":
        click.echo(render_sarif(report), nl=False)
    else:
        use_color = _color_wanted() if color is None else color
        click.echo(render_text(report, use_color, verbosity), nl=False, color=use_color)
    for error in report.errors:
        click.echo(error, err=True)
    if report.errors:
        sys.exit(EXIT_ERROR)
    sys.exit(1 if report.fails(Severity[fail_on.upper()]) else EXIT_OK)


@main.command()
@click.argument("directory", type=click.Path(file_okay=False, path_type=str))
@click.option("--out", "out", default=None, metavar="DIR2", help="Migrate a copy in DIR2; DIRECTORY stays as it is.")
@click.option("--in-place", "-i", is_flag=True, help="Migrate DIRECTORY itself (refused on a dirty git tree).")
@click.option("--force", is_flag=True, help="With --in-place: go ahead on a dirty git work tree.")
@click.option("--dry-run", is_flag=True, help="Print the plan and the diff; write nothing (make's own dry run "
              "and CMake's configure still run, in a scratch copy: see --no-make-dry-run, --no-cmake-configure).")
@click.option("--offload-arch", callback=_arch_list, default=None, metavar="LIST",
              help=_ARCH_HELP)
@click.option("--hipify", "hipify", default=None, metavar="PATH", help="The hipify engine to run.")
@click.option("--hipify-arg", "hipify_args", multiple=True, metavar="ARG",
              help="An argument for the engine, given before each file; repeat for more (hipify-perl's -roc, "
                   "hipify-clang's -p build/ for a compile database).")
@click.option("--rename-sources", type=click.Choice(["keep", "hip"]), default="keep", show_default=True,
              help="Keep .cu names (HIP compiles them once the build says so) or rename them to .hip.")
@click.option("--jobs", "-j", type=click.IntRange(1), default=os.cpu_count() or 1, show_default="all cores",
              help="Parallel hipify runs.")
@click.option("--keep-cuda", is_flag=True,
              help="A dual build: leave every source as it is and make the build files pick the GPU runtime "
                   "(GPU_RUNTIME=CUDA, the default, or HIP); a folder of headers (hip-compat/) maps the CUDA "
                   "names the sources use for the HIP build.")
@click.option("--no-make-dry-run", "no_make_dry_run", is_flag=True,
              help="Find the sources by reading the build files only; by default make's dry run (make -n, in a "
                   "scratch copy: it runs the Makefiles' $(shell ...) calls) is asked too.")
@click.option("--no-cmake-configure", "no_cmake_configure", is_flag=True,
              help="Do not ask CMake: by default each top-level CMakeLists.txt is configured with nvcc in a "
                   "scratch copy, and CMake's File API lists every target's sources.")
@click.option("--engine-timeout", type=click.FloatRange(min=0, min_open=True), default=300, show_default=True,
              metavar="SECONDS", help="How long the hipify engine may take over one file (it is then killed, "
              "with what it started, and the file is listed as not converted).")
@click.option("--quiet", "-q", is_flag=True, help="Print only errors.")
@click.option("--verbose", "-v", is_flag=True, help="Print every finding that needs a person.")
@_options(_config_option, *_exclude_options)
def migrate(directory: str, out: str | None, in_place: bool, force: bool, dry_run: bool,
            offload_arch: tuple[str, ...], hipify: str | None, hipify_args: tuple[str, ...], rename_sources: str,
            jobs: int, keep_cuda: bool, no_make_dry_run: bool, no_cmake_configure: bool, engine_timeout: float, quiet: bool,
            verbose: bool, config_file: str | None, exclude: str | None, extend_exclude: str | None,
            force_exclude: str | None) -> None:
    """Migrate a CUDA project: hipify the sources its build uses, port its build files, and
    write MIGRATION.md and migration.json (what changed, what a person still has to do).

    Without --out or --in-place: in place in a git work tree, else into DIRECTORY-hip.
    Exit codes: 0 success (also: nothing left to change), 1 migrated, but sources the
    build compiles could not be converted (listed in MIGRATION.md), 2 the migration
    could not be done (nothing was written).
    """
    from buildport.cli.migrate import run_migration

    config = _configured([directory], config_file)
    sys.exit(run_migration(directory, out, in_place, force, dry_run, offload_arch, hipify, rename_sources,
                           jobs, quiet, verbose, ask=frozenset(
                               tool for tool, off in (("make", no_make_dry_run), ("cmake", no_cmake_configure))
                               if not off), engine_timeout=engine_timeout,
                           config=config, given=_given("offload-arch", "hipify", "rename-sources", "jobs"),
                           ignore=_ignore([directory], config, exclude, extend_exclude, force_exclude),
                           engine_args=tuple(config.chosen(_given("hipify-args")).get("hipify-args", hipify_args)),
                           keep_cuda=keep_cuda))
