"""``rules="rlcard"`` plays RLCard 1.2.0's UNO exactly (docs/rules.md, Presets; ``uno_env/rlcard_env.py``).

RLCard's own ``UnoGame`` (``rlcard/games/uno/game.py``, ``round.py``, ``dealer.py``) plays seeded
games with random legal actions. At every decision its state is set into an engine playing
``rules="rlcard"`` (``set_rlcard_game``), and:

* the legal actions agree exactly: RLCard's legal ids are the entries of ``RLCARD_ACTIONS``
  whose uno_env action is legal, and every legal uno_env action is one of them; after a wild
  the engine offers exactly the four colours (or ends the round: the wild was the last card);
* the same action (``RLCARD_ACTIONS``: a wild is PLAY then CHOOSE_COLOR) leads to the same
  state: every hand, the deck in its order, the played cards in their order, the target card,
  and, while the game goes on, the target colour, the current player and the direction; at the
  end the same winner (and, with two players, the same payoffs).

Chance inside a step (a reshuffle's order, the colour of a drawn wild) comes from each side's
own generator, so it is compared this way: RLCard's ``np_random`` answers the calls RLCard
makes inside a step with the outcome the engine drew for the same step (the order its pile
took, the colour it drew), and fails when RLCard asks for an outcome the engine did not draw,
or does not ask for one it did. A step that differs in what is random therefore fails, and
the two states must then agree exactly. RLCard's deal (the shuffle, the first card) uses its
own seeded generator; the engine's first-card rules are checked in ``tests/engine/test_rules_options_play.py``.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np
import pytest

rlcard = pytest.importorskip("rlcard")

from rlcard.games.uno.game import UnoGame  # noqa: E402
from rlcard.games.uno.utils import ACTION_LIST, ACTION_SPACE  # noqa: E402

from uno_env import Engine, UnoRules  # noqa: E402
from uno_env.actions import CHOOSE_RED, DRAW  # noqa: E402
from uno_env.engine import layout as L  # noqa: E402
from uno_env.rlcard_env import (  # noqa: E402
    RLCARD_ACTIONS,
    RLCARD_COLORS,
    from_rlcard_action,
    rlcard_card,
    set_rlcard_game,
    to_rlcard_action,
)

LETTER = {c: letter for letter, c in RLCARD_COLORS.items()}
COLORS = set(range(CHOOSE_RED, CHOOSE_RED + 4))
# RLCard games per player count: two players is RLCard's UNO; more seats check the turn order.
GAMES = {2: 1000, 3: 100, 4: 100}
SHORT_DECK_GAMES = 100


class EngineChance:
    """RLCard's ``np_random``: its own seeded generator for the deal; inside a step, the
    outcomes the engine drew for that step (``expect``), in the order RLCard asks for them."""

    def __init__(self, seed: int) -> None:
        self.real = np.random.RandomState(seed)
        self.stepping = False
        self.orders: list[list[int]] = []
        self.colors: list[int] = []

    def expect(self, orders: list[list[int]], colors: list[int]) -> None:
        self.orders, self.colors, self.stepping = orders, colors, True

    def done(self) -> None:
        self.stepping = False
        assert not self.orders, f"the engine reshuffled ({self.orders}) where RLCard did not"
        assert not self.colors, f"the engine drew a colour ({self.colors}) where RLCard did not"

    def shuffle(self, cards: list) -> None:
        if not self.stepping:
            self.real.shuffle(cards)
            return
        assert self.orders, "RLCard reshuffled where the engine did not"
        want = self.orders.pop(0)
        by_type: dict[int, list] = defaultdict(list)
        for card in cards:
            by_type[rlcard_card(card)].append(card)
        assert sorted(want) == sorted(rlcard_card(c) for c in cards), "the two reshuffles hold other cards"
        cards[:] = [by_type[t].pop() for t in want]

    def choice(self, options: Any) -> Any:
        if not self.stepping:
            return self.real.choice(options)
        assert list(options) == ["r", "g", "b", "y"], options
        assert self.colors, "RLCard drew a colour where the engine did not"
        return LETTER[self.colors.pop(0)]


def test_action_table_is_rlcards():
    """RLCARD_ACTIONS follows RLCard's action_space.json, both ways."""
    names = {0: "r", 1: "y", 2: "g", 3: "b"}
    traits = ("0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "skip", "reverse", "draw_2")
    assert len(RLCARD_ACTIONS) == len(ACTION_LIST) == 61
    for k, name in enumerate(ACTION_LIST):
        action, color = from_rlcard_action(k)
        assert to_rlcard_action(action, color) == k == ACTION_SPACE[name]
        if name == "draw":
            assert (action, color) == (DRAW, None)
        elif name.endswith("-wild") or name.endswith("-wild_draw_4"):
            assert action == (52 if name.endswith("-wild") else 53)
            assert color is not None and names[color - CHOOSE_RED] == name[0]
        else:
            assert color is None and names[action // 13] + "-" + traits[action % 13] == name
    for bad in (-1, 61, 1.0, True, "draw"):
        with pytest.raises(ValueError, match="RLCard UNO action id"):
            from_rlcard_action(bad)
    with pytest.raises(ValueError, match="no RLCard UNO action"):
        to_rlcard_action(52)


def _step_chance(engine: Engine, events: list[dict]) -> tuple[list[list[int]], list[int]]:
    """What was random in the engine's step: the order of each reshuffled pile (bottom to top,
    before anything was drawn from it) and each colour drawn at random."""
    orders, colors, drawn = [], [], None
    for ev in events:
        if ev["type"] == "reshuffle":
            assert drawn is None, "two reshuffles in one step: this check cannot rebuild the first order"
            drawn = []
        elif ev["type"] == "draw" and drawn is not None:
            drawn.extend(ev["cards"])
        elif ev["type"] == "color" and ev.get("random"):
            colors.append(ev["color"])
    if drawn is not None:
        orders.append(engine.draw_pile(0) + drawn[::-1])
    return orders, colors


def _check_same_state(engine: Engine, game: UnoGame, note: str) -> None:
    rnd = game.round
    n = engine.num_players
    hands = engine._hands[0]
    for p, player in enumerate(game.players):
        want = np.bincount([rlcard_card(c) for c in player.hand], minlength=57)
        assert np.array_equal(hands[p], want), f"{note}: hand {p}"
    assert engine.draw_pile(0) == [rlcard_card(c) for c in game.dealer.deck], f"{note}: deck"
    g = engine._g[0]
    discard = engine._piles[0, L.PILE_DISCARD, : g[L.G_DISCARD_SIZE]].tolist()
    assert discard == [rlcard_card(c) for c in rnd.played_cards], f"{note}: played cards"
    top = rlcard_card(rnd.target)
    assert g[L.G_TOP] == top, f"{note}: target"
    over = bool(engine.terminated[0])
    assert over == rnd.is_over and not engine.truncated[0], f"{note}: game over"
    if not over or top < 52:  # a last wild ends the round before its colour (R12.4)
        assert g[L.G_COLOR] == RLCARD_COLORS[rnd.target.color], f"{note}: target colour"
    if not over:
        assert g[L.G_PLAYER] == rnd.current_player and g[L.G_DIRECTION] == rnd.direction, f"{note}: turn"
        return
    winners = [p for p in range(n) if (int(g[L.G_WINNERS]) >> p) & 1]
    assert winners == rnd.winner, f"{note}: winner"
    if n == 2:
        assert engine.rewards[0].tolist() == game.get_payoffs(), f"{note}: payoffs"


def play_rlcard_game(engine: Engine, num_players: int, seed: int, deck_left: int | None = None) -> int:
    """One RLCard game, every decision checked against the engine; returns the decisions.
    ``deck_left``: after the deal, all but that many cards of RLCard's deck go under its
    played cards (as if played), so the deck runs out at once and reshuffles come often."""
    game = UnoGame(num_players=num_players)
    chance = EngineChance(seed)
    game.np_random = chance  # the dealer and the round take it at init_game
    game.init_game()
    if deck_left is not None:
        deck, played = game.dealer.deck, game.round.played_cards
        played[:0] = deck[: len(deck) - deck_left]
        del deck[: len(deck) - deck_left]
    rng = np.random.default_rng(seed)
    decisions = 0
    while not game.is_over():
        note = f"seed {seed}, decision {decisions}"
        set_rlcard_game(engine, 0, game)
        legal = engine.legal_mask[0]
        theirs = {ACTION_SPACE[a] for a in game.get_legal_actions()}
        ours = {k for k, (action, _) in enumerate(RLCARD_ACTIONS) if legal[action]}
        assert ours == theirs, f"{note}: legal {sorted(ours)} vs RLCard's {sorted(theirs)}"
        assert set(np.flatnonzero(legal)) <= {action for action, _ in RLCARD_ACTIONS}, note
        choice = sorted(theirs)[rng.integers(len(theirs))]
        action, color = RLCARD_ACTIONS[choice]
        engine.step(np.array([action], np.int64))
        if color is not None and not engine.terminated[0]:
            assert engine._g[0, L.G_PHASE] == L.PHASE_CHOOSE_COLOR, note
            assert set(np.flatnonzero(engine.legal_mask[0])) == COLORS, note
            engine.step(np.array([color], np.int64))
        orders, colors = _step_chance(engine, engine.record_events(0))
        chance.expect(orders, colors)
        game.step(ACTION_LIST[choice])
        chance.done()
        _check_same_state(engine, game, f"{note} ({ACTION_LIST[choice]})")
        decisions += 1
    return decisions


@pytest.mark.parametrize("num_players", sorted(GAMES))
def test_rlcard_games_play_the_same_under_rules_rlcard(num_players):
    engine = Engine(1, num_players, UnoRules.preset("rlcard"), seed=0, record=True)
    for seed in range(GAMES[num_players]):
        play_rlcard_game(engine, num_players, seed)


def test_rlcard_games_with_a_short_deck_reshuffle_the_same():
    """RLCard's reshuffle (every played card, the target included, into the deck with the cards
    left; before a Draw Two or Wild Draw Four that finds too few cards) against the engine's
    reshuffle='every_played_card': games whose deck holds 0-4 cards after the deal."""
    engine = Engine(1, 2, UnoRules.preset("rlcard"), seed=0, record=True)
    for seed in range(SHORT_DECK_GAMES):
        play_rlcard_game(engine, 2, 10_000 + seed, deck_left=seed % 5)


def test_set_rlcard_game_refuses_what_it_cannot_set():
    engine = Engine(1, 3, UnoRules.preset("rlcard"), seed=0)
    game = UnoGame(num_players=2)
    game.np_random = np.random.RandomState(0)
    game.init_game()
    with pytest.raises(ValueError, match="seats 2 players, the engine 3"):
        set_rlcard_game(engine, 0, game)
    game.round.is_over = True
    with pytest.raises(ValueError, match="over"):
        set_rlcard_game(Engine(1, 2, UnoRules.preset("rlcard"), seed=0), 0, game)
