"""The belief network (``agents.beliefs.net``, ``NetBelief``) and its training data: the data's
shapes and labels, bad inputs refused, and no cheating — games that differ only in what the
seat cannot see give the same weights and the same decision given a seed."""

from __future__ import annotations

import copy
import shutil

import numpy as np
import pytest
from builder import act, position, redeal_hidden

from agents import make_agent
from agents.beliefs import NetBelief, make_belief
from agents.beliefs.net import (
    CLASSIC_DECK,
    EVIDENCE_SIZE,
    MODEL_PATHS,
    NET_ROWS,
    BeliefNet,
    net_features,
    public_view,
    void_evidence,
)
from training.fit_belief_net import Generate, generate
from uno_env import Engine, UnoRules
from uno_env.cards import COLOR_NAMES
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
    assert data["evidence"].shape == (n, EVIDENCE_SIZE)
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


def test_four_player_data_has_one_sample_per_other_seat():
    data = generate(Generate(games=4, batch_size=8, keep=0.5, seed=5, num_players=4))
    assert int(data["num_players"]) == 4
    slots = data["slot"].astype(np.int64)
    assert set(np.unique(slots)) == {1, 2, 3}
    assert (slots == 1).sum() == (slots == 2).sum() == (slots == 3).sum()
    # Each sample's label is the hand of the seat in its slot: the size the observation shows there.
    sizes = np.rint(data["obs"][np.arange(slots.size), OBS_HAND_SIZES + slots])
    np.testing.assert_array_equal(data["label"].sum(1), sizes)
    x = net_features(data["obs"][:4], data["rows"][:4], data["counts"][:4], data["evidence"][:4], slots[:4])
    assert x.shape == (4, BeliefNet(MODEL_PATHS[4]).num_features)


def test_the_data_is_seeded(data):
    again = generate(Generate(games=12, batch_size=8, keep=0.5, seed=3))
    for k in ("obs", "rows", "counts", "evidence", "label", "other"):
        np.testing.assert_array_equal(data[k], again[k])


def test_features_refuse_bad_shapes(data):
    x = net_features(data["obs"][:3], data["rows"][:3], data["counts"][:3])
    assert x.shape == (3, BeliefNet().num_features) and np.isfinite(x).all()
    with pytest.raises(ValueError, match="rows must have shape"):
        net_features(data["obs"][:3], data["rows"][:3, :2], data["counts"][:3])
    with pytest.raises(ValueError, match="counts must have shape"):
        net_features(data["obs"][:3], data["rows"][:3], data["counts"][:3, :1])
    with pytest.raises(ValueError, match="evidence must have shape"):
        net_features(data["obs"][:3], data["rows"][:3], data["counts"][:3], data["evidence"][:2])


# Seat 1 faces red and plays a wild (a fact against red), then faces green and draws (a fact
# against green, after which it holds a new card: red's fact is no longer fresh).
_EVIDENCE_SETUP = dict(hands=["red 1, green 2, green 3, blue 4", "wild, yellow 9, yellow 8, green 4"], top="red 5")
_FACTS = ["play red 1", "play wild", "choose green", "play green 2"]


@pytest.mark.parametrize(
    ("actions", "expected"),
    [
        # colour: (off-colour plays, voluntary draws, any fact, fresh facts, drawn since / 5, played it since)
        (_FACTS[:3], {"red": (1, 0, 1, 1, 0.0, 0), "green": (0, 0, 0, 0, 0.0, 0)}),
        (_FACTS, {"red": (1, 0, 1, 1, 0.0, 0), "green": (0, 0, 0, 0, 0.0, 0)}),
        ([*_FACTS, "play green 4"], {"red": (1, 0, 1, 1, 0.0, 0), "green": (0, 0, 0, 0, 0.0, 0)}),
        ([*_FACTS, "draw"], {"red": (1, 0, 1, 0, 0.2, 0), "green": (0, 1, 1, 1, 0.0, 0)}),
        (
            [*_FACTS, "draw", "play green 3", "play green 4"],
            {"red": (1, 0, 1, 0, 0.2, 0), "green": (0, 1, 1, 1, 0.0, 1)},
        ),
        (["play red 1", "draw"], {"red": (0, 1, 1, 1, 0.0, 0)}),
    ],
)
def test_void_evidence_reads_the_other_seats_facts(actions, expected):
    engine = position(**_EVIDENCE_SETUP, draw="blue 7", history=32)  # type: ignore[arg-type]
    for name in actions:
        act(engine, name)
    rows, _ = engine.history([0])
    got = void_evidence(rows).reshape(6, 4)
    for colour in COLOR_NAMES:
        want = expected.get(colour, (0, 0, 0, 0, 0.0, 0))
        c = COLOR_NAMES.index(colour)
        transformed = (np.log1p(want[0]), np.log1p(want[1]), want[2], np.log1p(want[3]), want[4], want[5])
        np.testing.assert_allclose(got[:, c], transformed, rtol=1e-4, atol=1e-6, err_msg=colour)


def test_net_belief_refuses_a_bad_mode_or_path(tmp_path):
    with pytest.raises(ValueError, match="mode must be one of"):
        NetBelief(mode="colours")
    with pytest.raises(ValueError, match="no belief network at"):
        NetBelief(models={2: tmp_path / "missing.npz"})
    assert make_belief("net").name == "net"


def test_a_belief_network_is_checked_against_its_card(tmp_path):
    """A network whose card says another table size is refused at this one, naming both."""
    shutil.copyfile(MODEL_PATHS[4], tmp_path / "net.npz")
    shutil.copyfile(MODEL_PATHS[4].with_suffix(".json"), tmp_path / "net.json")
    assert BeliefNet(tmp_path / "net.npz", 4).num_features == BeliefNet(MODEL_PATHS[4]).num_features
    with pytest.raises(ValueError, match="trained for 4 players, rules classic; asked for 2 players"):
        NetBelief(models={2: tmp_path / "net.npz"})


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


def test_net_belief_weighs_nothing_without_history_or_at_three_players(data):
    belief = NetBelief()
    hands = np.zeros((3, 2, 57), np.int64)
    assert belief.log_weights(data["obs"][0], 0, hands, None) is None
    three = Engine(1, 3, seed=0)
    rows, counts = np.zeros((NET_ROWS, HISTORY_SIZE), np.float32), np.zeros((10, HISTORY_COUNTS_SIZE), np.float32)
    assert belief.log_weights(three.observation[0], 0, np.zeros((3, 3, 57), np.int64), (rows, counts)) is None


def test_net_belief_weighs_each_other_hand_at_four_players():
    """At 4 players a deal's weight is the sum of the three other seats' weights, each by its slot."""
    engine = Engine(1, 4, UnoRules.preset("classic"), seed=4, history=64)
    rng = np.random.default_rng(4)
    for _ in range(12):
        engine.step(np.array([rng.choice(np.flatnonzero(engine.legal_mask[0]))]))
    seat = int(engine.current_player[0])
    belief = NetBelief()
    rows, counts = engine.history([seat])
    deals = engine.hand_counts([0]).repeat(2, 0)
    deals[1, (seat + 2) % 4] = deals[0, (seat + 3) % 4]  # the hands of slots 2 and 3 exchanged
    deals[1, (seat + 3) % 4] = deals[0, (seat + 2) % 4]
    w = belief.log_weights(engine.observation[0], seat, deals, (rows[0], counts[0]))
    assert w is not None and w.shape == (2,) and np.isfinite(w).all()
    by_slot = []
    for k in (1, 2, 3):
        x = net_features(engine.observation[:1], rows, counts, slot=k)
        _, allowed, sizes = public_view(engine.observation[:1], k)
        theta_v, theta_t = belief.tilts(x, allowed, sizes, 4)
        by_slot.append(belief.hand_log_weights(deals[:, (seat + k) % 4], theta_v[0], theta_t[0]))
    # float32 sums in another order: equal to float32's precision, not bit for bit
    np.testing.assert_allclose(w, np.sum(by_slot, axis=0), rtol=1e-4)


@pytest.mark.parametrize(
    ("rules", "weighs"),
    [
        (UnoRules.preset("classic"), True),
        (UnoRules.preset("classic", episode="match", target_points=200), True),
        (UnoRules.preset("classic", draw_until_playable=True), False),
        (UnoRules.preset("classic", hand_size=5), False),
    ],
)
def test_net_belief_weighs_only_under_the_rules_it_learned(rules, weighs):
    engine = _decision(0)
    seat = int(engine.current_player[0])
    rows, counts = engine.history([seat])
    hands = engine.hand_counts([0]).repeat(3, 0)
    w = make_belief("net", rules).log_weights(engine.observation[0], seat, hands, (rows[0], counts[0]))
    assert (w is not None) == weighs
    if weighs:
        assert w.shape == (3,) and np.isfinite(w).all()


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
