"""The ``replay-heuristic`` belief: whole worlds replayed from the seat's view of the round, weighed
by ``HeuristicAgent``'s code. The true hands always replay; the weights read the information set
only; rounds it cannot follow weigh nothing; the searches deal from its candidates."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from builder import redeal_hidden

from agents import make_agent
from agents.beliefs import PublicBelief, log_weights_of, make_belief
from agents.beliefs.replay_heuristic import HeuristicReplayBelief, _read_round
from arena import play
from uno_env import Engine, UnoRules


def decisions(num_players: int, games: int, seed: int, opponent: str = "heuristic", rules: UnoRules | None = None):
    """(engine copy, seat) at every decision with a choice of seat 0 in seeded rounds of
    ``heuristic`` (seat 0) against ``opponent`` (the other seats)."""
    rules = rules or UnoRules()
    agents = [make_agent("heuristic", rules), make_agent(opponent, rules)]
    rng = np.random.default_rng(seed)
    for g in range(games):
        engine = Engine(1, num_players, rules, seed=seed * 1000 + g, history=HeuristicReplayBelief.history_length)
        while not (engine.terminated[0] or engine.truncated[0]):
            seat = int(engine.current_player[0])
            if seat == 0 and engine.legal_mask[0].sum() >= 2:
                yield engine, seat
            engine.step(agents[min(seat, 1)].act(engine.observation, engine.legal_mask, rng))


def weights(belief, engine: Engine, seat: int, hands: np.ndarray):
    return log_weights_of(belief, engine.observation[0], seat, hands, engine.history_events(0, seat))


OTHER_RULES = UnoRules(draw_until_playable=True, allow_doubles=True, stack_draw_two=True)


@pytest.mark.parametrize(
    ("num_players", "opponent", "rules"),
    [(2, "heuristic", None), (2, "random", None), (3, "rlcard_rule", None), (2, "random", OTHER_RULES)],
)
def test_the_true_hands_always_replay(num_players, opponent, rules):
    """Every decision's true deal has a world that replays the round (finite weight), whatever the
    other seats play, under the classic rules and others (drawing until a card can be played,
    doubles, stacked Draw Twos); only rounds it cannot follow (a reshuffle) weigh nothing."""
    belief = HeuristicReplayBelief(rules)
    belief.assignments = 8
    seen = weighed = 0
    for engine, seat in decisions(num_players, 6, seed=num_players, opponent=opponent, rules=rules):
        seen += 1
        w = weights(belief, engine, seat, engine.hand_counts([0]))
        if w is None:
            kinds = {ev["type"] for ev in engine.history_events(0, seat)}
            seat_acts = {ev.get("player") for ev in engine.history_events(0, seat) if ev["type"] != "flip"}
            assert "reshuffle" in kinds or seat_acts <= {seat}, f"not weighed: {sorted(kinds)}"
            continue
        weighed += 1
        assert np.isfinite(w[0]), f"the true deal was ruled out at turn {engine.game_state(0)['turn']}"
    assert seen >= 30 and weighed >= 0.8 * seen


def test_the_weights_read_only_the_information_set():
    """Two games that differ only in what the seat cannot see give the same weights to the same deals."""
    belief = HeuristicReplayBelief()
    rng = np.random.default_rng(5)
    checked = 0
    for engine, seat in decisions(2, 4, seed=9):
        if rng.random() > 0.4:
            continue
        twin = copy.deepcopy(engine)
        assert redeal_hidden(twin, 0, seat, rng)
        hands = np.concatenate([engine.hand_counts([0]), twin.hand_counts([0])])
        assert not np.array_equal(hands[0], hands[1])
        a, b = weights(belief, engine, seat, hands), weights(belief, twin, seat, hands)
        assert (a is None) == (b is None)
        if a is not None:
            assert np.array_equal(a, b)
            checked += 1
    assert checked >= 5


def test_the_true_policy_prefers_the_true_hands():
    """Against ``heuristic``, its own code as the model puts more weight on the true hand than
    ``public``'s deals do on average (information over ``public``, in nats)."""
    belief = HeuristicReplayBelief()
    public = PublicBelief()
    rng = np.random.default_rng(0)
    cand = Engine(65, 2, UnoRules(), seed=0)
    gains = []
    for engine, seat in decisions(2, 6, seed=4):
        k = np.arange(65)
        cand.copy_games(engine, np.zeros(65, np.int64), k)
        cand.resample_hidden(k[1:], seat, rng, exclude=public.exclusions(engine.observation[0], seat))
        w = weights(belief, engine, seat, cand.hand_counts(k))
        if w is not None and np.isfinite(w[1:]).any():
            gains.append(w[0] - (np.logaddexp.reduce(w[1:]) - np.log(64)))
    assert len(gains) >= 30 and np.mean(gains) > 0.3


def test_rounds_it_cannot_follow_weigh_nothing():
    """A history that does not reach back to the round's first card, and hands swapped (R8.2),
    are not replayed: the belief weighs nothing there (the ``public`` deal)."""
    belief = HeuristicReplayBelief()
    engine, seat = next(e for e in decisions(2, 1, seed=1) if e[0].game_state(0)["turn"] > 12)
    events = engine.history_events(0, seat)
    assert _read_round(events) is not None
    assert _read_round(events[5:]) is None
    assert belief.log_weights(engine.observation[0], seat, engine.hand_counts([0]), events[5:]) is None
    swap = events[:3] + [{"type": "swap", "player": 1, "with": 0}] + events[3:]
    assert _read_round(swap) is None
    assert _read_round(events + [{"type": "reshuffle", "count": 40}]) is None


def test_the_search_deals_from_the_beliefs_candidates():
    """A belief with ``candidates`` gets that many deals per decision, however many the search keeps."""
    sizes = []

    class Spy(HeuristicReplayBelief):
        candidates = 24

        def log_weights(self, observation, seat, hands, events):
            out = super().log_weights(observation, seat, hands, events)
            sizes.append(hands.shape[0])
            return out

    agent = make_agent("flatmc:256")
    agent.belief = Spy()
    agent.history_length = Spy.history_length
    result = play([agent, make_agent("heuristic")], 2, seed=3, engine_access=True)
    assert result.games == 2
    assert sizes and set(sizes) <= {0, 24} and 24 in sizes


def test_the_beliefs_are_named():
    assert make_belief("replay-heuristic").name == "replay-heuristic"
    assert isinstance(make_belief("replay-heuristic", UnoRules()).model, type(make_agent("heuristic")))
    assert make_agent("flatmc:64@replay-heuristic").belief.name == "replay-heuristic"
