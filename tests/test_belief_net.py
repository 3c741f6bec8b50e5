"""The belief network (``agents.belief_net``, ``NetBelief``) and its training data: the data's
shapes and labels, bad inputs refused, and no cheating — games that differ only in what the
seat cannot see give the same weights and the same decision given a seed."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from builder import redeal_hidden

from agents import make_agent
from agents.belief_net import CLASSIC_DECK, NET_ROWS, BeliefNet, net_features, public_view
from agents.beliefs import NetBelief, make_belief
from training.belief_net import Generate, generate
from uno_env import Engine, UnoRules
from uno_env.observation import OBS_DISCARD, OBS_HAND, OBS_HAND_SIZES
from uno_env.spaces import HISTORY_COUNTS_SIZE, HISTORY_SIZE


@pytest.fixture(scope="module")
def data():
    return generate(Generate(games=12, batch_size=8, keep=0.5, seed=3))


def test_the_data_has_one_row_per_decision_and_the_other_hand_as_label(data):
    n = data["label"].shape[0]
    assert n > 0
    assert data["obs"].shape[0] == data["rows"].shape[0] == data["counts"].shape[0] == n
    assert data["rows"].shape[1:] == (NET_ROWS, HISTORY_SIZE)
    assert data["counts"].shape[1:] == (2, HISTORY_COUNTS_SIZE)
    assert data["label"].shape[1] == 57
    obs = data["obs"]
    # The label is the other seat's hand: its size is the observed one, and it holds no card the seat can see.
    np.testing.assert_array_equal(data["label"].sum(1), np.rint(obs[:, OBS_HAND_SIZES + 1]))
    own = np.rint(obs[:, OBS_HAND : OBS_HAND + 57])
    discard = np.rint(obs[:, OBS_DISCARD : OBS_DISCARD + 57])
    assert (data["label"] + own + discard <= CLASSIC_DECK).all()
    unseen, allowed, sizes = public_view(obs)
    assert (data["label"] <= unseen).all() and (allowed <= unseen).all()
    assert set(np.unique(data["me"])) | set(np.unique(data["other"])) <= set(range(len(data["agents"])))


def test_the_data_is_seeded(data):
    again = generate(Generate(games=12, batch_size=8, keep=0.5, seed=3))
    for k in ("obs", "rows", "counts", "label", "other"):
        np.testing.assert_array_equal(data[k], again[k])


def test_features_refuse_bad_shapes(data):
    x = net_features(data["obs"][:3], data["rows"][:3], data["counts"][:3])
    assert x.shape == (3, BeliefNet().num_features) and np.isfinite(x).all()
    with pytest.raises(ValueError, match="rows must have shape"):
        net_features(data["obs"][:3], data["rows"][:3, :2], data["counts"][:3])
    with pytest.raises(ValueError, match="counts must have shape"):
        net_features(data["obs"][:3], data["rows"][:3], data["counts"][:3, :1])


def test_net_belief_refuses_a_bad_mode_or_path(tmp_path):
    with pytest.raises(ValueError, match="mode must be one of"):
        NetBelief(mode="colours")
    with pytest.raises(ValueError, match="no belief network at"):
        NetBelief(tmp_path / "missing.npz")
    assert make_belief("net").name == "net"


def _decision(seed: int, history: int = NET_ROWS) -> Engine:
    """A 2-player classic game stepped by heuristics until the seat to act has two or more moves."""
    engine = Engine(1, 2, UnoRules.preset("classic"), seed=seed, history=history)
    heuristic, rng = make_agent("heuristic", engine.rules), np.random.default_rng(seed)
    for step in range(200):
        if step >= 8 and engine.legal_mask[0].sum() >= 2:
            return engine
        engine.step(heuristic.act(engine.observation, engine.legal_mask, rng))
        if engine.terminated[0] or engine.truncated[0]:
            engine.reset(seed=seed + 1000 + step)
    raise AssertionError("no decision with two moves")


def test_net_belief_weighs_nothing_without_history_or_at_four_players(data):
    belief = NetBelief()
    hands = np.zeros((3, 2, 57), np.int64)
    assert belief.log_weights(data["obs"][0], 0, hands, None) is None
    four = Engine(1, 4, seed=0)
    rows, counts = np.zeros((NET_ROWS, HISTORY_SIZE), np.float32), np.zeros((10, HISTORY_COUNTS_SIZE), np.float32)
    assert belief.log_weights(four.observation[0], 0, np.zeros((3, 4, 57), np.int64), (rows, counts)) is None


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_hidden_twins_get_the_same_weights_and_the_same_decision(seed):
    """Redeal everything the seat to act cannot see: its history, the network's weights of any
    hands and the search's decision (same rng) stay the same."""
    engine = _decision(seed)
    seat = int(engine.current_player[0])
    twin = copy.deepcopy(engine)
    assert redeal_hidden(twin, 0, seat, np.random.default_rng(seed))
    assert not np.array_equal(engine.hand_counts([0]), twin.hand_counts([0]))
    agent = make_agent("flatmc:64@net", engine.rules)
    views = [agent._history_of(e, 0, seat) for e in (engine, twin)]
    for a, b in zip(*views, strict=True):
        np.testing.assert_array_equal(a, b)
    hands = np.random.default_rng(seed).integers(0, 2, size=(16, 2, 57))
    w = [agent.belief.log_weights(e.observation[0], seat, hands, v) for e, v in zip((engine, twin), views, strict=True)]
    assert w[0] is not None and np.isfinite(w[0]).all()
    np.testing.assert_array_equal(w[0], w[1])
    acts = [agent.act_in(e, 0, np.random.default_rng(seed)) for e in (engine, twin)]
    assert acts[0] == acts[1]
