"""Public history in the observation (R11): what every player saw each seat do.

``drew_on_color``: the colour in play when a seat last ended its turn by drawing and keeping
the card (R4 draw, then PASS in post_draw or no playable card), cleared when it plays.
``named_color``: the colour a seat named with its last wild (R4). Both are public, so every
seat sees them, rotated to its relative seats.
"""

import numpy as np
import pytest
from builder import act, play_scenario, position

from uno_env.observation import OBS_OFFSETS

H = "green 1, green 2, yellow 3"
NONE3 = [None, None, None]

SCENARIOS = [
    (
        "R4 drawing an unplayable card ends the turn: the colour in play is recorded",
        dict(hands=["blue 1, blue 2", H, H], top="red 3", draw="green 9"),
        ["draw"],
        {"drew_on_color": [0, None, None], "current_player": 1},
    ),
    (
        "R4 post_draw: keeping a playable drawn card records the colour",
        dict(hands=["blue 1, blue 2", H, H], top="red 3", draw="red 9"),
        ["draw", "pass"],
        {"drew_on_color": [0, None, None]},
    ),
    (
        "R4 post_draw: playing the drawn card records nothing",
        dict(hands=["blue 1, blue 2", H, H], top="red 3", draw="red 9"),
        ["draw", "play red 9"],
        {"drew_on_color": NONE3},
    ),
    (
        "R4 a later play clears the record",
        dict(hands=["blue 1, blue 2", "green 3, green 8", "green 4, yellow 4"], top="red 3", draw="green 9"),
        ["draw", "play green 3", "play green 4", "play green 9"],
        {"drew_on_color": NONE3},
    ),
    (
        "R5 a forced draw (Draw Two) records nothing",
        dict(hands=["red draw two, red 5", H, H], top="red 3"),
        ["play red draw two"],
        {"drew_on_color": NONE3, "current_player": 2},
    ),
    (
        "R4 the colour named with a wild is recorded",
        dict(hands=["wild, red 5", H, H], top="red 3"),
        ["play wild", "choose blue"],
        {"named_color": [3, None, None]},
    ),
    (
        "R4 a second wild replaces the named colour",
        dict(hands=["wild, wild, red 5", "blue 9, wild, blue 8", "blue 2, yellow 8"], top="red 3"),
        ["play wild", "choose blue", "play wild", "choose yellow", "play yellow 8", "play wild", "choose green"],
        {"named_color": [2, 1, None]},
    ),
    (
        "R5 Shuffle Hands clears every record",
        dict(
            hands=["wild shuffle hands, wild, red 1, red 2", "blue 1, blue 2", "green 5, blue 3"],
            top="red 3",
            draw="yellow 9",
            deck="shuffle_hands",
        ),
        ["play wild", "choose green", "draw", "play green 5", "play wild shuffle hands", "choose red"],
        {"drew_on_color": NONE3, "named_color": NONE3},
    ),
    (
        "R5 Swap Hands moves the records with the hands",
        dict(
            hands=["wild swap hands, red 1", "green 1, green 2", "red 4, blue 1"],
            top="red 3",
            deck="swap_hands",
            player=1,
            draw="yellow 9",
        ),
        ["draw", "play red 4", "play wild swap hands", "choose yellow", "swap with +1"],
        {"drew_on_color": [0, None, None], "named_color": [None, 1, None]},
    ),
]


@pytest.mark.parametrize("setup, actions, expected", [s[1:] for s in SCENARIOS], ids=[s[0] for s in SCENARIOS])
def test_scenario(setup, actions, expected):
    play_scenario(setup, actions, expected)


@pytest.mark.parametrize("seat", [0, 1, 2])
def test_observation_rotates_history_to_relative_seats(seat):
    """R11: seat s sees the record of absolute seat q at relative slot (q - s) mod n."""
    engine = position(["wild, blue 1, blue 2", H, H], "red 3", draw="green 9")
    act(engine, "draw")  # seat 0 keeps green 9 while red is in play
    act(engine, "draw")  # seat 1 draws (the rest of the deck, in id order) on red too
    state = engine.game_state(0)
    obs = engine.observe(np.array([seat]))[0]
    drew = obs[OBS_OFFSETS["drew_on_color"] : OBS_OFFSETS["drew_on_color"] + 40].reshape(10, 4)
    for q, color in enumerate(state["drew_on_color"]):
        row = drew[(q - seat) % 3]
        if color is None:
            assert not row.any()
        else:
            assert row.tolist() == [1.0 if c == color else 0.0 for c in range(4)]
    assert not drew[3:].any(), "absent seats show nothing"


def test_new_round_clears_history():
    """R8/R3: a match's next round starts with no history."""
    engine = position(["blue 1, blue 2, wild", "red 5"], "red 3", draw="green 9", episode="match", target_points=500)
    act(engine, "draw")  # seat 0 keeps green 9 on red
    assert engine.game_state(0)["drew_on_color"] == [0, None]
    act(engine, "play red 5")  # seat 1 goes out; the match deals round 2
    state = engine.game_state(0)
    assert state["round"] == 1 and state["phase"] != "round_over"
    assert state["drew_on_color"] == [None, None] and state["named_color"] == [None, None]
