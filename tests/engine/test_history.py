"""A seat's history (``Engine(history=K)``, R11): what it holds, that it equals the record as the
seat may see it, and that it shows nothing hidden.

- scenario table: a position, actions, then the history as one seat's log lines and counts;
- equivalence: ``history_events`` equals the record's events through ``redact``; the float rows
  equal an encoding of those redacted events written here; a short K keeps the same counts;
  a batch equals its games played one by one;
- leaks: hidden twins (every card the seat cannot see redealt) stepped with the same actions
  give the seat the same history, whoever draws what, over the presets and random option mixes.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from builder import act, position, redeal_hidden
from helpers import mixed

from agents import sample_legal
from uno_env import Engine, UnoRules, describe_event, redact
from uno_env.actions import DRAW
from uno_env.cards import NUM_CARD_TYPES
from uno_env.engine import layout as L
from uno_env.engine.events import EVENT_KINDS, EVENT_NAMES, event_dict
from uno_env.engine.history import HISTORY_COUNT_FIELDS, HISTORY_FIELDS, HISTORY_OFFSETS, HISTORY_SIZE

COUNT_AT = {}
_at = 0
for _name, _size, _ in HISTORY_COUNT_FIELDS:
    COUNT_AT[_name] = (_at, _size)
    _at += _size


def log(engine: Engine, seat: int) -> list[str]:
    return [describe_event(ev, seat) for ev in engine.history_events(0, seat)]


def counts(engine: Engine, seat: int, rel: int) -> dict[str, list[int]]:
    c = engine.history(seat)[1][0, rel]
    return {name: c[at : at + size].astype(int).tolist() for name, (at, size) in COUNT_AT.items()}


def field(row: np.ndarray, name: str) -> np.ndarray:
    at = HISTORY_OFFSETS[name]
    size = next(s for n, s, _ in HISTORY_FIELDS if n == name)
    return row[at : at + size]


H3 = ["blue 1, blue 2", "green 1, green 2, yellow 3", "green 4, yellow 4"]
SCENARIOS = [
    (
        "R4 an unplayable draw: the drawer sees its card, others the count; kept while red was in play",
        dict(hands=H3, top="red 3", draw="green 9"),
        ["draw"],
        {
            0: ["you draw 1 card (voluntary): green 9"],
            1: ["player 0 draws 1 card (voluntary)"],
        },
        {0: {"drawn": [1], "kept_on": [1, 0, 0, 0]}},
    ),
    (
        "R4 post_draw: playing the drawn card marks the play and keeps nothing",
        dict(hands=H3, top="red 3", draw="red 9"),
        ["draw", "play red 9"],
        {1: ["player 0 draws 1 card (voluntary)", "player 0 plays red 9"]},
        {0: {"played": [1], "drawn": [1], "kept_on": [0, 0, 0, 0]}},
    ),
    (
        "R4 post_draw: passing keeps the card, counted once",
        dict(hands=H3, top="red 3", draw="red 9"),
        ["draw", "pass"],
        {2: ["player 0 draws 1 card (voluntary)", "player 0 passes"]},
        {0: {"kept_on": [1, 0, 0, 0]}},
    ),
    (
        "R4 a wild: played off colour, the colour named counted",
        dict(hands=["wild, red 5", "blue 9, blue 8", "blue 2, yellow 8"], top="red 3"),
        ["play wild", "choose blue", "play blue 9"],
        {1: ["player 0 plays wild", "player 0 chooses blue", "you play blue 9"]},
        {0: {"played": [1], "off_color_on": [1, 0, 0, 0], "named": [0, 0, 0, 1]}},
    ),
    (
        "R4 a play by rank changes colour: off colour on red",
        dict(hands=["green 3, red 5", "blue 9, blue 8", "blue 2, yellow 8"], top="red 3"),
        ["play green 3"],
        {0: ["you play green 3"]},
        {0: {"off_color_on": [1, 0, 0, 0]}},
    ),
    (
        "R5 Draw Two: the victim's forced draw is its own to see",
        dict(hands=["red draw two, red 5", "blue 9, blue 8", "blue 2, yellow 8"], top="red 3", draw="green 1, green 2"),
        ["play red draw two"],
        {
            1: ["player 0 plays red draw two", "you draw 2 cards (draw two): green 1, green 2"],
            2: ["player 0 plays red draw two", "player 1 draws 2 cards (draw two)"],
        },
        {1: {"drawn": [2], "kept_on": [0, 0, 0, 0]}},
    ),
    (
        "R6 a guilty Wild Draw Four, challenged",
        dict(hands=["wild draw four, red 1, blue 2", "green 3, green 4", "yellow 5, yellow 6"], top="red 9"),
        ["play wild draw four", "choose blue", "challenge"],
        {
            1: [
                "player 0 plays wild draw four",
                "player 0 chooses blue",
                "you challenge player 0's wild draw four: guilty",
                "player 0 draws 4 cards (challenge guilty)",
            ],
            0: [
                "you play wild draw four",
                "you choose blue",
                "player 1 challenges your wild draw four: guilty",
                "you draw 4 cards (challenge guilty): wild draw four, wild draw four, wild draw four, wild",
            ],
        },
        {0: {"played": [1], "drawn": [4], "off_color_on": [1, 0, 0, 0], "named": [0, 0, 0, 1]}},
    ),
    (
        "R5 Swap Hands: the counts move with the hands",
        dict(
            hands=["wild swap hands, red 1, red 2", "blue 1, blue 2, blue 3", "yellow 5, yellow 6"],
            top="red 9",
            deck="swap_hands",
        ),
        ["play wild swap hands", "choose blue", "swap with +1"],
        {2: ["player 0 plays wild swap hands", "player 0 chooses blue", "player 0 swaps hands with player 1"]},
        {1: {"played": [1], "named": [0, 0, 0, 1]}, 0: {"played": [0], "named": [0, 0, 0, 0]}},
    ),
    (
        "R5 Shuffle Hands: the counts are cleared; the redeal is in the hands, not the history",
        dict(
            hands=["wild shuffle hands, red 1, red 2", "blue 1, blue 2, blue 3", "yellow 5, yellow 6"],
            top="red 9",
            deck="shuffle_hands",
        ),
        ["play wild shuffle hands", "choose blue"],
        {
            1: [
                "player 0 plays wild shuffle hands",
                "player 0 chooses blue",
                "player 0 shuffles all 7 held cards and deals them anew",
            ]
        },
        {0: {"played": [0], "named": [0, 0, 0, 0]}},
    ),
]


@pytest.mark.parametrize(
    "setup, actions, logs, expected_counts", [s[1:] for s in SCENARIOS], ids=[s[0] for s in SCENARIOS]
)
def test_scenario(setup, actions, logs, expected_counts):
    engine = position(**setup, history=32)  # a set position starts with no history
    for name in actions:
        act(engine, name)
    for seat, lines in logs.items():
        assert log(engine, seat) == lines
    for seat, want in expected_counts.items():
        got = counts(engine, seat, 0)
        assert {k: got[k] for k in want} == want, f"seat {seat}: {got}"


def test_a_set_position_starts_with_no_history():
    engine = position(H3, "red 3", history=8)
    rows, cnt = engine.history(0)
    assert not rows.any() and not cnt.any() and engine.history_events(0, 0) == []


def test_rows_are_newest_first_and_rotate_to_relative_seats():
    engine = position(["wild, red 5", "blue 9, blue 8", "blue 2, yellow 8"], "red 3", history=4)
    for name in ("play wild", "choose blue", "play blue 9"):
        act(engine, name)
    for seat in range(3):
        rows = engine.history(seat)[0][0]
        assert field(rows[0], "present")[0] == 1 and field(rows[3], "present")[0] == 0
        assert EVENT_NAMES[int(np.argmax(field(rows[0], "kind")))] == "play"
        assert np.argmax(field(rows[0], "actor")) == (1 - seat) % 3  # seat 1 played last
        assert np.argmax(field(rows[2], "actor")) == (0 - seat) % 3
        assert field(rows[1], "color").tolist() == [0, 0, 0, 1]
        assert field(rows[2], "color_before").tolist() == [1, 0, 0, 0]


def test_a_deal_clears_the_history_and_autoreset_keeps_the_new_round():
    engine = Engine(4, 2, UnoRules(hand_size=2), seed=3, history=16, autoreset=True)
    rng = np.random.default_rng(0)
    seen_end = 0
    for _ in range(400):
        engine.step(sample_legal(engine.legal_mask, rng))
        for b in np.flatnonzero(engine.terminated | engine.truncated):
            kinds = [ev["type"] for ev in engine.history_events(int(b), 0)]
            assert kinds[:1] in (["flip"], ["return_first_card"]) and "round_end" not in kinds
            seen_end += 1
    assert seen_end > 0


# --- equivalences ---------------------------------------------------------------------------

PLAYERS_AND_RULES = [
    (2, UnoRules.preset("classic", hand_size=5)),
    (4, UnoRules.preset("official", hand_size=5)),
    (3, mixed("swap_explicit_penalty", hand_size=4)),
    (4, UnoRules.preset("house", hand_size=4)),
    (2, UnoRules.preset("rlcard")),
    (3, mixed("open_doubles_explicit", hand_size=4)),
    (4, mixed("swap_until_color", hand_size=3)),
    (3, mixed("drawn_color_or_wild_reshuffle", hand_size=4)),
]


def _play(engine: Engine, steps: int, seed: int, check) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        done = engine.terminated | engine.truncated
        if done.any():
            engine.reset(games=np.flatnonzero(done))
        engine.step(sample_legal(engine.legal_mask, rng))
        check()


def _record_as_seen(engine: Engine, b: int, seat: int) -> list[dict]:
    """The round's record events as ``seat`` may see them, without the deals (the hand has them)."""
    events = engine.record(b)["events"]
    last_deal = max((k for k, ev in enumerate(events) if ev["type"] == "deal"), default=-1)
    return [
        redact(ev, seat, engine.rules.open_hands)
        for ev in events[last_deal + 1 :]
        if EVENT_KINDS[EVENT_NAMES.index(ev["type"])].history
    ]


def _encode(engine: Engine, b: int, seat: int) -> np.ndarray:
    """The rows ``history`` must give, built here from each raw row redacted by the event table,
    plus the two public columns the fold adds (colour before, drawn card played)."""
    n, K = engine.num_players, engine.history_length
    total = int(engine.arrays["history_meta"][b, L.HM_COUNT])
    out = np.zeros((K, HISTORY_SIZE), np.float32)
    for j in range(min(total, K)):
        kind, player, card, extra, color, flags = (int(x) for x in engine._history[b, (total - 1 - j) % K])
        ev = redact(event_dict(kind, player, card, extra), seat, engine.rules.open_hands)
        row = out[j]
        rel = lambda p: (p - seat) % n  # noqa: E731
        field(row, "present")[0] = 1
        field(row, "kind")[kind] = 1
        if ev.get("player", -1) >= 0:
            field(row, "actor")[rel(ev["player"])] = 1
        if color >= 0:
            field(row, "color_before")[color] = 1
        field(row, "drawn_played")[0] = flags & L.HF_DRAWN_PLAYED
        if "card" in ev:
            field(row, "card")[ev["card"]] = 1
        if "cards" in ev and isinstance(ev["cards"], list):
            field(row, "card")[ev["cards"][0]] = 1
        if ev["type"] == "penalty" and ev["action"] < NUM_CARD_TYPES:
            field(row, "card")[ev["action"]] = 1
        for key in ("challenged", "with", "caught"):
            if key in ev:
                field(row, "target")[rel(ev[key])] = 1
        for p in ev.get("winners", []):
            field(row, "target")[rel(p)] = 1
        if "color" in ev:
            field(row, "color")[ev["color"]] = 1
        if "reason" in ev:
            field(row, "reason")[L.DRAW_REASONS.index(ev["reason"])] = 1
        field(row, "guilty")[0] = ev.get("verdict") == "guilty"
        field(row, "flag")[0] = bool(ev.get("random") or ev.get("every_played_card"))
        for key in ("count", "points", "turn", "score"):
            if key in ev and ev["type"] != "draw":
                field(row, "number")[0] = ev[key]
        if ev["type"] in ("reshuffle", "shuffle_hands"):
            field(row, "number")[0] = ev["cards"]
    return out


@pytest.mark.parametrize("players, rules", PLAYERS_AND_RULES, ids=lambda x: str(x)[:40])
def test_history_is_the_record_as_the_seat_saw_it(players, rules):
    engine = Engine(6, players, rules, seed=players, history=1024, record=True)
    checked = [0]

    def check() -> None:
        for b in range(engine.num_envs):
            seat = int(engine.arrays["history_meta"][b, L.HM_COUNT]) % players
            assert engine.history_events(b, seat) == _record_as_seen(engine, b, seat)
            np.testing.assert_array_equal(engine.history(seat)[0][b], _encode(engine, b, seat))
            checked[0] += 1

    _play(engine, 120, players, check)
    assert checked[0] == 120 * 6


@pytest.mark.parametrize("players, rules", PLAYERS_AND_RULES[:4], ids=lambda x: str(x)[:40])
def test_a_short_history_keeps_the_last_rows_and_the_whole_round_counts(players, rules):
    long, short = (Engine(4, players, rules, seed=9, history=k) for k in (1024, 6))
    rng = np.random.default_rng(1)
    for _ in range(150):
        done = long.terminated | long.truncated
        if done.any():
            for e in (long, short):
                e.reset(games=np.flatnonzero(done))
        actions = sample_legal(long.legal_mask, rng)
        long.step(actions)
        short.step(actions)
        for seat in range(players):
            (rows_l, cnt_l), (rows_s, cnt_s) = long.history(seat), short.history(seat)
            np.testing.assert_array_equal(rows_s, rows_l[:, :6])
            np.testing.assert_array_equal(cnt_s, cnt_l)


def test_a_batch_equals_its_games_one_by_one():
    rules = UnoRules.preset("house", hand_size=5)
    batch_engine = Engine(3, 3, rules, seed=[5, 6, 7], history=20)
    singles = [Engine(1, 3, rules, seed=[s], history=20) for s in (5, 6, 7)]
    rng = np.random.default_rng(2)
    for _ in range(80):
        actions = sample_legal(batch_engine.legal_mask, rng)
        actions[batch_engine.terminated | batch_engine.truncated] = -1
        batch_engine.step(actions)
        for b, e in enumerate(singles):
            if actions[b] >= 0:
                e.step(actions[b : b + 1])
            for seat in range(3):
                rows, cnt = e.history(seat)
                np.testing.assert_array_equal(batch_engine.history(seat)[0][b], rows[0])
                np.testing.assert_array_equal(batch_engine.history(seat)[1][b], cnt[0])


def test_copies_snapshots_and_pickles_keep_the_history():
    import pickle

    engine = Engine(2, 3, UnoRules(hand_size=4), seed=1, history=12)
    rng = np.random.default_rng(0)
    for _ in range(15):
        engine.step(sample_legal(engine.legal_mask, rng))
    copied = Engine(2, 3, UnoRules(hand_size=4), seed=2, history=12)
    copied.copy_games(engine, np.array([1, 0]), np.array([0, 1]))
    restored = Engine(2, 3, UnoRules(hand_size=4), seed=3, history=12)
    restored.restore(engine.snapshot())
    for seat in range(3):
        want = engine.history(seat)
        assert np.array_equal(copied.history(seat)[0], want[0][::-1])
        assert np.array_equal(restored.history(seat)[1], want[1])
        assert np.array_equal(pickle.loads(pickle.dumps(engine)).history(seat)[0], want[0])
    with pytest.raises(ValueError, match="same history length"):
        Engine(2, 3, UnoRules(hand_size=4), history=5).copy_games(engine, np.array([0]), np.array([0]))
    plain = Engine(2, 3, UnoRules(hand_size=4))  # a search's rollouts: the games without their history
    plain.copy_games(engine, np.array([0, 1]), np.array([0, 1]))
    assert np.array_equal(plain.observe(0), engine.observe(0))


@pytest.mark.parametrize("bad", [-1, 1.5, "8", L.MAX_HISTORY + 1, True])
def test_a_bad_history_length_is_refused(bad):
    with pytest.raises(ValueError, match=rf"history must be an integer in 0\.\.{L.MAX_HISTORY}"):
        Engine(1, 2, history=bad)


def test_reading_a_history_that_is_not_kept_or_of_a_bad_seat_is_refused():
    engine = Engine(2, 3)
    with pytest.raises(ValueError, match="create it with history=K"):
        engine.history(0)
    with pytest.raises(ValueError, match="create it with history=K"):
        engine.history_events(0, 0)
    engine = Engine(2, 3, history=4)
    with pytest.raises(ValueError, match=r"seat must be an integer in 0\.\.2 or None"):
        engine.history_events(0, 3)
    with pytest.raises(ValueError, match=r"seats must be integers in 0\.\.2"):
        engine.history(5)
    with pytest.raises(ValueError, match=r"game index must be an integer in 0\.\.1"):
        engine.history_events(2, 0)


# --- nothing hidden -------------------------------------------------------------------------


def _random_rules(rng: np.random.Generator) -> UnoRules:
    while True:
        options = dict(
            deck=str(rng.choice(["classic", "swap_hands", "shuffle_hands"])),
            hand_size=int(rng.integers(3, 6)),
            stack_draw_two=bool(rng.random() < 0.5),
            draw_until_playable=bool(rng.random() < 0.3),
            uno_call=str(rng.choice(["auto", "explicit"])),
            challenge=bool(rng.random() < 0.7),
            max_turns=200,
        )
        try:
            return UnoRules(**options)
        except ValueError:  # a refused combination (docs/rules.md): draw another
            continue


TWIN_RULES = [UnoRules.preset(name, hand_size=4) for name in ("classic", "official", "swap_hands", "house")] + [
    _random_rules(np.random.default_rng(s)) for s in range(4)
]


@pytest.mark.parametrize("rules", TWIN_RULES, ids=lambda r: r.deck)
def test_hidden_twins_give_the_seat_the_same_history(rules):
    """Redeal everything seat s cannot see, then step both games with the same actions (while
    legal in both): others draw other cards in the twin, and s's history must not change."""
    engine = Engine(6, 3, rules, seed=7, history=48)
    rng = np.random.default_rng(7)
    compared = draws_by_others = 0
    for step in range(120):
        done = engine.terminated | engine.truncated
        if done.any():
            engine.reset(games=np.flatnonzero(done))
        engine.step(sample_legal(engine.legal_mask, rng))
        if step % 10:
            continue
        for seat in range(3):
            twin = copy.deepcopy(engine)
            for b in range(engine.num_envs):
                redeal_hidden(twin, b, seat, rng)
            # A game is followed while the seat's observation (leak-free, test_information.py)
            # is the same in both: past that the public play itself differs, e.g. a card drawn
            # is playable in one game only.
            same = np.ones(engine.num_envs, bool)
            for _ in range(6):
                live = same & ~(engine.terminated | engine.truncated) & (engine.current_player != seat)
                actions = sample_legal(engine.legal_mask, rng)
                actions[~(live & twin.legal_mask[np.arange(6), actions])] = -1
                if (actions < 0).all():
                    break
                engine.step(actions)
                twin.step(actions)
                same &= (engine.observe(seat) == twin.observe(seat)).all(axis=1)
                (rows, cnt), (twin_rows, twin_cnt) = engine.history(seat), twin.history(seat)
                for b in np.flatnonzero(same):
                    np.testing.assert_array_equal(rows[b], twin_rows[b])
                    np.testing.assert_array_equal(cnt[b], twin_cnt[b])
                    assert engine.history_events(b, seat) == twin.history_events(b, seat)
                    compared += 1
                    draws_by_others += int(actions[b] == DRAW)
    assert compared > 100 and draws_by_others > 5


def test_open_hands_twins_differ():
    """Control: with every hand face up the seat sees others' draws, so the same twins differ."""
    engine = position(["red 1, blue 2", "green 3, green 4", "yellow 5"], "red 9", history=8, open_hands=True)
    twin = copy.deepcopy(engine)
    for e, card in ((engine, 5), (twin, 8)):
        e.set_next_draws(0, [card])
        act(e, "draw")
    assert not np.array_equal(engine.history(1)[0], twin.history(1)[0])
    assert engine.history_events(0, 1)[-1]["cards"] == [5]


def test_drawn_cards_of_others_and_the_colour_of_a_wild_drawn_card_stay_public_facts():
    """What the viewer may see of each kind is the event table's: card lists of deals and draws
    are the actor's alone (or everyone's with open hands), every other field is public."""
    for kind in EVENT_KINDS:
        for f in kind.fields:
            assert f.visible in ("everyone", "actor")
            if f.visible == "actor":
                assert kind.name in ("deal", "draw", "redeal") and f.name == "cards"
    ev = {"type": "draw", "player": 1, "cards": [3, 4], "reason": "draw_two"}
    assert redact(ev, 0) == {"type": "draw", "player": 1, "count": 2, "reason": "draw_two"}
    assert redact(ev, 1) == ev and redact(ev, None) == ev and redact(ev, 0, open_hands=True) == ev
    assert redact({"type": "new_kind", "secret": [1]}, 0) == {"type": "new_kind"}


# --- PettingZoo -----------------------------------------------------------------------------


@pytest.mark.parametrize("make", ["env", "raw_env", "parallel_env"])
def test_pettingzoo_checkers_pass_with_the_history(make):
    from pettingzoo.test import api_test, parallel_api_test

    import uno_env

    e = getattr(uno_env, make)(num_players=3, rules="house", history=16)
    if make == "parallel_env":
        parallel_api_test(e, num_cycles=300)
    else:
        api_test(e, num_cycles=300)


def test_pettingzoo_observations_hold_the_seat_history():
    import uno_env

    env = uno_env.raw_env(num_players=3, rules="swap_hands", history=24)
    env.reset(seed=5)
    rng = np.random.default_rng(5)
    space = env.observation_space("player_0")
    assert space["history"].shape == (24, HISTORY_SIZE) and space["history_counts"].shape[0] == 10
    for _ in range(120):
        agent = env.agent_selection
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            if not env.agents:
                env.reset()
            continue
        for name in env.agents:
            seat = env.possible_agents.index(name)
            seen = env.observe(name)
            rows, cnt = env.unwrapped._engine.history(seat)
            assert np.array_equal(seen["history"], rows[0]) and np.array_equal(seen["history_counts"], cnt[0])
            assert space.contains(seen) or name != agent
        assert np.array_equal(obs["history"], env.observe(agent)["history"]) and space.contains(obs)
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert "history" not in uno_env.raw_env().observation_space("player_0").spaces


def test_history_fills_given_arrays_and_refuses_wrong_ones():
    engine = Engine(3, 2, UnoRules(), seed=0, history=5)
    engine.step(sample_legal(engine.legal_mask, np.random.default_rng(0)))
    out = (
        np.full((3, 5, HISTORY_SIZE), 7, np.float32),
        np.full((3, 10, sum(s for _, s in COUNT_AT.values())), 7, np.float32),
    )
    rows, cnt = engine.history(1, out=out)
    assert rows is out[0] and cnt is out[1]
    np.testing.assert_array_equal(rows, engine.history(1)[0])
    with pytest.raises(ValueError, match=r"out\[0\] must be a writeable C-contiguous float32 array of shape \(3, 5, "):
        engine.history(1, out=(np.zeros((3, 4, HISTORY_SIZE), np.float32), out[1]))
    with pytest.raises(ValueError, match=r"out\[1\] must be"):
        engine.history(1, out=(out[0], out[1].astype(np.float64)))
