"""The ``buildport migrate`` command: modes, safety checks and what it prints."""

from __future__ import annotations

import functools
import os
import shutil
import sys
from pathlib import Path

import click

from buildport import config as project_config
from buildport.config import Config, ConfigError
from buildport.findings import Severity
from buildport.source.hipify import ENGINE_TIMEOUT, EngineMissing, find_engine
from buildport.migrate.plan import (
    ASK_ALL, JOURNAL, MigrationError, Plan, apply, apply_renames, check_engine, completed, copy_tree,
    finish_interrupted, git_state, half_made, make_plan, outside, renames, reports,
)
from buildport.migrate import keep
from buildport.options import Options
from buildport.pipeline.ignore import Ignore
from buildport.rules import ruleset
from buildport.source.references import inside
from buildport.syntax.errors import ParseError
from buildport.textio import InputError

EXIT_OK, EXIT_PARTLY, EXIT_ERROR = 0, 1, 2


def run_migration(directory: str, out: str | None, in_place: bool, force: bool, dry_run: bool,
                  offload_arch: tuple[str, ...], hipify: str | None, rename_sources: str, jobs: int,
                  quiet: bool, verbose: bool, ask: frozenset[str] = ASK_ALL,
                  engine_timeout: float = ENGINE_TIMEOUT, config: Config | None = None,
                  given: frozenset[str] = project_config.OPTION_KEYS, ignore: Ignore | None = None,
                  engine_args: tuple[str, ...] = (), keep_cuda: bool = False) -> int:
    """``given``: the options the caller chose (the others come from the project's configuration,
    ``config``, found from ``directory`` when not given). ``ignore``: what the walks leave out (the
    .gitignore files when not given). ``engine_args``: given to the engine before each file."""
    ignore = Ignore().anchor([directory]) if ignore is None else ignore
    root = Path(directory)
    if not root.is_dir():
        click.echo(f"{directory}: error: not a directory", err=True)
        return EXIT_ERROR
    if in_place and out:
        click.echo("error: choose --out or --in-place, not both", err=True)
        return EXIT_ERROR
    git = git_state(root)
    if not in_place and out is None:
        if git.tree:
            in_place = True
        else:
            out = str(root.resolve().with_name(root.resolve().name + "-hip"))
    if in_place and git.tree and not force and not dry_run:
        if git.unknown:
            click.echo(f"{directory}: error: cannot tell whether the git work tree has uncommitted changes: "
                       f"{git.unknown}; migrate into a copy with --out DIR, or pass --force", err=True)
            return EXIT_ERROR
        if git.dirty:
            interrupted = " (an interrupted migration: --force finishes it)" if (root / JOURNAL).exists() else ""
            click.echo(f"{directory}: error: the git work tree has uncommitted changes{interrupted}; commit or "
                       "stash them, or pass --force", err=True)
            return EXIT_ERROR
    try:
        if config is None:
            config = project_config.for_paths([directory])
        offload_arch, hipify, rename_sources, jobs = _with_config(config, root, offload_arch, hipify, rename_sources,
                                                                  jobs, given)
    except ConfigError as exc:
        click.echo(str(exc), err=True)
        return EXIT_ERROR
    ruleset.use(config.rules)
    try:
        find_engine(hipify)
    except EngineMissing as exc:
        click.echo(f"error: {exc}", err=True)
        return EXIT_ERROR
    if keep_cuda and rename_sources == "hip":
        click.echo("error: --keep-cuda leaves every source as it is: it cannot rename them (--rename-sources hip)",
                   err=True)
        return EXIT_ERROR
    options = Options(offload_arch, keep_cuda=keep_cuda)
    if dry_run:
        return _dry_run(root, options, hipify, jobs, rename_sources, ask, engine_timeout, ignore, engine_args)
    target = root if in_place else Path(out or "")
    created = False
    try:
        not_copied: list[tuple[str, str]] = []
        if in_place:
            finished = finish_interrupted(target)
            if finished and not quiet:
                click.echo(f"{target}: {finished}")
        else:
            if half_made(target):
                click.echo(f"{target}: removed the half-made copy an interrupted run left", err=True)
            created = not target.exists()
            not_copied = copy_tree(root, target, ignore)
        walk = ignore if in_place else ignore.for_copy(str(target), str(root))  # the copy decided as its original
        plan = _plan(target, options, hipify, jobs, quiet, None if in_place else root, ask, engine_timeout, walk,
                     engine_args)
        plan.skipped += not_copied
        check_engine(plan)
        mapping = renames(plan) if rename_sources == "hip" else {}
        if not plan.changes and not mapping and not keep.pending_files(plan):
            if not in_place:
                completed(target)
            if not quiet:
                click.echo(f"{target}: already migrated; nothing to change")
            return EXIT_OK
        apply_renames(plan, mapping)
        apply(plan, reports(plan, options))
        if not in_place:
            completed(target)
    except KeyboardInterrupt:
        if created:
            shutil.rmtree(target, ignore_errors=True)  # an interrupted copy leaves nothing to block the rerun
        raise
    except (MigrationError, ParseError, InputError, OSError) as exc:
        if created:
            shutil.rmtree(target, ignore_errors=True)
        if isinstance(exc, OSError):  # a report or a renamed source that could not be written (a full disk)
            exc = MigrationError(f"{exc.filename or target}: cannot write: {exc.strerror or exc}"
                                 + ("" if created else " (the files written before it stay written; "
                                    "a rerun continues)"))
        click.echo(f"error: {exc}", err=True)
        return EXIT_ERROR
    if not quiet:
        _summary(plan, target, verbose)
    failed = sum(1 for f in plan.findings if f.rule == "hipify-failed")
    if failed:
        click.echo(f"error: {failed} of the sources the build compiles could not be converted "
                   "(see MIGRATION.md, What a person still has to do)", err=True)
        return EXIT_PARTLY
    return EXIT_OK


def _with_config(config: Config, root: Path, offload_arch: tuple[str, ...], hipify: str | None, rename_sources: str,
                 jobs: int, given: frozenset[str]) -> tuple[tuple[str, ...], str | None, str, int]:
    """Options the caller did not give (``given``: whatever their value) come from the project's configuration."""
    chosen = config.chosen(given)
    if "offload-arch" in chosen:
        offload_arch = config.offload_arch
    if "hipify" in chosen:
        hipify = _configured_engine(str(chosen["hipify"]), root, config.path)
    if "rename-sources" in chosen:
        rename_sources = str(chosen["rename-sources"])
    if "jobs" in chosen:
        jobs = int(chosen["jobs"])
    return offload_arch, hipify, rename_sources, jobs


def _plan(target: Path, options: Options, hipify: str | None, jobs: int, quiet: bool, original: Path | None,
          ask: frozenset[str], engine_timeout: float, ignore: Ignore,
          engine_args: tuple[str, ...] = ()) -> Plan:  # fmt: skip
    """The plan, with the conversion's progress: none with ``quiet``, a plain line now and then in a CI log,
    a bar on a terminal."""
    plan = functools.partial(make_plan, target, options, hipify, jobs, original=original, ask=ask,
                             engine_timeout=engine_timeout, ignore=ignore, engine_args=engine_args)
    if quiet:
        return plan()
    if not sys.stderr.isatty():
        return plan(progress=_LogProgress())
    with click.progressbar(length=1, label="hipify", file=sys.stderr, show_pos=True) as bar:

        def step(done: int, total: int) -> None:
            bar.length = total  # known once the sources are: the bar and its ETA count files
            bar.update(done - bar.pos)

        return plan(progress=step)


class _LogProgress:
    """``hipify: 12/187 files`` on stderr every :attr:`EVERY` seconds of a long conversion, and at its end
    (a conversion shorter than that says nothing)."""

    EVERY = 10.0

    def __init__(self) -> None:
        import time

        self.clock = time.monotonic
        self.last = self.clock()
        self.said = False

    def __call__(self, done: int, total: int) -> None:
        now = self.clock()
        if now - self.last >= self.EVERY or done == total and self.said:
            self.last, self.said = now, True
            click.echo(f"hipify: {done}/{total} files", err=True)


def _configured_engine(value: str, root: Path, source: Path | None) -> str:
    """The engine a project's configuration names, as a path; :class:`ConfigError` if it lies inside the
    project. Migrating a repository must not run its code: a program the project ships is run only when
    the user names it with ``--hipify``. A relative path is the configuration file's folder's (the project
    root's, for a file there), a bare name is looked up on PATH (not in the working directory)."""
    if "/" not in value and os.sep not in value:
        found = shutil.which(value)
        candidate = Path(found).absolute() if found else None
    else:
        candidate = Path(value) if os.path.isabs(value) else (source.parent if source else root) / value
    if candidate is None:
        return value  # not found: find_engine says so
    if inside(candidate, root):
        raise ConfigError(f"{source or root}: error: hipify = {value!r} is a program inside the project; "
                          f"migrate does not run a project's own code (name it with --hipify {candidate} to run it)")
    return str(candidate)


def _dry_run(root: Path, options: Options, hipify: str | None, jobs: int, rename_sources: str,
             ask: frozenset[str], engine_timeout: float, ignore: Ignore,
             engine_args: tuple[str, ...] = ()) -> int:  # fmt: skip
    try:
        plan = make_plan(root, options, hipify, jobs, ask=ask, engine_timeout=engine_timeout, ignore=ignore,
                         engine_args=engine_args)
        check_engine(plan)
        mapping = renames(plan) if rename_sources == "hip" else {}
    except (MigrationError, ParseError, InputError) as exc:
        click.echo(f"error: {exc}", err=True)
        return EXIT_ERROR
    click.echo("Plan (dry run: nothing is written)")
    for change in sorted(plan.changes, key=lambda c: str(c.path)):
        verb = f"rewrite ({change.kind})" if change.kind != "source" else "hipify" if change.hipify else "fix"
        click.echo(f"  {verb:18} {plan.relative(change.path)}")
    pending = keep.pending_files(plan)
    for path in sorted(pending):
        click.echo(f"  {'write (keep-cuda)':18} {plan.relative(path)}")
    for old, new in mapping.items():
        click.echo(f"  {'rename':18} {plan.relative(old)} -> {plan.relative(new)}")
    for path in plan.unreferenced:
        click.echo(f"  {'not referenced':18} {plan.relative(path)}")
    for away, named_in, line in outside(plan):
        click.echo(f"  {'outside, not done':18} {away} (named in {named_in}:{line})")
    from buildport.report.linediff import unified  # only a dry run prints diffs

    for change in plan.changes:
        name = plan.relative(change.path)
        sys.stdout.writelines(unified(change.source.text, change.new_text, change.regions, f"a/{name}", f"b/{name}"))
    for path, text in sorted(pending.items()):  # the compatibility folder: new files
        sys.stdout.writelines(unified("", text, None, "/dev/null", f"b/{plan.relative(path)}"))
    return EXIT_OK


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _summary(plan: Plan, target: Path, verbose: bool) -> None:
    reported = plan.reported()
    sources = sum(1 for c in reported if c.kind == "source")
    hipified = sum(1 for c in reported if c.hipify is not None)
    builds = len(reported) - sources
    human = [f for f in plan.findings if f.severity >= Severity.WARNING]
    count = len(plan.sources.outside)
    away = f", {count} outside {'path' if count == 1 else 'paths'} left alone" if count else ""
    fixes = sum(sum(c.fixes.values()) for c in reported)
    fixed = f", {_count(fixes, 'leftover')} of hipify fixed" if fixes else ""
    left = len(plan.skipped)
    skipped = f", {left} {'file' if left == 1 else 'files'} skipped (listed under Skipped)" if left else ""
    need = f"{len(human)} finding{' needs' if len(human) == 1 else 's need'} a person"
    if plan.keep_cuda:
        click.echo(f"{target}: sources left as they are, {_count(builds, 'build file')} made dual (GPU_RUNTIME=CUDA or "
                   f"HIP), {_count(plan.compat_names, 'CUDA name')} mapped in hip-compat/, {need}{away}{skipped} "
                   "(see MIGRATION.md)")
    else:
        click.echo(f"{target}: {_count(hipified, 'source')} hipified{fixed}, {_count(builds, 'build file')} rewritten, "
                   f"{need}{away}{skipped} (see MIGRATION.md)")
    if verbose:
        for finding in human:
            click.echo(finding.format(), err=True)
