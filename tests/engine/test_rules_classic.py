"""Scenario tables for the classic rules (docs/rules.md R4–R10), one row per rule and outcome.

Each row: a position (hands per seat, top card, next cards to draw, rule options), the
actions taken by name, and the facts expected afterwards.
"""

import numpy as np
import pytest
from builder import act, play_scenario, position

H2 = "green 1, green 2, yellow 3"  # a filler hand for seats that do not act

SCENARIOS = [
    # --- R4 matching --------------------------------------------------------------------
    (
        "R4 colour, number and symbol match; wild always",
        dict(hands=["red 7, blue 3, yellow skip, green 9, wild", H2], top="red 3"),
        [],
        {"legal": ["play red 7", "play blue 3", "play wild", "draw"]},
    ),
    (
        "R4 symbol matches symbol (skip on skip)",
        dict(hands=["yellow skip, blue 4", H2], top="red skip"),
        [],
        {"legal": ["play yellow skip", "draw"]},
    ),
    (
        "R4 a wild on top matches by its chosen colour only",
        dict(hands=["blue 5, green 5, yellow 1", H2], top="wild", color=1),
        [],
        {"legal": ["play yellow 1", "draw"]},
    ),
    # --- R4 Wild Draw Four legality and bluffing ----------------------------------------
    (
        "R4 bluffing on: an illegal Wild Draw Four is offered",
        dict(hands=["red 5, wild draw four", H2], top="red 3"),
        [],
        {"legal": ["play red 5", "play wild draw four", "draw"]},
    ),
    (
        "R4 bluffing off: an illegal Wild Draw Four is not offered",
        dict(hands=["red 5, wild draw four", H2], top="red 3", wd4_bluffing=False),
        [],
        {"legal": ["play red 5", "draw"]},
    ),
    (
        "R4 challenge off turns bluffing off",
        dict(hands=["red 5, wild draw four", H2], top="red 3", challenge=False),
        [],
        {"legal": ["play red 5", "draw"]},
    ),
    (
        "R4 legal Wild Draw Four: no card of the current colour (other colours' numbers do not matter)",
        dict(hands=["blue 3, wild draw four", H2], top="red 8", wd4_bluffing=False),
        [],
        {"legal": ["play wild draw four", "draw"]},
    ),
    (
        "R4/R12.9 wd4_wilds_count_as_match: a held wild makes it illegal",
        dict(
            hands=["blue 2, wild, wild draw four", H2], top="red 8", wd4_bluffing=False, wd4_wilds_count_as_match=True
        ),
        [],
        {"legal": ["play wild", "draw"]},
    ),
    # --- R4 drawing ---------------------------------------------------------------------
    (
        "R4 voluntary draw while holding a playable card",
        dict(hands=["red 5", H2], top="red 3"),
        [],
        {"legal_has": ["draw", "play red 5"]},
    ),
    (
        "R4 allow_voluntary_draw off: DRAW only when nothing is playable",
        dict(hands=["red 5, blue 1", H2], top="red 3", allow_voluntary_draw=False),
        [],
        {"legal": ["play red 5"]},
    ),
    (
        "R4 allow_voluntary_draw off: DRAW offered when nothing is playable",
        dict(hands=["blue 1", H2], top="red 3", allow_voluntary_draw=False),
        [],
        {"legal": ["draw"]},
    ),
    (
        "R4 a playable drawn card opens post_draw: play it or pass",
        dict(hands=["blue 1, red 9", H2], top="red 3", draw="red 4"),
        ["draw"],
        {"phase": "post_draw", "current_player": 0, "legal": ["play red 4", "pass"]},
    ),
    (
        "R4 post_draw PASS keeps the card and ends the turn",
        dict(hands=["blue 1", H2], top="red 3", draw="red 4"),
        ["draw", "pass"],
        {"phase": "play", "current_player": 1, "hand_sizes": [2, 3]},
    ),
    (
        "R4 post_draw PLAY plays the drawn card",
        dict(hands=["blue 1", H2], top="red 3", draw="red 4"),
        ["draw", "play red 4"],
        {"top": "red 4", "current_player": 1, "hand_sizes": [1, 3]},
    ),
    (
        "R4 an unplayable drawn card ends the turn",
        dict(hands=["blue 1", H2], top="red 3", draw="green 7"),
        ["draw"],
        {"phase": "play", "current_player": 1, "hand_sizes": [2, 3]},
    ),
    (
        "R4 draw_until_playable: draws until a playable card, then post_draw",
        dict(hands=["blue 1", H2], top="red 3", draw="green 7, blue 8, red 6", draw_until_playable=True),
        ["draw"],
        {"phase": "post_draw", "hand_sizes": [4, 3], "legal": ["play red 6", "pass"]},
    ),
    # --- R4 wilds -----------------------------------------------------------------------
    (
        "R4 a wild is followed by choose_color for the same player; colour in play unchanged meanwhile",
        dict(hands=["wild, blue 1", H2], top="red 3"),
        ["play wild"],
        {
            "phase": "choose_color",
            "current_player": 0,
            "color": "red",
            "legal": ["choose red", "choose yellow", "choose green", "choose blue"],
        },
    ),
    (
        "R4 choosing the colour already in play is allowed; then the next player",
        dict(hands=["wild, blue 1", H2], top="red 3"),
        ["play wild", "choose red"],
        {"color": "red", "current_player": 1, "phase": "play"},
    ),
    # --- R5 action cards ----------------------------------------------------------------
    (
        "R5 Skip: the next player loses the turn (3 players)",
        dict(hands=["red skip, blue 1", H2, H2], top="red 3"),
        ["play red skip"],
        {"current_player": 2},
    ),
    (
        "R5 Skip with 2 players: the same player goes again",
        dict(hands=["red skip, blue 1", H2], top="red 3"),
        ["play red skip"],
        {"current_player": 0},
    ),
    (
        "R5 Reverse: direction changes, the previous player plays (3 players)",
        dict(hands=["red reverse, blue 1", H2, H2], top="red 3"),
        ["play red reverse"],
        {"current_player": 2, "direction": -1},
    ),
    (
        "R5/R12.3 Reverse with 2 players acts as Skip and still flips direction",
        dict(hands=["red reverse, blue 1", H2], top="red 3"),
        ["play red reverse"],
        {"current_player": 0, "direction": -1},
    ),
    (
        "R5 Draw Two: the next player draws 2 and loses the turn",
        dict(hands=["red draw two, blue 1", H2, H2], top="red 3"),
        ["play red draw two"],
        {"current_player": 2, "hand_sizes": [1, 5, 3]},
    ),
    (
        "R5 Draw Two counter-clockwise hits the seat on the other side",
        dict(hands=["red draw two, blue 1", H2, H2], top="red 3", direction=-1),
        ["play red draw two"],
        {"current_player": 1, "hand_sizes": [1, 3, 5]},
    ),
    (
        "R5 Draw Two with 2 players: the player goes again",
        dict(hands=["red draw two, blue 1", H2], top="red 3"),
        ["play red draw two"],
        {"current_player": 0, "hand_sizes": [1, 5]},
    ),
    (
        "R5/R6 Wild Draw Four: colour, then the next player responds",
        dict(hands=["wild draw four, blue 1", H2, H2], top="red 3"),
        ["play wild draw four", "choose green"],
        {
            "phase": "respond_draw_four",
            "current_player": 1,
            "pending_draw": 4,
            "color": "green",
            "legal": ["challenge", "accept"],
        },
    ),
    (
        "R6 ACCEPT: draw 4 and lose the turn",
        dict(hands=["wild draw four, blue 1", H2, H2], top="red 3"),
        ["play wild draw four", "choose green", "accept"],
        {"phase": "play", "current_player": 2, "hand_sizes": [1, 7, 3], "pending_draw": 0},
    ),
    (
        "R6 challenge, guilty: the player of the card draws 4, the challenger plays; colour stands",
        dict(hands=["wild draw four, red 1", H2, H2], top="red 3"),
        ["play wild draw four", "choose green", "challenge"],
        {"phase": "play", "current_player": 1, "hand_sizes": [5, 3, 3], "color": "green"},
    ),
    (
        "R6 challenge, innocent: the challenger draws 6 and loses the turn",
        dict(hands=["wild draw four, blue 1", H2, H2], top="red 3"),
        ["play wild draw four", "choose green", "challenge"],
        {"phase": "play", "current_player": 2, "hand_sizes": [1, 9, 3], "color": "green"},
    ),
    (
        "R6 challenge_guilty_draw and challenge_innocent_draw are options",
        dict(hands=["wild draw four, blue 1", H2, H2], top="red 3", challenge_innocent_draw=8),
        ["play wild draw four", "choose green", "challenge"],
        {"hand_sizes": [1, 11, 3]},
    ),
    (
        "R6 judged on the hand when played: holding only other colours is innocent",
        dict(hands=["wild draw four, blue 1, blue skip", H2, H2], top="red 3"),
        ["play wild draw four", "choose blue", "challenge"],
        {"hand_sizes": [2, 9, 3]},
    ),
    (
        "R6 challenge off: the next player simply draws 4 and is skipped",
        dict(hands=["wild draw four, blue 1", H2, H2], top="red 3", challenge=False),
        ["play wild draw four", "choose green"],
        {"phase": "play", "current_player": 2, "hand_sizes": [1, 7, 3]},
    ),
    (
        "R5 Wild Draw Four with 2 players: back to the player after the responder accepts",
        dict(hands=["wild draw four, blue 1", H2], top="red 3"),
        ["play wild draw four", "choose blue", "accept"],
        {"current_player": 0, "hand_sizes": [1, 7]},
    ),
    # --- R8 round end and scoring -------------------------------------------------------
    (
        "R8 playing the last card wins; the winner scores the points left in the other hands",
        dict(hands=["red 5", "green 1, blue skip, wild", "yellow 9"], top="red 3"),
        ["play red 5"],
        {
            "phase": "round_over",
            "winner": 0,
            "scores": [80, 0, 0],
            "terminated": True,
            "rewards": [1.0, -1.0, -1.0],
            "legal": [],
        },
    ),
    (
        "R8 a last Draw Two: the next player still draws 2 before the count",
        dict(hands=["red draw two", "green 1", "yellow 9"], top="red 3", draw="blue 9, red 8"),
        ["play red draw two"],
        {"winner": 0, "hand_sizes": [0, 3, 1], "scores": [27, 0, 0]},
    ),
    (
        "R8/R12.4 a last Wild Draw Four: next draws 4, no colour, no challenge",
        dict(hands=["wild draw four", "green 1", "yellow 9"], top="red 3", draw="blue 1, blue 2, blue 3, blue 4"),
        ["play wild draw four"],
        {"phase": "round_over", "hand_sizes": [0, 5, 1], "scores": [20, 0, 0]},
    ),
    (
        "R12.4 a last Wild ends the round at once (no choose_color)",
        dict(hands=["wild", "green 1"], top="red 3"),
        ["play wild"],
        {"phase": "round_over", "winner": 0},
    ),
    (
        "R8 forbid_last_action_card: a last Wild, Wild Draw Four or Reverse is masked out",
        dict(hands=["red reverse", H2], top="red 3", forbid_last_action_card=True),
        [],
        {"legal": ["draw"]},
    ),
    (
        "R8 max_turns truncates the round with no winner and no reward",
        dict(hands=["red 5, red 6", H2], top="red 3", max_turns=1),
        ["play red 5"],
        {"phase": "round_over", "truncated": True, "terminated": False, "winner": None, "rewards": [0.0, 0.0]},
    ),
    (
        "R8 turn_limit_rule fewest_cards_wins: the smallest hand wins at the limit",
        dict(hands=["red 5, red 6", H2], top="red 3", max_turns=1, turn_limit_rule="fewest_cards_wins"),
        ["play red 5"],
        {"terminated": True, "winner": 0, "rewards": [1.0, -1.0]},
    ),
    # --- R4 empty piles and the reshuffle -------------------------------------------------
    (
        "R4/R12.2 the reshuffle: an empty draw pile takes the discard pile but its top",
        dict(hands=["blue 1", H2], top="red 3", discard="green 4, yellow 4"),
        [],
        {"legal_has": ["draw"]},
    ),
]


@pytest.mark.parametrize("setup, actions, expected", [s[1:] for s in SCENARIOS], ids=[s[0] for s in SCENARIOS])
def test_scenario(setup, actions, expected):
    play_scenario(setup, actions, expected)


def _empty_draw_pile_position(seat0: str, top: str, discard: str = "", **options):
    """Seat 0 holds `seat0`; seat 1 holds every other card: the draw pile is empty."""
    from builder import cards

    from uno_env.cards import card_name, deck_counts

    rest = deck_counts("classic").astype(int)
    for c in cards(seat0) + cards(top) + cards(discard):
        rest[c] -= 1
    other = ", ".join(card_name(c) for c in np.repeat(np.arange(57), rest))
    return position([seat0, other], top, discard=discard, **options)


def test_reshuffle_keeps_top_card_and_draws_from_the_rest():
    """R4, R12.2: drawing from an empty pile reshuffles the discard pile except its top card."""
    engine = _empty_draw_pile_position("blue 1, blue 2", "red 3", discard="green 4, yellow 4")
    assert engine.game_state(0)["draw_pile_size"] == 0
    act(engine, "draw")
    state = engine.game_state(0)
    assert state["discard_pile"] == [state["top_card"]] == [engine.game_state(0)["discard_pile"][-1]]
    assert state["top_card"] == 2 * 0 + 3  # red 3 stays on top
    assert state["draw_pile_size"] == 1
    assert len(state["hands"][0]) == 3
    assert engine.check_invariants() == []


def test_nothing_to_play_or_draw_leaves_only_pass():
    """R4, R12.1: with both piles empty and nothing playable, PASS is the only move."""
    engine = _empty_draw_pile_position("blue 1", "red 3")
    assert np.flatnonzero(engine.legal_mask[0]).tolist() == [58]
    act(engine, "pass")
    assert engine.game_state(0)["current_player"] == 1


def test_nothing_to_draw_but_a_play():
    """R12.1: DRAW is not offered when nothing can be drawn."""
    engine = _empty_draw_pile_position("red 1", "red 3")
    assert np.flatnonzero(engine.legal_mask[0]).tolist() == [1]


def test_end_on_empty_deck_fewest_points_win():
    """R4 end_on_empty_deck, R12.19: the first draw finding both piles empty ends the round."""
    engine = position(["blue 1, blue 2", "green 9"], "red 3", end_on_empty_deck=True, challenge=False)
    # Move every draw-pile card into play by drawing until the piles are empty.
    for _ in range(400):
        state = engine.game_state(0)
        if state["phase"] == "round_over":
            break
        legal = np.flatnonzero(engine.legal_mask[0])
        engine.step(np.array([57 if 57 in legal else (58 if 58 in legal else legal[-1])]))
    state = engine.game_state(0)
    assert state["phase"] == "round_over"
    assert engine.terminated[0]
    points = [sum(engine._points[c] for c in h) for h in state["hands"]]
    winners = state["winner"] if isinstance(state["winner"], list) else [state["winner"]]
    assert winners == [p for p in range(2) if points[p] == min(points)]
