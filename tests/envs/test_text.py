"""The game as text (uno_env.text): the prompt over every preset and table size, and the reply parser."""

from __future__ import annotations

import re
import typing

import numpy as np
import pytest

from uno_env import PRESETS, Engine, action_name, parse_rules, redact, sample_legal
from uno_env.actions import CALL_UNO, CHOOSE_RED, DRAW, NUM_ACTIONS, PASS, SWAP_WITH_FIRST, play_double
from uno_env.cards import parse_card
from uno_env.rules import OPTION_NAMES, UnoRules
from uno_env.text import (
    RULE_WORDS,
    BadReply,
    build_prompt,
    engine_prompt,
    final_answer,
    legal_moves,
    parse_reply,
    refusal,
    round_window,
    rules_text,
    seat_intro,
    split_reasoning,
)


def _mask(*actions: int) -> np.ndarray:
    mask = np.zeros(NUM_ACTIONS, bool)
    mask[list(actions)] = True
    return mask


RED7, RED3, WD4, WILD = (parse_card(c) for c in ("red 7", "red 3", "wild draw four", "wild"))
MOVES = legal_moves(
    _mask(RED3, RED7, WILD, WD4, DRAW, CHOOSE_RED + 3, CALL_UNO, play_double(RED7), SWAP_WITH_FIRST + 1),
    seat=0,
    num_players=4,
)


@pytest.mark.parametrize(
    "reply, action",
    [
        ("1", RED3),
        (" 2. ", RED7),
        ("#2", RED7),
        ("I play 2", RED7),
        ("Move: 2", RED7),
        ("play red 7", RED7),
        ("PLAY   Red 7", RED7),
        ("red 7", RED7),
        ("I'll play red 7.", RED7),
        ("Move: draw", DRAW),
        ("draw", DRAW),
        ("I draw a card", DRAW),
        ("play wild draw four", WD4),  # "draw" inside the name is not a second move
        ("wild", WILD),
        ("choose blue", CHOOSE_RED + 3),
        ("Blue!", CHOOSE_RED + 3),
        ("call_uno", CALL_UNO),
        ("play double red 7", play_double(RED7)),  # "red 7" inside "double red 7" is the double
        ("swap with +2", SWAP_WITH_FIRST + 1),
        ("swap with player 2", SWAP_WITH_FIRST + 1),
        ("2. play red 7", RED7),
        # Reasoning replies: the think block dropped, the final answer preferred.
        ("<think>1 keeps my wild. Or 3?</think>\nMove: 2", RED7),
        ("<think>play red 3 looks fine</think> play red 7", RED7),
        ("Reasoning about 1 and 3...</think>\n2", RED7),  # a server that sends only the closing tag
        ("I weigh 1 against 3.\nFinal answer: 2", RED7),
        ("Move: 1\nOn second thought... Final answer: play red 7", RED7),  # the last answer wins
        ("The best move is 2, since red is safe.", RED7),
        ("Both 1 and 3 lose tempo, so \\boxed{2}", RED7),
        ("1 is risky and 3 wastes the wild.\n\n2", RED7),  # the last line, a number alone
        ("Answer: **draw**", DRAW),
    ],
)
def test_a_reply_names_its_move(reply, action):
    assert parse_reply(reply, MOVES) == action


@pytest.mark.parametrize(
    "reply, message",
    [
        ("", "is empty"),
        ("   ", "is empty"),
        ("0", "no move 0"),
        ("10", "no move 10"),
        ("play green 5", "names no legal move"),
        ("red 3 or red 7", "more than one move"),
        ("draw, then play red 7", "more than one move"),
        ("1. play red 7", "gives move 1 (play red 3) but names play red 7"),
        ("I think 3 is better than 4", "names no legal move"),
        ("pass", "names no legal move"),
        ("-1", "negative number"),
        ("Move: -2", "negative number"),
        ("<think>I will play 2", "no answer after it"),
        ("<think>2</think>", "no answer after it"),
        ("Final answer: 2 or 3", "names no legal move"),
        ("\\boxed{12}", "no move 12"),
        ("The best move is play purple 12", "names no legal move"),
        ("1 is risky and 3 too.\n-2", "negative number"),
        (None, "a reply is text"),
        (7, "a reply is text"),
    ],
)
def test_a_bad_reply_is_refused_with_the_legal_moves(reply, message):
    with pytest.raises(BadReply) as err:
        parse_reply(reply, MOVES)
    assert message in str(err.value)
    assert "1. play red 3" in str(err.value) and "8. swap with +2 (player 2)" in str(err.value)


def test_no_legal_move_is_refused():
    with pytest.raises(BadReply, match="not your turn"):
        parse_reply("draw", [])


def test_moves_are_numbered_legal_actions_with_their_names():
    moves = legal_moves(_mask(DRAW, PASS, RED7))
    assert [(m.number, m.action, m.name) for m in moves] == [
        (1, RED7, "play red 7"),
        (2, DRAW, "draw"),
        (3, PASS, "pass"),
    ]
    with pytest.raises(ValueError, match="one row of 116"):
        legal_moves(np.zeros(5, bool))
    with pytest.raises(ValueError, match="one name per seat"):
        legal_moves(_mask(DRAW), num_players=3, names=["a", "b"])


def _play_and_render(rules, num_players: int, seed: int, steps: int = 400) -> int:
    """Random play with the prompt of every seat rendered at each step; returns the steps taken."""
    e = Engine(1, num_players, rules, seed=seed, history=16)
    rng = np.random.default_rng(seed)
    names = [f"seat-{p}" for p in range(num_players)]
    for step in range(steps):
        for seat in range(num_players):
            text = engine_prompt(e, 0, seat, names)
            assert "Your hand (" in text and "Players, clockwise from you:" in text
        to_act = engine_prompt(e, 0, names=names)
        if e.terminated[0] or e.truncated[0]:
            assert "you have no move" in to_act
            return step
        moves = legal_moves(e.legal_mask[0], int(e.current_player[0]), num_players, names)
        assert all(f"{m.number}. {m.label}" in to_act for m in moves)
        choice = int(sample_legal(e.legal_mask, rng)[0])
        # The reply by name parses back to the move chosen.
        assert parse_reply(action_name(choice), moves) == choice
        e.step(np.array([choice]))
    return steps


@pytest.mark.parametrize("preset", sorted(PRESETS))
@pytest.mark.parametrize("num_players", [2, 4, 10])
def test_every_preset_and_table_size_renders(preset, num_players):
    assert _play_and_render(parse_rules(preset), num_players, seed=num_players) > 0


@pytest.mark.parametrize(
    "options",
    [
        {"deck": "swap_hands", "custom_wild_rule": "next_draws_until_color"},
        {"uno_call": "explicit", "illegal_action": "penalty", "allow_doubles": True},
        {"scoring": "elimination", "episode": "match", "target_points": 60, "open_hands": True},
        {"teams": True, "stack_draw_two": True, "stack_draw_four": True, "always_respond": True},
        {"deck": "shuffle_hands", "custom_wild_rule": "opponents_discard_wilds", "wild_first_card": "random_color"},
        {
            "deck": "swap_hands",
            "custom_wild_rule": "others_draw_two",
            "end_on_empty_deck": True,
            "turn_limit_rule": "fewest_cards_wins",
        },
    ],
)
def test_rule_options_render(options):
    rules = parse_rules(options)
    num_players = 4
    assert _play_and_render(rules, num_players, seed=7) > 0
    text = engine_prompt(Engine(1, num_players, rules, seed=1), 0)
    for name, value in options.items():
        assert f"{name}={value}" in text


def test_the_prompt_shows_only_what_the_seat_sees():
    e = Engine(1, 3, parse_rules("classic"), seed=3, record=True)
    seat = (int(e.current_player[0]) + 1) % 3
    text = engine_prompt(e, 0, seat)
    assert "The round so far, oldest first:" in text and "you are dealt" in text
    # Another seat's deal shows as a count, never as cards.
    other = (seat + 1) % 3
    assert f"player {other} is dealt 7 cards" in text
    assert "it is not your turn" in text and "Legal moves" not in text
    # Events redacted twice read the same as once.
    for ev in e.record_events(0):
        once = redact(ev, seat)
        assert redact(once, seat) == once


def test_without_a_history_the_prompt_says_so():
    e = Engine(1, 2, parse_rules("classic"), seed=0)
    assert "The round so far: not shown" in engine_prompt(e, 0)


def test_bad_arguments_are_refused():
    e = Engine(1, 2, parse_rules("classic"), seed=0)
    with pytest.raises(ValueError, match=r"seat must be in 0\.\.1"):
        build_prompt(e.observation[0], e.legal_mask[0], seat=2)
    with pytest.raises(ValueError, match="one name per seat"):
        build_prompt(e.observation[0], e.legal_mask[0], names=["only one"])


def test_a_seat_intro_names_the_seat_the_rules_and_the_reply():
    text = seat_intro(UnoRules.preset("house"), 2, 4, names=["ann", "bob", "cy", "dee"])
    first = engine_prompt(Engine(1, 4, parse_rules("house"), seed=0), 0, 2, ["ann", "bob", "cy", "dee"])
    assert text.splitlines()[0] == first.splitlines()[0]  # one sentence says who and what, in both
    assert "stack_draw_two=True" in text and text.endswith(
        "Reply with the number or the name of exactly one legal move."
    )
    for args, message in (
        ((UnoRules(), 2, 2), r"seat must be in 0\.\.1 for a table of 2, got 2"),
        ((UnoRules(), 0, 11), r"num_players must be an integer in 2\.\.10, got 11"),
        ((UnoRules(), "0", 2), "seat must be in 0..1"),
    ):
        with pytest.raises(ValueError, match=message):
            seat_intro(*args)
    assert typing.get_type_hints(seat_intro)["rules"] is UnoRules  # mypy checks the callers: no text below the edges


def test_a_refusal_carries_the_parsers_message():
    with pytest.raises(BadReply) as err:
        parse_reply("purple", MOVES)
    assert refusal(err.value) == f"That reply was refused: {err.value}"
    assert "names no legal move" in refusal(err.value) and "1. play red 3" in refusal(err.value)


def test_split_reasoning_and_final_answer():
    assert split_reasoning("<think>a</think>\nb<thinking>c</thinking> d") == ("a\n\nc", "b\n d")
    assert split_reasoning("no tags") == ("", "no tags")
    assert split_reasoning("x <think>open") == ("open", "x")
    assert final_answer("Move: 1 then Answer = 3") == "3"
    assert final_answer("nothing marked") is None


def test_without_listed_moves_only_names_are_taken():
    assert parse_reply("play red 7", MOVES, numbered=False) == RED7
    with pytest.raises(BadReply, match="moves are named, not numbered") as err:
        parse_reply("2", MOVES, numbered=False)
    assert "1. play red 3" not in str(err.value)  # the refusal does not list the moves either
    e = Engine(1, 2, parse_rules("classic"), seed=0)
    text = engine_prompt(e, 0, list_moves=False)
    assert "Legal moves:" not in text and "Reply with the name of exactly one legal move" in text


def test_the_prompt_states_the_goal_and_the_rules_in_words():
    classic = engine_prompt(Engine(1, 2, parse_rules("classic"), seed=0), 0)
    assert "playing classic UNO." in classic and "Goal: be the first to get rid of every card" in classic
    assert "Wild Draw Four" in classic and "Changed from those rules" not in classic
    house = rules_text(UnoRules.preset("house"))
    assert "- stack_draw_two=True: A player hit by a Draw Two may answer with a Draw Two" in house
    match = rules_text(parse_rules({"episode": "match", "target_points": 200}))
    assert "Goal: win the match" in match and "A match is played to 200 points." in match
    assert "describe" not in engine_prompt(Engine(1, 2, parse_rules("classic"), seed=0), 0, describe_rules=False)


def test_every_option_has_words():
    # An option without its sentence would reach the prompt as option=value only.
    assert set(RULE_WORDS) == set(OPTION_NAMES)
    classic = UnoRules().to_dict()
    for name, words in RULE_WORDS.items():
        if isinstance(words, dict):
            assert classic[name] not in words, f"{name}: its classic value needs no sentence"


def test_the_prompt_says_when_the_window_cuts_the_round():
    rng = np.random.default_rng(0)
    e = Engine(1, 2, parse_rules("classic"), seed=0, record=True)
    for _ in range(10):
        e.step(sample_legal(e.legal_mask, rng))
    seat = int(e.current_player[0])
    events, cut = round_window(e, 0, seat, 5)
    assert events is not None and len(events) == 5 and cut == len(e.record_events(0)) - 5 > 0
    assert f"({cut} earlier events of this round are not shown)" in engine_prompt(e, 0, limit=5)
    assert "not shown" not in engine_prompt(e, 0)  # the whole round
    # A history window that dropped entries cannot count the events they made: it says some are cut.
    h = Engine(1, 2, parse_rules("classic"), seed=0, history=4)
    while h.history_count(0) <= 4:
        h.step(sample_legal(h.legal_mask, rng))
    assert round_window(h, 0, 0)[1] is None
    assert "(earlier events of this round are not shown)" in engine_prompt(h, 0)
    with pytest.raises(ValueError, match="events_cut must be an integer >= 0"):
        build_prompt(e.observation[0], e.legal_mask[0], events=[], events_cut=-1)


# --- hostile replies: bounded work, one reading of digits and dashes ---------------------------


@pytest.mark.parametrize("dash", ["\u2212", *(chr(c) for c in range(0x2010, 0x2016)), "\ufe63", "\uff0d"])
def test_a_unicode_minus_or_dash_is_refused_like_a_hyphen(dash):
    for reply in (f"{dash}1", f"Move: {dash}2", f"I weigh 3.\n{dash}2"):
        with pytest.raises(BadReply, match="negative number"):
            parse_reply(reply, MOVES)


@pytest.mark.parametrize(
    "reply, action",
    [
        ("\uff11", RED3),
        ("\uff2d\uff4f\uff56\uff45: \uff12", RED7),
        ("play \uff52\uff45\uff44 7", RED7),
        ("\\boxed{\uff12}", RED7),
        ("\u0663", WILD),  # Arabic-Indic three
        ("Move: \u0968", RED7),  # Devanagari two
        ("\u00b2", RED7),  # superscript two, NFKC's 2
    ],
)
def test_full_width_and_other_digits_read_as_ascii(reply, action):
    # As Python's int() reads a decimal digit of any script (the MCP server's move numbers).
    assert parse_reply(reply, MOVES) == action


def test_a_reply_past_the_cap_is_refused_with_the_limit_and_a_short_prefix():
    from uno_env.text import MAX_REPLY_CHARS

    for reply in ("<think>" * ((1 << 20) // 7), "x" * (MAX_REPLY_CHARS + 1), "1" * (4 << 20)):
        with pytest.raises(BadReply) as err:
            parse_reply(reply, MOVES)
        message = str(err.value)
        assert f"more than the {MAX_REPLY_CHARS:,} read" in message and f"{len(reply):,} characters" in message
        assert len(message) < 2000 and "1. play red 3" in message
    # A character that NFKC spreads into 18 cannot carry a reply past the cap either.
    with pytest.raises(BadReply, match="once normalised"):
        parse_reply("\ufdfa" * (MAX_REPLY_CHARS // 10), MOVES)


N = 5_000  # moderate: the answers are what is checked, never the time taken


@pytest.mark.parametrize(
    "reply, expected",
    [
        ("<think>" * N, "no answer after it"),
        ("<think>" * N + "</think>\n2", RED7),
        ("<thinking><think>" * N + "</think>2", "no answer after it"),  # from the unclosed <thinking> on
        ("</think>" * N + "1", RED3),
        ("move: " * N + "2", RED7),
        ("Move" + " " * N + "is" + " " * N + "x", "names no legal move"),
        ("the best move is" + "\n" * N + ".", "names no legal move"),
        ("\\boxed{" * N + "2}", RED7),
        ("draw " * N, DRAW),
        ("play wild draw four " * N, WD4),  # every "draw" inside the longer name
        ("red 7 " * N + "red 3", "more than one move"),
        ("1" * 5000, "there is no move '1111"),  # past Python's longest int of a string, refused as text
        ("1" * 5000 + " play red 7", RED7),
        ("2 " * N, "names no legal move"),
    ],
    ids=lambda v: repr(v)[:24] if isinstance(v, str) else str(v),
)
def test_hostile_replies_get_the_ordinary_answer(reply, expected):
    if isinstance(expected, str):
        with pytest.raises(BadReply, match=re.escape(expected)) as err:
            parse_reply(reply, MOVES)
        assert len(str(err.value)) < 2000  # the refusal quotes a prefix, not the reply
    else:
        assert parse_reply(reply, MOVES) == expected


def test_split_reasoning_pairs_each_tag_with_its_own_name():
    assert split_reasoning("<THINK>a</think>b") == ("a", "b")
    assert split_reasoning("<think>a</reasoning>b</think>c") == ("a</reasoning>b", "c")
    assert split_reasoning("<reasoning>x<think>a</think>y") == ("a\n\nx\ny", "")
    assert split_reasoning("<think>" * 3 + "</think>" * 2 + "z") == ("<think><think>", "z")
