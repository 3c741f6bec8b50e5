"""One line on stderr when numba has to compile: what every command calls first.

```python
from uno_env.compile_notice import announce_compiling
announce_compiling("uno-demo")   # silent unless a kernel is compiled, then one line, once
```

The kernels are compiled with ``cache=True``: the first use after an install compiles them
(tens of seconds on a small machine, longer for the commands that use many agents) and writes
the result next to the sources (``__pycache__``, or numba's user-wide cache when the package
folder is read-only); every later process loads it. Nothing is compiled, and nothing is
printed, when that cache is warm.

**How a cold cache is detected.** numba fires its ``numba:compile`` event when, and only when, a
dispatcher compiles a signature it found neither in memory nor in its on-disk cache (a cache
hit fires nothing): the listener installed here prints the notice on the first such event and
then stays quiet. This asks numba itself rather than guessing from index files (whose staleness
depends on numba's version and the sources' timestamps) or from a timer (which would also fire
on a slow, warm start). With ``NUMBA_DISABLE_JIT=1`` nothing is compiled and nothing is printed.
"""

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
    """Print ``NOTICE`` to ``stream`` (default ``sys.stderr``) the first time numba compiles in this
    process; idempotent (a second call changes nothing)."""
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
