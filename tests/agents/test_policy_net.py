"""agents.policy_net: the shipped policies run in numpy agree with torch's, and only weights are read."""

from __future__ import annotations

import io
import pickle
import zipfile

import numpy as np
import pytest

from agents.policy_net import PolicyNet, read_state_dict
from agents.pretrained import PRETRAINED, load_card, model_path, pretrained_agent, shipped_policy
from uno_env import Engine, UnoRules
from uno_env.rules import parse_rules


@pytest.mark.parametrize("name", PRETRAINED)
def test_the_numpy_actor_gives_torchs_logits_and_moves(name):
    card = load_card(name)
    n = card["num_players"]
    net = PolicyNet(model_path(name), card["train_args"]["activation"])
    agent = pretrained_agent(name, UnoRules.preset("classic"), n)
    engine = Engine(32, n, UnoRules(), seed=3, autoreset=True)
    rng = np.random.default_rng(0)
    for _ in range(40):
        o, m = engine.observation, engine.legal_mask
        np.testing.assert_allclose(net.logits(o), agent.logits(o), atol=1e-4)
        a = agent.act(o, m, rng)
        np.testing.assert_array_equal(net.act(o, m), a)
        engine.step(a)


def test_the_shipped_policy_of_a_table_is_the_one_trained_for_it():
    assert shipped_policy(UnoRules(), 2).obs_size == load_card("pretrained")["observation_size"]
    assert shipped_policy(UnoRules(), 4) is not None
    assert shipped_policy(UnoRules(), 3) is None  # no model was trained for 3 players
    assert shipped_policy(parse_rules("house"), 2) is None


def _model_zip(path, pickled: bytes) -> str:
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as z:
        z.writestr("archive/data.pkl", pickled)
        z.writestr("archive/byteorder", "little")
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("policy.pth", inner.getvalue())
    return str(path)


class _Runs:
    def __reduce__(self):
        return (print, ("this pickle would run code",))


def test_a_file_that_would_run_code_is_refused(tmp_path):
    bad = _model_zip(tmp_path / "bad.zip", pickle.dumps({"w": _Runs()}, protocol=2))
    with pytest.raises(ValueError, match=r"hold a __builtin__.print: only float tensors are read"):
        read_state_dict(bad)


def test_bad_inputs_are_named(tmp_path):
    net = shipped_policy(UnoRules(), 2)
    with pytest.raises(ValueError, match=r"observation must be \[B, 398\], got shape \(3, 5\)"):
        net.logits(np.zeros((3, 5)))
    with pytest.raises(ValueError, match="activation must be one of"):
        PolicyNet(model_path("pretrained"), "gelu")
    empty = _model_zip(tmp_path / "empty.zip", pickle.dumps({}, protocol=2))
    with pytest.raises(ValueError, match="not a policy of train.py's"):
        PolicyNet(empty)
    assert (net.act(np.zeros((1, 398)), np.zeros((1, 116), bool)) == -1).all()
