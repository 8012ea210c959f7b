"""The facts Makefiles give each other: what make reads together (a file and what it includes), combined
once for every command that reads Makefiles (port and audit alike), and kept in the cache by the
paths and hashes of the files each set is made of."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from buildport.cache.fileindex import FileIndex
from buildport.cache.store import Cache
from buildport.options import MakeFacts
from buildport.passes.includes import include_graph, include_targets, scopes
from buildport.pipeline.discovery import file_identity, include_words
from buildport.pipeline.pool import Workers
from buildport.syntax.errors import ParseError
from buildport.textio import InputError, SourceText

if TYPE_CHECKING:
    from buildport.passes.make_facts import FileFacts

#: The kind of work the cache keeps the facts of each set of files read together under.
SCOPE_FACTS = "make-scope-facts"


def may_include(source: SourceText, index: FileIndex | None) -> bool:
    """Whether a Makefile has an include line (or may have: its text is not read, and the cache's
    file index holds no words for it). The same answer on a warm run as on a cold one."""
    words = index.includes(source.digest) if index is not None else None
    if words is None and source.is_read:
        words = include_targets(source.text)
    return words is None or bool(words)


def makefile_facts(
    makefiles: list[tuple[str, SourceText]], words: dict[str, list[str]], cache: Cache | None = None,
    workers: Workers | None = None,
) -> dict[str, MakeFacts]:
    """The facts of each Makefile that make reads with others (see :func:`buildport.passes.includes.scopes`), by
    path, where they differ from what the file says alone; a Makefile that includes nothing of the others,
    and that none of them includes, or whose facts are its own, is read alone and is not in it.

    ``words``: the include lines of the files discovery read them for; the others' come from the
    cache's file index (by hash) or from their text. The facts of each set of files read together are
    kept in ``cache`` under their paths and hashes, so that a warm run reads none of the files. The
    files a set is made of are parsed by ``workers`` (in this process without).
    """
    index = cache.files if cache is not None else None
    paths = [path for path, _ in makefiles]
    lines: list[list[str]] = []
    for path, source in makefiles:
        found = words.get(path)
        if found is None:
            try:
                found = include_words(source, index)
            except InputError:
                found = []  # reported when its own turn comes
        lines.append(found)
    graph = include_graph(paths, lines, lambda i: makefiles[i][1].identity or file_identity(paths[i], None))
    sets = scopes(graph)
    made: dict[frozenset[int], tuple[MakeFacts, set[int]] | None] = {}  # scope → its facts, the members they change
    keys: dict[frozenset[int], str] = {}
    for scope in sets:
        if len(scope) > 1 and scope not in made:
            made[scope] = None
            if cache is not None:
                members = sorted(scope)
                keys[scope] = cache.key(SCOPE_FACTS, "", "", [[paths[j], makefiles[j][1].digest] for j in members])
                made[scope] = _stored_scope(cache.get(keys[scope]), members)
    unread = sorted({j for scope, found in made.items() if found is None for j in scope})
    parts = dict(zip(unread, _parts([(paths[j], makefiles[j][1]) for j in unread], workers)))
    out: dict[str, MakeFacts] = {}
    for i, scope in enumerate(sets):
        if len(scope) == 1:
            continue
        scoped = made[scope]
        if scoped is None:
            from buildport.passes.make_facts import scope_facts

            members = sorted(scope)
            facts = scope_facts(parts[j] for j in members)
            scoped = made[scope] = facts, {j for j in members if facts != scope_facts([parts[j]])}
            if cache is not None:
                cache.put(keys[scope], [*facts.as_json(), [members.index(j) for j in sorted(scoped[1])]])
        facts, changed = scoped
        if i in changed:
            out[paths[i]] = facts  # a file whose own facts are the scope's is read as alone
    return out


def _parts(files: list[tuple[str, SourceText]], workers: Workers | None) -> list["FileFacts | None"]:
    """What each file says on its own (None for one that cannot be read or parsed: reported when
    its own turn comes)."""
    if not files:
        return []  # every scope's facts were kept: the make parser is not loaded
    tasks: list[tuple[str, str | None]] = []
    for path, source in files:
        try:
            tasks.append((path, source.text))
        except InputError:
            tasks.append((path, None))
    if workers is None:
        return _parts_chunk(tasks, None)
    return workers.run(_parts_chunk, tasks, None)


def _parts_chunk(tasks: list[tuple[str, str | None]], _shared: Any) -> list["FileFacts | None"]:
    from buildport.passes.make_facts import file_facts
    from buildport.syntax.make import parse_make

    out: list[FileFacts | None] = []
    for path, text in tasks:
        try:
            out.append(None if text is None else file_facts(parse_make(text, path)))
        except (InputError, ParseError):
            out.append(None)
    return out


def _stored_scope(stored: Any, members: list[int]) -> tuple[MakeFacts, set[int]] | None:
    """What :func:`makefile_facts` kept for the files ``members``; None for a miss or a malformed entry."""
    try:
        *data, changed = stored
        return MakeFacts.from_json(data), {members[k] for k in changed}
    except (TypeError, ValueError, IndexError):
        return None
