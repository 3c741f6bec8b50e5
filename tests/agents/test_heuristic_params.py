"""The heuristic's parameters (agents.heuristic.HeuristicParams): named, overridable, and routed to the
kernels unchanged. The recorded actions were computed before the parameters got names (positional
indices then): the same positions must get the same actions.

``tests/data/heuristic_positions.npz``: 1,120 positions with two or more legal actions, 160 from each
of seven rule sets and table sizes (``settings``), drawn from games where every decision was the
heuristic's or a random agent's with equal chance; ``actions_<name>`` are the heuristic's answers
with the parameters ``params[name]`` (the defaults, and a set that changes 122 of the answers), each
rule set's rows asked in one batch with ``np.random.default_rng(k)``, ``k`` its index. Record them
again (``record``) only when a change of the heuristic's play is meant.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers import ROOT

from agents import HeuristicAgent
from agents.heuristic import HeuristicParams, W
from uno_env import NUM_ACTIONS, UnoRules

DATA = ROOT / "tests" / "data" / "heuristic_positions.npz"


def load() -> tuple[np.lib.npyio.NpzFile, np.ndarray, list[dict], dict[str, dict]]:
    d = np.load(DATA)
    mask = np.unpackbits(d["mask"], axis=1, count=NUM_ACTIONS).astype(bool)
    return d, mask, json.loads(str(d["settings"])), json.loads(str(d["params"]))


def answers(obs: np.ndarray, mask: np.ndarray, setting: np.ndarray, settings: list[dict], params: dict) -> np.ndarray:
    """The heuristic's action on every position, each rule set's rows in one batch (module docstring)."""
    acts = np.empty(len(obs), np.int64)
    for k, s in enumerate(settings):
        rows = setting == k
        agent = HeuristicAgent(UnoRules.from_dict(s["rules"]), **params)
        acts[rows] = agent.act(obs[rows], mask[rows], np.random.default_rng(k))
    return acts


@pytest.mark.parametrize("name", ["default", "varied"])
def test_heuristic_answers_the_recorded_positions_as_before(name):
    d, mask, settings, params = load()
    assert mask[np.arange(len(mask)), d[f"actions_{name}"]].all()  # the record itself is legal
    np.testing.assert_array_equal(answers(d["obs"], mask, d["setting"], settings, params[name]), d[f"actions_{name}"])


def test_the_recorded_parameter_sets_differ_where_it_matters():
    d, _, _, params = load()
    assert set(params["varied"]) <= set(HeuristicParams._fields)
    assert (d["actions_default"] != d["actions_varied"]).sum() > 50  # the overrides reach the kernels


def test_parameters_are_named_and_overridable():
    assert len(HeuristicParams._fields) == 26 and all(isinstance(v, float) for v in HeuristicParams())
    assert [getattr(W, f) for f in HeuristicParams._fields] == list(range(26))  # the kernels' array slots
    agent = HeuristicAgent(UnoRules(), bluff=1, challenge_at=0.5)
    assert agent.params == HeuristicParams(bluff=1.0, challenge_at=0.5)
    assert isinstance(agent.params.bluff, float)


@pytest.mark.parametrize(
    "params, match",
    [
        ({"blufff": 1.0}, r"unknown heuristic parameter\(s\) \['blufff'\]"),
        ({"bluff": "high"}, "must be real numbers"),
        ({"tempo": None}, "must be real numbers"),
        ({"tempo": float("nan")}, "must be real numbers"),
    ],
)
def test_bad_parameters_are_refused(params, match):
    with pytest.raises(ValueError, match=match):
        HeuristicAgent(UnoRules(), **params)


def record(path: str = DATA) -> None:  # pragma: no cover - run by hand: python -m tests.test_heuristic_params
    """Record the positions and answers of the module docstring again."""
    from uno_env import Engine, RandomAgent

    settings = [
        ("classic", {}, 2),
        ("classic", {}, 4),
        ("house", {}, 3),
        ("official", {}, 2),
        ("classic", {"uno_call": "explicit", "allow_doubles": True}, 2),
        ("classic", {"teams": True}, 4),
        ("swap_hands", {"custom_wild_rule": "others_draw_two"}, 3),
    ]
    params = {
        "default": {},
        "varied": {
            "bluff": 0.5,
            "bluff_prior": 0.5,
            "challenge_at": 0.05,
            "attack_size": 3.0,
            "tempo": 0.5,
            "drew_bias": 0.6,
            "follow": 1.5,
            "wild_keep": 4.0,
        },
    }
    per, obs_all, mask_all, setting_all, described = 160, [], [], [], []
    for k, (preset, over, n) in enumerate(settings):
        rules = UnoRules.preset(preset, **over)
        engine = Engine(64, n, rules, seed=100 + k, autoreset=True)
        heuristic, rand, rng = HeuristicAgent(rules), RandomAgent(), np.random.default_rng(k)
        obs_k, mask_k = [], []
        while sum(len(o) for o in obs_k) < per:
            obs, mask = engine.observation.copy(), engine.legal_mask.copy()
            pick = (mask.sum(1) > 1) & (rng.random(64) < 0.05)
            obs_k.append(obs[pick])
            mask_k.append(mask[pick])
            engine.step(np.where(rng.random(64) < 0.5, heuristic.act(obs, mask, rng), rand.act(obs, mask, rng)))
        obs_all.append(np.concatenate(obs_k)[:per])
        mask_all.append(np.concatenate(mask_k)[:per])
        setting_all.append(np.full(per, k))
        described.append({"rules": rules.to_dict(), "num_players": n})
    obs, mask, setting = np.concatenate(obs_all), np.concatenate(mask_all), np.concatenate(setting_all)
    acts = {f"actions_{name}": answers(obs, mask, setting, described, p) for name, p in params.items()}
    np.savez_compressed(
        path,
        obs=obs,
        mask=np.packbits(mask, axis=1),
        setting=setting,
        settings=json.dumps(described),
        params=json.dumps(params),
        **acts,
    )


if __name__ == "__main__":
    record()
