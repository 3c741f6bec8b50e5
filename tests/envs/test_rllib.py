"""RLlib: the multi-agent env over the batched engine, the masking module, a tiny
``train.py --backend rllib`` run on a local 2-CPU Ray whose checkpoint loads as an Agent."""

from __future__ import annotations

import os

import numpy as np
import pytest

pytest.importorskip("ray.rllib")
pytest.importorskip("torch")

import train
from agents.registry import make_agent
from agents.rllib_agent import LEARNER, SNAPSHOT, RLlibAgent, SelfPlayMapping, module_path
from arena import play, tournament
from arena.remote import ray_chunks
from training.opponents import parse_mix
from training.rllib_trainer import rllib_config
from uno_env import Agent, Engine, RandomAgent, UnoRules, sample_legal
from uno_env.rllib import UnoEnvRunner, UnoMultiAgentEnv, UnoVectorMultiAgentEnv

TINY = dict(
    backend="rllib",
    total_timesteps=1500,
    num_envs=16,
    n_steps=32,
    batch_size=256,
    n_epochs=1,
    hidden=(32,),
    eval_every=0,
    final_eval_games=40,
    eval_opponents="random",
    checkpoint_every=0,
    snapshot_every=500,
    num_env_runners=1,
    num_cpus=2,
    opponent_mix="0.5*rlcard_rule,0.5*self",
    bc_positions=0,  # rllib has no warm start
    progress=False,
    seed=3,
)


def _random_actions(obs, rng):
    return [
        {aid: int(sample_legal(x["action_mask"][None] > 0, rng)[0]) for aid, x in o.items() if x["action_mask"].any()}
        for o in obs
    ]


@pytest.mark.parametrize("num_players,rules", [(2, "classic"), (3, "official")])
def test_vector_env_plays_the_engine_games_with_every_seat_an_agent(num_players, rules):
    """Same seed, same actions: the RLlib view is the engine's game, seat by seat; every game ends
    with every seat's final observation, the engine's rewards and the done flags."""
    rules = UnoRules.preset(rules)
    B = 6
    env = UnoVectorMultiAgentEnv(B, {"num_players": num_players, "rules": rules.to_dict(), "seed": 0})
    engine = Engine(B, num_players, rules, seed=11)
    obs, _ = env.reset(seed=11)
    space = env.single_observation_spaces["player_0"]
    rng = np.random.default_rng(0)
    ends = 0
    restart = np.zeros(B, bool)
    while ends < 3:
        for g, o in enumerate(obs):
            if restart[g]:
                continue
            ((aid, x),) = o.items()
            assert aid == f"player_{engine.current_player[g]}" and space.contains(x)
            assert np.array_equal(x["observations"], engine.observation[g])
            assert np.array_equal(x["action_mask"] > 0, engine.legal_mask[g])
        actions = _random_actions(obs, rng)
        engine.step(np.array([next(iter(a.values())) if a and not restart[g] else -1 for g, a in enumerate(actions)]))
        if restart.any():
            engine.reset(games=np.flatnonzero(restart))
        obs, rewards, terms, truncs, _ = env.step(actions)
        done = engine.terminated | engine.truncated
        for g in np.flatnonzero(done & ~restart):
            ends += 1
            assert set(obs[g]) == set(rewards[g]) == {f"player_{s}" for s in range(num_players)}
            assert (terms[g] if engine.terminated[g] else truncs[g])["__all__"]
            for s in range(num_players):
                assert rewards[g][f"player_{s}"] == engine.rewards[g, s]
                assert np.array_equal(obs[g][f"player_{s}"]["observations"], engine.observe(s)[g])
                assert not obs[g][f"player_{s}"]["action_mask"].any()
        restart = done & ~restart


def test_single_game_env_and_bad_input():
    env = UnoMultiAgentEnv({"num_players": 3, "rules": "official", "seed": 4})
    obs, _ = env.reset(seed=4)
    assert env.possible_agents == ["player_0", "player_1", "player_2"] and len(obs) == 1
    ((aid, x),) = obs.items()
    illegal = int(np.flatnonzero(x["action_mask"] == 0)[0])
    with pytest.raises(ValueError):
        env.step({aid: illegal})
    other = next(a for a in env.possible_agents if a != aid)
    with pytest.raises(ValueError, match="is to act"):
        env.step({other: int(np.flatnonzero(x["action_mask"])[0])})
    with pytest.raises(ValueError, match="one action per step"):
        env.step({a: 57 for a in env.possible_agents})
    with pytest.raises(ValueError, match="unknown env_config keys"):
        UnoMultiAgentEnv({"players": 2})


def test_policy_mapping_gives_each_game_one_learner_seat_and_one_opponent_kind():
    mapping = SelfPlayMapping(4, {"random": 0.25, SNAPSHOT: 0.75}, seed=1)
    kinds = []
    for i in range(400):
        episode = type("E", (), {"id_": f"episode-{i}"})()
        seats = [mapping(f"player_{s}", episode) for s in range(4)]
        assert seats.count(LEARNER) == 1 and len(set(seats) - {LEARNER}) == 1
        assert seats == [mapping(f"player_{s}", episode) for s in range(4)]  # a function of the episode
        kinds.append(next(s for s in seats if s != LEARNER))
    assert 0.6 < kinds.count(SNAPSHOT) / 400 < 0.9


def test_env_runner_samples_only_legal_actions_for_every_module():
    """The masking module (learner, snapshot) and the baseline module act in RLlib's own sampling loop."""
    args = train.Args(**{**TINY, "num_env_runners": 0, "opponent_mix": "0.5*random,0.5*self"})
    runner = UnoEnvRunner(config=rllib_config(args, UnoRules(), parse_mix(args.opponent_mix)))
    episodes = runner.sample(num_timesteps=600, explore=True)
    checked = {}
    for episode in episodes:
        for sa in episode.agent_episodes.values():
            acts = np.asarray(sa.get_actions())
            masks = np.asarray(sa.get_observations()["action_mask"])[: len(acts)]
            assert (masks[np.arange(len(acts)), acts] == 1).all()
            checked[sa.module_id] = checked.get(sa.module_id, 0) + len(acts)
    assert set(checked) == {LEARNER, SNAPSHOT, "random"} and sum(checked.values()) >= 500
    runner.stop()


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    out = tmp_path_factory.mktemp("rllib")
    final = train.main(train.Args(**TINY, output_dir=str(out), exp_name="tiny"))
    return out / "tiny", final


def test_tiny_rllib_run_trains_and_writes_a_checkpoint(trained):
    run_dir, final = trained
    assert final["backend"] == "rllib" and final["steps"] >= 1500 and len(final["iterations"]) >= 2
    assert all(it["env_step_failures"] == 0 for it in final["iterations"])  # no env step raised (illegal action)
    assert os.path.isdir(module_path(str(run_dir / "checkpoint")))
    assert [r["opponent"] for r in final["final_eval"]] == ["random"] and final["final_eval"][0]["games"] == 40


def test_checkpoint_loads_as_an_agent_and_plays_only_legal_actions(trained):
    run_dir, _ = trained
    rules = UnoRules()
    agent = RLlibAgent(str(run_dir / "checkpoint"))
    assert isinstance(agent, Agent) and agent.name == "tiny"
    for deterministic in (True, False):
        agent.deterministic = deterministic
        # The engine raises on an illegal action, so a finished table means every action was legal.
        r = play([agent, RandomAgent(), make_agent("greedy", rules)], 60, rules=rules, seed=1, batch_size=32)
        assert r.wins.sum() + r.truncated == 60
    engine = Engine(64, 2, rules, seed=5)
    a = agent.act(engine.observation, engine.legal_mask, np.random.default_rng(9))
    b = agent.act(engine.observation, engine.legal_mask, np.random.default_rng(9))
    assert np.array_equal(a, b) and engine.legal_mask[np.arange(64), a].all()
    with pytest.raises(ValueError, match="no RLlib checkpoint"):
        RLlibAgent(str(run_dir))


def test_checkpoint_plays_ray_tournaments_with_the_single_process_table(trained):
    """The agent travels to Ray workers (pickled with its torch module) and plays the same games there."""
    run_dir, _ = trained
    agents = [RLlibAgent(str(run_dir / "checkpoint"), deterministic=False), RandomAgent()]
    tables = []
    for play_chunks in (None, ray_chunks("", 2)):
        t = tournament(
            agents,
            120,
            num_players=2,
            rules=UnoRules(),
            seed=3,
            batch_size=32,
            chunk_games=40,
            names=["tiny", "random"],
            play_chunks=play_chunks,
        )
        tables.append([(r.wins.tolist(), r.points.tolist(), r.steps) for _, r in t.tables])
    assert tables[0] == tables[1]
