"""RLCard drop-in ``uno-env`` (``uno_env.rlcard_env``) driven by RLCard 1.2.0's own code: its registry,
``Env.run``, ``rlcard.utils.reorganize``/``tournament``, and its DQN and NFSP agents
(rlcard/agents/dqn_agent.py, rlcard/agents/nfsp_agent.py)."""

from __future__ import annotations

import numpy as np
import pytest

rlcard = pytest.importorskip("rlcard")

import uno_env.rlcard_env  # noqa: E402  (registers uno-env)
from uno_env import ACTION_NAMES, Engine, UnoRules, card_name  # noqa: E402
from uno_env.rlcard_env import UnoRLCardEnv  # noqa: E402


def make(**config):
    return rlcard.make("uno-env", config=config)


class SeededRandom:
    """RLCard's agent protocol (step / eval_step / use_raw) with its own generator (RLCard's
    RandomAgent draws from numpy's global one)."""

    use_raw = False

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def step(self, state):
        return int(self.rng.choice(list(state["legal_actions"])))

    def eval_step(self, state):
        return self.step(state), {}


def test_registered_and_made_by_rlcard():
    assert "uno-env" in rlcard.envs.registration.registry.env_specs
    uno_env.rlcard_env.register()  # idempotent
    env = make(seed=0)
    assert isinstance(env, UnoRLCardEnv) and env.num_players == 2 and env.num_actions == 116
    assert env.state_shape == [[Engine(1, 2).observation_size]] * 2


@pytest.mark.parametrize("num_players", range(2, 11))
def test_payoffs_are_right_for_every_player_count(num_players):
    """``env.run`` to the end: the winner +1, every other seat -1 (teams: the winning side +1);
    a truncated round 0 for all; trajectories alternate state/action per seat as RLCard expects."""
    rules = {"max_turns": 60} if num_players % 3 == 0 else ({"teams": True} if num_players in (4, 8) else None)
    env = make(seed=num_players, game_num_players=num_players, game_rules=rules)
    env.set_agents([SeededRandom(s) for s in range(num_players)])
    for _ in range(6):
        trajectories, payoffs = env.run(is_training=False)
        e = env.game.engine
        winner = e.game_state(0)["winner"]
        if e.truncated[0]:
            assert not payoffs.any()
        else:
            assert e.terminated[0] and winner is not None
            assert (payoffs[np.atleast_1d(winner)] == 1).all() and set(payoffs.tolist()) == {1.0, -1.0}
            if not (rules or {}).get("teams"):
                assert (payoffs == 1).sum() == 1
        assert len(trajectories) == num_players
        for traj in trajectories:
            assert len(traj) % 2 == 1  # state, action, state, ..., final state
            assert all(isinstance(traj[i], dict) for i in range(0, len(traj), 2))


def test_state_is_the_acting_seats_view_and_illegal_actions_raise():
    env = make(seed=1, game_num_players=3, game_rules="house")
    state, player = env.reset()
    e = env.game.engine
    np.testing.assert_array_equal(state["obs"], e.observe(player)[0])
    legal = list(state["legal_actions"])
    assert legal == np.flatnonzero(e.legal_mask[0]).tolist()
    assert state["raw_legal_actions"] == [ACTION_NAMES[a] for a in legal]
    assert "hands" not in state["raw_obs"] and len(state["raw_obs"]["hand"]) == state["raw_obs"]["num_cards"][player]
    before = e.game_state(0)
    illegal = next(a for a in range(116) if a not in legal)
    for bad in (illegal, -1, 116, 2.0, "draw", None):
        with pytest.raises(ValueError, match="action"):
            env.step(bad)
    with pytest.raises(ValueError, match="ACTION_NAMES"):
        env.step("not an action", raw_action=True)
    assert e.game_state(0) == before
    env.step(ACTION_NAMES[legal[0]], raw_action=True)
    assert e.game_state(0) != before
    with pytest.raises(ValueError, match="game_rules"):
        make(game_rule="house")
    with pytest.raises(ValueError, match="num_players"):
        make(game_num_players=11)
    with pytest.raises(ValueError, match="preset"):
        make(game_rules="no such preset")


def test_rlcard_rules_in_rlcards_own_loop():
    """``game_rules="rlcard"`` (RLCard's own game, tests/envs/test_rlcard_conformance.py) through
    ``env.run``: every round is won (no turn limit), the actions are the ones RLCard's 61 map
    to (uno_env.rlcard_env.RLCARD_ACTIONS) plus the colour after a wild, payoffs +1 / -1."""
    from uno_env.rlcard_env import RLCARD_ACTIONS

    env = make(seed=4, game_rules="rlcard")
    assert env.rules == UnoRules.preset("rlcard") and env.rules.max_turns is None
    env.set_agents([SeededRandom(0), SeededRandom(1)])
    allowed = {a for pair in RLCARD_ACTIONS for a in pair if a is not None}
    for _ in range(20):
        trajectories, payoffs = env.run(is_training=False)
        assert env.game.engine.terminated[0] and sorted(payoffs.tolist()) == [-1.0, 1.0]
        for traj in trajectories:
            for state in traj[0::2]:
                assert set(state["legal_actions"]) <= allowed


def test_same_seed_same_games():
    runs = []
    for _ in range(2):
        env = make(seed=5, game_num_players=4)
        env.set_agents([SeededRandom(s) for s in range(4)])
        runs.append([(env.run()[1].tolist(), env.game.engine.game_state(0)) for _ in range(3)])
    assert runs[0] == runs[1]


def test_step_back_restores_every_previous_decision():
    env = make(seed=2, allow_step_back=True, game_num_players=3, game_rules=UnoRules.preset("official"))
    rng = np.random.default_rng(0)
    state, player = env.reset()
    seen = []
    while not env.is_over() and len(seen) < 300:
        full = env.game.engine.game_state(0)  # raw_obs is decoded from the seat's observation: it agrees
        raw = state["raw_obs"]
        assert sorted(raw["hand"]) == sorted(card_name(c) for c in full["hands"][player])
        assert raw["num_cards"] == [len(h) for h in full["hands"]] and raw["top_card"] == card_name(full["top_card"])
        assert raw["phase"] == full["phase"] and raw["current_player"] == player == full["current_player"]
        seen.append((env.game.engine.game_state(0), player, state["obs"].copy(), list(state["legal_actions"])))
        state, player = env.step(int(rng.choice(list(state["legal_actions"]))))
    for game_state, player, obs, legal in reversed(seen):
        back_state, back_player = env.step_back()
        assert env.game.engine.game_state(0) == game_state and back_player == player
        np.testing.assert_array_equal(back_state["obs"], obs)
        assert list(back_state["legal_actions"]) == legal and not env.get_payoffs().any()
    assert env.step_back() is False
    with pytest.raises(Exception, match="allow_step_back"):
        make(seed=0).step_back()


def test_tournament_runs_rlcards_evaluation():
    from rlcard.utils import tournament

    env = make(seed=3, game_num_players=2, game_rules={"max_turns": 200})
    env.set_agents([SeededRandom(0), SeededRandom(1)])
    payoffs = tournament(env, 6)
    assert len(payoffs) == 2 and all(-1 <= p <= 1 for p in payoffs)


def _train(agent, env, episodes):
    from rlcard.utils import reorganize

    fed = 0
    for _ in range(episodes):
        if hasattr(agent, "sample_episode_policy"):
            agent.sample_episode_policy()
        trajectories, payoffs = env.run(is_training=True)
        for ts in reorganize(trajectories, payoffs)[0]:
            agent.feed(ts)
            fed += 1
    return fed


def _params(module):
    return [p.detach().clone() for p in module.parameters()]


def test_rlcard_dqn_trains_on_uno_env():
    """RLCard's examples/run_rl.py loop (rlcard 1.2.0), tiny: DQNAgent against a random seat."""
    torch = pytest.importorskip("torch")
    from rlcard.agents import DQNAgent

    torch.manual_seed(0)
    env = make(seed=0, game_rules={"max_turns": 120})
    agent = DQNAgent(
        num_actions=env.num_actions,
        state_shape=env.state_shape[0],
        mlp_layers=[32, 32],
        replay_memory_init_size=32,
        batch_size=16,
        train_every=4,
        device=torch.device("cpu"),
    )
    before = _params(agent.q_estimator.qnet)
    env.set_agents([agent, SeededRandom(0)])
    fed = _train(agent, env, 8)
    assert fed > 64 and agent.train_t > 0
    assert any(not torch.equal(a, b) for a, b in zip(before, _params(agent.q_estimator.qnet), strict=True))
    state, _ = env.reset()
    action, info = agent.eval_step(state)
    assert action in state["legal_actions"]


def test_rlcard_nfsp_trains_on_uno_env():
    """RLCard's NFSPAgent (rlcard/agents/nfsp_agent.py, 1.2.0), tiny: both halves update."""
    torch = pytest.importorskip("torch")
    from rlcard.agents import NFSPAgent

    torch.manual_seed(0)
    env = make(seed=1, game_rules={"max_turns": 120})
    agent = NFSPAgent(
        num_actions=env.num_actions,
        state_shape=env.state_shape[0],
        hidden_layers_sizes=[32],
        q_mlp_layers=[32],
        anticipatory_param=0.9,  # mostly best-response episodes: the reservoir (SL half) fills in a tiny run
        reservoir_buffer_capacity=1000,
        min_buffer_size_to_learn=16,
        batch_size=16,
        train_every=4,
        q_replay_memory_init_size=32,
        q_batch_size=16,
        q_train_every=4,
        device=torch.device("cpu"),
    )
    before = _params(agent.policy_network)
    env.set_agents([agent, SeededRandom(1)])
    fed = _train(agent, env, 10)
    assert fed > 64 and agent._rl_agent.train_t > 0
    assert any(not torch.equal(a, b) for a, b in zip(before, _params(agent.policy_network), strict=True))
    state, _ = env.reset()
    action, _ = agent.eval_step(state)
    assert action in state["legal_actions"]
