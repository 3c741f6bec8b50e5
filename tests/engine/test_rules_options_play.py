"""Scenario tables for every rule option beyond the classic preset (docs/rules.md R1, R4–R9, R12)."""

import numpy as np
import pytest
from builder import act, cards, play_scenario, position

from uno_env import Engine, UnoRules
from uno_env.cards import WILD_SWAP_HANDS, deck_counts

H = "green 1, green 2, yellow 3"
SH = dict(deck="shuffle_hands")
SW = dict(deck="swap_hands")
RL = dict(rules=UnoRules.preset("rlcard"))
STUCK = dict(wd4_only_when_stuck=True, challenge=False)
DRAWN = dict(drawn_card="play_color_or_wild")

SCENARIOS = [
    # --- R5 Wild Shuffle Hands --------------------------------------------------------------
    (
        "R5 Shuffle Hands: colour, then every card dealt one at a time from seat + 1",
        dict(hands=["wild shuffle hands, red 1, red 2", "green 1, green 2", "blue 1"], top="red 3", **SH),
        ["play wild shuffle hands", "choose blue"],
        {"hand_sizes": [1, 2, 2], "current_player": 1, "color": "blue", "phase": "play"},
    ),
    (
        "R5 Shuffle Hands deals from seat + 1 whatever the direction; play goes on counter-clockwise",
        dict(hands=["wild shuffle hands, red 1, red 2", "green 1, green 2", "blue 1"], top="red 3", direction=-1, **SH),
        ["play wild shuffle hands", "choose blue"],
        {"hand_sizes": [1, 2, 2], "current_player": 2},
    ),
    (
        "R12.13 a hand emptied by the Shuffle Hands deal does not win",
        dict(hands=["wild shuffle hands, red 1", "green 1", ""], top="red 3", **SH),
        ["play wild shuffle hands", "choose red"],
        {"hand_sizes": [0, 1, 1], "phase": "play", "terminated": False, "winner": None},
    ),
    (
        "R8 a last Shuffle Hands ends the round with no effect",
        dict(hands=["wild shuffle hands", "green 1, green 2"], top="red 3", **SH),
        ["play wild shuffle hands"],
        {"phase": "round_over", "winner": 0, "hand_sizes": [0, 2]},
    ),
    # --- R5 Wild Swap Hands -----------------------------------------------------------------
    (
        "R5 Swap Hands: colour, then choose_swap_target among the other seats",
        dict(hands=["wild swap hands, red 1", "green 1, green 2, green 3", "blue 1"], top="red 3", **SW),
        ["play wild swap hands", "choose blue"],
        {"phase": "choose_swap_target", "current_player": 0, "legal": ["swap with +1", "swap with +2"]},
    ),
    (
        "R5 Swap Hands: whole hands change places, then the turn ends",
        dict(hands=["wild swap hands, red 1", "green 1, green 2, green 3", "blue 1"], top="red 3", **SW),
        ["play wild swap hands", "choose blue", "swap with +1"],
        {"hand": (0, "green 1, green 2, green 3"), "hand_sizes": [3, 1, 1], "current_player": 1},
    ),
    (
        "R5 SWAP_WITH counts seats clockwise even when play goes the other way",
        dict(hands=["wild swap hands, red 1", "green 1, green 2, green 3", "blue 1"], top="red 3", direction=-1, **SW),
        ["play wild swap hands", "choose blue", "swap with +2"],
        {"hand": (0, "blue 1"), "current_player": 2},
    ),
    # --- R5 Wild Customizable ---------------------------------------------------------------
    (
        "R5 custom blank: a plain Wild",
        dict(hands=["wild customizable, red 1", H, H], top="red 3", **SH),
        ["play wild customizable", "choose green"],
        {"current_player": 1, "hand_sizes": [1, 3, 3]},
    ),
    (
        "R5 custom play_again: the player takes another turn",
        dict(hands=["wild customizable, red 1", H, H], top="red 3", custom_wild_rule="play_again", **SH),
        ["play wild customizable", "choose red"],
        {"current_player": 0, "phase": "play"},
    ),
    (
        "R5 custom others_draw_two: every other player draws 2",
        dict(hands=["wild customizable, red 1", H, H], top="red 3", custom_wild_rule="others_draw_two", **SH),
        ["play wild customizable", "choose red"],
        {"current_player": 1, "hand_sizes": [1, 5, 5]},
    ),
    (
        "R5/R12.12 custom opponents_discard_wilds: every wild, Draw Four included, goes under the top",
        dict(
            hands=["wild customizable, red 1", "wild, wild draw four, green 1", "wild customizable, blue 3"],
            top="red 3",
            custom_wild_rule="opponents_discard_wilds",
            **SH,
        ),
        ["play wild customizable", "choose red"],
        {
            "hand_sizes": [1, 1, 1],
            "top": "wild customizable",
            "current_player": 1,
            "discard_pile": cards("red 3, wild, wild draw four, wild customizable, wild customizable"),
        },
    ),
    (
        "R5/R12.12 custom next_draws_until_color: draws until the colour (a wild is not it), then plays",
        dict(
            hands=["wild customizable, red 1", H, H],
            top="red 3",
            draw="red 1, wild, green 5, blue 9",
            custom_wild_rule="next_draws_until_color",
            **SH,
        ),
        ["play wild customizable", "choose green"],
        {"hand_sizes": [1, 6, 3], "current_player": 1, "phase": "play"},
    ),
    (
        "R5/R12.12 custom next_draws_three_if_stuck: stuck next player draws 3 and loses the turn",
        dict(
            hands=["wild customizable, red 1", "red 4, blue 2", H],
            top="red 3",
            custom_wild_rule="next_draws_three_if_stuck",
            **SH,
        ),
        ["play wild customizable", "choose yellow"],
        {"hand_sizes": [1, 5, 3], "current_player": 2},
    ),
    (
        "R5 custom next_draws_three_if_stuck: a next player who can play draws nothing",
        dict(
            hands=["wild customizable, red 1", "red 4, yellow 2", H],
            top="red 3",
            custom_wild_rule="next_draws_three_if_stuck",
            **SH,
        ),
        ["play wild customizable", "choose yellow"],
        {"hand_sizes": [1, 2, 3], "current_player": 1},
    ),
    # --- R8 points per deck -----------------------------------------------------------------
    (
        "R8 swap_hands deck: Swap Hands and Customizable are worth 40",
        dict(hands=["red 1", "wild swap hands, wild customizable"], top="red 3", **SW),
        ["play red 1"],
        {"scores": [80, 0]},
    ),
    (
        "R8 shuffle_hands deck: Shuffle Hands and Customizable are worth 50",
        dict(hands=["red 1", "wild shuffle hands, wild customizable"], top="red 3", **SH),
        ["play red 1"],
        {"scores": [100, 0]},
    ),
    # --- R4 allow_doubles -------------------------------------------------------------------
    (
        "R4 allow_doubles: two identical number cards that match are offered together",
        dict(hands=["red 7, red 7, blue 2", H], top="red 3", allow_doubles=True),
        [],
        {"legal_has": ["play double red 7", "play red 7"]},
    ),
    (
        "R4 allow_doubles: a double of another colour matches by number",
        dict(hands=["blue 3, blue 3, green 9", H], top="red 3", allow_doubles=True),
        [],
        {"legal": ["play blue 3", "play double blue 3", "draw"]},
    ),
    (
        "R4 PLAY_DOUBLE plays both cards and ends the turn",
        dict(hands=["red 7, red 7, blue 2", H], top="red 3", allow_doubles=True),
        ["play double red 7"],
        {"hand_sizes": [1, 3], "top": "red 7", "current_player": 1, "discard_pile": cards("red 3, red 7, red 7")},
    ),
    (
        "R4 without allow_doubles no PLAY_DOUBLE is offered",
        dict(hands=["red 7, red 7, blue 2", H], top="red 3"),
        [],
        {"legal_lacks": ["play double red 7"]},
    ),
    (
        "R12.5 post_draw never offers PLAY_DOUBLE",
        dict(hands=["red 7, blue 2", H], top="red 3", draw="red 7", allow_doubles=True),
        ["draw"],
        {"legal": ["play red 7", "pass"]},
    ),
    (
        "R8 a double of the last two cards wins",
        dict(hands=["red 7, red 7", "green 1"], top="red 3", allow_doubles=True),
        ["play double red 7"],
        {"winner": 0, "scores": [1, 0]},
    ),
    # --- R5 stacking ------------------------------------------------------------------------
    (
        "R5 stack_draw_two: a next player holding a Draw Two may answer (respond_draw_two)",
        dict(hands=["red draw two, red 1", "blue draw two, green 1", "yellow 4"], top="red 3", stack_draw_two=True),
        ["play red draw two"],
        {"phase": "respond_draw_two", "current_player": 1, "pending_draw": 2, "legal": ["play blue draw two", "draw"]},
    ),
    (
        "R5 stack_draw_two: the answer passes on the sum; who cannot answer draws it all (R12.7)",
        dict(hands=["red draw two, red 1", "blue draw two, green 1", "yellow 4"], top="red 3", stack_draw_two=True),
        ["play red draw two", "play blue draw two"],
        {"hand_sizes": [1, 1, 5], "current_player": 0, "pending_draw": 0, "color": "blue"},
    ),
    (
        "R5 stack_draw_two: DRAW takes the whole sum and loses the turn",
        dict(hands=["red draw two, red 1", "blue draw two, green 1", "yellow 4"], top="red 3", stack_draw_two=True),
        ["play red draw two", "draw"],
        {"hand_sizes": [1, 4, 1], "current_player": 2},
    ),
    (
        "R12.7 stack_draw_two: no Draw Two to answer with, no respond phase",
        dict(hands=["red draw two, red 1", "green 1", "yellow 4"], top="red 3", stack_draw_two=True),
        ["play red draw two"],
        {"hand_sizes": [1, 3, 1], "current_player": 2, "phase": "play"},
    ),
    (
        "R12.7 always_respond: without a Draw Two the respond phase still opens, DRAW its only move",
        dict(
            hands=["red draw two, red 1", "green 1", "yellow 4"], top="red 3", stack_draw_two=True, always_respond=True
        ),
        ["play red draw two"],
        {"phase": "respond_draw_two", "current_player": 1, "pending_draw": 2, "legal": ["draw"]},
    ),
    (
        "R12.7 always_respond: DRAW there takes the sum and loses the turn, as without the option",
        dict(
            hands=["red draw two, red 1", "green 1", "yellow 4"], top="red 3", stack_draw_two=True, always_respond=True
        ),
        ["play red draw two", "draw"],
        {"hand_sizes": [1, 3, 1], "current_player": 2, "phase": "play"},
    ),
    (
        "R12.7 always_respond: a held Draw Two answers as before",
        dict(
            hands=["red draw two, red 1", "blue draw two, green 1", "yellow 4"],
            top="red 3",
            stack_draw_two=True,
            always_respond=True,
        ),
        ["play red draw two"],
        {"phase": "respond_draw_two", "current_player": 1, "legal": ["play blue draw two", "draw"]},
    ),
    (
        "R12.7 always_respond, stack_draw_four without challenge: no Wild Draw Four held, ACCEPT only",
        dict(
            hands=["wild draw four, blue 1", "green 1", "yellow 4"],
            top="red 3",
            stack_draw_four=True,
            challenge=False,
            always_respond=True,
        ),
        ["play wild draw four", "choose blue"],
        {"phase": "respond_draw_four", "current_player": 1, "legal": ["accept"]},
    ),
    (
        "R12.7 always_respond, stack_draw_four without challenge: ACCEPT draws the sum",
        dict(
            hands=["wild draw four, blue 1", "green 1", "yellow 4"],
            top="red 3",
            stack_draw_four=True,
            challenge=False,
            always_respond=True,
        ),
        ["play wild draw four", "choose blue", "accept"],
        {"hand_sizes": [1, 5, 1], "current_player": 2},
    ),
    (
        "R12.17 a last Draw Two played as an answer: the next player draws the whole sum",
        dict(hands=["red draw two, red 1", "blue draw two", "yellow 4"], top="red 3", stack_draw_two=True),
        ["play red draw two", "play blue draw two"],
        {"winner": 1, "hand_sizes": [1, 0, 5]},
    ),
    (
        "R12.6 stack_draw_four: CHALLENGE, ACCEPT or PLAY of a Wild Draw Four",
        dict(hands=["wild draw four, red 1", "wild draw four, green 1", "yellow 4"], top="red 3", stack_draw_four=True),
        ["play wild draw four", "choose blue"],
        {"phase": "respond_draw_four", "legal": ["challenge", "accept", "play wild draw four"]},
    ),
    (
        "R5 stack_draw_four: the stacked sum goes to the next player",
        dict(hands=["wild draw four, red 1", "wild draw four, green 1", "yellow 4"], top="red 3", stack_draw_four=True),
        ["play wild draw four", "choose blue", "play wild draw four", "choose green", "accept"],
        {"hand_sizes": [1, 1, 9], "current_player": 0, "color": "green"},
    ),
    (
        "R6/R12.8 stacked challenge, guilty: only the last card is judged, the rest of the sum is dropped",
        dict(hands=["wild draw four, red 1", "wild draw four, blue 1", "yellow 4"], top="red 3", stack_draw_four=True),
        ["play wild draw four", "choose blue", "play wild draw four", "choose green", "challenge"],
        {"hand_sizes": [1, 5, 1], "current_player": 2, "phase": "play"},
    ),
    (
        "R6/R12.8 stacked challenge, innocent: the challenger draws the sum plus 2",
        dict(hands=["wild draw four, red 1", "wild draw four, green 1", "yellow 4"], top="red 3", stack_draw_four=True),
        ["play wild draw four", "choose blue", "play wild draw four", "choose green", "challenge"],
        {"hand_sizes": [1, 1, 11], "current_player": 0},
    ),
    (
        "R12.7 stack_draw_four without challenge: a player holding one may stack or accept",
        dict(
            hands=["wild draw four, blue 1", "wild draw four, green 1", "yellow 4"],
            top="red 3",
            stack_draw_four=True,
            challenge=False,
        ),
        ["play wild draw four", "choose blue"],
        {"legal": ["accept", "play wild draw four"]},
    ),
    (
        "R12.7 stack_draw_four without challenge: no Wild Draw Four held, the sum is drawn at once",
        dict(
            hands=["wild draw four, blue 1", "green 1", "yellow 4"], top="red 3", stack_draw_four=True, challenge=False
        ),
        ["play wild draw four", "choose blue"],
        {"hand_sizes": [1, 5, 1], "current_player": 2},
    ),
    (
        "R5 a Draw Two does not answer a Draw Four",
        dict(
            hands=["wild draw four, red 1", "blue draw two, green 1", "yellow 4"],
            top="red 3",
            stack_draw_two=True,
            stack_draw_four=True,
        ),
        ["play wild draw four", "choose blue"],
        {"legal": ["challenge", "accept"]},
    ),
    # --- R7 explicit UNO --------------------------------------------------------------------
    (
        "R7 CALL_UNO offered with 2 cards and a playable card",
        dict(hands=["red 1, blue 5", H], top="red 3", uno_call="explicit"),
        [],
        {"legal_has": ["call uno"]},
    ),
    (
        "R7 CALL_UNO not offered with 2 cards and nothing playable",
        dict(hands=["green 7, blue 5", H], top="red 3", uno_call="explicit"),
        [],
        {"legal": ["draw"]},
    ),
    ("R7 auto mode: no CALL_UNO", dict(hands=["red 1, blue 5", H], top="red 3"), [], {"legal_lacks": ["call uno"]}),
    (
        "R7 CALL_UNO does not end the turn and is not offered twice (R12.16)",
        dict(hands=["red 1, blue 5", H], top="red 3", uno_call="explicit"),
        ["call uno"],
        {"current_player": 0, "uno_called": [True, False], "legal": ["play red 1", "draw"]},
    ),
    (
        "R7 a caller going down to one card cannot be caught",
        dict(hands=["red 1, blue 5", "red 4, red 6"], top="red 3", uno_call="explicit"),
        ["call uno", "play red 1"],
        {"current_player": 1, "legal_lacks": ["catch uno"]},
    ),
    (
        "R7 no call: the next player may CATCH_UNO before acting",
        dict(hands=["red 1, blue 5", "red 4, red 6, green 1"], top="red 3", uno_call="explicit"),
        ["play red 1"],
        {"current_player": 1, "legal_has": ["catch uno", "play red 4"]},
    ),
    (
        "R7 CATCH_UNO: the caught player draws uno_penalty, the catcher then plays",
        dict(hands=["red 1, blue 5", "red 4, red 6, green 1"], top="red 3", uno_call="explicit"),
        ["play red 1", "catch uno"],
        {"hand_sizes": [3, 3], "current_player": 1, "phase": "play", "legal_lacks": ["catch uno"]},
    ),
    (
        "R7 uno_penalty=1",
        dict(hands=["red 1, blue 5", "red 4, red 6, green 1"], top="red 3", uno_call="explicit", uno_penalty=1),
        ["play red 1", "catch uno"],
        {"hand_sizes": [2, 3]},
    ),
    (
        "R12.15 the chance to catch is gone once the catcher acts otherwise",
        dict(hands=["red 1, blue 5", "green 4, green 6", "blue 9, blue 8, blue 7"], top="red 3", uno_call="explicit"),
        ["play red 1", "draw"],
        {"legal_lacks": ["catch uno"]},
    ),
    (
        "R12.16 CALL_UNO with 3 cards and a playable double",
        dict(hands=["red 7, red 7, blue 5", H], top="red 3", uno_call="explicit", allow_doubles=True),
        [],
        {"legal_has": ["call uno", "play double red 7"]},
    ),
    (
        "R7 a call lapses when the hand grows",
        dict(hands=["red 1, blue 5", H], top="red 3", uno_call="explicit", draw="green 9"),
        ["call uno", "draw"],
        {"uno_called": [False, False]},
    ),
    # --- R8 scoring, matches, teams ---------------------------------------------------------
    (
        "R8 elimination scoring: each player adds the points in their own hand",
        dict(hands=["red 1", "green 9, blue skip", "yellow 5"], top="red 3", scoring="elimination"),
        ["play red 1"],
        {"scores": [0, 29, 5], "winner": 0, "terminated": True},
    ),
    (
        "R8 episode=match: a round end deals the next round, scores kept, dealer moves on",
        dict(hands=["red 1", "green 9, blue skip"], top="red 3", episode="match", target_points=100),
        ["play red 1"],
        {"scores": [29, 0], "terminated": False, "round": 1, "hand_sizes": [7, 7]},
    ),
    (
        "R8 episode=match: the match ends when a score reaches target_points",
        dict(hands=["red 1", "green 9, blue skip"], top="red 3", episode="match", target_points=20),
        ["play red 1"],
        {"scores": [29, 0], "terminated": True, "winner": 0, "rewards": [1.0, -1.0]},
    ),
    (
        "R8 teams: partners sit opposite; one going out wins for both and scores the other team's cards",
        dict(hands=["red 1", "green 9", "blue 4, blue 5", "yellow skip"], top="red 3", teams=True),
        ["play red 1"],
        {"winner": [0, 2], "scores": [29, 0, 29, 0], "rewards": [1.0, -1.0, 1.0, -1.0]},
    ),
    (
        "R8 turn_limit_rule=fewest_cards_wins with teams: the team of the smallest hand wins",
        dict(
            hands=["red 1, red 2, red 4", "green 9", "blue 4, blue 5", "yellow skip, yellow 1"],
            top="red 3",
            teams=True,
            max_turns=1,
            turn_limit_rule="fewest_cards_wins",
        ),
        ["play red 1"],
        {"winner": [1, 3], "rewards": [-1.0, 1.0, -1.0, 1.0]},
    ),
    # --- R4 wd4_only_when_stuck (R12.22) ------------------------------------------------------
    (
        "R4 wd4_only_when_stuck: not while a card of the colour may be played",
        dict(hands=["wild draw four, red 5, blue 9", H], top="red 3", **STUCK),
        [],
        {"legal": ["play red 5", "draw"]},
    ),
    (
        "R4 wd4_only_when_stuck: not while a card of the same number may be played",
        dict(hands=["wild draw four, blue 3", H], top="red 3", **STUCK),
        [],
        {"legal": ["play blue 3", "draw"]},
    ),
    (
        "R4 wd4_only_when_stuck: not while a plain wild may be played",
        dict(hands=["wild draw four, wild, blue 9", H], top="red 3", **STUCK),
        [],
        {"legal": ["play wild", "draw"]},
    ),
    (
        "R4 wd4_only_when_stuck: offered when nothing else may be played",
        dict(hands=["wild draw four, blue 9", H], top="red 3", **STUCK),
        [],
        {"legal": ["play wild draw four", "draw"]},
    ),
    (
        "R4 rlcard: drawing only when nothing else, not even a Wild Draw Four, may be played",
        dict(hands=["wild draw four, blue 9", H], top="red 3", **RL),
        [],
        {"legal": ["play wild draw four"]},
    ),
    # --- R4 drawn_card='play_color_or_wild' (R12.23) ------------------------------------------
    (
        "R4 drawn_card: a drawn card of the colour plays itself; the hand is unchanged",
        dict(hands=["blue 9", H], top="red 3", draw="red 7", **DRAWN),
        ["draw"],
        {"top": "red 7", "hand": (0, "blue 9"), "current_player": 1, "phase": "play", "discard_pile": [3, 7]},
    ),
    (
        "R4 drawn_card: a drawn card of the top card's number but not its colour is kept",
        dict(hands=["blue 9", H], top="red 3", draw="green 3", **DRAWN),
        ["draw"],
        {"top": "red 3", "hand": (0, "blue 9, green 3"), "current_player": 1, "phase": "play"},
    ),
    (
        "R4 drawn_card: a drawn Skip of the colour skips the next player",
        dict(hands=["blue 9", H, H], top="red 3", draw="red skip", **DRAWN),
        ["draw"],
        {"top": "red skip", "hand_sizes": [1, 3, 3], "current_player": 2},
    ),
    (
        "R4 drawn_card: a drawn Draw Two of the colour hits the next player",
        dict(hands=["blue 9", H, H], top="red 3", draw="red draw two, yellow 1, yellow 2", **DRAWN),
        ["draw"],
        {"top": "red draw two", "hand": (1, H + ", yellow 1, yellow 2"), "current_player": 2},
    ),
    (
        "R4 drawn_card: a drawn Wild Draw Four plays itself with no effect (R12.23)",
        dict(hands=["blue 9", H, H], top="red 3", draw="wild draw four", **DRAWN),
        ["draw"],
        {"top": "wild draw four", "hand_sizes": [1, 3, 3], "current_player": 1, "phase": "play"},
    ),
    (
        "R5 drawn_card: a drawn Reverse of the colour with two players and rlcard hands the turn over",
        dict(hands=["blue 9", H], top="red 3", draw="red reverse", **RL),
        ["draw"],
        {"top": "red reverse", "current_player": 1, "direction": -1},
    ),
    # --- R5 two_player_reverse_skips ----------------------------------------------------------
    (
        "R5 two_player_reverse_skips=False: with two players a Reverse hands the turn over",
        dict(hands=["red reverse, red 1", H], top="red 3", two_player_reverse_skips=False),
        ["play red reverse"],
        {"current_player": 1, "direction": -1},
    ),
    (
        "R5 two_player_reverse_skips=False: with three players a Reverse is a Reverse",
        dict(hands=["red reverse, red 1", H, H], top="red 3", two_player_reverse_skips=False),
        ["play red reverse"],
        {"current_player": 2, "direction": -1},
    ),
]


@pytest.mark.parametrize("setup, actions, expected", [s[1:] for s in SCENARIOS], ids=[s[0] for s in SCENARIOS])
def test_scenario(setup, actions, expected):
    play_scenario(setup, actions, expected)


@pytest.mark.parametrize(
    "deck, count, total", [("shuffle_hands", 3, 112), ("shuffle_hands", 1, 110), ("swap_hands", 0, 109)]
)
def test_custom_wild_count(deck, count, total):
    """R1 custom_wild_count: how many Wild Customizable stay in a 112-card deck."""
    assert deck_counts(deck, count).sum() == total
    engine = Engine(2, 3, UnoRules(deck=deck, custom_wild_count=count), seed=0)
    state = engine.game_state(0)
    assert sum(map(len, state["hands"])) + state["draw_pile_size"] + len(state["discard_pile"]) == total


def test_elimination_match_plays_on_without_the_eliminated():
    """R8 elimination: a seat reaching target_points is out; it is dealt nothing and never acts."""
    rules = UnoRules(scoring="elimination", episode="match", target_points=10)
    engine = position(["red 1", "green 9, blue skip", "yellow 5"], "red 3", rules=rules)
    act(engine, "play red 1")
    state = engine.game_state(0)
    assert state["eliminated"] == [False, True, False] and state["scores"] == [0, 29, 5]
    assert len(state["hands"][1]) == 0 and state["round"] == 1 and not engine.terminated[0]
    rng = np.random.default_rng(0)
    from uno_env import sample_legal

    while not engine.terminated[0] and engine.game_state(0)["round"] == 1:
        assert engine.game_state(0)["current_player"] != 1
        engine.step(sample_legal(engine.legal_mask, rng))
    assert engine.check_invariants() == []


def test_elimination_last_seat_below_target_wins():
    """R8 elimination (seed 000): the last two play on until one reaches the target and loses."""
    rules = UnoRules(scoring="elimination", episode="match", target_points=10)
    engine = position(["red 1", "green 9, blue skip"], "red 3", rules=rules)
    act(engine, "play red 1")
    assert engine.terminated[0]
    assert engine.game_state(0)["winner"] == 0 and engine.rewards[0].tolist() == [1.0, -1.0]


def _first_card_deal(card, rules, num_players=3):
    engine = Engine(4096, num_players, rules, seed=11)
    for i in range(engine.num_envs):
        if engine.game_state(i)["discard_pile"][0] == card:
            return engine, i
    raise AssertionError("no such deal")


def test_swap_hands_first_card():
    """R9: a Wild Swap Hands first card: the first player chooses a colour and a swap target, then plays."""
    engine, i = _first_card_deal(WILD_SWAP_HANDS, UnoRules.preset("swap_hands"))
    first = engine.game_state(i)["current_player"]
    hands_before = engine.game_state(i)["hands"]
    actions = np.full(engine.num_envs, -1)
    actions[i] = 59
    engine.step(actions)
    assert engine.game_state(i)["phase"] == "choose_swap_target"
    actions[i] = 67  # swap with the next seat clockwise
    engine.step(actions)
    state = engine.game_state(i)
    assert state["phase"] == "play" and state["current_player"] == first
    assert state["hands"][first] == hands_before[(first + 1) % 3]


@pytest.mark.parametrize("card", [54, 56])
def test_shuffle_and_customizable_first_card_act_as_plain_wild(card):
    """R12.11: as a first card, Shuffle Hands and Customizable only set the colour."""
    engine, i = _first_card_deal(
        card, UnoRules.preset("official", first_card_rule="classic", custom_wild_rule="others_draw_two")
    )
    before = engine.game_state(i)["hands"]
    actions = np.full(engine.num_envs, -1)
    actions[i] = 60
    engine.step(actions)
    state = engine.game_state(i)
    assert state["phase"] == "play" and state["hands"] == before and state["current_color"] == 1


def test_official_preset_redraws_special_first_cards():
    """R9 redraw_special (official preset): the first card is always a number card."""
    engine = Engine(1024, 4, UnoRules.preset("official"), seed=2)
    for i in range(engine.num_envs):
        top = engine.game_state(i)["top_card"]
        assert top < 52 and top % 13 < 10


def _rlcard_engine(hands, discard, draw, player=0, color=None, rules=None):
    """A 2-player position under ``rules`` (default: the rlcard preset) with every card placed:
    the rest of the deck joins the discard pile under ``discard`` (ids), so the draw pile is
    exactly ``draw`` (ids, bottom to top)."""
    rules = rules or UnoRules.preset("rlcard")
    rest = deck_counts("classic").astype(np.int64)
    for c in [c for h in hands for c in h] + discard + draw:
        rest[c] -= 1
    engine = Engine(1, len(hands), rules, seed=3)
    engine.set_game(
        0,
        hands=hands,
        discard_pile=list(np.repeat(np.arange(57), rest)) + discard,
        draw_pile=draw,
        current_player=player,
        current_color=color,
    )
    return engine


def test_reshuffle_every_played_card_takes_the_top_card_too():
    """R4 reshuffle='every_played_card', R12.24: an empty draw pile takes the whole discard
    pile, its top included; the top stays the card to match while the discard pile is empty."""
    red3, blue9 = cards("red 3, blue 9")
    rules = UnoRules(reshuffle="every_played_card")
    engine = _rlcard_engine([[blue9] * 2, cards(H)], [red3], [], rules=rules)
    state = engine.game_state(0)
    top = state["top_card"]
    assert state["draw_pile_size"] == 0 and 57 in np.flatnonzero(engine.legal_mask[0])  # DRAW
    before = len(state["discard_pile"])
    act(engine, "draw")
    state = engine.game_state(0)
    assert state["discard_pile"] == [] and state["top_card"] == top and state["draw_pile_size"] == before - 1
    assert engine.check_invariants() == []
    # Only the top card left to draw: the player draws it, and it is still the card to match.
    engine = _rlcard_engine([[blue9] * 2, cards(H)], [red3], [], rules=rules)
    pile = engine.game_state(0)["discard_pile"]
    engine.set_game(0, hands=[[blue9] * 2 + pile[:-1], cards(H)], discard_pile=[red3], draw_pile=[], current_player=0)
    act(engine, "draw")
    state = engine.game_state(0)
    assert state["phase"] == "post_draw" and state["discard_pile"] == [] and state["top_card"] == red3
    assert state["draw_pile_size"] == 0 and engine.legal_mask[0, red3]
    act(engine, "play red 3")
    assert engine.game_state(0)["discard_pile"] == [red3] and engine.check_invariants() == []


def test_reshuffle_every_played_card_before_a_draw_two_that_finds_too_few():
    """R4 reshuffle='every_played_card': a Draw Two finding one card in the draw pile first
    shuffles that card with every played card, the Draw Two included."""
    d2, blue9, green4 = cards("red draw two, blue 9, green 4")
    engine = _rlcard_engine([[d2, blue9], cards(H)], cards("red 3"), [green4])
    played = len(engine.game_state(0)["discard_pile"])
    act(engine, "play red draw two")
    state = engine.game_state(0)
    assert state["discard_pile"] == [] and state["top_card"] == d2 and state["current_player"] == 0
    # The pile: the card left, the played cards and the Draw Two, less the two drawn.
    assert len(state["hands"][1]) == 5 and state["draw_pile_size"] == 1 + played + 1 - 2
    assert engine.check_invariants() == []


def test_drawn_wild_colour_comes_from_the_seeded_generator():
    """R4 drawn_card, R12.23: a drawn wild's colour is drawn from the game's generator: the same
    generator state gives the same colour, and the four colours all come up."""
    wild, blue9 = cards("wild, blue 9")
    seen = set()
    for state in range(40):
        colors = []
        for _ in range(2):
            engine = _rlcard_engine([[blue9], cards(H)], cards("red 3"), [wild])
            engine.set_game(0, **_same_position(engine), rng_state=state)
            act(engine, "draw")
            s = engine.game_state(0)
            assert s["top_card"] == wild and s["hands"][0] == [blue9] and s["current_player"] == 1
            colors.append(s["current_color"])
        assert colors[0] == colors[1]
        seen.add(colors[0])
    assert seen == {0, 1, 2, 3}


def _same_position(engine):
    s = engine.game_state(0)
    return dict(
        hands=s["hands"],
        discard_pile=s["discard_pile"],
        draw_pile=engine.draw_pile(0),
        current_player=s["current_player"],
        current_color=s["current_color"],
    )


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_rlcard_first_cards(num_players):
    """R3 first_dealer='last_seat' and R9 under the rlcard preset: seat 0 starts; a Skip skips
    it, a Reverse gives the turn to seat n-1 counter-clockwise, a Draw Two makes seat 0 draw 2
    and play, a wild gets a colour at random (the first player plays), a Wild Draw Four is
    turned back."""
    engine = Engine(1024, num_players, UnoRules.preset("rlcard"), seed=5, record=True)
    seen = set()
    for i in range(engine.num_envs):
        s = engine.game_state(i)
        top, n = s["top_card"], num_players
        assert s["dealer"] == n - 1 and top != 53 and s["phase"] == "play"
        sizes = [len(h) for h in s["hands"]]
        kind = "wild" if top >= 52 else ("number", "skip", "reverse", "draw two")[max(top % 13 - 9, 0)]
        seen.add(kind)
        want = {
            "number": (0, 1, [7] * n),
            "skip": (1, 1, [7] * n),
            "reverse": (n - 1, -1, [7] * n),
            "draw two": (0, 1, [9] + [7] * (n - 1)),
            "wild": (0, 1, [7] * n),
        }[kind]
        assert (s["current_player"], s["direction"], sizes) == want, (kind, s)
        if kind == "wild":
            colors = [e for e in engine.record(i)["events"] if e["type"] == "color"]
            assert colors == [{"type": "color", "player": -1, "color": s["current_color"], "random": True}]
    assert seen == {"number", "skip", "reverse", "draw two", "wild"}


def test_set_game_top_card_only_with_an_empty_discard_pile_under_every_played_card():
    """Engine.set_game(top_card=...): the card to match of an empty discard pile (R4
    reshuffle='every_played_card'); anything else is a ValueError that changes nothing."""
    red3, blue9 = cards("red 3, blue 9")
    engine = _rlcard_engine([[blue9], cards(H)], [red3], [])
    s = engine.game_state(0)
    every = dict(hands=s["hands"], draw_pile=s["discard_pile"], current_player=0)
    engine.set_game(0, discard_pile=[], top_card=red3, **every)
    assert engine.game_state(0)["top_card"] == red3 and engine.game_state(0)["discard_pile"] == []
    assert engine.check_invariants() == []
    before = engine.game_state(0)
    for kwargs, match in [
        (dict(discard_pile=[], top_card=None, **every), "top_card must be the card type to match"),
        (dict(discard_pile=[], top_card=57, **every), "top_card must be the card type to match"),
        (dict(discard_pile=s["discard_pile"], draw_pile=[], top_card=red3), "top_card is given only with an empty"),
    ]:
        kwargs = {"hands": s["hands"], "current_player": 0, **kwargs}
        with pytest.raises(ValueError, match=match):
            engine.set_game(0, **kwargs)
        assert engine.game_state(0) == before
    classic = Engine(1, 2, UnoRules(), seed=0)
    with pytest.raises(ValueError, match="reshuffle='every_played_card'"):
        classic.set_game(0, discard_pile=[], top_card=red3, **every)
