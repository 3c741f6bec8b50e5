"""Records and replay: every recorded game, across presets, player counts and option mixes,
replays (``uno_env.replay``) to the same final state, draw pile, observations of every seat,
rewards and scores; and a record's events say what happened to each hand (R5, R7, R8)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from builder import act, position
from helpers import mixed
from rules_reference import HandModel

from uno_env import ACTION_NAMES, Engine, UnoRules, replay, sample_legal

# The mixed rule sets replayed here (helpers.MIXED_RULES), with hands small enough to end rounds.
MIXES = {
    "explicit_uno_doubles": dict(hand_size=4),
    "elimination_stacking": dict(hand_size=3),
    "teams_match": dict(hand_size=3),
    "swap_discard_stacking": dict(hand_size=4),
    "shuffle_others_draw": dict(hand_size=3, max_turns=150),
    "shuffle_until_color_stacking": dict(hand_size=5),
    "fewest_cards_open": dict(),
}
CASES = [
    (f"{p}-{n}p", UnoRules.preset(p, max_turns=400), n)
    for p in ("classic", "official", "swap_hands", "house", "rlcard")
    for n in (2, 3, 5, 10)
]
CASES += [
    (f"{k}-{n}p", mixed(k, **sizes), n) for k, sizes in MIXES.items() for n in ((4, 6) if "teams" in k else (2, 5))
]


def _play(engine: Engine, rng: np.random.Generator, steps: int, penalise: bool) -> np.ndarray:
    """Random play until every game is over (or ``steps``); the rewards each game ended with."""
    final = np.zeros_like(engine.rewards)
    for _ in range(steps):
        done = engine.terminated | engine.truncated
        if done.all():
            break
        actions = sample_legal(engine.legal_mask, rng)
        if penalise and rng.random() < 0.05:  # R10: an illegal play, penalised, is recorded too
            b = int(rng.integers(engine.num_envs))
            if engine.game_state(b)["phase"] == "play" and not done[b]:
                actions[b] = int(rng.choice(np.flatnonzero(~engine.legal_mask[b, :57])))
        actions[done] = -1
        engine.step(actions)
        ended = (engine.terminated | engine.truncated) & ~done
        final[ended] = engine.rewards[ended]
    return final


@pytest.mark.parametrize("name, rules, num_players", CASES, ids=[c[0] for c in CASES])
def test_every_recorded_game_replays_to_the_same_end(name, rules, num_players):
    engine = Engine(12, num_players, rules, seed=num_players, record=True)
    final_rewards = _play(engine, np.random.default_rng(num_players), 1500, rules.illegal_action == "penalty")
    ended = 0
    for b in range(engine.num_envs):
        record = engine.record(b)
        assert json.loads(json.dumps(record)) == record  # plain JSON
        again = replay(json.loads(json.dumps(record)))
        state = engine.game_state(b)
        assert again.game_state(0) == state
        assert again.draw_pile(0) == engine.draw_pile(b)
        assert (again.terminated[0], again.truncated[0]) == (engine.terminated[b], engine.truncated[b])
        if engine.terminated[b] or engine.truncated[b]:
            assert np.array_equal(again.rewards[0], final_rewards[b])
        for seat in range(num_players):
            assert np.array_equal(again.observe(seat)[0], engine.observe(seat)[b])
        assert sum(ev["points"] for ev in record["events"] if ev["type"] == "score") == sum(state["scores"])
        ended += bool(engine.terminated[b] or engine.truncated[b])
    assert ended > 0  # finished games among them (the others replay to where they are)


@pytest.mark.parametrize("name, rules, num_players", CASES[::3], ids=[c[0] for c in CASES[::3]])
def test_records_of_auto_reset_rounds_replay_to_the_final_view(name, rules, num_players):
    """With autoreset, ``last_record`` replays to the finished round: the final observation of
    the player who was to act, the rewards and the scores."""
    engine = Engine(8, num_players, rules, seed=1, autoreset=True, record=True)
    rng = np.random.default_rng(1)
    checked = 0
    for _ in range(1200):
        engine.step(sample_legal(engine.legal_mask, rng))
        for b in np.flatnonzero(engine.terminated | engine.truncated):
            again = replay(engine.last_record(b))
            assert np.array_equal(again.observation[0], engine.final_observation[b])
            assert np.array_equal(again.rewards[0], engine.rewards[b])
            assert (again.terminated[0], again.truncated[0]) == (engine.terminated[b], engine.truncated[b])
            checked += 1
    assert checked > 0


# --- what a record's events say ------------------------------------------------------------


def _rebuilt_hands(engine: Engine) -> tuple[bool, list[list[int]]]:
    model = HandModel(engine.num_players)
    start = engine.record(0)["start"]["position"]["hands"]
    model.resync(start)
    model.apply(engine.record(0)["events"], lambda *a, **k: None)
    return model.stale, model.sorted_hands()


SWAP = dict(
    hands=["wild swap hands, red 1, red 2", "green 1, green 2, green 3", "blue 1"], top="red 3", deck="swap_hands"
)
DOUBLE = dict(hands=["red 5, red 5, blue 1", "green 1, green 2"], top="red 3", allow_doubles=True)
DISCARD = dict(
    hands=["wild customizable, red 1", "wild, green 1", "wild draw four, blue 3"],
    top="red 3",
    deck="shuffle_hands",
    custom_wild_rule="opponents_discard_wilds",
)
SHUFFLE = dict(
    hands=["wild shuffle hands, red 1, red 2", "green 1, green 2", "blue 1"], top="red 3", deck="shuffle_hands"
)
RECORD_CASES = [
    ("swap", SWAP, ["play wild swap hands", "choose blue", "swap with +1"]),
    ("double", DOUBLE, ["play double red 5"]),
    ("discard_wild", DISCARD, ["play wild customizable", "choose red"]),
    ("shuffle_hands", SHUFFLE, ["play wild shuffle hands", "choose blue"]),
]


def recorded_position(hands, top, **options) -> Engine:
    """``builder.position`` in an engine that records (the record starts at the position)."""
    built = position(hands, top, **options)
    s = built.game_state(0)
    e = Engine(1, len(hands), built.rules, seed=0, record=True)
    e.set_game(
        0,
        hands=s["hands"],
        discard_pile=s["discard_pile"],
        draw_pile=built.draw_pile(0),
        current_player=s["current_player"],
        current_color=s["current_color"],
        direction=s["direction"],
    )
    return e


@pytest.mark.parametrize("name, where, moves", RECORD_CASES, ids=[g[0] for g in RECORD_CASES])
def test_hands_can_be_rebuilt_from_the_events(name, where, moves):
    """Every event that moves cards names them (R5 swap, Shuffle Hands redeal, discarded wilds,
    a double's two copies), so the hands follow from the record alone."""
    e = recorded_position(**where)
    for move in moves:
        act(e, move)
    stale, hands = _rebuilt_hands(e)
    assert not stale and hands == e.game_state(0)["hands"], (stale, e.record(0)["events"])


def test_uno_call_and_catch_events_name_the_players():
    e = recorded_position(["red 1, red 2", "green 1, green 2, blue 5"], "red 3", uno_call="explicit")
    act(e, "call uno")
    e2 = recorded_position(["red 1, red 2", "green 1, red 9, blue 5"], "red 3", uno_call="explicit")
    act(e2, "play red 1")
    act(e2, "catch uno")
    call = [ev for ev in e.record(0)["events"] if ev["type"] == "call_uno"][0]
    catch = [ev for ev in e2.record(0)["events"] if ev["type"] == "catch_uno"][0]
    assert call.get("player") == 0 and catch.get("player") == 1 and 0 in catch.values(), (call, catch)


# --- replay from a set position or a generator state ---------------------------------------


@pytest.mark.parametrize("name, where, moves", RECORD_CASES, ids=[g[0] for g in RECORD_CASES])
def test_records_of_set_positions_replay_with_their_generator(name, where, moves):
    """A set position's record keeps the generator state the game went on with, so what is
    random after it (Shuffle Hands' redeal) replays too, whatever engine and game it was set in."""
    built = position(**where)
    s = built.game_state(0)
    e = Engine(3, len(where["hands"]), built.rules, seed=11, record=True)
    e.set_game(
        2,
        hands=s["hands"],
        discard_pile=s["discard_pile"],
        draw_pile=built.draw_pile(0),
        current_player=s["current_player"],
        current_color=s["current_color"],
        direction=s["direction"],
    )
    for move in moves:
        e.step(np.array([-1, -1, ACTION_NAMES.index(move)]))
    record = json.loads(json.dumps(e.record(2)))
    again = replay(record)
    assert again.game_state(0) == e.game_state(2) and again.draw_pile(0) == e.draw_pile(2)


def test_a_set_position_replays_through_reshuffles():
    """Long random play from a set position (the draw pile is reshuffled many times)."""
    source = Engine(1, 3, seed=4)
    s = source.game_state(0)
    e = Engine(2, 3, seed=99, record=True)
    e.set_game(
        1,
        hands=s["hands"],
        discard_pile=s["discard_pile"],
        draw_pile=source.draw_pile(0),
        current_player=s["current_player"],
        current_color=s["current_color"],
    )
    rng = np.random.default_rng(0)
    for _ in range(300):
        if e.terminated[1] or e.truncated[1]:
            break
        actions = sample_legal(e.legal_mask, rng)
        actions[0] = -1
        e.step(actions)
    record = e.record(1)
    assert any(ev["type"] == "reshuffle" for ev in record["events"])
    assert replay(record).game_state(0) == e.game_state(1)


def test_a_position_record_without_a_generator_state_still_replays():
    """Records made before set positions kept their generator state replay as they used to."""
    e = recorded_position(["wild draw four, red 1", "green 1, green 2", "blue 5"], "red 3")
    for move in ("play wild draw four", "choose green", "challenge"):
        act(e, move)
    record = e.record(0)
    del record["start"]["rng_state"]
    assert replay(record).game_state(0) == e.game_state(0)


def test_a_record_start_needs_a_position_or_a_generator_state():
    record = Engine(1, 2, seed=3, record=True).record(0)
    record["start"] = {}
    with pytest.raises(ValueError, match="rng_state"):
        replay(record)


def test_reset_from_recorded_generator_states_deals_the_same_rounds():
    e = Engine(4, 3, seed=7, record=True)
    states = [int(e.record(b)["start"]["rng_state"]) for b in range(4)]
    f = Engine(4, 3, seed=1)
    f.reset(rng_state=states)
    for b in range(4):
        assert f.game_state(b) == e.game_state(b) and f.draw_pile(b) == e.draw_pile(b)
    f.reset(games=[0], rng_state=states[2])  # one int: every game reset starts from it
    assert f.game_state(0) == e.game_state(2) and f.game_state(1) == e.game_state(1)


def test_every_recorded_event_reads_as_one_line():
    from uno_env.engine import describe_event

    seen = set()
    for _name, rules, n in CASES:
        engine = Engine(4, n, rules, seed=2, autoreset=True, record=True)
        rng = np.random.default_rng(0)
        for _ in range(60):
            engine.step(sample_legal(engine.legal_mask, rng))
        for b in range(4):
            for rec in (engine.record(b), engine.last_record(b)):
                for ev in (rec or {"events": []})["events"]:
                    line = describe_event(ev)
                    assert line and "\n" not in line, ev
                    seen.add(ev["type"])
    assert {"deal", "flip", "play", "draw", "score", "round_end"} <= seen
