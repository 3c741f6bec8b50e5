"""One line on stderr when numba has to compile: what every command calls first.

A cold cache is detected by numba's own ``numba:compile`` event, which fires only when a signature
is in neither memory nor the on-disk cache; nothing is printed when the cache is warm or under
``NUMBA_DISABLE_JIT=1``."""

from __future__ import annotations

import sys
import threading
from typing import Any, TextIO

__all__ = ["NOTICE", "announce_compiling"]

NOTICE = (
    "{command}: compiling the game's numba kernels for their first use: this takes up to a minute or two "
    "and happens once per install (the compiled code is cached for every later run)"
)
"""The line printed (``{command}``: the command's name)."""

_lock = threading.Lock()
_installed: dict[str, Any] = {}


def announce_compiling(command: str, stream: TextIO | None = None) -> None:
    """Print ``NOTICE`` to ``stream`` (default stderr) the first time numba compiles in this process; idempotent."""
    try:
        from numba.core import event
    except ImportError:  # pragma: no cover - numba is a hard dependency
        return
    with _lock:
        if _installed:
            return

        class _Notice(event.Listener):
            said = False

            def on_start(self, ev: Any) -> None:
                # Compilation nests (a kernel compiles the kernels it calls) and runs on any thread.
                with _lock:
                    if self.said:
                        return
                    self.said = True
                out = stream if stream is not None else sys.stderr
                print(NOTICE.format(command=command), file=out, flush=True)

            def on_end(self, ev: Any) -> None:
                pass

        listener = _Notice()
        event.register("numba:compile", listener)
        _installed["listener"] = listener
