"""MkDocs hook: fills the pages' generated parts at build time, so nothing is pasted by hand.

A page asks for a generated part with a directive alone on its line (or inline, for numbers):

    <!-- uno:actions -->          the action table      (uno_env.docs.action_table)
    <!-- uno:cards -->            the card table        (uno_env.docs.card_table)
    <!-- uno:observation -->      the observation table (uno_env.docs.observation_table)
    <!-- uno:D -->                the observation size (uno_env.observation.OBS_BASE_SIZE)
    <!-- uno:D_OPEN -->           the size with open_hands (OBS_OPEN_SIZE)
    <!-- uno:state -->            the whole-state table (uno_env.docs.state_table); <!-- uno:S --> its size
    <!-- uno:include PATH -->     a Markdown file of the repository (e.g. benchmarks/results/benchmarks.md),
                                  its headings moved one level down
    <!-- uno:readme-section TITLE -->  the body of README.md's ``## TITLE`` section
    <!-- uno:examples -->         examples/README.md (without its title), then one section per
                                  examples/*.py: its docstring and its source, folded
    <!-- uno:ladder [VERSION] --> the reference ladder's rungs and their stored ratings, the
                                  current version or VERSION (arena.ladder.load_reference:
                                  arena/ladder_<version>.json)
    <!-- uno:pretrained -->       the shipped models' cards: training, evaluation, ladder rating
                                  (tools.card.cards_markdown: agents/pretrained/*.json)
    <!-- uno:docstring NAME -->  the docstring of an object as the code fills it at import time
                                  (e.g. uno_env.raw_env, whose tables come from uno_env.docs),
                                  its headings moved one level down

An unknown directive, a missing file or section fails the build. The PNG plots in
``benchmarks/results/`` and ``lab/results/`` are published as ``assets/benchmarks/NAME.png``. An
included file outside ``docs/`` links to the pages as ``../docs/PAGE.md``, which works on GitHub;
on the site those links become ``PAGE.md``.
``tests/clients/test_docs.py`` runs ``expand`` on every page.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def _checkout_on_path() -> None:
    """The checkout being documented first on the path, whatever else is installed (and ``tools``,
    which is not installed); again before ``tools`` is imported: the build's plugins may change the path."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))


_checkout_on_path()
PLOTS = (ROOT / "benchmarks" / "results", ROOT / "lab" / "results")
PLOTS_URL = "assets/benchmarks"

UNFILLED = re.compile(r"@@(?!NAME@@)[A-Z_]+@@")  # uno_env.docs.fill_doc's placeholders (@@NAME@@ is its doc)
DIRECTIVE = re.compile(r"<!-- uno:([\w-]+)(?: +([^<>]*?))? -->")


class DirectiveError(ValueError):
    """A page asked for a generated part that does not exist."""


def _tables() -> dict[str, str]:
    from uno_env.docs import (
        action_table,
        card_table,
        event_table,
        history_counts_table,
        history_table,
        history_token_table,
        observation_table,
        state_table,
    )
    from uno_env.engine.history import HISTORY_COUNTS_SIZE, HISTORY_SIZE, HISTORY_TOKEN_SIZE
    from uno_env.observation import OBS_BASE_SIZE, OBS_OPEN_SIZE, STATE_SIZE

    return {
        "actions": action_table(),
        "cards": card_table(),
        "observation": observation_table(),
        "D": str(OBS_BASE_SIZE),
        "D_OPEN": str(OBS_OPEN_SIZE),
        "state": state_table(),
        "S": str(STATE_SIZE),
        "history": history_table(),
        "history_counts": history_counts_table(),
        "H": str(HISTORY_SIZE),
        "HC": str(HISTORY_COUNTS_SIZE),
        "history_tokens": history_token_table(),
        "HT": str(HISTORY_TOKEN_SIZE),
        "events": event_table(),
    }


def _include(arg: str) -> str:
    path = (ROOT / arg).resolve()
    if ROOT not in path.parents or not path.is_file():
        raise DirectiveError(f"uno:include {arg}: no such file in the repository")
    text = path.read_text()
    if DOCS not in path.parents:
        text = text.replace("](../docs/", "](")
    return _demote(text)


def _readme_section(title: str) -> str:
    readme = (ROOT / "README.md").read_text()
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", readme, re.M | re.S)
    if not match:
        raise DirectiveError(f"uno:readme-section {title}: README.md has no '## {title}' section")
    body = match.group(1).strip("\n")
    # README's links are relative to the repository root; on the site docs/ is the root.
    return body.replace("](docs/", "](")


def _docstring(name: str) -> str:
    import importlib
    import inspect

    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError:
            break
        doc = inspect.getdoc(obj)
        if not doc:
            raise DirectiveError(f"uno:docstring {name}: it has no docstring")
        if "@@" in doc:
            raise DirectiveError(f"uno:docstring {name}: an unfilled @@placeholder@@ in its docstring")
        return _demote(doc)
    raise DirectiveError(f"uno:docstring {name}: no such object")


def _examples() -> str:
    import ast

    folder = ROOT / "examples"
    scripts = sorted(folder.glob("*.py"))
    if not scripts:
        raise DirectiveError("uno:examples: examples/ has no script")
    parts = []
    readme = folder / "README.md"
    if readme.is_file():
        parts.append(re.sub(r"\A# .*\n", "", readme.read_text()).strip("\n"))
    for script in scripts:
        source = script.read_text()
        doc = ast.get_docstring(ast.parse(source)) or ""
        summary, _, rest = doc.partition("\n")
        folded = "\n".join(
            "    " + line if line else "" for line in ["```python", *source.rstrip("\n").split("\n"), "```"]
        )
        parts.append(
            f'## `{script.name}`\n\n{summary}\n{rest}\n\n??? example "The source: examples/{script.name}"\n\n{folded}'
        )
    return "\n\n".join(parts) + "\n"


def _ladder(version: str) -> str:
    from arena.ladder import LADDER, LADDERS, load_reference
    from arena.ratings import Z95

    if version and version not in LADDERS:
        raise DirectiveError(f"uno:ladder {version}: the ladder versions are {sorted(LADDERS)}")
    spec = LADDERS[version] if version else LADDER
    data = load_reference(spec)
    counts = sorted(data["players"], key=int)
    header = ["rung"] + [f"rating, {n} players (± 95%)" for n in counts]
    rungs = list(dict.fromkeys(r for n in counts for r in spec.rungs_for(int(n))))
    rows = []
    for rung in rungs:
        cells = []
        for n in counts:
            at = spec.rungs_for(int(n))
            if rung not in at:
                cells.append("—")
                continue
            k, p = at.index(rung), data["players"][n]
            se = p["rating_se"][k]
            cells.append(f"{p['ratings'][k]:.0f}" + (f" ± {Z95 * se:.0f}" if se else " (anchor)"))
        rows.append([f"`{rung}`"] + cells)
    games = ", ".join(f"{g:,} games per table with {n} players" for n, g in sorted(data["definition"]["games"].items()))
    if spec.reference_scale > 1:
        games += f" (the rungs' own tables: {spec.reference_scale}× that)"
    if spec.duplicate:
        games += ", duplicate deals"
    lines = ["| " + " | ".join(header) + " |", "|---|" + "---:|" * len(counts)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return (
        f"Ladder {spec.version}: rules `{data['definition']['rules']}`, seed {data['definition']['seed']}, "
        f"{games}; built {data['built']} (`arena/ladder_{spec.version}.json`).\n\n" + "\n".join(lines)
    )


def _demote(text: str) -> str:
    """Markdown headings one level down, outside fenced code."""
    out, fenced = [], False
    for line in text.split("\n"):
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(r"#{1,5} ", line):
            line = "#" + line
        out.append(line)
    return "\n".join(out)


def expand(markdown: str) -> str:
    """``markdown`` with every ``<!-- uno:... -->`` directive replaced; ``DirectiveError`` for an unknown one."""
    tables = None

    def fill(match: re.Match) -> str:
        nonlocal tables
        name, arg = match.group(1), (match.group(2) or "").strip()
        if name == "include":
            return _include(arg)
        if name == "readme-section":
            return _readme_section(arg)
        if name == "docstring":
            return _docstring(arg)
        if name == "examples" and not arg:
            return _examples()
        if name == "ladder":
            return _ladder(arg)
        if name == "pretrained" and not arg:
            _checkout_on_path()
            from tools.card import cards_markdown

            return cards_markdown()
        if tables is None:
            tables = _tables()
        if name not in tables or arg:
            raise DirectiveError(f"unknown directive <!-- uno:{name}{' ' + arg if arg else ''} -->")
        return tables[name]

    return DIRECTIVE.sub(fill, markdown)


def plot_files() -> list[Path]:
    """The benchmark plots the site publishes."""
    return sorted(png for folder in PLOTS for png in folder.glob("*.png"))


# MkDocs events ---------------------------------------------------------------------------------


def on_page_markdown(markdown, page, config, files):
    from mkdocs.exceptions import PluginError

    try:
        return expand(markdown)
    except DirectiveError as error:
        raise PluginError(f"{page.file.src_uri}: {error}") from None


def on_page_content(html, page, config, files):
    """Fail on a docstring placeholder left unfilled (the API reference read it statically)."""
    from mkdocs.exceptions import PluginError

    left = UNFILLED.search(html)
    if left:
        raise PluginError(
            f"{page.file.src_uri}: unfilled placeholder {left.group(0)}: render that object with "
            "options: force_inspection: true"
        )
    return html


def on_files(files, config):
    from mkdocs.structure.files import File

    for png in plot_files():
        files.append(File.generated(config, f"{PLOTS_URL}/{png.name}", abs_src_path=str(png)))
    return files
