"""Unowned array views for the batch drivers: views with no NRT ``MemInfo``, never reference counted.

Every array a kernel takes from a tuple or passes on costs an atomic incref and decref, and with
two threads the counters' cache line bounces between cores; a view with a null ``meminfo`` skips
both. The Engine owns the arrays and outlives every kernel call."""

from __future__ import annotations

import numpy as np
from llvmlite import ir  # type: ignore[import-untyped]
from numba import types
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


def view_at(buf, offset, shape, dtype):
    """An unowned C-contiguous ``dtype`` array of ``shape`` over uint8 ``buf[offset:]`` (``offset`` item-aligned)."""
    dtype = np.dtype(dtype)
    size = dtype.itemsize
    for n in shape:
        size *= n
    return buf[offset : offset + size].view(dtype).reshape(shape)


@overload(view_at)
def _view_at_overload(buf, offset, shape, dtype):
    return lambda buf, offset, shape, dtype: _view_at(buf, offset, shape, dtype)


@intrinsic
def _view_at(typingctx, buf, offset, shape, dtype):
    if not (isinstance(buf, types.Array) and buf.dtype == types.uint8 and buf.ndim == 1):
        return None
    if isinstance(dtype, types.NumberClass):
        item = dtype.instance_type
    elif isinstance(dtype, types.DType):
        item = dtype.dtype
    else:
        return None
    nd = len(shape)
    out_type = types.Array(item, nd, "C")

    def codegen(context, builder, signature, args):
        src = context.make_array(buf)(context, builder, value=args[0])
        out = context.make_array(out_type)(context, builder)
        start = context.cast(builder, args[1], signature.args[1], types.intp)
        data = builder.bitcast(builder.gep(src.data, [start]), out.data.type)
        dims = [
            context.cast(builder, v, t, types.intp)
            for v, t in zip(cgutils.unpack_tuple(builder, args[2], nd), signature.args[2].types, strict=True)
        ]
        itemsize = context.get_constant(types.intp, context.get_abi_sizeof(context.get_data_type(item)))
        strides, stride = [], itemsize
        for d in reversed(dims):
            strides.insert(0, stride)
            stride = builder.mul(stride, d)
        context.populate_array(out, data=data, shape=dims, strides=strides, itemsize=itemsize, meminfo=None)
        return out._getvalue()

    return out_type(buf, offset, shape, dtype), codegen


def prefetch(arr, i):
    """Ask the CPU to cache the line holding ``arr[i]`` (a 1-D array); a no-op in plain Python and out of range."""


@overload(prefetch)
def _prefetch_overload(arr, i):
    return lambda arr, i: _prefetch(arr, i) if 0 <= i < arr.shape[0] else None


@intrinsic
def _prefetch(typingctx, arr, i):
    if not (isinstance(arr, types.Array) and arr.ndim == 1):
        return None

    def codegen(context, builder, signature, args):
        src = context.make_array(arr)(context, builder, value=args[0])
        start = context.cast(builder, args[1], signature.args[1], types.intp)
        ptr = builder.gep(src.data, [start])
        i8p, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
        # (address, write, locality 3: keep in every cache level, data)
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]), "llvm.prefetch.p0"
        )
        builder.call(fn, [builder.bitcast(ptr, i8p), i32(1), i32(3), i32(1)])
        return context.get_dummy_value()

    return types.none(arr, i), codegen
