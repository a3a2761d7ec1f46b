"""What a command shows on stderr besides its replies: the bridge's messages, a batch's progress bar
and summary, an import's bar."""

from __future__ import annotations

import contextlib
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path
    from typing import Any


def log_to_stderr() -> None:
    """Show the bridge's messages (imports, restarts) on stderr."""
    import logging

    logging.basicConfig(format="%(message)s", level=logging.INFO, stream=sys.stderr)


def bar_wanted(flag: bool | None) -> bool:
    return sys.stderr.isatty() if flag is None else flag


class ImportBar:
    """An import on a terminal: the line naming what is imported and why at once (LoggedImport's),
    then a bar of its own. The batch's bar, whose rate means nothing meanwhile, is cleared and its
    clock stopped until the import ends."""

    def __init__(self, root: Path, batch: Progress | None = None) -> None:
        from gdres import serving

        self.logged = serving.LoggedImport(root)
        self.batch = batch.bar if batch is not None else None
        self.bar: Any = None

    def start(self, assets: Sequence[str], why: str) -> None:
        from tqdm import tqdm

        if self.batch is not None:
            self.batch.clear()
        self.logged.start(assets, why)
        self.bar = tqdm(total=len(assets), desc="import", unit="asset", file=sys.stderr, dynamic_ncols=True)

    def update(self, done: int, total: int) -> None:
        if self.bar is not None:
            self.bar.update(done - self.bar.n)

    def close(self, *, imported: bool) -> None:
        if self.bar is not None:
            self.bar.close()
        self.logged.close(imported=imported)
        if self.batch is not None:
            self.batch.unpause()
            self.batch.refresh()


class Progress:
    """The batch's progress bar on stderr when `bar` (tqdm: as wide as the terminal, percentage,
    elapsed time, rate and time left), errors counted beside it, and, bar or not (a CI log), a
    summary line when the batch ends. While the bar is up, the bridge's messages are written above it
    (tqdm.write), not through it."""

    def __init__(self, total: int | None, *, bar: bool, summary: bool = True) -> None:
        self.summary = summary
        self.errors = 0
        self.done = 0
        self.started = time.monotonic()
        self.bar = None
        self._messages = contextlib.ExitStack()
        if bar:
            # Imported only for a bar: tqdm's import (its version lookup reads package metadata) is
            # ~30 ms of CPU, a batch's whole start-up in a pipeline or CI log otherwise.
            from tqdm import tqdm
            from tqdm.contrib.logging import logging_redirect_tqdm

            log_to_stderr()
            self._messages.enter_context(logging_redirect_tqdm())
            self.bar = tqdm(total=total, desc="batch", unit="req", file=sys.stderr, dynamic_ncols=True,
                            mininterval=0.1, smoothing=0.1)

    def update(self, ok: bool) -> None:
        self.done += 1
        if not ok:
            self.errors += 1
        if self.bar is not None:
            if not ok:
                self.bar.set_postfix_str(f"{self.errors} error{'s' if self.errors != 1 else ''}", refresh=False)
            self.bar.update(1)

    def close(self) -> None:
        done, elapsed = self.done, time.monotonic() - self.started
        if self.bar is not None:
            self.bar.close()
        self._messages.close()
        if not self.summary:
            return
        errors = f"{self.errors} error{'s' if self.errors != 1 else ''}"
        sys.stderr.write(f"gdres: {done} request{'s' if done != 1 else ''} in {elapsed:.1f} s "
                         f"({done / max(elapsed, 1e-9):.0f} req/s): {done - self.errors} ok, {errors}\n")
        sys.stderr.flush()
