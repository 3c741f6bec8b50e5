"""UnoRules: presets, options, validation (docs/rules.md options and Presets); card and action ids (R1, R2)."""

import dataclasses

import pytest

from uno_env import ACTION_NAMES, CARD_NAMES, NUM_ACTIONS, Action, UnoRules, action_name, card_name, parse_card
from uno_env.actions import choose_color, play_double, swap_with
from uno_env.cards import deck_counts, default_card_points
from uno_env.rules import OPTION_NAMES


def test_card_ids_follow_r1():
    assert card_name(0) == "red 0" and card_name(20) == "yellow 7" and card_name(38) == "green draw two"
    assert card_name(52) == "wild" and card_name(53) == "wild draw four" and card_name(56) == "wild customizable"
    assert all(parse_card(n) == t for t, n in enumerate(CARD_NAMES))
    with pytest.raises(ValueError, match="unknown card name"):
        parse_card("purple 3")
    with pytest.raises(ValueError, match="0..56"):
        card_name(57)


@pytest.mark.parametrize("deck, total", [("classic", 108), ("shuffle_hands", 112), ("swap_hands", 112)])
def test_deck_sizes(deck, total):
    assert deck_counts(deck).sum() == total


def test_action_ids_follow_r2():
    assert NUM_ACTIONS == len(ACTION_NAMES) == 116
    assert action_name(57) == "draw" and action_name(58) == "pass" and action_name(62) == "choose blue"
    assert Action.CHALLENGE == 63 and Action.ACCEPT == 64 and Action.CALL_UNO == 65 and Action.CATCH_UNO == 66
    assert swap_with(1) == 67 and swap_with(9) == 75 and choose_color(0) == 59
    assert play_double(parse_card("blue 9")) == 76 + 3 * 10 + 9 == 115
    with pytest.raises(ValueError, match="0..115"):
        action_name(116)


def test_card_points_follow_r8():
    points = default_card_points("classic")
    assert points[parse_card("red 7")] == 7 and points[parse_card("blue skip")] == 20
    assert points[52] == points[53] == 50
    assert default_card_points("swap_hands")[55] == 40 and default_card_points("shuffle_hands")[54] == 50


def test_classic_preset_is_the_default():
    assert UnoRules.preset("classic") == UnoRules()
    assert UnoRules.preset("classic", challenge=False).challenge is False
    assert UnoRules.from_dict(UnoRules().to_dict()) == UnoRules()


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(name="nope"), "unknown preset 'nope'"),
        (dict(foo=1), r"unknown option\(s\) \['foo'\]"),
        (dict(hand_size=0), "hand_size must be an integer in 1..50"),
        (dict(hand_size=True), "hand_size must be an integer"),
        (dict(challenge="yes"), "challenge must be True or False"),
        (dict(first_card_rule="random"), r"first_card_rule must be one of \('classic', 'redraw_special'\)"),
        (dict(max_turns=0), "max_turns must be an integer >= 1 or None"),
        (dict(card_points=(1, 2)), "card_points must be None or 57 integers"),
        (dict(custom_wild_rule="play_again"), "custom_wild_rule.*deck='classic'"),
        (dict(max_turns=None, turn_limit_rule="fewest_cards_wins"), "turn_limit_rule.*max_turns=None"),
        (dict(always_respond=True), "always_respond=True needs stacking"),
        (dict(drawn_card="auto"), r"drawn_card must be one of \('choose', 'play_color_or_wild'\)"),
        (dict(reshuffle="all"), r"reshuffle must be one of \('below_top', 'every_played_card'\)"),
        (dict(first_dealer=0), r"first_dealer must be one of \('random', 'last_seat'\)"),
        (dict(two_player_reverse_skips=1), "two_player_reverse_skips must be True or False"),
        (dict(card_counts=(1, 2)), "card_counts must be None or 57 integers"),
        (dict(card_counts=(0,) * 57), "card_counts must be None or 57 integers.*adding up to 2..112"),
        (dict(card_counts=(9,) + (0,) * 56), "card_counts must be None or 57 integers in 0..8"),
    ],
)
def test_bad_options(kwargs, match):
    name = kwargs.pop("name", "classic")
    with pytest.raises(ValueError, match=match):
        UnoRules.preset(name, **kwargs)


@pytest.mark.parametrize(
    "kwargs, names",
    [
        (
            dict(deck="shuffle_hands", custom_wild_count=0, custom_wild_rule="play_again"),
            ["custom_wild_rule", "custom_wild_count"],
        ),
        (dict(teams=True, scoring="elimination"), ["teams", "scoring"]),
        (dict(uno_penalty=1), ["uno_penalty", "uno_call"]),
        (dict(challenge=False, challenge_innocent_draw=8), ["challenge_innocent_draw", "challenge"]),
        (dict(target_points=200), ["target_points", "episode"]),
        (dict(custom_wild_count=2), ["custom_wild_count", "deck"]),
        (dict(wd4_only_when_stuck=True), ["wd4_only_when_stuck", "wd4_bluffing", "challenge"]),
        (dict(drawn_card="play_color_or_wild", draw_until_playable=True), ["drawn_card", "draw_until_playable"]),
    ],
)
def test_contradictions_name_both_options(kwargs, names):
    """Options that cannot work together raise ValueError naming both; nothing is silently ignored."""
    with pytest.raises(ValueError) as err:
        UnoRules.preset("classic", **kwargs)
    for name in names:
        assert name in str(err.value)


@pytest.mark.parametrize("num_players", [2, 3, 5])
def test_teams_need_an_even_table_of_four_or_more(num_players):
    from uno_env import Engine

    with pytest.raises(ValueError, match="teams.*num_players"):
        Engine(1, num_players, UnoRules(teams=True, episode="match"))


@pytest.mark.parametrize("preset", ["classic", "official", "swap_hands", "house", "rlcard"])
def test_presets_follow_rules_md(preset):
    rules = UnoRules.preset(preset)
    expected = {
        "classic": dict(deck="classic", first_card_rule="classic", challenge=True, uno_call="auto"),
        "official": dict(deck="shuffle_hands", first_card_rule="redraw_special", wd4_wilds_count_as_match=True),
        "swap_hands": dict(deck="swap_hands", first_card_rule="classic"),
        "house": dict(stack_draw_two=True, stack_draw_four=True, draw_until_playable=True),
        "rlcard": dict(
            deck="classic",
            hand_size=7,
            first_dealer="last_seat",
            allow_voluntary_draw=False,
            wd4_only_when_stuck=True,
            drawn_card="play_color_or_wild",
            reshuffle="every_played_card",
            two_player_reverse_skips=False,
            challenge=False,
            uno_call="auto",
            max_turns=None,
            first_card_rule="classic",
            wild_first_card="random_color",
            first_draw_two_skips=False,
        ),
    }[preset]
    for name, value in expected.items():
        assert getattr(rules, name) == value
    assert rules.points[55] == (40 if preset == "swap_hands" else 50)


def test_every_option_of_rules_md_is_named():
    expected = {
        "deck",
        "custom_wild_count",
        "hand_size",
        "first_dealer",
        "allow_voluntary_draw",
        "draw_until_playable",
        "allow_doubles",
        "end_on_empty_deck",
        "wd4_wilds_count_as_match",
        "wd4_bluffing",
        "wd4_only_when_stuck",
        "drawn_card",
        "reshuffle",
        "two_player_reverse_skips",
        "stack_draw_two",
        "stack_draw_four",
        "always_respond",
        "card_counts",
        "custom_wild_rule",
        "challenge",
        "challenge_guilty_draw",
        "challenge_innocent_draw",
        "uno_call",
        "uno_penalty",
        "forbid_last_action_card",
        "card_points",
        "scoring",
        "target_points",
        "episode",
        "teams",
        "max_turns",
        "turn_limit_rule",
        "first_card_rule",
        "wild_first_card",
        "first_draw_two_skips",
        "illegal_action",
        "open_hands",
    }
    assert set(OPTION_NAMES) == expected


def test_rules_are_frozen():
    rules = UnoRules()
    with pytest.raises(dataclasses.FrozenInstanceError):
        rules.challenge = False  # type: ignore[misc]
    assert rules.replace(challenge=False).challenge is False and rules.challenge is True


def test_card_counts_make_the_deck():
    """R1: card_counts replaces the deck's table; the engine deals from it and nothing else."""
    from uno_env import Engine

    counts = [0] * 57
    for t in (1, 2, 3, 14, 15, 16):  # red 1-3, yellow 1-3
        counts[t] = 2
    rules = UnoRules(card_counts=counts, hand_size=3)
    assert rules.card_counts == tuple(counts) and list(rules.counts) == counts
    assert UnoRules.from_dict(rules.to_dict()) == rules
    engine = Engine(4, 2, rules, seed=1)
    for i in range(4):
        s = engine.game_state(i)
        held = [c for h in s["hands"] for c in h] + s["discard_pile"] + engine.draw_pile(i)
        assert sorted(held) == sorted(t for t in range(57) for _ in range(counts[t]))
    with pytest.raises(ValueError, match="needs 9 cards"):
        Engine(
            1, 2, rules.replace(hand_size=4, card_counts=[1 if t in (1, 2, 3, 14, 15, 16) else 0 for t in range(57)])
        )
