"""Unowned array views for the batch drivers.

Every array a numba kernel extracts from a tuple or passes on is reference counted with an
atomic increment and decrement of its NRT ``MemInfo`` (perf: 45% of a batched step sat on the
``lock`` instructions of ``NRT_incref``/``NRT_decref``). With the games of one batch on two
threads both cores hit the same counters and the cache line bounces between them. A view whose
``meminfo`` is null is skipped by both functions with one branch, so the step drivers borrow
the arrays once per call; the Engine owns them and outlives every kernel call.
"""

from __future__ import annotations

from numba.core import cgutils
from numba.extending import intrinsic, overload


def borrow(arr):
    """The same array, as a view with no MemInfo (never reference counted, never freed).

    In plain Python (``NUMBA_DISABLE_JIT=1``) it is the array itself."""
    return arr


@overload(borrow)
def _borrow_overload(arr):
    return lambda arr: _borrow(arr)


@intrinsic
def _borrow(typingctx, arr):

    def codegen(context, builder, signature, args):
        src = context.make_array(arr)(context, builder, value=args[0])
        out = context.make_array(arr)(context, builder)
        for field in ("nitems", "itemsize", "data", "shape", "strides"):
            setattr(out, field, getattr(src, field))
        out.meminfo = cgutils.get_null_value(out.meminfo.type)
        out.parent = cgutils.get_null_value(out.parent.type)
        return out._getvalue()

    return arr(arr), codegen
