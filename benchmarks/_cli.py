"""Command line from an ``Args`` dataclass: one option per field, the field's docstring as its help."""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
from typing import Any, Sequence, TypeVar

T = TypeVar("T")


def field_docs(cls: type) -> dict[str, str]:
    """The docstring under each field of a dataclass (read from its source)."""
    body = ast.parse(inspect.getsource(cls)).body[0].body
    return {a.target.id: b.value.value for a, b in zip(body, body[1:])
            if isinstance(a, ast.AnnAssign) and isinstance(b, ast.Expr)}


def parse_dataclass(cls: type[T], description: str, argv: Sequence[str] | None = None) -> T:
    """``cls`` from the command line: ``--field-name`` per field; bools get ``--no-...`` too."""
    parser = argparse.ArgumentParser(description=description)
    docs = field_docs(cls)
    for f in dataclasses.fields(cls):
        flag = "--" + f.name.replace("_", "-")
        kind = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
        help_text = f"{docs.get(f.name, '')} (default: {f.default})"
        if kind == "bool":
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=f.default, help=docs.get(f.name))
        else:
            conv: Any = {"int": int, "float": float}.get(kind, str)
            parser.add_argument(flag, type=conv, default=f.default, help=help_text)
    return cls(**vars(parser.parse_args(argv)))
