"""The rule book (docs/rules.md) tells the truth about the code.

Every check is a function ``*_problems(book) -> list[str]`` run on the real book, and
``test_drifted_book_is_caught`` shows each of them failing on a drifted copy.
"""

from __future__ import annotations

import dataclasses
import inspect
import re

import pytest
from helpers import ROOT

from uno_env import actions as A
from uno_env import rules as rules_module
from uno_env.cards import CARD_NAMES, NUM_CARD_TYPES, WILD, deck_counts
from uno_env.observation import OBS_FIELDS, PHASE_NAMES
from uno_env.rules import OPTION_NAMES, PRESETS, UnoRules

BOOK_PATH = ROOT / "docs" / "rules.md"
BOOK = BOOK_PATH.read_text(encoding="utf-8")
SECTIONS = range(1, 13)  # R1 .. R12


def _section(book: str, heading: str) -> str:
    """Text from a '## <heading>' line to the next '## ' heading."""
    m = re.search(rf"^## {re.escape(heading)}.*?$(.*?)(?=^## |\Z)", book, re.M | re.S)
    return m.group(1) if m else ""


def _rows(text: str) -> dict[str, list[str]]:
    """Markdown table rows keyed by their first cell (stripped), cells stripped."""
    out = {}
    for line in text.splitlines():
        if line.startswith("|") and not line.startswith("|---"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            out.setdefault(cells[0], cells)
    return out


def _code_sections() -> dict[str, str]:
    """Option -> rule section, from the comments of UnoRules' fields in uno_env/rules.py."""
    src = inspect.getsource(UnoRules)
    return dict(re.findall(r"^\s+(\w+):[^=\n]+=[^#\n]+#\s*(R\d+)\b", src, re.M))


# --- checks ----------------------------------------------------------------------------------


def heading_problems(book: str) -> list[str]:
    out = []
    for n in SECTIONS:
        count = len(re.findall(rf"^## R{n}\. \S", book, re.M))
        if count != 1:
            out.append(f"heading '## R{n}. …' appears {count} times (want 1)")
    for n in re.findall(r"^## R(\d+)\.", book, re.M):
        if int(n) not in SECTIONS:
            out.append(f"unexpected section R{n}")
    return out


def option_name_problems(book: str) -> list[str]:
    return [f"option `{name}` is not named in the book" for name in OPTION_NAMES if f"`{name}`" not in book]


def allowed_value_problems(book: str) -> list[str]:
    out = []
    for name, values in rules_module._CHOICES.items():
        for v in values:
            if f"`'{v}'`" not in book:
                out.append(f"value `'{v}'` of option {name} is not in the book")
    return out


def options_table_problems(book: str) -> list[str]:
    """The 'All options' table: one row per field in order, its section, values and default."""
    rows = _rows(_section(book, "All options"))
    names = [k[1:-1] for k in rows if k.startswith("`") and k.endswith("`")]
    out = []
    if names != list(OPTION_NAMES):
        out.append(f"'All options' rows {names} differ from UnoRules fields {list(OPTION_NAMES)}")
    sections = _code_sections()
    if set(sections) != set(OPTION_NAMES):
        out.append(f"could not read every field's section from rules.py: {sorted(set(OPTION_NAMES) - set(sections))}")
    for f in dataclasses.fields(UnoRules):
        row = rows.get(f"`{f.name}`")
        if row is None or len(row) < 5:
            out.append(f"no 'All options' row for `{f.name}`")
            continue
        _, section, values, default, _ = row[:5]
        if f.name in sections and section != sections[f.name]:
            out.append(f"`{f.name}`: section {section!r}, the code says {sections[f.name]!r}")
        if default != f"`{f.default!r}`":
            out.append(f"`{f.name}`: default {default!r}, the code says `{f.default!r}`")
        if f.name in rules_module._CHOICES:
            listed = re.findall(r"`'([^'`]+)'`", values)
            if listed != list(rules_module._CHOICES[f.name]):
                out.append(f"`{f.name}`: values {listed}, the code allows {list(rules_module._CHOICES[f.name])}")
        elif f.name in rules_module._INT_RANGES:
            lo, hi = rules_module._INT_RANGES[f.name]
            want = f"integer {lo}–{hi}" if hi is not None else f"integer ≥ {lo}"
            if want not in values:
                out.append(f"`{f.name}`: values {values!r} should say {want!r}")
            if (f.name == "max_turns") != ("`None`" in values):
                out.append(f"`{f.name}`: `None` allowed only for max_turns ({values!r})")
        elif isinstance(f.default, bool):
            if values != "`True`, `False`":
                out.append(f"`{f.name}`: a bool option, values {values!r}")
        elif f.name in ("card_points", "card_counts"):
            if f"{NUM_CARD_TYPES} integers" not in values or "`None`" not in values:
                out.append(f"`{f.name}`: values {values!r}")
        else:
            out.append(f"`{f.name}`: the test does not know this kind of option")
    return out


def preset_problems(book: str) -> list[str]:
    rows = _rows(_section(book, "Presets"))
    listed = [k[1:-1] for k in rows if k.startswith("`")]
    out = []
    if listed != list(PRESETS):
        out.append(f"preset rows {listed} differ from uno_env.rules.PRESETS {list(PRESETS)}")
    for name, overrides in PRESETS.items():
        row = rows.get(f"`{name}`")
        if row is None:
            out.append(f"preset `{name}` has no row")
            continue
        written = set(re.findall(r"`(\w+=[^`]+)`", row[1]))
        want = {f"{k}={v!r}" for k, v in overrides.items()}
        if written != want:
            out.append(f"preset `{name}`: overrides {sorted(written)}, the code has {sorted(want)}")
    return out


def forbidden_path_problems(book: str) -> list[str]:
    return [
        f"the book names {bad!r}" for bad in ("../shared", "/shared/", "RULES.md", "seeds/", "/work/") if bad in book
    ]


def card_problems(book: str) -> list[str]:
    r1 = _section(book, "R1.")
    rows = _rows(r1)
    out = []
    for t in range(WILD, NUM_CARD_TYPES):
        row = rows.get(str(t))
        if row is None or row[1].lower() != CARD_NAMES[t]:
            out.append(f"R1: card id {t} should be {CARD_NAMES[t]!r}, row {row}")
    if "0–51" not in rows or "color * 13 + rank" not in rows["0–51"][1]:
        out.append("R1: no row for the coloured ids 0–51 = color * 13 + rank")
    for deck in rules_module._CHOICES["deck"]:
        row = rows.get(f"`{deck}`")
        if row is None or row[1] != str(int(deck_counts(deck).sum())):
            out.append(f"R1: deck `{deck}` should have {int(deck_counts(deck).sum())} cards, row {row}")
    return out


def action_problems(book: str) -> list[str]:
    rows = _rows(_section(book, "R2."))
    want = {
        f"0–{NUM_CARD_TYPES - 1}": "PLAY",
        str(A.DRAW): "DRAW",
        str(A.PASS): "PASS",
        f"{A.CHOOSE_RED}–{A.CHOOSE_BLUE}": "CHOOSE_COLOR",
        str(A.CHALLENGE): "CHALLENGE",
        str(A.ACCEPT): "ACCEPT",
        str(A.CALL_UNO): "CALL_UNO",
        str(A.CATCH_UNO): "CATCH_UNO",
        f"{A.SWAP_WITH_FIRST}–{A.SWAP_WITH_LAST}": "SWAP_WITH",
        f"{A.PLAY_DOUBLE_FIRST}–{A.NUM_ACTIONS - 1}": "PLAY_DOUBLE",
    }
    out = []
    for ids, action in want.items():
        row = rows.get(ids)
        if row is None or not row[1].startswith(action):
            out.append(f"R2: ids {ids} should be {action}, row {row}")
    if f"`{A.PLAY_DOUBLE_FIRST} + color*10 + rank`" not in book:
        out.append("R2: the PLAY_DOUBLE formula is missing or wrong")
    if f"Discrete({A.NUM_ACTIONS})" not in book:
        out.append(f"R2: the action space Discrete({A.NUM_ACTIONS}) is not named")
    return out


def observation_problems(book: str) -> list[str]:
    r11 = _section(book, "R11.")
    out = [f"R11: observation field `{name}` is not listed" for name, _, _ in OBS_FIELDS if f"`{name}`" not in r11]
    out += [f"phase `{p}` is not named" for p in PHASE_NAMES if f"`{p}`" not in book]
    return out


def reading_problems(book: str) -> list[str]:
    """Every R12.n the code cites is an item of R12; every Rn it cites is a section."""
    r12 = _section(book, "R12.")
    items = {int(n) for n in re.findall(r"^(\d+)\. ", r12, re.M)}
    cited_r12, cited = set(), set()
    for path in (ROOT / "uno_env").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        cited_r12 |= {int(n) for n in re.findall(r"\bR12\.(\d+)", text)}
        cited |= {int(n) for n in re.findall(r"\bR(\d+)\b", text)}
    out = [f"the code cites R12.{n}, the book has no such reading" for n in sorted(cited_r12 - items)]
    if items != set(range(1, max(items, default=0) + 1)):
        out.append(f"R12 readings are not numbered 1..n: {sorted(items)}")
    out += [f"the code cites R{n}, the book has no such section" for n in sorted(cited) if n not in SECTIONS]
    return out


CHECKS = (
    heading_problems,
    option_name_problems,
    allowed_value_problems,
    options_table_problems,
    preset_problems,
    forbidden_path_problems,
    card_problems,
    action_problems,
    observation_problems,
    reading_problems,
)


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
def test_rule_book_matches_the_code(check):
    assert check(BOOK) == []


def test_the_action_ids_have_one_vocabulary():
    """Each ``Action`` member's plain int (what kernels and agents import) has the member's name."""
    for member in A.Action:
        assert getattr(A, member.name) == member, member.name
    assert A.SWAP_WITH_LAST == A.SWAP_WITH_FIRST + 8 and A.PLAY_DOUBLE_FIRST == A.SWAP_WITH_LAST + 1
    for old in ("SWAP_FIRST", "SWAP_LAST", "DOUBLE_FIRST"):
        assert not hasattr(A, old)


def test_every_option_has_a_rule_section_in_the_code():
    """The sections the table is checked against are really read from rules.py."""
    assert set(_code_sections()) == set(OPTION_NAMES)


def _drop_option(book: str, name: str) -> str:
    return book.replace(f"`{name}`", name)


_first_row = re.search(r"^\| `(\w+)` \| R\d+ \|.*$", _section(BOOK, "All options"), re.M)


@pytest.mark.parametrize(
    "check, drift",
    [
        (heading_problems, lambda b: b.replace("## R4. ", "## R4 ", 1)),
        (heading_problems, lambda b: b.replace("## R12. ", "## R13. ", 1)),
        (option_name_problems, lambda b: _drop_option(b, "wd4_bluffing")),
        (option_name_problems, lambda b: _drop_option(b, "open_hands")),
        (allowed_value_problems, lambda b: b.replace("`'next_draws_three_if_stuck'`", "'next_draws_three_if_stuck'")),
        (
            options_table_problems,
            lambda b: b.replace(
                "| `hand_size` | R3 | integer 1–50 | `7` |", "| `hand_size` | R3 | integer 1–50 | `8` |"
            ),
        ),
        (options_table_problems, lambda b: b.replace("| `challenge` | R6 |", "| `challenge` | R5 |")),
        (
            options_table_problems,
            lambda b: b.replace(
                "| `max_turns` | R8 | integer ≥ 1, or `None` |", "| `max_turns` | R8 | integer ≥ 0, or `None` |"
            ),
        ),
        (
            options_table_problems,
            lambda b: b.replace(
                "| `scoring` | R8 | `'winner_takes'`, `'elimination'` |", "| `scoring` | R8 | `'winner_takes'` |"
            ),
        ),
        (options_table_problems, lambda b: b.replace(_first_row.group(0) + "\n", "", 1)),
        (preset_problems, lambda b: b.replace("`wd4_wilds_count_as_match=True` |", "|", 1)),
        (preset_problems, lambda b: b.replace("| `house` |", "| `home` |", 1)),
        (forbidden_path_problems, lambda b: b + "\nSee ../shared/RULES.md.\n"),
        (card_problems, lambda b: b.replace("| 53 | Wild Draw Four |", "| 53 | Wild Draw Two |")),
        (card_problems, lambda b: b.replace("| `swap_hands` | 112 |", "| `swap_hands` | 108 |")),
        (action_problems, lambda b: b.replace("| 57 | DRAW", "| 58 | DRAW", 1)),
        (action_problems, lambda b: b.replace("| 67–75 | SWAP_WITH", "| 67–76 | SWAP_WITH", 1)),
        (observation_problems, lambda b: b.replace("| `wd4_prev_color` |", "| wd4_prev_color |")),
        (reading_problems, lambda b: re.sub(r"^21\. ", "- ", b, flags=re.M)),
    ],
    ids=lambda x: getattr(x, "__name__", ""),
)
def test_drifted_book_is_caught(check, drift):
    drifted = drift(BOOK)
    assert drifted != BOOK, "the drift no longer applies to the book; update this test"
    assert check(drifted), f"{check.__name__} did not notice the drift"
