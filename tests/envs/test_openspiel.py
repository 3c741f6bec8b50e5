"""The OpenSpiel games (uno_env.openspiel_game, docs/openspiel.md) checked with OpenSpiel's own code."""

from __future__ import annotations

import json

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from builder import cards  # noqa: E402

import uno_env.openspiel_game  # noqa: E402, F401  (registers the games)
from uno_env import UnoRules  # noqa: E402
from uno_env.cards import deck_counts  # noqa: E402
from uno_env.engine.history import HISTORY_OFFSETS, HISTORY_SIZE  # noqa: E402


def test_both_games_load_after_the_import():
    assert {"python_uno", "python_mini_uno"} <= set(pyspiel.registered_names())
    game = pyspiel.load_game("python_uno", {"players": 4, "rules": "house", "max_turns": 300})
    assert game.num_players() == 4 and game.num_distinct_actions() == 116
    assert game.rules.stack_draw_two and game.rules.always_respond  # R12.7: forced on with stacking
    mini = pyspiel.load_game("python_mini_uno")
    assert mini.num_players() == 2 and mini.get_type().chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC


def test_options_are_parameters_over_the_preset():
    game = pyspiel.load_game("python_uno", {"rules": "official", "challenge": False, "card_points": ""})
    assert game.rules == UnoRules.preset("official", challenge=False)
    game = pyspiel.load_game("python_uno", {"rules": '{"stack_draw_two": true}', "max_turns": 300, "hand_size": 5})
    assert game.rules == UnoRules(stack_draw_two=True, always_respond=True, max_turns=300, hand_size=5)


@pytest.mark.parametrize(
    "bad, match",
    [
        ({"players": 11}, "players must be an integer in 2..10"),
        ({"rules": "nope"}, "unknown preset"),
        ({"max_turns": 0}, "turn limit"),
        ({"hand_size": 0}, "hand_size must be"),
    ],
)
def test_bad_parameters_say_what_is_allowed(bad, match):
    with pytest.raises(Exception, match=match):
        pyspiel.load_game("python_uno", bad)


def test_mini_bad_parameters():
    with pytest.raises(Exception, match="cannot deal"):
        pyspiel.load_game("python_mini_uno", {"colors": 1, "ranks": 2, "hand_size": 2})
    with pytest.raises(Exception, match="ranks must be an integer in 1..9"):
        pyspiel.load_game("python_mini_uno", {"ranks": 10})


@pytest.mark.parametrize(
    "name, params",
    [
        ("python_uno", {"max_turns": 150}),
        ("python_uno", {"players": 3, "rules": "house", "max_turns": 150}),
        ("python_uno", {"players": 4, "rules": "swap_hands", "uno_call": "explicit", "max_turns": 150}),
        ("python_mini_uno", {}),
        ("python_mini_uno", {"colors": 3, "ranks": 2, "copies": 2, "hand_size": 3, "max_turns": 12}),
    ],
)
def test_random_sim_test(name, params):
    pyspiel.random_sim_test(pyspiel.load_game(name, params), num_sims=3, serialize=False, verbose=False)


def test_mini_chance_outcomes_are_distributions_and_draws_are_the_outcome():
    game = pyspiel.load_game("python_mini_uno")
    rng = np.random.default_rng(0)
    for _ in range(30):
        state = game.new_initial_state()
        drawer = None
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                assert abs(sum(p for _, p in outcomes) - 1) < 1e-9 and all(p > 0 for _, p in outcomes)
                action = int(outcomes[rng.integers(len(outcomes))][0])
                before = json.loads(str(state))["hands"][drawer] if drawer is not None else None
                state.apply_action(action)
                if drawer is not None:
                    assert sorted([*before, action]) == json.loads(str(state))["hands"][drawer]
                drawer = None
            else:
                action = int(rng.choice(state.legal_actions()))
                drawer = state.current_player() if action == 57 else None
                state.apply_action(action)
        assert sum(state.returns()) == 0 and max(state.returns()) <= 1


def test_clone_and_returns():
    game = pyspiel.load_game("python_uno", {"max_turns": 400})
    state = game.new_initial_state()
    rng = np.random.default_rng(1)
    for _ in range(5):
        state.apply_action(int(rng.choice(state.legal_actions())))
    twin = state.clone()
    first = str(state)
    while not twin.is_terminal():
        twin.apply_action(int(rng.choice(twin.legal_actions())))
    assert str(state) == first  # the clone moved on alone
    assert twin.returns() in ([1.0, -1.0], [-1.0, 1.0], [0.0, 0.0])


def test_rl_environment_runs_it():
    from open_spiel.python import rl_environment

    env = rl_environment.Environment("python_uno", max_turns=200, seed=2)  # one fixed round: within history
    rng = np.random.default_rng(2)
    step = env.reset()
    n = 0
    while not step.last():
        player = step.observations["current_player"]
        legal = step.observations["legal_actions"][player]
        assert len(step.observations["info_state"][player]) == env.observation_spec()["info_state"][0]
        step = env.step([int(rng.choice(legal))])
        n += 1
    assert n > 0 and len(step.rewards) == 2


def test_observation_is_the_r11_view_and_make_observation_works():
    game = pyspiel.load_game("python_uno", {"players": 3})
    state = game.new_initial_state()
    engine = game.engine
    engine.restore(np.frombuffer(state._s.snap, np.uint8))
    for p in range(3):
        assert np.array_equal(np.array(state.observation_tensor(p), np.float32), engine.observe(p)[0])
    from open_spiel.python.observation import make_observation

    obs = make_observation(game, pyspiel.IIGObservationType(perfect_recall=False))
    obs.set_from(state, 1)
    assert np.array_equal(obs.tensor, engine.observe(1)[0])
    info = make_observation(game, pyspiel.IIGObservationType(perfect_recall=True))
    assert info.string_from(state, 2) == state.information_state_string(2)


# --- information sets that hold (R11, R12.7) ---------------------------------------------------------


def _position(with_answer: bool) -> dict:
    """3 seats, stacking on; seat 1 holds a Draw Two or a green 1 in its place (the other card
    lies at the bottom of the draw pile). Nothing else differs."""
    hands = [cards("red draw two, red 1, red 5"), cards("green 1, yellow 2, blue 3"), cards("yellow 4, blue 8")]
    if with_answer:
        hands[1][0] = cards("blue draw two")[0]
    placed = [c for h in hands for c in h] + cards("red 3")
    rest = deck_counts("classic").astype(np.int64) - np.bincount(placed, minlength=57)
    draw = list(np.repeat(np.arange(57), rest))
    return dict(hands=hands, discard_pile=cards("red 3"), draw_pile=draw, current_player=0)


def _play(rules: str, with_answer: bool, actions: list[str]) -> list[list[str]]:
    game = pyspiel.load_game("python_uno", {"players": 3, "rules": rules})
    state = game.new_initial_state()
    state.set_game(**_position(with_answer))
    seen = [[state.information_state_string(p)] for p in range(3)]
    for name in actions:
        action = next(a for a in state.legal_actions() if state.action_to_string(state.current_player(), a) == name)
        state.apply_action(action)
        for p in range(3):
            seen[p].append(state.information_state_string(p))
    return seen


def test_positions_differing_only_in_hidden_cards_look_the_same_to_every_other_seat():
    """R12.7 with always_respond (on in python_uno whenever stacking is): whether seat 1 holds a
    Draw Two changes nothing seats 0 and 2 see, at every step."""
    actions = ["play red draw two", "draw", "draw"]
    a = _play('{"stack_draw_two": true}', True, actions)
    b = _play('{"stack_draw_two": true}', False, actions)
    assert a[0] == b[0] and a[2] == b[2]
    assert a[1] != b[1]  # seat 1 sees its own hand
    assert len(a[0]) == len(actions) + 1 and len(set(a[0])) == len(a[0])


def test_without_always_respond_the_turn_reveals_the_answer():
    """The engine default (R12.7): the respond phase opens only for a held Draw Two, so the
    other seats see the difference (why the OpenSpiel games turn always_respond on)."""
    from uno_env import Engine

    seats = []
    for with_answer in (True, False):
        engine = Engine(1, 3, UnoRules(stack_draw_two=True))
        engine.set_game(0, **_position(with_answer))
        engine.step(np.array(cards("red draw two")))
        seats.append((int(engine.current_player[0]), engine.observe(2)[0].copy()))
    assert seats[0][0] == 1 and seats[1][0] == 2
    assert not np.array_equal(seats[0][1], seats[1][1])


def _infosets(game):
    """Per seat: information state string -> the set of tensors seen with it, over every state
    of the game (OpenSpiel's get_all_states), through the perfect-recall observer."""
    from open_spiel.python.algorithms import get_all_states
    from open_spiel.python.observation import make_observation

    observer = make_observation(game, pyspiel.IIGObservationType(perfect_recall=True))
    states = get_all_states.get_all_states(game, depth_limit=-1, include_terminals=True, include_chance_states=True)
    seen = [{}, {}]
    for state in states.values():
        for p in range(2):
            observer.set_from(state, p)
            seen[p].setdefault(state.information_state_string(p), set()).add(observer.tensor.tobytes())
    return states, seen


@pytest.mark.parametrize("params", [{}, {"colors": 1, "ranks": 4, "hand_size": 1, "max_turns": 6}])
def test_mini_information_state_tensor_has_exact_perfect_recall(params):
    """Every state of the game: one tensor per information state string, and no tensor shared
    by two strings (so the tensor holds everything the string does, nothing less)."""
    game = pyspiel.load_game("python_mini_uno", params)
    states, seen = _infosets(game)
    assert len(states) > 100
    for p in range(2):
        assert len(seen[p]) > 100
        assert all(len(tensors) == 1 for tensors in seen[p].values())
        tensors = [next(iter(t)) for t in seen[p].values()]
        assert len(set(tensors)) == len(tensors)


def test_information_state_tensor_shape_and_observer_agree():
    for name, params in (("python_mini_uno", {}), ("python_uno", {"players": 3, "history": 64})):
        game = pyspiel.load_game(name, params)
        assert game.get_type().provides_information_state_tensor
        size = sum(int(np.prod(shape)) for _, shape, _ in game.info_fields)
        assert game.information_state_tensor_shape() == [size] == [game.information_state_tensor_size()]
        state = game.new_initial_state()
        rng = np.random.default_rng(3)
        for _ in range(6):
            if state.is_chance_node():
                state.apply_action(state.chance_outcomes()[0][0])
            else:
                state.apply_action(int(rng.choice(state.legal_actions())))
        from open_spiel.python.observation import make_observation

        observer = make_observation(game, pyspiel.IIGObservationType(perfect_recall=True))
        for p in range(game.num_players()):
            observer.set_from(state, p)
            assert np.array_equal(observer.tensor, np.array(state.information_state_tensor(p), np.float32))
            at = game.info_offsets["observation"]
            assert np.array_equal(observer.dict["observation"], observer.tensor[at : at + game.obs_size])
            assert np.array_equal(observer.dict["observation"], np.array(state.observation_tensor(p), np.float32))


def test_information_state_tensor_keeps_the_last_rows_of_a_long_round_and_refuses_bad_calls():
    short, long = (pyspiel.load_game("python_uno", {"history": k, "max_turns": 50, "seed": 4}) for k in (2, 64))
    state, twin = short.new_initial_state(), long.new_initial_state()
    rng = np.random.default_rng(4)
    while not state.is_terminal() and state.information_state_string(0).count("\n") < 6:
        action = int(rng.choice(state.legal_actions()))
        state.apply_action(action)
        twin.apply_action(action)
    a, b = np.array(state.information_state_tensor(0)), np.array(twin.information_state_tensor(0))
    head = short.info_offsets["history"]
    assert np.array_equal(a[:head], b[:head])  # the observation and the whole round's counts
    assert np.array_equal(a[head:], b[head : head + 2 * HISTORY_SIZE])  # the two newest rows
    assert b[head + 2 * HISTORY_SIZE :].any()  # the longer tensor holds older rows
    with pytest.raises(ValueError, match="player must be a seat in 0..1"):
        state.information_state_tensor(2)
    match = pyspiel.load_game("python_uno", {"episode": "match", "max_turns": 50})
    with pytest.raises(ValueError, match="episode='match'"):
        match.new_initial_state().information_state_tensor(0)
    with pytest.raises(Exception, match="history must be an integer in 1..1023"):
        pyspiel.load_game("python_uno", {"history": 0})


def test_swapped_hands_are_in_the_tensor():
    """Swap Hands: a seat's new hand is no history row, so the tensor keeps it in the swap's row."""
    game = pyspiel.load_game("python_uno", {"players": 3, "rules": "swap_hands", "max_turns": 300, "seed": 5})
    rng = np.random.default_rng(5)
    found = False
    for _ in range(30):
        state = game.new_initial_state()
        while not state.is_terminal() and not found:
            state.apply_action(int(rng.choice(state.legal_actions())))
            for p in range(3):
                for index, hand in state._s.received[p]:
                    rows = np.array(state.information_state_tensor(p), np.float32)[game.info_offsets["history"] :]
                    rows = rows.reshape(game.history, -1)
                    total = int(rows[:, 0].sum())
                    card = HISTORY_OFFSETS["card"]
                    assert np.array_equal(rows[total - 1 - index, card : card + 57], hand)
                    found = True
        if found:
            break
    assert found


def _deep_cfr(game, iterations=1):
    torch = pytest.importorskip("torch")
    from open_spiel.python.pytorch import deep_cfr

    torch.manual_seed(0)
    np.random.seed(0)  # Deep CFR samples chance and opponents with the global generator
    solver = deep_cfr.DeepCFRSolver(
        game,
        policy_network_layers=(16,),
        advantage_network_layers=(16,),
        num_iterations=iterations,
        num_traversals=2,
        learning_rate=1e-3,
        memory_capacity=10_000,
        seed=0,
    )
    solver.solve()
    return solver


@pytest.mark.parametrize(
    "name, params",
    [("python_mini_uno", {}), ("python_uno", {"max_turns": 4, "history": 64, "seed": 6})],
)
def test_deep_cfr_runs_on_the_information_state_tensor(name, params):
    """OpenSpiel's Deep CFR (PyTorch) reads only information_state_tensor."""
    game = pyspiel.load_game(name, params)
    solver = _deep_cfr(game)
    assert len(solver.advantage_buffers[0]) > 0 and len(solver.strategy_buffer) > 0
    state = game.new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    probs = solver.action_probabilities(state)
    assert set(probs) == set(state.legal_actions())
