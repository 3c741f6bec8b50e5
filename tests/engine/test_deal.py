"""Constrained dealing (uno_env.engine.deal, Engine.resample_hidden(exclude=...)): every
exclusion respected, every card dealt once, and uniform among the deals that respect them."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest
from scipy import stats

from uno_env import Engine, UnoRules
from uno_env.cards import NUM_CARD_TYPES
from uno_env.engine import deal_constrained
from uno_env.engine.deal import APPROXIMATE, EXACT, RELAXED


def exact_distribution(counts, sizes, exclude):
    """Probability of every outcome (hands as counts, pile as a sequence) under the uniform
    distribution over the deals of distinct physical cards that respect ``exclude``."""
    cards = [t for t, c in enumerate(counts) for _ in range(c)]
    weights: Counter = Counter()
    for perm in itertools.permutations(range(len(cards))):
        types = [cards[i] for i in perm]
        at, ok, hands = 0, True, []
        for p, h in enumerate(sizes):
            hand = types[at : at + h]
            at += h
            ok &= not any(exclude[p, t] for t in hand)
            hands.append(tuple(np.bincount(hand, minlength=len(counts))))
        if ok:
            weights[(tuple(hands), tuple(types[at:]))] += 1
    total = sum(weights.values())
    return {k: v / total for k, v in weights.items()}


CASES = {
    # two seats competing for the few cards they may hold: proposals get rejected
    "two constrained seats": ([2, 2, 1, 1], [2, 2, 0], [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 0, 0]]),
    "one constrained seat, pile order": ([1, 1, 1, 2], [0, 2, 0], [[0, 0, 0, 0], [0, 0, 0, 1], [0, 0, 0, 0]]),
    "three seats, a free one between": ([2, 1, 2, 1], [1, 2, 2], [[1, 1, 0, 0], [0, 0, 0, 0], [0, 0, 1, 1]]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_uniform_within_the_exclusions(case):
    counts, sizes, exclude = (np.asarray(x) for x in CASES[case])
    exclude = exclude.astype(bool)
    want = exact_distribution(counts, sizes, exclude)
    n = 30000
    hands, pile, status = deal_constrained(counts, sizes, exclude, np.random.default_rng(1), num=n, max_tries=1000)
    assert (status == EXACT).all()
    got = Counter((tuple(tuple(h) for h in hands[i]), tuple(pile[i])) for i in range(n))
    assert set(got) <= set(want)  # nothing outside the support: every exclusion respected
    keys = sorted(want)
    observed = np.array([got[k] for k in keys])
    expected = np.array([want[k] * n for k in keys])
    assert stats.chisquare(observed, expected).pvalue > 1e-3
    # every card once
    assert (hands.sum(1) + np.stack([np.bincount(r, minlength=counts.size) for r in pile]) == counts).all()


def test_unsatisfiable_exclusions_are_dropped_and_said_so():
    counts, sizes = np.array([3, 1]), np.array([2, 0])
    exclude = np.array([[1, 0], [0, 0]], bool)  # seat 0 needs 2 cards of type 1: there is one
    hands, pile, status = deal_constrained(counts, sizes, exclude, np.random.default_rng(0), num=20)
    assert (status == RELAXED).all()
    assert (hands.sum((1, 2)) == 2).all() and pile.shape == (20, 2)


def test_max_tries_reached_gives_a_valid_deal():
    counts, sizes = np.array([4, 4]), np.array([3, 3])
    exclude = np.array([[1, 0], [0, 1]], bool)  # proposals fail often, none is infeasible
    hands, _, status = deal_constrained(counts, sizes, exclude, np.random.default_rng(0), num=200, max_tries=1)
    assert set(status.tolist()) <= {EXACT, APPROXIMATE}
    assert (hands[:, 0, 0] == 0).all() and (hands[:, 1, 1] == 0).all()


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"exclude": np.zeros((2, 3), bool)}, "exclude must be a bool array of shape"),
        ({"exclude": np.zeros((3, 2), int)}, "exclude must be a bool array of shape"),
        ({"sizes": np.array([9, 0, 0])}, "only 4"),
        ({"num": 0}, "positive integers"),
    ],
)
def test_bad_arguments_are_named(kwargs, message):
    args = {"counts": np.array([2, 2]), "sizes": np.array([1, 1, 0]), "exclude": np.zeros((3, 2), bool)}
    args.update(kwargs)
    num = args.pop("num", 1)
    with pytest.raises(ValueError, match=message):
        deal_constrained(args["counts"], args["sizes"], args["exclude"], np.random.default_rng(0), num=num)


@pytest.mark.parametrize("num_players", [2, 4])
def test_engine_redeal_respects_exclusions_and_keeps_the_cards(num_players):
    rules = UnoRules.preset("classic")
    engine = Engine(64, num_players, rules, seed=3)
    rng = np.random.default_rng(0)
    for _ in range(10):  # into the game a little
        engine.step(np.array([np.flatnonzero(m)[0] for m in engine.legal_mask]))
    seat = 0
    games = np.flatnonzero(engine.current_player == seat)  # a search redeals for the seat to act
    assert games.size > 3
    before = [engine.game_state(i) for i in range(64)]
    piles_before = [sorted(engine.draw_pile(i)) for i in range(64)]
    exclude = np.zeros((num_players, NUM_CARD_TYPES), bool)
    exclude[1, :13] = True  # seat 1 holds no red card
    exclude[num_players - 1, 13:26] = True
    status = dict(zip(games, engine.resample_hidden(games, seat, rng, exclude=exclude), strict=True))
    for i in games:
        after = engine.game_state(i)
        assert after["hands"][seat] == before[i]["hands"][seat]
        assert after["discard_pile"] == before[i]["discard_pile"]

        def hidden(st, pile):
            return sorted(pile + [c for p in range(num_players) if p != seat for c in st["hands"][p]])

        assert hidden(after, engine.draw_pile(i)) == hidden(before[i], piles_before[i])
        assert [len(h) for h in after["hands"]] == [len(h) for h in before[i]["hands"]]
        if status[i] != RELAXED:
            assert not any(c < 13 for c in after["hands"][1])
            assert not any(13 <= c < 26 for c in after["hands"][num_players - 1])
    assert engine.check_invariants() == []


def test_engine_rejects_a_bad_exclusion_and_changes_nothing():
    engine = Engine(2, 2, seed=0)
    state = engine.game_state(0)
    with pytest.raises(ValueError, match="exclude must be a bool array"):
        engine.resample_hidden(0, 0, np.random.default_rng(0), exclude=np.zeros((3, NUM_CARD_TYPES), bool))
    assert engine.game_state(0) == state
