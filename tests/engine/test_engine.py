"""Engine-level properties: R9 first card, R10 illegal actions, R11 hidden information,
invariants over random batched play, determinism, batch equivalence, records, bad input."""

import json

import numpy as np
import pytest
from builder import act, cards, position
from helpers import ROOT

from uno_env import Engine, UnoRules, replay, sample_legal
from uno_env.cards import CARD_RANK, WILD, WILD_DRAW_FOUR
from uno_env.engine import game_seeds
from uno_env.engine.layout import PILE_DRAW
from uno_env.observation import OBS_OFFSETS


def _first_turned(engine, i):
    """The card turned at the deal (bottom of the discard pile)."""
    return engine.game_state(i)["discard_pile"][0]


def _find_deal(predicate, rules=None, num_players=3, batch=4096):
    """A game of a big seeded batch whose deal satisfies predicate(engine, i) (deterministic)."""
    engine = Engine(batch, num_players, rules, seed=7, record=True)
    for i in range(batch):
        if predicate(engine, i):
            return engine, i
    raise AssertionError("no such deal in the batch")


# --- R9: the first card --------------------------------------------------------------------


@pytest.mark.parametrize("num_players", [2, 3, 5])
@pytest.mark.parametrize(
    "rank, expected",
    [
        (10, "skip"),  # R9: the first player loses the turn
        (12, "draw_two"),  # R9: the first player draws 2 and loses the turn
        (11, "reverse"),  # R9: the dealer starts, play goes the other way
    ],
)
def test_first_card_actions(rank, expected, num_players):
    engine, i = _find_deal(
        lambda e, i: _first_turned(e, i) < WILD and CARD_RANK[_first_turned(e, i)] == rank, num_players=num_players
    )
    state = engine.game_state(i)
    dealer, n = state["dealer"], num_players
    first = (dealer + 1) % n
    sizes = [len(h) for h in state["hands"]]
    if expected == "skip":
        assert state["current_player"] == (dealer + 2) % n and state["direction"] == 1
    elif expected == "draw_two":
        assert state["current_player"] == (dealer + 2) % n
        assert sizes[first] == 9 and sum(sizes) == 7 * n + 2
    else:
        assert state["current_player"] == dealer and state["direction"] == -1
    assert state["phase"] == "play"


def test_first_card_wild_first_player_chooses_colour_then_plays():
    """R9: a Wild first card: the first player chooses the colour, then plays."""
    engine, i = _find_deal(lambda e, i: _first_turned(e, i) == WILD)
    state = engine.game_state(i)
    first = (state["dealer"] + 1) % 3
    assert state["phase"] == "choose_color" and state["current_player"] == first
    assert state["current_color"] is None
    actions = np.full(engine.num_envs, -1)
    actions[i] = 61  # choose green
    engine.step(actions)
    state = engine.game_state(i)
    assert state["phase"] == "play" and state["current_player"] == first and state["current_color"] == 2


def test_first_card_wild_draw_four_goes_back():
    """R9: a Wild Draw Four is returned to the pile and a new card is turned."""
    engine, i = _find_deal(lambda e, i: any(ev["type"] == "return_first_card" for ev in e.record(i)["events"]))
    returned = [ev["card"] for ev in engine.record(i)["events"] if ev["type"] == "return_first_card"]
    assert WILD_DRAW_FOUR in returned
    assert engine.game_state(i)["top_card"] != WILD_DRAW_FOUR


@pytest.mark.parametrize(
    "option, redrawn",
    [
        (dict(first_card_rule="redraw_special"), lambda c: c >= WILD or CARD_RANK[c] >= 10),
        (dict(wild_first_card="redraw"), lambda c: c >= WILD),
    ],
)
def test_first_card_redraw_options(option, redrawn):
    """R9 redraw_special (seed 001) and wild_first_card=redraw (seed 003)."""
    engine = Engine(2048, 3, UnoRules.preset("classic", **option), seed=3, record=True)
    for i in range(engine.num_envs):
        assert not redrawn(engine.game_state(i)["top_card"])
    returned = [
        ev["card"] for i in range(200) for ev in engine.record(i)["events"] if ev["type"] == "return_first_card"
    ]
    assert returned and all(redrawn(c) for c in returned)


# --- R10: illegal actions ------------------------------------------------------------------


def _snapshot(engine):
    return (json.dumps(engine.game_state(0)), engine.draw_pile(0), engine.observation.copy(), engine.legal_mask.copy())


def _same(a, b):
    return a[0] == b[0] and a[1] == b[1] and np.array_equal(a[2], b[2]) and np.array_equal(a[3], b[3])


def test_illegal_action_raises_and_leaves_state_unchanged():
    """R10 raise: the error names the action, the phase and the legal actions."""
    engine = position(["red 7, blue 3", "green 1, green 2"], "red 3")
    before = _snapshot(engine)
    with pytest.raises(
        ValueError,
        match=r"action 39 \(play blue 0\) is not legal .* phase 'play'.*legal actions: \[3 \(play red 3\)|legal actions",
    ):
        engine.step(np.array([39]))
    assert _same(before, _snapshot(engine))


def test_illegal_play_penalty():
    """R10 penalty: the card stays in the hand, the player draws 1, the turn ends."""
    engine = position(["red 7, blue 4", "green 1, green 2"], "red 3", draw="yellow 5", illegal_action="penalty")
    act(engine, "play blue 4")
    state = engine.game_state(0)
    assert sorted(state["hands"][0]) == sorted(cards("red 7, blue 4, yellow 5"))
    assert state["current_player"] == 1 and state["top_card"] == cards("red 3")[0]


def test_penalty_does_not_cover_other_phases():
    """R12.20: an illegal action outside PLAY in play/post_draw still raises."""
    engine = position(["wild, blue 3", "green 1, green 2"], "red 3", illegal_action="penalty")
    act(engine, "play wild")
    with pytest.raises(ValueError, match="choose_color"):
        act(engine, "play blue 3")


# --- R11: hidden information ----------------------------------------------------------------


def test_observation_ignores_hidden_information():
    """R11: other hands (same sizes) and the draw-pile order do not change the observation."""
    a = position(["red 7, blue 3", "green 1, green 2, yellow 9", "blue 8"], "red 3", draw="green 5, red 1")
    b = position(["red 7, blue 3", "yellow 4, blue 2, red 2", "green 8"], "red 3", draw="red 1, green 5")
    assert np.array_equal(a.observation, b.observation)
    for seat in range(3):
        same = np.array_equal(a.observe(seat), b.observe(seat))
        assert same == (seat == 0)


def test_open_hands_shows_other_hands():
    """R11 open_hands (seed 003): everyone's cards are observed."""
    a = position(["red 7", "green 1, green 2"], "red 3", open_hands=True)
    b = position(["red 7", "yellow 4, blue 2"], "red 3", open_hands=True)
    assert a.observation_size > Engine(1, 2).observation_size
    assert not np.array_equal(a.observation, b.observation)


# --- invariants over random batched play ---------------------------------------------------


@pytest.mark.parametrize("num_players", [2, 3, 4, 7, 10])
@pytest.mark.parametrize(
    "options",
    [
        {},
        dict(challenge=False, allow_voluntary_draw=False),
        dict(
            draw_until_playable=True,
            wd4_wilds_count_as_match=True,
            forbid_last_action_card=True,
            illegal_action="penalty",
        ),
    ],
)
def test_random_play_invariants(num_players, options):
    """Every card accounted for, the mask never empty, only held cards playable, scores add up.

    5 player counts x 3 option sets x 256 games x 300 steps = 1.15M steps per run."""
    rules = UnoRules.preset("classic", **options)
    engine = Engine(256, num_players, rules, seed=num_players, autoreset=True)
    rng = np.random.default_rng(num_players)
    rounds = 0
    for _ in range(300):
        mask = engine.legal_mask.copy()
        actions = sample_legal(mask, rng)
        result = engine.step(actions)
        assert engine.check_invariants() == []
        assert mask[np.arange(engine.num_envs), actions].all()
        for b in np.flatnonzero(result.terminated):
            rounds += 1
            winners = result.rewards[b] == 1.0
            assert winners.sum() >= 1 and (result.rewards[b][~winners] == -1.0).all()
        for b in np.flatnonzero(result.truncated):
            assert (result.rewards[b] == 0).all()
    assert rounds > 0


def test_scores_add_up():
    """R8 winner_takes: at the round end the winner's score is the points left in the other hands."""
    engine = Engine(512, 4, seed=11)
    rng = np.random.default_rng(0)
    points = np.array(UnoRules().points)
    checked = 0
    for _ in range(3000):
        if (engine.terminated | engine.truncated).all():
            break
        actions = np.where(engine.terminated | engine.truncated, -1, sample_legal(engine.legal_mask, rng))
        engine.step(actions)
    for i in np.flatnonzero(engine.terminated):
        state = engine.game_state(i)
        left = sum(points[c] for p, h in enumerate(state["hands"]) if p != state["winner"] for c in h)
        assert state["scores"][state["winner"]] == left
        assert sum(state["scores"]) == left
        checked += 1
    assert checked > 400


# --- determinism and batch equivalence ------------------------------------------------------


def _play(engine, steps, seed):
    rng = np.random.default_rng(seed)
    trace = []
    for _ in range(steps):
        actions = sample_legal(engine.legal_mask, rng)
        r = engine.step(actions)
        trace.append((actions.copy(), r.observation.copy(), r.rewards.copy(), r.terminated.copy()))
    return trace


def test_same_seed_same_games():
    a = _play(Engine(64, 3, seed=42, autoreset=True), 200, 0)
    b = _play(Engine(64, 3, seed=42, autoreset=True), 200, 0)
    for x, y in zip(a, b, strict=True):
        for u, v in zip(x, y, strict=True):
            assert np.array_equal(u, v)


def test_different_seeds_different_deals():
    a, b = Engine(1, 2, seed=1), Engine(1, 2, seed=2)
    assert a.game_state(0)["hands"] != b.game_state(0)["hands"]


def test_batch_equals_single_games():
    """A batch of B games equals B single games with the same per-game seeds, whatever the position."""
    seeds = game_seeds(123, 8)
    big = Engine(8, 4, seed=seeds, autoreset=True)
    singles = [Engine(1, 4, seed=[int(s)], autoreset=True) for s in seeds[::-1]][::-1]
    rng = np.random.default_rng(5)
    for _ in range(300):
        actions = sample_legal(big.legal_mask, rng)
        big.step(actions)
        for i, single in enumerate(singles):
            single.step(actions[i : i + 1])
            assert np.array_equal(single.observation[0], big.observation[i])
            assert np.array_equal(single.legal_mask[0], big.legal_mask[i])
            assert single.terminated[0] == big.terminated[i]


def test_int_seed_is_prefix_stable():
    """Game i of reset(seed=s) is the same game whatever the batch size."""
    a, b = Engine(3, 2, seed=9), Engine(10, 2, seed=9)
    for i in range(3):
        assert a.game_state(i) == b.game_state(i)


# --- records and replay ---------------------------------------------------------------------


def test_record_replays_to_same_state():
    engine = Engine(16, 3, seed=5, autoreset=True, record=True)
    rng = np.random.default_rng(1)
    finished = []
    for _ in range(1000):
        engine.step(sample_legal(engine.legal_mask, rng))
        for i in np.flatnonzero(engine.terminated):
            finished.append(engine.last_record(int(i)))
    assert len(finished) >= 3
    for record in finished[:5] + [engine.record(0)]:
        record = json.loads(json.dumps(record))  # JSON-serialisable
        types = {e["type"] for e in record["events"]}
        assert {"deal", "flip"} <= types
        replayed = replay(record)
        assert replayed.record(0)["events"] == record["events"]
    last = finished[0]
    ends = [e for e in last["events"] if e["type"] == "round_end"]
    assert len(ends) == 1 and last["events"][-1]["type"] == "score"
    winner = ends[0]["winners"][0]
    assert replay(last).game_state(0)["winner"] == winner


def test_replay_detects_a_tampered_record():
    engine = Engine(1, 2, seed=5, record=True)
    rng = np.random.default_rng(1)
    for _ in range(10):
        engine.step(sample_legal(engine.legal_mask, rng))
    record = engine.record(0)
    record["events"][0]["cards"][0] = (record["events"][0]["cards"][0] + 1) % 52
    with pytest.raises(ValueError, match="differs"):
        replay(record)


def test_record_from_a_set_position_replays():
    engine = position(["wild draw four, red 1", "green 1, green 2", "blue 5"], "red 3")
    engine2 = Engine(1, 3, seed=0, record=True)
    state = engine.game_state(0)
    engine2.set_game(
        0, hands=state["hands"], discard_pile=state["discard_pile"], draw_pile=engine.draw_pile(0), current_player=0
    )
    for a in (53, 61, 63):  # play Wild Draw Four, choose green, challenge (guilty)
        engine2.step(np.array([a]))
    record = engine2.record(0)
    assert any(e["type"] == "challenge" and e["verdict"] == "guilty" for e in record["events"])
    assert replay(record).game_state(0) == engine2.game_state(0)


# --- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(num_envs=0), "num_envs"),
        (dict(num_envs=-3), "num_envs"),
        (dict(num_envs=2.5), "num_envs"),
        (dict(num_players=1), "num_players"),
        (dict(num_players=11), "num_players"),
        (dict(num_players="4"), "num_players"),
        (dict(rules="classic"), "rules must be a UnoRules"),
        (dict(seed=-1), "seed"),
        (dict(seed=2**64), "seed"),
        (dict(seed=1.5), "seed"),
        (dict(seed=[1, 2, 3]), "seed"),
        (dict(num_players=10, rules=UnoRules(hand_size=11)), "hand_size"),
    ],
)
def test_bad_constructor_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Engine(**{"num_envs": 2, "num_players": 2, **kwargs})


@pytest.mark.parametrize(
    "actions, match",
    [
        (np.array([0.0, 1.0]), "integers"),
        (np.array([True, False]), "integers"),
        (np.array([57]), r"shape \(2,\)"),
        (np.array([[57, 57]]), r"shape \(2,\)"),
        (np.array([116, -1]), "out of range"),
        (np.array([-2, -1]), "out of range"),
        (np.array([-1, -3]), "out of range"),  # -2..-4 are the game loop's internal codes
        (np.array([-4, -4]), "out of range"),
        ("draw", "integers"),
    ],
)
def test_bad_actions_leave_state_unchanged(actions, match):
    engine = Engine(2, 2, seed=1)
    before = [json.dumps(engine.game_state(i)) for i in range(2)]
    with pytest.raises(ValueError, match=match):
        engine.step(actions)
    assert before == [json.dumps(engine.game_state(i)) for i in range(2)]


def test_illegal_action_in_a_later_game_changes_no_game():
    """Validation covers the whole batch before any game moves."""
    engine = Engine(3, 2, seed=1)
    legal = sample_legal(engine.legal_mask, np.random.default_rng(0))
    illegal = int(np.flatnonzero(~engine.legal_mask[2])[0])
    before = [json.dumps(engine.game_state(i)) for i in range(3)]
    with pytest.raises(ValueError, match="game 2"):
        engine.step(np.array([legal[0], legal[1], illegal]))
    assert before == [json.dumps(engine.game_state(i)) for i in range(3)]


def test_stepping_a_finished_game_raises():
    engine = position(["red 5", "green 1"], "red 3")
    act(engine, "play red 5")
    with pytest.raises(ValueError, match="round is over"):
        act(engine, "draw")
    engine.step(np.array([-1]))  # -1 leaves a finished game alone
    engine.reset(seed=1)
    assert engine.game_state(0)["phase"] in ("play", "choose_color")


def test_bad_index_and_observe_seats():
    engine = Engine(2, 3, seed=0)
    with pytest.raises(ValueError, match="game index"):
        engine.game_state(2)
    with pytest.raises(ValueError, match="seats"):
        engine.observe(3)
    assert engine.observe(np.array([0, 2])).shape == (2, engine.observation_size)


def test_set_game_rejects_missing_cards():
    engine = Engine(1, 2, seed=0)
    with pytest.raises(ValueError, match="exactly once"):
        engine.set_game(0, hands=[[1], [2]], discard_pile=[3], draw_pile=[], current_player=0)


# --- search support and partial resets ------------------------------------------------------


def _played(num_envs=4, steps=40, seed=1, rules=None):
    engine = Engine(num_envs, 3, rules, seed=seed)
    rng = np.random.default_rng(0)
    for _ in range(steps):
        engine.step(np.where(engine.terminated | engine.truncated, -1, sample_legal(engine.legal_mask, rng)))
    return engine


@pytest.mark.parametrize("preset", ["classic", "official", "swap_hands", "house"])
def test_resample_hidden_keeps_what_the_seat_knows(preset):
    """Determinization: own hand, every public fact and every count stay; only hidden cards move."""
    engine = _played(rules=UnoRules.preset(preset))
    rng = np.random.default_rng(3)
    for i in range(engine.num_envs):
        seat = int(engine.current_player[i])
        before, obs = engine.game_state(i), engine.observe(seat)[i].copy()
        pile_before = engine.draw_pile(i)
        engine.resample_hidden(i, seat, rng)
        after = engine.game_state(i)
        assert after["hands"][seat] == before["hands"][seat]
        assert [len(h) for h in after["hands"]] == [len(h) for h in before["hands"]]
        for key in (
            "discard_pile",
            "draw_pile_size",
            "current_player",
            "phase",
            "current_color",
            "scores",
            "direction",
            "pending_draw",
            "turn",
        ):
            assert after[key] == before[key]
        assert np.array_equal(engine.observe(seat)[i], obs)
        hidden_before = sorted(pile_before + [c for p, h in enumerate(before["hands"]) if p != seat for c in h])
        hidden_after = sorted(engine.draw_pile(i) + [c for p, h in enumerate(after["hands"]) if p != seat for c in h])
        assert hidden_before == hidden_after
    assert engine.check_invariants() == []


def test_resample_hidden_changes_hidden_cards():
    engine = _played()
    seat = int(engine.current_player[0])
    before = engine.game_state(0)["hands"]
    engine.resample_hidden(0, seat, np.random.default_rng(1))
    assert engine.game_state(0)["hands"] != before


def test_copy_game_continues_identically():
    source = _played()
    target = Engine(2, 3, seed=99)
    target.copy_game(source, 2, 1)
    assert target.game_state(1) == source.game_state(2)
    rng_a, rng_b = np.random.default_rng(5), np.random.default_rng(5)
    for _ in range(50):
        if source.terminated[2] or source.truncated[2]:
            break
        a = sample_legal(source.legal_mask[2:3], rng_a)[0]
        assert sample_legal(target.legal_mask[1:2], rng_b)[0] == a
        actions = np.full(4, -1)
        actions[2] = a
        source.step(actions)
        target.step(np.array([-1, a]))
        assert target.game_state(1) == source.game_state(2)
    with pytest.raises(ValueError, match="same rules"):
        Engine(1, 2).copy_game(source, 0, 0)


def test_copy_games_equals_one_copy_at_a_time():
    source = _played()
    many, one = Engine(6, 3, seed=7), Engine(6, 3, seed=7)
    i, j = np.array([3, 0, 3, 1]), np.array([5, 1, 2, 0])
    many.copy_games(source, i, j)
    for a, b in zip(i, j, strict=True):
        one.copy_game(source, int(a), int(b))
    for g in range(6):
        assert many.game_state(g) == one.game_state(g)
        assert many.draw_pile(g) == one.draw_pile(g)
    assert np.array_equal(many.legal_mask, one.legal_mask) and np.array_equal(many.observation, one.observation)
    with pytest.raises(ValueError, match="same length"):
        many.copy_games(source, [0, 1], [2])
    with pytest.raises(ValueError, match="repeat"):
        many.copy_games(source, [0, 1], [2, 2])
    with pytest.raises(ValueError, match="game indices"):
        many.copy_games(source, [4], [0])


def test_resample_hidden_depends_only_on_which_cards_are_hidden():
    """Two games with the same public position and the same hidden cards placed differently
    are redealt identically from the same rng: nothing of the old hidden order leaks (R11)."""
    hands = ["red 1, red 2, blue 7", "green 3, green 4, yellow 5", "blue 1, wild"]
    a = position(hands, "red 3", draw="green 9, yellow 8")
    b = position(
        ["red 1, red 2, blue 7", "green 9, yellow 8, yellow 5", "green 3, green 4"], "red 3", draw="blue 1, wild"
    )
    for engine in (a, b):
        engine.resample_hidden(0, 0, np.random.default_rng(11))
    assert a.game_state(0) == b.game_state(0) and a.draw_pile(0) == b.draw_pile(0)
    assert a.game_state(0)["hands"][0] == b.game_state(0)["hands"][0]


def test_resample_hidden_many_games_and_fresh_generator():
    """A mask of games at once; each resampled game gets a new generator state (the copied one
    would fix the order of future reshuffles); games outside the mask are untouched."""
    engine = _played()
    seat = 1
    before = [(engine.game_state(i), engine.draw_pile(i), engine._rng[i, 0]) for i in range(4)]
    engine.resample_hidden(np.array([True, False, True, False]), seat, np.random.default_rng(2))
    for i in (1, 3):
        assert (engine.game_state(i), engine.draw_pile(i), engine._rng[i, 0]) == before[i]
    for i in (0, 2):
        state = engine.game_state(i)
        assert state["hands"][seat] == before[i][0]["hands"][seat]
        assert engine._rng[i, 0] != before[i][2]
    assert engine.check_invariants() == []


def test_shuffle_draw_pile_keeps_every_hand_and_permutes_the_pile():
    """Only the draw pile's order and the generator change; the same rng gives the same order,
    and a pile holding the same cards in another order is shuffled identically (no old order leaks)."""
    engine, twin = _played(), _played()
    before = [(engine.game_state(i), engine.draw_pile(i), engine._rng[i, 0]) for i in range(4)]
    obs, mask = engine.observation.copy(), engine.legal_mask.copy()
    engine.shuffle_draw_pile(np.array([0, 2]), np.random.default_rng(4))
    for i in range(4):
        state, pile = engine.game_state(i), engine.draw_pile(i)
        assert state == before[i][0]  # hands, discard pile, counts, public facts
        assert sorted(pile) == sorted(before[i][1])
        assert (pile == before[i][1]) == (i in (1, 3))
        assert (engine._rng[i, 0] == before[i][2]) == (i in (1, 3))
    assert np.array_equal(engine.observation, obs) and np.array_equal(engine.legal_mask, mask)
    assert engine.check_invariants() == []
    twin._piles[0, PILE_DRAW, : len(before[0][1])] = sorted(before[0][1])  # the same cards in id order
    twin.shuffle_draw_pile(np.array([True, False, True, False]), np.random.default_rng(4))
    assert [twin.draw_pile(i) for i in (0, 2)] == [engine.draw_pile(i) for i in (0, 2)]
    with pytest.raises(ValueError, match="Generator"):
        engine.shuffle_draw_pile(0, 4)
    with pytest.raises(ValueError, match="indices"):
        engine.shuffle_draw_pile([9], np.random.default_rng(0))
    with pytest.raises(ValueError, match="record=False"):
        Engine(1, 2, record=True).shuffle_draw_pile(0, np.random.default_rng(0))


def test_reset_only_some_games():
    engine = _played()
    before = [engine.game_state(i) for i in range(4)]
    engine.reset(games=np.array([False, True, False, True]))
    assert engine.game_state(0) == before[0] and engine.game_state(2) == before[2]
    assert engine.game_state(1)["turn"] == 0 and engine.game_state(3)["turn"] == 0
    engine.reset(seed=4, games=[1])
    assert engine.game_state(1) == Engine(4, 3, seed=4).game_state(1)
    with pytest.raises(ValueError, match="games"):
        engine.reset(games=[7])


def test_observe_out_buffer_and_final_view():
    engine = position(["red 5", "green 1"], "red 3")
    act(engine, "play red 5")
    out = np.zeros((1, engine.observation_size), np.float32)
    assert engine.observe(1, out=out) is out
    assert out[0, :57].sum() == 1  # seat 1 still sees its own last card after the round ended
    with pytest.raises(ValueError, match="out must be a writeable C-contiguous float32"):
        engine.observe(1, out=np.zeros((1, 3), np.float32))


@pytest.mark.parametrize("games", [np.array([True, False, True, False]), [0, 2]])
def test_observe_some_games(games):
    """observe(games=...) writes those rows exactly as a full observe and leaves the others."""
    engine = _played()
    full = engine.observe(2)
    out = np.full((4, engine.observation_size), 7.0, np.float32)
    engine.observe(2, out=out, games=games)
    assert np.array_equal(out[[0, 2]], full[[0, 2]]) and (out[[1, 3]] == 7.0).all()
    fresh = engine.observe(2, games=games)
    assert np.array_equal(fresh[[0, 2]], full[[0, 2]]) and not fresh[[1, 3]].any()
    with pytest.raises(ValueError, match="games"):
        engine.observe(2, games=[9])
    with pytest.raises(ValueError, match="writeable"):
        engine.observe(2, out=np.zeros((engine.observation_size, 4), np.float32).T)


def test_observations_off_changes_nothing_but_the_observation_buffer():
    """observations=False (rollouts): same games, same masks; observe() still gives the view."""
    a = Engine(16, 3, seed=8, autoreset=True)
    b = Engine(16, 3, seed=8, autoreset=True, observations=False)
    rng = np.random.default_rng(0)
    for _ in range(200):
        actions = sample_legal(a.legal_mask, rng)
        a.step(actions)
        b.step(actions)
        assert np.array_equal(a.legal_mask, b.legal_mask) and np.array_equal(a.rewards, b.rewards)
    assert not b.observation.any()
    seats = a.current_player.astype(np.int64)
    assert np.array_equal(a.observe(seats), b.observe(seats))


def test_read_only_and_strided_actions_are_accepted():
    """Views and read-only arrays are legal inputs (copied to int64 before the kernel)."""
    engine = Engine(2, 2, seed=0)
    legal = sample_legal(engine.legal_mask, np.random.default_rng(0))
    frozen = legal.copy()
    frozen.flags.writeable = False
    engine.step(frozen)
    wide = np.stack([sample_legal(engine.legal_mask, np.random.default_rng(1)), np.zeros(2, np.int64)], 1)
    engine.step(wide[:, 0])
    assert engine.check_invariants() == []


def test_parallel_driver_plays_the_same_games():
    """Engine(parallel=True) (prange over games) gives the serial driver's games, step for step."""
    a = Engine(64, 3, UnoRules.preset("house"), seed=5, autoreset=True)
    b = Engine(64, 3, UnoRules.preset("house"), seed=5, autoreset=True, parallel=True)
    rng = np.random.default_rng(1)
    for _ in range(300):
        actions = sample_legal(a.legal_mask, rng)
        ra, rb = a.step(actions), b.step(actions)
        for x, y in zip(ra, rb, strict=True):
            assert np.array_equal(x, y)
    assert a.game_state(7) == b.game_state(7)
    with pytest.raises(ValueError, match="parallel"):
        Engine(2, 2, parallel=1)
    bad = sample_legal(b.legal_mask, rng)
    bad[3] = 200
    before = b.game_state(3)
    with pytest.raises(ValueError, match="out of range"):
        b.step(bad)
    assert b.game_state(3) == before


_DIGEST_GAMES = """
import hashlib, warnings
import numpy as np
warnings.simplefilter("ignore", RuntimeWarning)  # plain Python: the generator's uint64 wrap-around
from uno_env import Engine, UnoRules, sample_legal
e = Engine(4, 3, UnoRules.preset("classic", allow_voluntary_draw=False), seed=7, autoreset=True)
rng = np.random.default_rng(7)
h, finished = hashlib.sha256(), 0
for _ in range(300):
    r = e.step(sample_legal(e.legal_mask, rng))
    finished += int(r.terminated.sum() + r.truncated.sum())
    for x in (r.observation, r.legal_mask, r.rewards, r.terminated, e.final_observation):
        h.update(np.ascontiguousarray(x).tobytes())
print(finished, h.hexdigest())
"""


def test_plain_python_kernels_play_the_same_games():
    """NUMBA_DISABLE_JIT=1 (debugging, coverage) runs every kernel as Python: same games, step for step."""
    import os
    import subprocess
    import sys

    out = {}
    for jit in ("0", "1"):
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        env.pop("NUMBA_DISABLE_JIT", None)
        if jit == "1":
            env["NUMBA_DISABLE_JIT"] = "1"
        proc = subprocess.run(
            [sys.executable, "-c", _DIGEST_GAMES], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        out[jit] = proc.stdout.split()
    finished, _ = out["0"]
    assert int(finished) > 0  # the auto-reset path ran
    assert out["1"] == out["0"]


@pytest.mark.parametrize(
    "preset, players, options",
    [
        ("classic", 2, {}),
        ("house", 3, {}),
        ("classic", 4, {"teams": True, "open_hands": True}),
        ("classic", 5, {"scoring": "elimination", "episode": "match", "allow_voluntary_draw": False}),
    ],
)
def test_step_observation_equals_a_fresh_observe(preset, players, options):
    """The step's observation (written in the inlined step loop) equals observe() of the player to
    act (a separately compiled copy) over random play, whatever was in observe's buffer before."""
    engine = Engine(32, players, UnoRules.preset(preset, **options), seed=3, autoreset=True)
    rng = np.random.default_rng(3)
    out = np.full((32, engine.observation_size), 9.0, np.float32)
    finished = 0
    for _ in range(400):
        r = engine.step(sample_legal(engine.legal_mask, rng))
        finished += int(r.terminated.sum())
        assert np.array_equal(r.observation, engine.observe(r.current_player.astype(np.int64), out=out))
    if options.get("episode", "round") == "round":
        assert finished > 0  # the auto-reset path ran
    else:
        assert r.observation[:, OBS_OFFSETS["round"]].max() > 0  # a match dealt its next round


def test_actions_of_any_integer_type_play_the_same_games_without_recompiling():
    """The step driver is sealed after its first compile: int32, read-only, strided and list
    actions are checked and converted in Python (the same games), and never compile a new copy."""
    import copy

    from uno_env.engine import batch

    engine = Engine(3, 2, seed=5, autoreset=True)
    twin = copy.deepcopy(engine)
    rng = np.random.default_rng(5)
    for k in range(60):
        actions = sample_legal(engine.legal_mask, rng)
        twin.step(actions.copy())
        variant = [actions.astype(np.int32), actions.tolist(), np.repeat(actions, 2)[::2], actions.astype(np.uint8)]
        frozen = actions.copy()
        frozen.flags.writeable = False
        variant.append(frozen)
        engine.step(variant[k % len(variant)])
        assert json.dumps([engine.game_state(i) for i in range(3)]) == json.dumps(
            [twin.game_state(i) for i in range(3)]
        )
    if hasattr(batch.step_batch, "overloads"):  # not under NUMBA_DISABLE_JIT=1
        assert len(batch.step_batch.overloads) == 1


def test_the_kernels_buffers_are_the_layouts_fields_by_name():
    """batch.unpack's named views are layout.FIELDS up to the history's arrays, in order, each the
    array the Engine keeps under that name."""
    from uno_env.engine import batch, layout

    engine = Engine(3, 4, seed=0, history=2)
    views = batch.unpack(engine.buf)
    assert views._fields == tuple(name for name, _dtype, _dims in layout.FIELDS[: len(views)])
    assert layout.FIELDS[len(views)][0] == "history"
    for name, attr, view in zip(views._fields, Engine._VIEW_NAMES, views, strict=False):
        assert attr.lstrip("_") == name
        kept = getattr(engine, attr)
        assert view.shape == kept.shape and view.dtype == kept.dtype and np.array_equal(view, kept), name


@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
def test_a_copied_engine_owns_one_buffer_of_its_own(how):
    """The engine's arrays are views of one buffer (what the compiled step takes); a pickled or
    copied engine cuts its views from its own copy of the buffer, so the two play apart."""
    import copy
    import pickle

    engine = Engine(4, 3, seed=2, record=True)
    for _ in range(5):
        engine.step(sample_legal(engine.legal_mask, np.random.default_rng(0)))
    clone = pickle.loads(pickle.dumps(engine)) if how == "pickle" else copy.deepcopy(engine)
    for e in (engine, clone):
        for arr in (*e.state_arrays, e.observation, e.legal_mask, e.rewards, e.final_observation):
            assert np.shares_memory(arr, e.buf)
        assert e._recorder._events.base is not None and np.shares_memory(e._recorder._events, e.buf)
    assert not np.shares_memory(engine.buf, clone.buf)
    actions = sample_legal(engine.legal_mask, np.random.default_rng(1))
    before = json.dumps(engine.game_state(0))
    clone.step(actions)
    assert json.dumps(engine.game_state(0)) == before  # the original did not move
    engine.step(actions)
    assert [engine.game_state(i) for i in range(4)] == [clone.game_state(i) for i in range(4)]
    assert [engine.record(i) for i in range(4)] == [clone.record(i) for i in range(4)]


_FIRST_CALLS_AT_ONCE = """
import threading, numpy as np
from uno_env.engine.engine import Engine
n = 8
barrier = threading.Barrier(n)
errors, states = [], []
def work():
    barrier.wait()
    try:
        e = Engine(2, 2, seed=1)
        for _ in range(5):
            e.step(np.argmax(e.legal_mask, axis=1))
        states.append(repr(e.game_state(1)))
    except Exception as exc:
        errors.append(repr(exc))
threads = [threading.Thread(target=work) for _ in range(n)]
for t in threads: t.start()
for t in threads: t.join()
print(len(errors), len(set(states)), errors[:1])
"""


def test_threads_making_their_first_engine_calls_at_once():
    """The step driver is sealed after its first compile (or cache load); threads that queued to
    compile it meanwhile get numba's "compilation disabled" and call again, never raise."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run(
        [sys.executable, "-c", _FIRST_CALLS_AT_ONCE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split()[:2] == ["0", "1"], proc.stdout  # no error; every thread the same game


# --- explicit chance and snapshots (OpenSpiel's python_mini_uno, docs/openspiel.md) -------------


def test_set_next_draws_chooses_the_cards_drawn_and_nothing_else():
    engine = position(["red 1, red 2", "green 5"], "blue 9", draw="yellow 3, yellow 4, green 7")
    before = sorted(engine.draw_pile(0))
    public = engine.observe(0).copy(), engine.observe(1).copy()
    engine.set_next_draws(0, cards("green 7, yellow 3"))
    assert sorted(engine.draw_pile(0)) == before
    assert engine.draw_pile(0)[-2:] == cards("yellow 3, green 7")  # top last: green 7 comes first
    assert np.array_equal(engine.observe(0), public[0]) and np.array_equal(engine.observe(1), public[1])
    act(engine, "draw")
    assert engine.game_state(0)["hands"][0] == sorted(cards("red 1, red 2, green 7"))


def test_set_next_draws_reshuffles_an_empty_draw_pile_first():
    """R12.2: the next draw would turn the discard pile under its top into the draw pile."""
    small = [1 if t in (1, 2, 3, 14, 15, 16, 27) else 0 for t in range(57)]  # red, yellow 1-3, green 1
    engine = Engine(1, 2, UnoRules(card_counts=small, hand_size=2), seed=3)
    engine.set_game(0, hands=[[1, 2], [14, 15]], discard_pile=[3, 16, 27], draw_pile=[], current_player=0)
    s = engine.game_state(0)
    assert engine.draw_pile(0) == [] and len(s["discard_pile"]) > 2
    under_top = s["discard_pile"][:-1]
    engine.set_next_draws(0, [under_top[0]])
    assert sorted(engine.draw_pile(0)) == sorted(under_top) and engine.draw_pile(0)[-1] == under_top[0]
    assert engine.game_state(0)["discard_pile"] == s["discard_pile"][-1:]
    assert engine.check_invariants() == []


def test_set_next_draws_refuses_cards_not_in_the_draw_pile():
    engine = position(["red 0, red 2", "green 5"], "blue 9", draw="yellow 3")
    pile = engine.draw_pile(0)
    with pytest.raises(ValueError, match="cannot draw"):
        engine.set_next_draws(0, cards("red 0"))
    with pytest.raises(ValueError, match="card type ids"):
        engine.set_next_draws(0, [57])
    assert engine.draw_pile(0) == pile
    with pytest.raises(ValueError, match="record"):
        Engine(1, 2, record=True).set_next_draws(0, [])


def test_snapshot_and_restore_continue_identically():
    engine = Engine(3, 2, UnoRules(), seed=5)
    rng = np.random.default_rng(0)
    for _ in range(10):
        engine.step(sample_legal(engine.legal_mask, rng))
    saved = engine.snapshot()
    states = [engine.game_state(i) for i in range(3)]
    actions = [sample_legal(engine.legal_mask, rng) for _ in range(1)]
    engine.step(actions[0])
    after = [engine.game_state(i) for i in range(3)]
    engine.restore(saved)
    assert [engine.game_state(i) for i in range(3)] == states
    engine.step(actions[0])
    assert [engine.game_state(i) for i in range(3)] == after
    other = Engine(3, 2, UnoRules(), seed=9)
    other.restore(saved)
    assert [other.game_state(i) for i in range(3)] == states
    for bad in (
        saved[:-1],
        saved.astype(np.int64),
        Engine(2, 2).snapshot(),
        Engine(3, 2, UnoRules(hand_size=5)).snapshot(),
    ):
        with pytest.raises(ValueError, match="snapshot"):
            engine.restore(bad)
    with pytest.raises(ValueError, match="recording"):
        Engine(3, 2, record=True).restore(saved)
