"""The text views of a seat agree where they show the same fact.

Every view decodes through ``uno_env.seat_view``: ``seat_view`` from the seat's observation row,
``state_view`` from ``game_state()``. Over seeded random games under several rule sets, at every
decision the two decoders give the acting seat the same table, and each text view (the env
renderings, ``uno-play``'s prompt and ``uno-replay``, all printed by ``uno_env.render.table_text``;
the language-model prompt; OpenSpiel's observation string) shows the same top card, colour, draw pile and hand.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import MIXED_RULES

from uno_env import Engine, UnoRules
from uno_env.gym_env import _render_text as gym_text
from uno_env.openspiel_game import observation_string
from uno_env.palette import ANSI, card_text
from uno_env.render import render_text
from uno_env.replay_cli import _table as replay_table
from uno_env.seat_view import card_color, observation_fields, seat_view, state_view
from uno_env.text import build_prompt
from uno_web.human import describe_observation

CASES = {
    "classic": (2, UnoRules.preset("classic")),
    "official": (4, UnoRules.preset("official")),
    "swap_hands": (3, UnoRules.preset("swap_hands")),
    "house": (5, UnoRules.preset("house")),
    "explicit_uno_doubles": (4, MIXED_RULES["explicit_uno_doubles"]),
    "elimination": (3, MIXED_RULES["elimination_stacking"]),
}
SHARED = ("top_card", "current_color", "phase", "direction", "pending_draw", "draw_pile_size", "round")
TERMINAL = ("render", "human", "replay", "gym")
SEAT_FACTS = ("seat", "name", "hand_size", "score", "uno", "eliminated")


def decisions(num_players, rules, seed, steps=120):
    """(engine, acting seat) at each decision of a seeded random round."""
    e = Engine(1, num_players, rules, seed=seed, record=True)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        if e.terminated[0] or e.truncated[0]:
            return
        yield e, int(e.current_player[0])
        e.step(np.array([rng.choice(np.flatnonzero(e.legal_mask[0]))]))


@pytest.mark.parametrize("case", list(CASES))
def test_both_decoders_give_the_acting_seat_the_same_table(case):
    n, rules = CASES[case]
    seen = 0
    for e, seat in decisions(n, rules, seed=len(case)):
        from_obs = seat_view(e.observe(seat)[0], seat, n)
        from_state = state_view(e.game_state(0), seat)
        for key in SHARED:
            assert from_obs[key] == from_state[key], key
        assert from_obs["hand"] == from_state["hands"][seat]
        assert all(h is None for p, h in enumerate(from_state["hands"]) if p != seat)
        for a, b in zip(from_obs["seats"], from_state["seats"], strict=True):
            assert {k: a[k] for k in SEAT_FACTS} == {k: b[k] for k in SEAT_FACTS}
        seen += 1
    assert seen > 10


@pytest.mark.parametrize("case", list(CASES))
def test_every_text_view_shows_the_same_top_card_colour_pile_and_hand(case):
    n, rules = CASES[case]
    for e, seat in decisions(n, rules, seed=10 + len(case)):
        state, obs, mask = e.game_state(0), e.observation[0], e.legal_mask[0]
        view = seat_view(obs, seat, n)
        top, pile = view["top_card"]["name"], view["draw_pile_size"]
        color = view["current_color"]
        hand = ", ".join(c["name"] for c in view["hand"])
        shown = {
            "render": render_text(state),
            "human": describe_observation(obs, color=False),
            "replay": replay_table(state, seat, False),
            "gym": gym_text(e, 0, seat, mask),
            "prompt": build_prompt(obs, mask, rules=rules, seat=seat, num_players=n),
        }
        expected = {
            **{
                k: (f"Top card: {top} |", f"colour: {color or 'none'}", f"draw pile: {pile}", h)
                for k, h in zip(TERMINAL, ("'s hand: ", "Your hand: ", "Your hand: ", "Your hand: "), strict=True)
            },
            "prompt": (
                f"discard pile: {top}\n",
                f"Colour in play: {color or 'none'}",
                f"Draw pile: {pile} cards",
                "Your hand (",
            ),
        }
        for name, text in shown.items():
            for fact in expected[name][:3]:
                assert fact in text, (name, fact, text)
            hand_line = next(line for line in text.splitlines() if expected[name][3] in line)
            assert hand_line.endswith(": " + hand) or (
                not hand and hand_line.split(": ")[-1] in ("", "(empty)", "empty")
            )
        # One builder (uno_env.render.table_text) prints every terminal view's table.
        top_lines = {next(x for x in shown[k].splitlines() if x.startswith("Top card: ")) for k in TERMINAL}
        assert len(top_lines) == 1, top_lines
        assert f"top_card: {top}" in observation_string(obs)


def test_observation_fields_cut_the_row_into_its_layout():
    e = Engine(1, 3, UnoRules.preset("classic", open_hands=True), seed=1)
    row = e.observe(0)[0]
    fields = observation_fields(row)
    assert sum(f.size for f in fields.values()) == row.size
    assert np.array_equal(np.concatenate(list(fields.values())), row)
    assert "open_hands" in fields and "open_hands" not in observation_fields(Engine(1, 3, seed=1).observe(0)[0])


def test_one_palette_paints_every_card_by_its_colour():
    assert card_text(5, ansi=False) == "red 5"
    assert card_text(5) == f"{ANSI['red']}red 5\x1b[0m"
    assert card_color(52) == "wild" and card_text(52).startswith(ANSI["wild"])
    painted = render_text(Engine(1, 2, seed=0).game_state(0), ansi_colors=True)
    plain = describe_observation(Engine(1, 2, seed=0).observation[0], color=True)
    top = Engine(1, 2, seed=0).game_state(0)["top_card"]
    assert card_text(top) in painted and card_text(top) in plain
