"""README.md's generated tables: ``python -m tools.readme --write-readme`` rewrites them from the code.

The tables are ``uno_env.docs``'s (the package fills its docstrings from the same functions);
each sits between its ``<!-- NAME:start -->`` and ``<!-- NAME:end -->`` markers."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from uno_env.docs import action_table

README = Path(__file__).resolve().parents[1] / "README.md"


def readme_tables() -> dict[str, str]:
    """README.md's generated tables by marker name (``<!-- NAME:start -->``)."""
    return {"actions": action_table()}


def render_readme(text: str) -> str:
    """README text with every marked table replaced by the generated one; ``ValueError`` when a
    marker pair is missing."""
    for name, table in readme_tables().items():
        pattern = re.compile(rf"(<!-- {name}:start -->)\n.*?(<!-- {name}:end -->)", re.S)
        if not pattern.search(text):
            raise ValueError(f"README lacks the markers <!-- {name}:start --> / <!-- {name}:end -->")

        def fill(m: re.Match[str], table: str = table) -> str:
            return f"{m.group(1)}\n{table}\n{m.group(2)}"

        text = pattern.sub(fill, text)
    return text


def main(argv: list[str] | None = None) -> None:
    """Print the tables, or rewrite README.md's tables with ``--write-readme``."""
    parser = argparse.ArgumentParser(
        prog="python -m tools.readme", description="README.md's tables built from the code."
    )
    parser.add_argument("--write-readme", action="store_true", help="regenerate the tables in README.md")
    parser.add_argument("--readme", type=Path, default=README, help="the README to rewrite")
    args = parser.parse_args(argv)
    if not args.write_readme:
        print("\n\n".join(readme_tables().values()))
        return
    old = args.readme.read_text()
    new = render_readme(old)
    if new != old:
        args.readme.write_text(new)
    print(f"{args.readme}: {'tables regenerated' if new != old else 'tables already up to date'}")


if __name__ == "__main__":
    main()
