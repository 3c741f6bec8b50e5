"""The docs site tells the truth: cheap checks of what `mkdocs build --strict` cannot see.

The real build runs in .ci/run (`mkdocs build --strict`). Here: every page of the nav exists and
every page is in the nav; every `::: name` of the API pages is an importable public object and
the names the docs promise are all documented; the build hook fills the generated tables from
uno_env.docs (and refuses what it does not know); every Python snippet of the guide pages runs;
every `train.py` / `evaluate.py` option the pages mention exists; the documented build command
is the one CI runs.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import re
import subprocess
import sys

import pytest
import yaml
from helpers import FENCE, ROOT, page_text, printed_twice, snippets

DOCS = ROOT / "docs"
CONFIG = yaml.safe_load((ROOT / "mkdocs.yml").read_text())

# What the API reference must cover: each of these is rendered by some `::: name`,
# the name itself or a module/class holding it.
REQUIRED_API = [
    "uno_env.Engine",
    "uno_env.UnoRules",
    "uno_env.parse_rules",
    "uno_env.env",
    "uno_env.raw_env",
    "uno_env.UnoEnv",
    "uno_env.UnoVectorEnv",
    "uno_env.observation",
    "uno_env.actions",
    "uno_env.cards",
    "uno_env.policy",
    "uno_env.replay",
    "uno_env.sb3_vec_env.UnoSB3VecEnv",
    "agents.registry",
    "agents.HeuristicAgent",
    "agents.FlatMCAgent",
    "arena.match",
    "arena.tournament",
    "arena.ratings",
]


def _load_hook():
    spec = importlib.util.spec_from_file_location("uno_docs_hook", DOCS / "_hooks" / "uno_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


HOOK = _load_hook()


def nav_pages(nav=None) -> list[str]:
    """Every page path of mkdocs.yml's nav, in order."""
    pages = []
    for item in CONFIG["nav"] if nav is None else nav:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        pages += nav_pages(value) if isinstance(value, list) else [value]
    return pages


def site_pages() -> list[str]:
    """Every Markdown page MkDocs would publish (docs/README.md and docs/_hooks/ are excluded)."""
    return sorted(
        p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md") if p.name != "README.md" and "_hooks" not in p.parts
    )


def api_names() -> list[tuple[str, str]]:
    """(page, name) of every `::: name` directive of the pages."""
    return [
        (page, m.group(1))
        for page in site_pages()
        for m in re.finditer(r"^::: ([\w.]+)\s*$", (DOCS / page).read_text(), re.M)
    ]


def resolve(name: str):
    """The object a dotted name names: the longest importable module prefix, then attributes."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ModuleNotFoundError(name)


# --- pages --------------------------------------------------------------------------------------


def test_every_nav_page_exists_and_every_page_is_in_the_nav():
    pages = nav_pages()
    assert len(pages) == len(set(pages)), "a page is listed twice in the nav"
    missing = [p for p in pages if not (DOCS / p).is_file()]
    assert not missing, f"mkdocs.yml's nav lists pages that do not exist: {missing}"
    orphans = sorted(set(site_pages()) - set(pages))
    assert not orphans, f"pages missing from mkdocs.yml's nav: {orphans}"


def test_the_users_pages_are_there():
    """The pages a user looks for, by file name (the rule book is docs/rules.md)."""
    wanted = [
        "install.md",
        "quickstart.md",
        "rules.md",
        "pettingzoo.md",
        "gymnasium.md",
        "sb3-rllib.md",
        "engine.md",
        "agents.md",
        "training.md",
        "evaluation.md",
        "benchmarks.md",
        "reproducibility.md",
        "troubleshooting.md",
    ]
    assert not sorted(set(wanted) - set(nav_pages()))


def test_nav_check_fails_on_a_missing_page(tmp_path):
    assert "nowhere.md" in nav_pages([{"A": [{"B": "nowhere.md"}]}])
    assert not (DOCS / "nowhere.md").exists()


def test_the_site_is_built_offline_and_strict():
    assert CONFIG.get("strict") is True
    assert CONFIG["theme"].get("font") is False, "theme.font must be false: no Google Fonts download"
    assert "README.md" in CONFIG["exclude_docs"]


# --- API reference ------------------------------------------------------------------------------


@pytest.mark.parametrize("page,name", api_names())
def test_api_name_resolves(page, name):
    assert not any(part.startswith("_") for part in name.split(".")), f"{page}: {name} is private"
    resolve(name)


def test_api_pages_cover_the_public_api():
    documented = {name for _, name in api_names()}
    objects = [resolve(d) for d in documented]

    def covered(name: str) -> bool:
        """Documented by its own `:::` (under any of its names) or by its module's or class's."""
        obj = resolve(name)
        return any(obj is o for o in objects) or any(name.startswith(d + ".") for d in documented)

    assert not [n for n in REQUIRED_API if not covered(n)]


def test_resolve_fails_on_a_wrong_name():
    with pytest.raises(AttributeError):
        resolve("uno_env.NoSuchEngine")


# --- generated parts ----------------------------------------------------------------------------


def test_the_hook_fills_the_tables_from_the_code():
    from uno_env.docs import action_table, card_table, observation_table
    from uno_env.observation import OBS_BASE_SIZE

    page = "A\n\n<!-- uno:actions -->\n\n<!-- uno:cards -->\n\n<!-- uno:observation -->\n\nD = <!-- uno:D -->\n"
    out = HOOK.expand(page)
    for table in (action_table(), card_table(), observation_table()):
        assert table in out
    assert f"D = {OBS_BASE_SIZE}\n" in out and "uno:" not in out


@pytest.mark.parametrize("version", ["", "v2"])
def test_the_ladder_table_is_the_stored_one(version):
    from arena.ladder import LADDER, LADDERS, load_reference

    spec = LADDERS[version] if version else LADDER
    data = load_reference(spec)
    out = HOOK.expand(f"<!-- uno:ladder {version} -->" if version else "<!-- uno:ladder -->")
    assert f"Ladder {spec.version}:" in out
    for n in sorted(data["players"], key=int):
        for k, rung in enumerate(spec.rungs_for(int(n))):
            row = next(line for line in out.splitlines() if line.startswith(f"| `{rung}` |"))
            assert f"{data['players'][n]['ratings'][k]:.0f}" in row


def test_the_hook_refuses_what_it_does_not_know():
    for bad in (
        "<!-- uno:action -->",
        "<!-- uno:include no/such/file.md -->",
        "<!-- uno:ladder v9 -->",
        "<!-- uno:readme-section No Such Section -->",
        "<!-- uno:actions extra -->",
    ):
        with pytest.raises(HOOK.DirectiveError):
            HOOK.expand(bad)


def test_the_hook_catches_an_unfilled_docstring_placeholder():
    assert HOOK.UNFILLED.search("<p>@@ACTIONS@@</p>") and HOOK.UNFILLED.search("<td>@@D_OPEN@@</td>")
    assert not HOOK.UNFILLED.search("<code>@@NAME@@</code>")  # uno_env.docs documents its placeholders so


@pytest.mark.parametrize("page", site_pages())
def test_every_page_expands(page):
    text = HOOK.expand((DOCS / page).read_text())
    assert "<!-- uno:" not in text


def test_no_table_is_pasted():
    """The generated tables appear in the pages only as directives, never pasted (they would drift)."""
    from uno_env.docs import action_table, card_table, observation_table

    for page in site_pages():
        text = (DOCS / page).read_text()
        for table in (action_table(), card_table(), observation_table()):
            assert table.splitlines()[2] not in text, f"{page} pastes a generated table; use <!-- uno:... -->"


def test_the_spaces_page_asks_for_every_table():
    text = (DOCS / "spaces.md").read_text()
    for name in ("actions", "cards", "observation"):
        assert f"<!-- uno:{name} -->" in text


def test_the_benchmark_plots_are_published():
    plots = HOOK.plot_files()
    assert plots, "benchmarks/results/ has no PNG plot"
    text = (DOCS / "benchmarks.md").read_text()
    for png in plots:
        assert f"{HOOK.PLOTS_URL}/{png.name}" in text, f"docs/benchmarks.md does not show {png.name}"


# --- the pages' code and commands ----------------------------------------------------------------

README = "../README.md"
RUN_PAGES = [p for p in [*site_pages(), README] if not p.startswith("api/") and p != "rules.md" and snippets(p)]


@pytest.mark.parametrize("page", RUN_PAGES)
def test_snippets_run(page, tmp_path):
    """Each page's snippets run in order in one fresh interpreter, in an empty directory."""
    code = "\n\n".join(snippets(page))
    run = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        env={**__import__("os").environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"},
    )
    assert run.returncode == 0, f"{page}: a snippet fails:\n{run.stderr[-3000:]}"


@pytest.mark.parametrize("page", ["quickstart.md", "pettingzoo.md"])
def test_the_pettingzoo_game_prints_the_same_on_every_run(page):
    """reset(seed=...) seeds the game; the page's first snippet seeds its random play (the action spaces) too."""
    code = snippets(page)[0]
    assert "env.reset(seed=42)" in code
    printed = printed_twice(code)
    assert printed[0].strip() and printed[0] == printed[1]


def test_snippet_extraction_skips_marked_blocks():
    text = "```python\na = 1\n```\n<!-- no-run -->\n```python\nb = 2\n```\n"
    found = [m.group(2) for m in FENCE.finditer(text) if not m.group(1)]
    assert found == ["a = 1\n"]


def _options(script: str) -> set[str]:
    """The command-line options of train.py / evaluate.py, from their Args dataclass (tyro's naming)."""
    module = importlib.import_module(script)
    options = {"--help"}
    for field in dataclasses.fields(module.Args):
        flag = "--" + field.name.replace("_", "-")
        options.add(flag)
        if field.type in (bool, "bool"):
            options.add("--no-" + field.name.replace("_", "-"))
    return options


@pytest.mark.parametrize("script", ["train", "evaluate"])
def test_documented_options_exist(script):
    options = _options(script)
    used = {}
    for page in [*site_pages(), README]:
        for line in re.findall(rf"python {script}\.py([^\n`]*)", page_text(page)):
            for flag in re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", line.split("#")[0]):
                used.setdefault(flag, page)
    assert used, f"no page shows a {script}.py command"
    unknown = {flag: page for flag, page in used.items() if flag not in options}
    assert not unknown, f"options of {script}.py in the docs that it does not have: {unknown}"


def test_readme_links_into_the_docs_resolve():
    """The README is the front page: every relative link it has points at a file of the repository."""
    readme = (ROOT / "README.md").read_text()
    links = [link.split("#")[0] for link in re.findall(r"\]\(([^)\s]+)\)", readme) if "://" not in link]
    assert any(link.startswith("docs/") for link in links), "README links nowhere into docs/"
    missing = [link for link in links if link and not (ROOT / link).exists()]
    assert not missing, f"README links to files that do not exist: {missing}"


def ladder_figures_problems(readme: str) -> list[str]:
    """Where README's ladder tables differ from the stored reference ladder (``arena.ladder.LADDER``,
    arena/ladder_<version>.json): each rung's cell ``rating ± half-width of the 95% interval``; and
    each shipped model's row, ``rating (low–high)``, from the ladder rating on its card."""
    from agents.pretrained import PRETRAINED, load_card
    from arena.ladder import LADDER, load_reference

    data = load_reference(LADDER)
    row_line = re.compile(r"\| `([\w:@-]+)`[^|]*\|(.*)\|$")
    rows = {m.group(1): m.group(2) for m in map(row_line.match, readme.splitlines()) if m}
    problems = []
    if f"reference ladder {LADDER.version}" not in readme:
        problems.append(f"README does not name the reference ladder {LADDER.version}")
    for col, n in enumerate(sorted(data["players"], key=int)):
        p = data["players"][n]
        for k, rung in enumerate(LADDER.rungs_for(int(n))[1:], start=1):
            cells = rows.get(rung)
            if cells is None:
                problems.append(f"no ladder row for {rung}")
                continue
            quoted = re.findall(r"\d+", cells.split("|")[col])
            want = [str(round(p["ratings"][k])), str(round(1.96 * p["rating_se"][k]))]
            if quoted != want:
                problems.append(f"{n} players, {rung}: README {quoted}, stored {want}")
    for name in PRETRAINED:
        ladder = load_card(name)["ladder"]
        if ladder is None or ladder["version"] != LADDER.version:
            problems.append(f"the card of {name} is not rated on ladder {LADDER.version}")
            continue
        want = f"{ladder['rating']:.0f} ({ladder['ci95'][0]:.0f}–{ladder['ci95'][1]:.0f})"
        if want not in rows.get(name, ""):
            problems.append(f"{name}: README {rows.get(name)!r}, its card {want}")
    return problems


def test_readme_ladder_figures_are_the_stored_ones():
    readme = (ROOT / "README.md").read_text()
    assert not ladder_figures_problems(readme)
    heuristic = next(line for line in readme.splitlines() if line.startswith("| `heuristic` |"))
    shipped = next(line for line in readme.splitlines() if line.startswith("| `pretrained-4p` "))
    for line, pattern in [(heuristic, r"\d{4}"), (heuristic, r"(?<=± )\d+"), (shipped, r"\d{4}")]:
        drifted = readme.replace(line, re.sub(pattern, lambda m: str(int(m.group()) + 1), line, count=1))
        assert drifted != readme and ladder_figures_problems(drifted), line


def test_the_documented_build_command_is_what_ci_runs():
    readme = (DOCS / "README.md").read_text()
    command = re.search(r'^pip install -e "\.\[docs\]" && (mkdocs build --strict.*)$', readme, re.M)
    assert command, 'docs/README.md must give the build command: pip install -e ".[docs]" && mkdocs build --strict'
    ci = (ROOT / ".ci" / "run").read_text()
    dev = re.search(r"^dev = \[(.*)\]$", (ROOT / "pyproject.toml").read_text(), re.M)  # .ci/install's extra
    assert command.group(1) in ci and dev and "docs" in dev.group(1)


def table_shape_problems(text: str, where: str) -> list[str]:
    """Rows of a markdown table with more cells than its header (a pasted row that kept old cells: markdown
    drops the extra ones silently; fewer cells render as empty ones)."""
    problems, header, in_code = [], None, False
    for k, line in enumerate(text.splitlines(), start=1):
        if line.lstrip().startswith("```"):
            in_code = not in_code
        if in_code or not line.startswith("|"):
            header = None
            continue
        cells = len(re.split(r"(?<!\\)\|", line.strip())) - 2
        if header is None:
            header = cells
        elif cells > header:
            problems.append(f"{where}:{k}: {cells} cells, the table's header has {header}")
    return problems


def test_every_markdown_table_row_has_its_headers_cells():
    files = [ROOT / "README.md", *sorted(DOCS.glob("*.md")), *sorted((ROOT / "benchmarks" / "results").glob("*.md"))]
    problems = [p for f in files for p in table_shape_problems(f.read_text(), str(f.relative_to(ROOT)))]
    assert not problems, problems
    assert table_shape_problems("| a | b |\n|---|---|\n| 1 | 2 | 3 |\n", "x") == [
        "x:3: 3 cells, the table's header has 2"
    ]
