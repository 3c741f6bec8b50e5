"""Helpers shared by several test modules, imported as ``from helpers import ...`` (as ``builder``):
the repository root, the one table of mixed rule sets, rule sets to play agents under, the docs'
Python snippets, a search agent's walk over a batch, and a digest of seeded random play."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import threading
from pathlib import Path

import numpy as np

from uno_env import Engine, UnoRules, action_name, sample_legal

ROOT = Path(__file__).resolve().parents[1]
# The smallest PPO run the training tests start train.py with; each adds its own options.
TINY_PPO = [
    *("--total-timesteps", "2048", "--num-envs", "16", "--n-steps", "64"),
    *("--batch-size", "512", "--n-epochs", "1", "--hidden", "32"),
]
DOCS = ROOT / "docs"

# --- rule sets -------------------------------------------------------------------------------

MIXED_RULES = {
    "explicit_uno_doubles": UnoRules(
        uno_call="explicit", uno_penalty=1, allow_doubles=True, illegal_action="penalty", forbid_last_action_card=True
    ),
    "elimination_stacking": UnoRules(
        scoring="elimination", episode="match", target_points=60, stack_draw_two=True, stack_draw_four=True
    ),
    "teams_match": UnoRules(teams=True, episode="match", target_points=80, uno_call="explicit"),
    "swap_explicit_penalty": UnoRules.preset("swap_hands", uno_call="explicit", illegal_action="penalty"),
    "swap_discard_stacking": UnoRules(
        deck="swap_hands",
        custom_wild_rule="opponents_discard_wilds",
        stack_draw_two=True,
        stack_draw_four=True,
        challenge=False,
    ),
    "swap_elimination_discard": UnoRules(
        deck="swap_hands",
        custom_wild_rule="opponents_discard_wilds",
        scoring="elimination",
        episode="match",
        target_points=40,
    ),
    "swap_until_color": UnoRules(deck="swap_hands", custom_wild_rule="next_draws_until_color", stack_draw_two=True),
    "shuffle_others_draw": UnoRules(
        deck="shuffle_hands", custom_wild_rule="others_draw_two", stack_draw_four=True, draw_until_playable=True
    ),
    "shuffle_until_color_strict": UnoRules(
        deck="shuffle_hands",
        custom_wild_rule="next_draws_until_color",
        allow_voluntary_draw=False,
        wd4_bluffing=False,
        forbid_last_action_card=True,
        end_on_empty_deck=True,
        wild_first_card="redraw",
        illegal_action="penalty",
    ),
    "shuffle_until_color_stacking": UnoRules(
        deck="shuffle_hands",
        custom_wild_rule="next_draws_until_color",
        end_on_empty_deck=True,
        draw_until_playable=True,
        stack_draw_two=True,
        stack_draw_four=True,
        challenge=False,
    ),
    "fewest_cards_open": UnoRules(
        max_turns=60,
        turn_limit_rule="fewest_cards_wins",
        open_hands=True,
        deck="shuffle_hands",
        custom_wild_rule="next_draws_three_if_stuck",
    ),
    "strict_wd4_fewest_cards": UnoRules(
        wd4_bluffing=False,
        wd4_wilds_count_as_match=True,
        deck="shuffle_hands",
        stack_draw_four=True,
        max_turns=40,
        turn_limit_rule="fewest_cards_wins",
        allow_voluntary_draw=False,
    ),
    "open_doubles_explicit": UnoRules(open_hands=True, allow_doubles=True, uno_call="explicit"),
    "drawn_color_or_wild_reshuffle": UnoRules(
        drawn_card="play_color_or_wild", reshuffle="every_played_card", episode="match"
    ),
}
"""The one table of mixed rule sets (options beyond the presets, combined): a test module selects
from it by name, and resizes with ``mixed``."""


def mixed(name: str, **sizes) -> UnoRules:
    """``MIXED_RULES[name]`` resized for a test (``hand_size``, ``max_turns``, ``target_points``):
    smaller hands and limits end rounds within a test's steps."""
    return dataclasses.replace(MIXED_RULES[name], **sizes)


OTHER_RULE_SETS = {
    "official": UnoRules.preset("official"),
    "swap_hands": UnoRules.preset("swap_hands", custom_wild_rule="others_draw_two"),
    "house": UnoRules.preset("house"),
    "explicit_uno_doubles": MIXED_RULES["explicit_uno_doubles"],
    "teams": UnoRules.preset("classic", teams=True),
    "elimination": MIXED_RULES["elimination_stacking"],
}
"""Rule sets besides ``classic`` that reach every phase and option agents must handle."""
EVERY_RULE_SET = {"classic": UnoRules.preset("classic"), **OTHER_RULE_SETS}

# --- the docs' snippets ----------------------------------------------------------------------

FENCE = re.compile(r"^(<!-- no-run -->\n)?```python\n(.*?)^```", re.M | re.S)


def page_text(page: str) -> str:
    """A page of the site, or "../README.md" for the README (the front page, outside the site)."""
    return (DOCS / page).read_text()


def printed_twice(code: str) -> list[str]:
    """What ``code`` prints, run twice in fresh namespaces (a seeded snippet prints the same)."""
    import contextlib
    import io

    printed = []
    for _ in range(2):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(code, {})
        printed.append(out.getvalue())
    return printed


def snippets(page: str) -> list[str]:
    """The ```python blocks of a page, except those right after a `<!-- no-run -->` line."""
    return [m.group(2) for m in FENCE.finditer(page_text(page)) if not m.group(1)]


# --- search agents ---------------------------------------------------------------------------


def walk(agent, engine, rng, steps, use_engine):
    """Let the agent play every seat for a number of steps; return its actions."""
    out = []
    B = engine.num_envs
    for _ in range(steps):
        before = [engine.game_state(i) for i in range(B)]
        obs, mask = engine.observation.copy(), engine.legal_mask.copy()
        if use_engine:
            actions = np.array([agent.act_in(engine, i, rng) for i in range(B)], np.int64)
        else:
            actions = agent.act(obs, mask, rng)
        # Searching never touches the game it searches.
        assert [engine.game_state(i) for i in range(B)] == before
        assert np.array_equal(engine.observation, obs) and np.array_equal(engine.legal_mask, mask)
        ok = mask[np.arange(B), actions]
        assert ok.all(), [action_name(a) for a in actions[~ok]]
        out.append(actions)
        engine.step(actions)
    return np.stack(out)


# --- seeded play -----------------------------------------------------------------------------

OUTPUTS = ("observation", "legal_mask", "current_player", "rewards", "terminated", "truncated", "final_observation")


def engine_view(e: Engine) -> str:
    """Everything observable about an engine's games, as one JSON string."""
    return json.dumps(
        {
            "states": [e.game_state(b) for b in range(e.num_envs)],
            "draw_piles": [e.draw_pile(b) for b in range(e.num_envs)],
            "records": [e.record(b) for b in range(e.num_envs)],
            "last_records": [e.last_record(b) for b in range(e.num_envs)],
            "outputs": [getattr(e, name).tolist() for name in OUTPUTS],
        }
    )


def play_digest(rules: UnoRules, players: int, seed: int, steps: int, start: threading.Barrier | None = None) -> str:
    """A digest of 16 games of seeded random play: every output of every step and the end state."""
    e = Engine(16, players, rules, seed=seed, autoreset=True, record=True)
    rng = np.random.default_rng(seed)
    digest = hashlib.sha256()
    if start is not None:
        start.wait()
    for _ in range(steps):
        res = e.step(sample_legal(e.legal_mask, rng))
        for arr in res:
            digest.update(arr.tobytes())
    digest.update(engine_view(e).encode())
    return digest.hexdigest()


def labels(teacher: str, opponents: list[str], rules: UnoRules, num_players: int, num_positions: int, **kw):
    """``training.expert.label_positions`` of a fresh teacher against fresh tables, named by spec."""
    from agents.registry import make_agent
    from training.expert import label_positions
    from training.opponents import opponent_tables

    tables = opponent_tables(",".join(opponents), rules, num_players)
    return label_positions(make_agent(teacher, rules), tables, rules, num_players, num_positions, **kw)
