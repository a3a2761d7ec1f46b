"""Which lines of a batch one shard of it serves (`batch --shard K/N`), so that N machines can share it.

Each shard reads the whole input and draws the same partition, so the shards need not talk: the
lines that touch one file, where any of them writes it, fall in one shard, where they keep their
order, and the shards write disjoint files. Their outputs (each reply carries its input line)
merged in line order are then one batch's output, as long as every shard starts from the same
project files (the same commit checked out). Files are named as the fleet's router names them
(fleet.py Router: the same rule as the pool's ordering); files named inside property values are
not tracked, in a shard as in one batch.

A line whose files cannot be told before the batch runs (a uid:// that no file has yet, which only
a file an earlier line makes could answer) joins every line before it: it runs after them, as the
fleet's barrier does. A line that may change any file of its project (a move, which rewrites what
names the file) puts every line on that project in its shard. A line that names a project that is
not one, or is no request at all, touches nothing and may go anywhere.

Groups of lines go to shards largest first, each to the shard with the fewest lines so far (the
lowest-numbered on a tie), so shards get about as many lines each when no group is large.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from gdres.requests.request import WRITE
from gdres.serving.fleet import Router


class _Groups:
    """Lines joined into groups (union-find, by size, with path halving)."""

    def __init__(self, count: int) -> None:
        self._parent = list(range(count))
        self._size = [1] * count

    def find(self, line: int) -> int:
        parent = self._parent
        while parent[line] != line:
            parent[line] = parent[parent[line]]
            line = parent[line]
        return line

    def join(self, one: int, other: int) -> None:
        one, other = self.find(one), self.find(other)
        if one == other:
            return
        if self._size[one] < self._size[other]:
            one, other = other, one
        self._parent[other] = one
        self._size[one] += self._size[other]


def parse_shard(text: str, index_from_env: str | None) -> tuple[int, int]:
    """`K/N` (K from 1 to N), or `N` with K from a Kubernetes Indexed Job's JOB_COMPLETION_INDEX
    (`index_from_env`, counted from 0). Raises ValueError with what is wrong."""
    shard, slash, count = text.partition("/")
    if not slash:
        shard, count = "", text
    try:
        total = int(count)
    except ValueError:
        raise ValueError(f"--shard takes K/N or N, not {text!r}") from None
    if total < 1:
        raise ValueError(f"--shard {text}: N must be at least 1")
    if slash:
        try:
            number = int(shard)
        except ValueError:
            raise ValueError(f"--shard takes K/N or N, not {text!r}") from None
    elif index_from_env is None:
        raise ValueError(f"--shard {text} takes K from JOB_COMPLETION_INDEX, which is not set: give --shard K/{text}")
    else:
        try:
            number = int(index_from_env) + 1
        except ValueError:
            raise ValueError(f"JOB_COMPLETION_INDEX is {index_from_env!r}, not a number") from None
    if not 1 <= number <= total:
        raise ValueError(f"--shard {number}/{total}: K runs from 1 to {total}")
    return number, total


def shard_lines(texts: Sequence[str], shard: int, count: int, cwd: str) -> list[int]:
    """The input lines (numbered from 1) that shard `shard` of `count` serves, in input order."""
    router = Router(cwd)
    groups = _Groups(len(texts))
    touching: dict[str, list[int]] = {}
    written: set[str] = set()
    joined = 0
    """The lines before this one are in one group (a barrier joined them)."""
    by_project: dict[str, list[int]] = {}
    moved_in: set[str] = set()
    """Projects a line may change anywhere in (a move): each has all its lines in one group."""
    for line, text in enumerate(texts):
        raw = _object(text)
        if raw is None:
            continue
        root = router.root(raw)
        if root is not None:
            by_project.setdefault(root, []).append(line)
            if router.reaches_project(raw):
                moved_in.add(root)
        files = router.files(raw)
        if files is None:
            if router.root(raw) is None:
                continue  # refused for its project, wherever it runs
            for earlier in range(max(joined - 1, 0), line):
                groups.join(earlier, line)
            joined = line + 1
            continue
        for key, role in files:
            touching.setdefault(key, []).append(line)
            if role == WRITE:
                written.add(key)
    for root in moved_in:
        first, *rest = by_project[root]
        for line in rest:
            groups.join(first, line)
    for key in written:
        first, *rest = touching[key]
        for line in rest:
            groups.join(first, line)
    members: dict[int, list[int]] = {}
    for line in range(len(texts)):
        members.setdefault(groups.find(line), []).append(line)
    loads = [0] * count
    mine: list[int] = []
    for group in sorted(members.values(), key=lambda lines: (-len(lines), lines[0])):
        least = loads.index(min(loads))
        loads[least] += len(group)
        if least == shard - 1:
            mine.extend(group)
    return sorted(line + 1 for line in mine)


def _object(text: str) -> dict[str, Any] | None:
    try:
        raw = json.loads(text)
    except ValueError:
        return None
    return raw if isinstance(raw, dict) else None
