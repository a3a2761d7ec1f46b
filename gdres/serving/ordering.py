"""Which servers have unfinished requests on each file: the one rule that keeps same-file requests in order.

A server (an engine slot of the pool, or a bridge process of a fleet) serves its requests one after
the other, so two requests that touch the same file keep their order when they go to the same one.
A request that writes a file must follow every unfinished request touching that file; a request
that only reads it must follow the unfinished writes of it (reads of one file may overlap).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Generic, TypeVar

from gdres.requests.request import WRITE

S = TypeVar("S")

Files = Iterable[tuple[str, int]]
"""A request's files: (the file's identity, READ or WRITE)."""


class FileUses(Generic[S]):
    """The unfinished requests of each file, counted per server and role."""

    def __init__(self) -> None:
        self._uses: dict[str, dict[S, list[int]]] = {}

    def followed(self, files: Files) -> set[S]:
        """The servers a new request on `files` must follow: it may go to one of them only once
        every other one has finished its part."""
        after: set[S] = set()
        for key, role in files:
            for server, uses in self._uses.get(key, {}).items():
                if role == WRITE or uses[WRITE]:
                    after.add(server)
        return after

    def add(self, files: Files, server: S) -> None:
        """Count a request on `files` sent to `server`."""
        for key, role in files:
            self._uses.setdefault(key, {}).setdefault(server, [0, 0])[role] += 1

    def remove(self, files: Files, server: S) -> None:
        """Forget a request on `files` that `server` has finished."""
        for key, role in files:
            users = self._uses.get(key)
            if users is None:
                continue
            uses = users[server]
            uses[role] -= 1
            if not any(uses):
                del users[server]
                if not users:
                    del self._uses[key]

    def clear(self) -> None:
        self._uses.clear()
