"""Helpers shared by several test modules, imported as ``from helpers import ...`` (as ``builder``):
rule sets to play agents under, the docs' Python snippets, a search agent's walk over a batch,
and a digest of seeded random play."""

from __future__ import annotations

import hashlib
import json
import re
import threading
from pathlib import Path

import numpy as np

from uno_env import Engine, UnoRules, action_name, sample_legal

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

# --- rule sets -------------------------------------------------------------------------------

OTHER_RULE_SETS = {
    "official": UnoRules.preset("official"),
    "swap_hands": UnoRules.preset("swap_hands", custom_wild_rule="others_draw_two"),
    "house": UnoRules.preset("house"),
    "explicit_uno_doubles": UnoRules.preset("classic", uno_call="explicit", allow_doubles=True),
    "teams": UnoRules.preset("classic", teams=True),
    "elimination": UnoRules.preset("classic", scoring="elimination", episode="match", target_points=100),
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
