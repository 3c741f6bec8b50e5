"""Scenario builder: a position from card names, in one engine game (docs/rules.md tables)."""

from __future__ import annotations

import copy
from collections.abc import Sequence

import numpy as np

from uno_env import ACTION_NAMES, Engine, UnoRules, card_name, parse_card
from uno_env.cards import COLOR_NAMES, deck_counts
from uno_env.engine import batch
from uno_env.engine import layout as L


def cards(names: str | Sequence[str]) -> list[int]:
    """Card ids from "red 7, blue skip, wild" (or a list of names)."""
    if isinstance(names, str):
        names = [n for n in (x.strip() for x in names.split(",")) if n]
    return [parse_card(n) for n in names]


def position(
    hands: Sequence[str],
    top: str,
    *,
    draw: str = "",
    discard: str = "",
    player: int = 0,
    color: int | None = None,
    direction: int = 1,
    rules: UnoRules | None = None,
    history: int = 0,
    **rule_options,
) -> Engine:
    """A one-game engine at a position in phase `play`.

    ``hands`` gives each seat's cards; ``top`` the top of the discard pile (``discard`` the
    cards below it, bottom first); ``draw`` the next cards to be drawn, first drawn first. The
    rest of the deck goes under ``draw`` in id order, so nothing is random. ``history`` is the
    engine's (``Engine(history=K)``).
    """
    rules = rules or UnoRules.preset("classic", **rule_options)
    hand_ids = [cards(h) for h in hands]
    discard_ids = cards(discard) + cards(top)
    draw_top = cards(draw)
    remaining = deck_counts(rules.deck, rules.custom_wild_count).astype(np.int64)
    for c in [c for h in hand_ids for c in h] + discard_ids + draw_top:
        remaining[c] -= 1
    if (remaining < 0).any():
        raise ValueError(f"more copies than the deck holds of {np.flatnonzero(remaining < 0)}")
    rest = list(np.repeat(np.arange(remaining.size), remaining))
    engine = Engine(1, len(hands), rules, seed=0, history=history)
    engine.set_game(
        0,
        hands=hand_ids,
        discard_pile=discard_ids,
        draw_pile=rest + draw_top[::-1],
        current_player=player,
        current_color=color,
        direction=direction,
    )
    return engine


def place(engine, i, rules, hands, top, draw="", player=0):
    """Game i of ``engine`` at a position: hands and top by card names, ``draw`` drawn first, the
    rest of the deck under it (no card left when the hands hold it all)."""
    hand_ids = [cards(h) for h in hands]
    placed = [c for h in hand_ids for c in h] + cards(top) + cards(draw)
    rest = deck_counts(rules.deck, rules.custom_wild_count).astype(np.int64) - np.bincount(placed, minlength=57)
    engine.set_game(
        i,
        hands=hand_ids,
        discard_pile=cards(top),
        current_player=player,
        draw_pile=list(np.repeat(np.arange(57), rest)) + cards(draw)[::-1],
    )


def legal(engine: Engine) -> set[int]:
    """Legal action ids of game 0."""
    return set(np.flatnonzero(engine.legal_mask[0]).tolist())


def act(engine: Engine, name: str) -> None:
    """Step game 0 with an action given by its name ("play red 7", "draw", "choose blue")."""
    engine.step(np.array([ACTION_NAMES.index(name)]))


def check(engine: Engine, expected: dict) -> None:
    """Compare game 0 against expected facts (game_state keys, plus a few derived ones)."""
    state = engine.game_state(0)
    for key, want in expected.items():
        if key == "hand_sizes":
            got = [len(h) for h in state["hands"]]
        elif key == "top":
            got = card_name(state["top_card"])
        elif key == "color":
            got = None if state["current_color"] is None else COLOR_NAMES[state["current_color"]]
        elif key == "legal":
            got = {ACTION_NAMES[a] for a in legal(engine)}
            want = set(want)
        elif key == "legal_has":
            got = {ACTION_NAMES[a] for a in legal(engine)} & set(want)
            want = set(want)
        elif key == "legal_lacks":
            got = {ACTION_NAMES[a] for a in legal(engine)} & set(want)
            want = set()
        elif key == "hand":
            got = sorted(card_name(c) for c in state["hands"][want[0]])
            want = sorted(card_name(c) for c in cards(want[1]))
        elif key == "rewards":
            got = engine.rewards[0].tolist()
        elif key == "terminated":
            got = bool(engine.terminated[0])
        elif key == "truncated":
            got = bool(engine.truncated[0])
        else:
            got = state[key]
        assert got == want, f"{key}: expected {want!r}, got {got!r}"


def play_scenario(setup: dict, actions: Sequence[str], expected: dict) -> Engine:
    """One row of a scenario table: the position, the actions by name, the expected facts,
    and every invariant still holding afterwards."""
    engine = position(**setup)
    for name in actions:
        act(engine, name)
    check(engine, expected)
    assert engine.check_invariants() == []
    return engine


def redeal_hidden(engine: Engine, b: int, seat: int, rng: np.random.Generator) -> bool:
    """Redeal in place what ``seat`` cannot see in game b; True if anything moved.

    Written here rather than with ``Engine.resample_hidden`` so the test does not trust the
    engine's own idea of what is hidden. The outputs of game b are recomputed afterwards."""
    n = engine.num_players
    g, pl, hands, piles = engine._g, engine._pl, engine._hands, engine._piles
    size = int(g[b, L.G_DRAW_SIZE])
    old = (hands[b].copy(), piles[b, L.PILE_DRAW, :size].copy())
    others = [p for p in range(n) if p != seat]
    pool = list(piles[b, L.PILE_DRAW, :size]) + [c for p in others for c in np.repeat(np.arange(57), hands[b, p])]
    pool = list(rng.permutation(np.array(pool, np.int64)))
    for p in others:
        k = int(pl[b, p, L.PL_HAND_SIZE])
        hands[b, p] = np.bincount(np.array(pool[:k], np.int64), minlength=57)
        pool = pool[k:]
    piles[b, L.PILE_DRAW, :size] = pool
    which = np.zeros(engine.num_envs, bool)
    which[b] = True
    engine._run_codes(which, batch.REFRESH)
    return not (np.array_equal(old[0], hands[b]) and np.array_equal(old[1], piles[b, L.PILE_DRAW, :size]))


def twin_positions(num_players: int, games: int, seed: int, history: int = 0) -> list[tuple[Engine, Engine, int]]:
    """Pairs of one-game engines at a decision with a choice, differing only in what the acting seat
    cannot see (``redeal_hidden``), with that seat: reached by seeded random play, keeping ``history`` events."""
    rng = np.random.default_rng(seed)
    out = []
    for g in range(games):
        engine = Engine(1, num_players, UnoRules(), seed=seed + g, history=history)
        for _ in range(int(rng.integers(4, 40))):
            if engine.terminated[0] or engine.truncated[0]:
                break
            engine.step(np.array([rng.choice(np.flatnonzero(engine.legal_mask[0]))]))
        if engine.terminated[0] or engine.truncated[0] or engine.legal_mask[0].sum() < 2:
            continue
        twin = copy.deepcopy(engine)
        if redeal_hidden(twin, 0, int(engine.game_state(0)["current_player"]), rng):
            out.append((engine, twin, int(engine.game_state(0)["current_player"])))
    return out
