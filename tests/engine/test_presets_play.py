"""Random batched play under every preset and mixed option sets: invariants hold after every
step, and observations depend on public information only (R11)."""

import numpy as np
import pytest
from helpers import MIXED_RULES

from uno_env import Engine, UnoRules, sample_legal
from uno_env.engine import layout as L

# The mixed rule sets played here, from the one table (helpers.MIXED_RULES).
MIXED = (
    "explicit_uno_doubles",
    "elimination_stacking",
    "swap_discard_stacking",
    "shuffle_until_color_strict",
    "fewest_cards_open",
)
CASES = [
    (f"preset:{p}", UnoRules.preset(p), n)
    for p in ("classic", "official", "swap_hands", "house", "rlcard")
    for n in (2, 3, 4, 7, 10)
]
CASES += [(f"mixed:{k}", MIXED_RULES[k], n) for k in MIXED for n in (2, 3, 4, 7, 10)]
CASES += [("teams_match", MIXED_RULES["teams_match"], n) for n in (4, 6, 8, 10)]


@pytest.mark.parametrize("name, rules, num_players", CASES, ids=[f"{c[0]}-{c[2]}p" for c in CASES])
def test_invariants_under_random_play(name, rules, num_players):
    """Every card in one place, hand sizes consistent, mask non-empty and only held cards played;
    episode ends give +1 to winners and -1 to the rest (0 when truncated)."""
    engine = Engine(64, num_players, rules, seed=num_players, autoreset=True)
    rng = np.random.default_rng(1)
    ended = 0
    for _ in range(1000):
        mask = engine.legal_mask.copy()
        actions = sample_legal(mask, rng)
        assert (actions >= 0).all()
        result = engine.step(actions)
        assert engine.check_invariants() == []
        for b in np.flatnonzero(result.terminated):
            ended += 1
            assert set(result.rewards[b].tolist()) <= {1.0, -1.0} and (result.rewards[b] == 1.0).any()
        assert (result.rewards[result.truncated] == 0).all()
    assert ended + int(engine._g[:, L.G_ROUND].sum()) > 0


def _hide_and_shuffle(engine, b, seat, rng):
    """Exchange cards between the other hands and the draw pile (sizes kept) and reorder the draw
    pile: exactly the information `seat` must not see."""
    n = engine.num_players
    g, pl, hands, piles = engine._g, engine._pl, engine._hands, engine._piles
    size = g[b, L.G_DRAW_SIZE]
    pool = list(piles[b, L.PILE_DRAW, :size])
    others = [p for p in range(n) if p != seat]
    for p in others:
        pool += list(np.repeat(np.arange(57), hands[b, p]))
    pool = list(rng.permutation(pool))
    for p in others:
        k = pl[b, p, L.PL_HAND_SIZE]
        hands[b, p] = np.bincount(np.array(pool[:k], np.int64), minlength=57)
        pool = pool[k:]
    piles[b, L.PILE_DRAW, :size] = pool


@pytest.mark.parametrize(
    "rules",
    [UnoRules.preset(p) for p in ("classic", "official", "swap_hands", "house", "rlcard")]
    + [MIXED_RULES["explicit_uno_doubles"]],
    ids=["classic", "official", "swap_hands", "house", "rlcard", "explicit_uno"],
)
def test_observation_depends_only_on_public_information(rules):
    """R11: changing other hands (same sizes) or the draw-pile order never changes what the
    player to act observes; with open_hands it does."""
    engine = Engine(32, 4, rules, seed=3, autoreset=True)
    rng = np.random.default_rng(0)
    checked = 0
    for step in range(300):
        engine.step(sample_legal(engine.legal_mask, rng))
        if step % 10:
            continue
        seats = engine.current_player.astype(np.int64)
        before = engine.observe(seats)
        saved = (engine._hands.copy(), engine._piles.copy())
        for b in range(engine.num_envs):
            _hide_and_shuffle(engine, b, int(seats[b]), rng)
        assert np.array_equal(before, engine.observe(seats))
        engine._hands[:], engine._piles[:] = saved
        checked += 1
    assert checked == 30


def test_open_hands_observation_reveals_the_other_hands():
    rules = UnoRules(open_hands=True)
    engine = Engine(32, 4, rules, seed=3)
    seats = engine.current_player.astype(np.int64)
    before = engine.observe(seats)
    rng = np.random.default_rng(0)
    for b in range(engine.num_envs):
        _hide_and_shuffle(engine, b, int(seats[b]), rng)
    assert not np.array_equal(before, engine.observe(seats))
