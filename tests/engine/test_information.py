"""Information safety (docs/rules.md R11): nothing a player is shown depends on another player's hand
or on the order of the draw pile, unless ``open_hands``.

What a player is shown: its observation (``Engine.observe``, the step outputs when it acts),
its legal mask, the error message of a rejected action, the text render of the table when it
acts, the PettingZoo env's ``observe``/``infos``/``render`` and the Gymnasium env's info dict
and render for the learner.

Technique: a *hidden twin* is a copy of the game in which everything a seat cannot see is
redealt (the other hands, sizes kept, and the draw pile, from the same unseen cards in a new
order). The seat must be shown exactly the same thing in both. Where the rules make a hidden
card public or private to someone -- the card just drawn (R4), a swap (R5: the swapper now holds
the other hand), a shuffle (R5: a new hand for everyone), a Wild Draw Four's guilt until the
challenge (R6) -- the targeted tests below say exactly which fields may differ.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from builder import act, cards, position, redeal_hidden
from helpers import mixed

from agents import sample_legal
from uno_env import ACTION_NAMES, Engine, UnoEnv, UnoRules, raw_env
from uno_env.engine import layout as L
from uno_env.render import render_text

# Small hands so that rounds end (phase round_over) within the test.
RULE_SETS = {
    "classic": UnoRules.preset("classic", hand_size=4),
    "official": UnoRules.preset("official", hand_size=4),
    "swap_hands": UnoRules.preset("swap_hands", hand_size=4),
    "house": UnoRules.preset("house", hand_size=4),
    "explicit_uno_doubles": mixed("explicit_uno_doubles", hand_size=4),
    "swap_until_color": mixed("swap_until_color", hand_size=3, max_turns=150),
    "shuffle_others_draw": mixed("shuffle_others_draw", hand_size=3, max_turns=150),
}
# Phases each rule set must have been checked in (so no phase escapes the test).
PHASES = {
    "classic": {"play", "post_draw", "choose_color", "respond_draw_four", "round_over"},
    "official": {"play", "post_draw", "choose_color", "respond_draw_four", "round_over"},
    "swap_hands": {"play", "post_draw", "choose_color", "choose_swap_target", "respond_draw_four", "round_over"},
    "house": {"play", "post_draw", "choose_color", "respond_draw_two", "respond_draw_four", "round_over"},
    "explicit_uno_doubles": {"play", "post_draw", "choose_color", "respond_draw_four", "round_over"},
    "swap_until_color": {
        "play",
        "post_draw",
        "choose_color",
        "choose_swap_target",
        "respond_draw_two",
        "respond_draw_four",
        "round_over",
    },
    "shuffle_others_draw": {"play", "post_draw", "choose_color", "respond_draw_four", "round_over"},
}


# --- hidden twins --------------------------------------------------------------------------


def hidden_twin(engine: Engine, seat: int, rng: np.random.Generator) -> tuple[Engine, int]:
    """A deep copy of the engine with every game's hidden information redealt for ``seat``;
    also the number of games in which something moved. The copy does not record: the record
    (the whole match so far) is not shown to a seat, and copying it would cost most of the test."""
    twin = copy.deepcopy(engine, {id(engine._recorder): None})
    moved = sum(redeal_hidden(twin, b, seat, rng) for b in range(engine.num_envs))
    return twin, moved


def rejection(engine: Engine, b: int, action: int) -> str:
    """The error message of an illegal action in game b (the other games left alone)."""
    actions = np.full(engine.num_envs, -1, np.int64)
    actions[b] = action
    with pytest.raises(ValueError) as err:
        engine.step(actions)
    return str(err.value)


def assert_same_view(engine: Engine, twin: Engine, seat: int, rng: np.random.Generator) -> None:
    """Everything ``seat`` is shown is the same in the engine and its hidden twin."""
    assert np.array_equal(engine.observe(seat), twin.observe(seat)), f"seat {seat}'s observation reveals hidden cards"
    for b in np.flatnonzero(engine.current_player == seat):
        state, twin_state = engine.game_state(b), twin.game_state(b)
        if state["phase"] == "round_over":
            assert render_text(state) == render_text(twin_state)
            continue
        assert np.array_equal(engine.legal_mask[b], twin.legal_mask[b]), f"game {b}: the mask reveals hidden cards"
        assert np.array_equal(engine.observation[b], twin.observation[b])
        for colors in (False, True):
            assert render_text(state, ansi_colors=colors) == render_text(twin_state, ansi_colors=colors)
        illegal = np.flatnonzero(~engine.legal_mask[b])
        if engine.rules.illegal_action == "penalty":  # an illegal PLAY is applied, not rejected (R10)
            illegal = illegal[(illegal >= 57) & (illegal < 76)]
        for a in rng.choice(illegal, size=min(3, illegal.size), replace=False):
            assert rejection(engine, b, int(a)) == rejection(twin, b, int(a))


def _last_kinds(engine: Engine) -> list[set[str]]:
    # A Shuffle Hands event is followed by one redeal event per seat.
    rename = {"redeal": "shuffle_hands"}
    return [
        {rename.get(ev["type"], ev["type"]) for ev in engine.record(b)["events"][-3:]} for b in range(engine.num_envs)
    ]


@pytest.mark.parametrize("name", list(RULE_SETS))
def test_no_seat_is_shown_hidden_information(name):
    """Every seat, every phase of random play, and right after each swap, shuffle and challenge."""
    rules = RULE_SETS[name]
    engine = Engine(8, 4, rules, seed=11, record=True)
    rng = np.random.default_rng(5)
    phases, moved, special = set(), 0, {"swap": 0, "shuffle_hands": 0, "challenge": 0}
    for step in range(250):
        done = engine.terminated | engine.truncated
        actions = sample_legal(engine.legal_mask, rng)
        actions[done] = -1
        if done.any() and step % 7 == 0:
            engine.reset(games=np.flatnonzero(done))
        else:
            engine.step(actions)
        kinds = _last_kinds(engine)
        for key in special:
            special[key] += sum(key in k for k in kinds)
        if step % 2 and not any(k & set(special) for k in kinds):
            continue
        phases |= {engine.game_state(b)["phase"] for b in range(engine.num_envs)}
        for seat in range(4):
            twin, m = hidden_twin(engine, seat, rng)
            moved += m
            assert_same_view(engine, twin, seat, rng)
    assert PHASES[name] <= phases, f"phases never checked: {PHASES[name] - phases}"
    assert moved > 100  # the twins really differed
    if rules.deck == "swap_hands":
        assert special["swap"] > 0
    if rules.deck == "shuffle_hands":
        assert special["shuffle_hands"] > 0
    assert special["challenge"] > 0 or not rules.challenge


def test_open_hands_twins_differ():
    """Control: with open_hands the same twins are told apart, so the technique can fail."""
    engine = Engine(8, 4, UnoRules(open_hands=True), seed=1)
    rng = np.random.default_rng(0)
    for _ in range(20):
        engine.step(sample_legal(engine.legal_mask, rng))
    twin, moved = hidden_twin(engine, 0, rng)
    assert moved and not np.array_equal(engine.observe(0), twin.observe(0))


# --- what the rules make public or private -------------------------------------------------

FIELD = {name: slice(L.OBS_OFFSETS[name], L.OBS_OFFSETS[name] + size) for name, size, _ in L.OBS_FIELDS}


def differing_fields(a: np.ndarray, b: np.ndarray) -> set[str]:
    return {name for name, sl in FIELD.items() if not np.array_equal(a[..., sl], b[..., sl])}


def test_the_drawn_card_is_shown_to_the_drawer_only():
    """R4: the card just drawn is in the drawer's hand and ``drawn_card``; nobody else learns
    which card it was (both are playable, so the phase is post_draw in both games)."""
    games = [
        position(["red 1, blue 2", "green 3, green 4", "yellow 5"], "red 9", draw=card) for card in ("red 5", "red 8")
    ]
    for e in games:
        act(e, "draw")
        assert e.game_state(0)["phase"] == "post_draw"
    for seat in (1, 2):
        assert np.array_equal(games[0].observe(seat), games[1].observe(seat))
    assert differing_fields(games[0].observe(0), games[1].observe(0)) == {"hand", "drawn_card"}


def test_wild_draw_four_guilt_is_hidden_until_the_challenge():
    """R6: whether the Wild Draw Four was played illegally depends on the player's hand, so the
    responder (and everyone else) sees the same thing whether it was or not."""
    guilty = position(["wild draw four, red 1, blue 2", "green 3, green 4", "yellow 5, yellow 6"], "red 9")
    innocent = position(["wild draw four, green 1, blue 2", "green 3, green 4", "yellow 5, yellow 6"], "red 9")
    for e in (guilty, innocent):
        act(e, "play wild draw four")
        act(e, "choose blue")
        assert e.game_state(0)["phase"] == "respond_draw_four"
    for seat in (1, 2):
        assert np.array_equal(guilty.observe(seat), innocent.observe(seat))
    assert np.array_equal(guilty.legal_mask, innocent.legal_mask)
    assert rejection(guilty, 0, 0) == rejection(innocent, 0, 0)
    # After the challenge the verdict is public through who draws; the hand stays hidden.
    rng = np.random.default_rng(0)
    for e in (guilty, innocent):
        act(e, "challenge")
        for seat in range(3):
            twin, moved = hidden_twin(e, seat, rng)
            assert moved
            assert_same_view(e, twin, seat, rng)
    assert [len(h) for h in guilty.game_state(0)["hands"]] == [6, 2, 2]
    assert [len(h) for h in innocent.game_state(0)["hands"]] == [2, 8, 2]


def test_swap_hands_shows_exactly_the_swapped_hands():
    """R5 Swap Hands: the swapper now holds (and sees) the other player's previous hand, the
    other player the swapper's; a third player learns nothing but the new hand sizes."""
    swapped = {"blue 1, blue 2, blue 3": None, "green 4, green 5, green 6": None}
    for hand in swapped:
        e = position(["wild swap hands, red 1, red 2", hand, "yellow 5, yellow 6"], "red 9", deck="swap_hands")
        act(e, "play wild swap hands")
        act(e, "choose blue")
        act(e, "swap with +1")
        swapped[hand] = e
    a, b = swapped.values()
    assert differing_fields(a.observe(0), b.observe(0)) == {"hand"}
    for e, hand in zip((a, b), swapped, strict=True):
        seen = np.repeat(np.arange(57), e.observe(0)[0, FIELD["hand"]].astype(int)).tolist()
        assert seen == sorted(cards(hand))  # the swapper sees the other player's previous hand
    for seat in (1, 2):
        assert np.array_equal(a.observe(seat), b.observe(seat))
    rng = np.random.default_rng(0)
    for seat in range(3):
        twin, _ = hidden_twin(a, seat, rng)
        assert_same_view(a, twin, seat, rng)


def test_shuffle_hands_shows_each_player_only_its_new_hand():
    """R5 Shuffle Hands: after the deal each player's new hand is its own business; the other
    fields of every view are the same whatever the hidden hands were before."""
    games = []
    for hand in ("blue 1, blue 2, blue 3", "green 4, green 5, green 6"):
        e = position(["wild shuffle hands, red 1, red 2", hand, "yellow 5, yellow 6"], "red 9", deck="shuffle_hands")
        act(e, "play wild shuffle hands")
        act(e, "choose blue")
        games.append(e)
    for seat in range(3):
        assert differing_fields(games[0].observe(seat), games[1].observe(seat)) <= {"hand"}
    rng = np.random.default_rng(0)
    for seat in range(3):
        twin, moved = hidden_twin(games[0], seat, rng)
        assert moved
        assert_same_view(games[0], twin, seat, rng)


# --- the env layers ------------------------------------------------------------------------


def redeal_env(env, seat: int, rng: np.random.Generator) -> None:
    redeal_hidden(env.unwrapped._engine, 0, seat, rng)


# Actions whose effect on the actor's own view follows from public information and the actor's
# own hand (a draw, a swap or a shuffle would legitimately show hidden cards).
PUBLIC_EFFECT = (set(range(52)) - {c * 13 + 12 for c in range(4)}) | {52, 54, 55, 56, 58, 65}


@pytest.mark.parametrize("name", ["classic", "swap_hands", "house", "explicit_uno_doubles"])
def test_pettingzoo_shows_each_agent_only_its_information(name):
    """``observe``, ``render`` (ansi, for the acting agent), ``infos`` and error messages of
    ``raw_env`` are the same in hidden twins; so are the acting agent's view and info after a
    move whose effect is public."""
    env = raw_env(num_players=3, rules=RULE_SETS[name], render_mode="ansi")
    env.reset(seed=4)
    rng = np.random.default_rng(4)
    moves = 0
    for _ in range(300):
        agent = env.agent_selection
        if env.terminations[agent] or env.truncations[agent]:
            env.step(None)
            if not env.agents:
                env.reset()
            continue
        seat = env.possible_agents.index(agent)
        twin = copy.deepcopy(env)
        redeal_env(twin, seat, rng)
        for a in (agent,):
            for key in ("observation", "action_mask"):
                assert np.array_equal(env.observe(a)[key], twin.observe(a)[key])
        assert env.render() == twin.render()
        assert env.infos == twin.infos
        mask = env.observe(agent)["action_mask"]
        for bad in rng.choice(np.flatnonzero(mask == 0), size=2, replace=False):
            if RULE_SETS[name].illegal_action == "penalty" and (bad < 57 or bad >= 76):
                continue
            errs = []
            for e in (env, twin):
                with pytest.raises(ValueError) as err:
                    e.step(int(bad))
                errs.append(str(err.value))
            assert errs[0] == errs[1]
        action = int(rng.choice(np.flatnonzero(mask)))
        last_card = len(env.game_state()["hands"][seat]) == 1
        env.step(action)
        if action in PUBLIC_EFFECT and not last_card:
            twin.step(action)
            moves += 1
            assert np.array_equal(env.observe(agent)["observation"], twin.observe(agent)["observation"])
            assert env.infos[agent] == twin.infos[agent] and env.rewards[agent] == twin.rewards[agent]
    assert moves > 20


def test_gymnasium_info_and_render_show_only_the_learner_information():
    """``UnoEnv``'s info dict holds only the learner's mask, and its render and mask are the same
    in hidden twins."""
    env = UnoEnv(num_players=3, rules=UnoRules.preset("swap_hands"), render_mode="ansi")
    obs, info = env.reset(seed=2)
    rng = np.random.default_rng(2)
    checked = 0
    for _ in range(200):
        assert set(info) <= {"action_mask"}, (
            f"new info keys {set(info) - {'action_mask'}}: check they hide hidden cards"
        )
        assert np.array_equal(info["action_mask"], env.action_masks().astype(np.int8))
        twin = copy.deepcopy(env)
        redeal_hidden(twin.engine, 0, env.learner_seat, rng)
        assert env.render() == twin.render()
        assert np.array_equal(env.action_masks(), twin.action_masks())
        assert np.array_equal(env.engine.observe(env.learner_seat), twin.engine.observe(env.learner_seat))
        checked += 1
        obs, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        if terminated or truncated:
            obs, info = env.reset()
    assert checked == 200


def test_error_messages_name_only_public_things():
    """A rejected action's message names the action, the phase and the acting player's legal
    actions (its own cards), never another hand: hidden twins give the same message."""
    a = position(["red 1, blue 2", "green 3, green 4, wild", "yellow 5"], "red 9", draw="wild draw four")
    b = position(["red 1, blue 2", "yellow 3, blue 4, green 9", "yellow 5"], "red 9", draw="green 2")
    for action in ("play green 3", "play wild", "challenge", "choose red", "swap with +1"):
        assert rejection(a, 0, ACTION_NAMES.index(action)) == rejection(b, 0, ACTION_NAMES.index(action))


def test_image_render_shows_only_the_acting_hand():
    """``render_rgb`` (PettingZoo's ``rgb_array`` mode) draws the same picture in hidden twins of
    the acting seat."""
    pytest.importorskip("PIL")
    from uno_env.render import render_rgb

    engine = Engine(4, 4, RULE_SETS["swap_hands"], seed=3)
    rng = np.random.default_rng(3)
    for _ in range(8):
        engine.step(sample_legal(engine.legal_mask, rng))
        for b in range(engine.num_envs):
            seat = int(engine.current_player[b])
            twin, _ = hidden_twin(engine, seat, rng)
            assert np.array_equal(render_rgb(engine.game_state(b)), render_rgb(twin.game_state(b)))
