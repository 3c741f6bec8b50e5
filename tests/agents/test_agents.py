"""The agents: legality, determinism, key decisions, the registry, and
the arena games they play."""

from __future__ import annotations

import typing

import numpy as np
import pytest
from builder import act, check
from builder import position as scenario
from helpers import OTHER_RULE_SETS

from agents import AGENT_SPECS, FlatMCAgent, GreedyAgent, HeuristicAgent, RandomAgent, RLCardRuleAgent, agent_names
from agents.registry import SEARCH, SEARCHES, make_agent
from arena import play, wilson_interval
from uno_env import ACTION_NAMES, Engine, UnoRules, action_name, parse_card, parse_rules
from uno_env.actions import Action
from uno_env.cards import deck_counts
from uno_env.observation import OBS_PHASE, PHASE_NAMES

RULE_SETS = {
    "classic": UnoRules.preset("classic"),
    "no_challenge": UnoRules.preset("classic", challenge=False),
    "no_voluntary_draw": UnoRules.preset("classic", allow_voluntary_draw=False),
}
PLAYER_COUNTS = (2, 3, 4, 7, 10)
PHASE = {name: k for k, name in enumerate(PHASE_NAMES)}


def make_agents(rules):
    """Every agent of the package, plus a heuristic that bluffs and challenges at every chance."""
    return {
        "rlcard_rule": RLCardRuleAgent(rules),
        "greedy": GreedyAgent(rules),
        "heuristic": HeuristicAgent(rules),
        "heuristic_bold": HeuristicAgent(rules, bluff=1.0, bluff_attack=1.0, bluff_prior=1.0, challenge_at=0.0),
    }


def phases(obs: np.ndarray) -> np.ndarray:
    """Phase index of each observation row."""
    return np.argmax(obs[:, OBS_PHASE : OBS_PHASE + len(PHASE_NAMES)], axis=1)


# --- legality over random batched play -------------------------------------------------------


@pytest.mark.parametrize("rules_name", list(RULE_SETS))
@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
def test_agents_only_return_legal_actions(rules_name, num_players):
    rules = RULE_SETS[rules_name]
    for name, agent in make_agents(rules).items():
        engine = Engine(32, num_players, rules, seed=num_players * 7 + len(name), autoreset=True)
        rng = np.random.default_rng(1)
        seen = set()
        for step in range(120):
            obs, mask = engine.observation, engine.legal_mask
            seen.update(phases(obs).tolist())
            # Half of the steps hand the mask over as int8, the PettingZoo dtype.
            given = mask.astype(np.int8) if step % 2 else mask
            actions = agent.act(obs, given, rng)
            assert actions.dtype == np.int64 and actions.shape == (32,)
            ok = mask[np.arange(32), actions]
            assert ok.all(), (name, [action_name(a) for a in actions[~ok]])
            engine.step(actions)
        # The walk must have reached the decisions beyond a plain play.
        assert {PHASE["play"], PHASE["post_draw"], PHASE["choose_color"]} <= seen, (name, seen)
        if rules.challenge:
            assert PHASE["respond_draw_four"] in seen, (name, seen)


@pytest.mark.parametrize("rules_name", list(OTHER_RULE_SETS))
@pytest.mark.parametrize("num_players", [2, 4, 7])
def test_agents_stay_legal_under_every_other_option(rules_name, num_players):
    """The decisions these options add (stacking, calls, doubles, swaps, partners, eliminated
    seats) are all legal too."""
    rules = OTHER_RULE_SETS[rules_name]
    if rules.teams and (num_players % 2 or num_players < 4):
        num_players = 4 if num_players < 4 else num_players + 1  # partners sit opposite (R8)
    for name, agent in make_agents(rules).items():
        engine = Engine(32, num_players, rules, seed=num_players, autoreset=True)
        rng = np.random.default_rng(2)
        for _ in range(150):
            actions = agent.act(engine.observation, engine.legal_mask, rng)
            ok = engine.legal_mask[np.arange(32), actions]
            assert ok.all(), (name, [action_name(a) for a in actions[~ok]])
            engine.step(actions)


def test_bluffing_heuristic_bluffs_and_rule_agents_do_not():
    """Over random states: only the bold heuristic plays a Wild Draw Four that R4 forbids."""
    rules = RULE_SETS["classic"]
    agents = make_agents(rules)
    engine = Engine(256, 2, rules, seed=3, autoreset=True)
    rng = np.random.default_rng(0)
    bluffs = {name: 0 for name in agents}
    chances = 0
    wd4 = int(parse_card("wild draw four"))
    for _ in range(300):
        obs, mask = engine.observation.copy(), engine.legal_mask.copy()
        g = [engine.game_state(i) for i in range(engine.num_envs)]
        holds_color = np.array(
            [
                s["current_color"] is not None
                and any(c < 52 and c // 13 == s["current_color"] for c in s["hands"][s["current_player"]])
                for s in g
            ]
        )
        in_play = phases(obs) == PHASE["play"]
        can_bluff = in_play & mask[:, wd4] & holds_color
        chances += int(can_bluff.sum())
        for name, agent in agents.items():
            acts = agent.act(obs, mask, np.random.default_rng(5))
            bluffs[name] += int((can_bluff & (acts == wd4)).sum())
        engine.step(RandomAgent().act(obs, mask, rng))
    assert chances > 50
    assert bluffs["rlcard_rule"] == bluffs["greedy"] == 0
    assert bluffs["heuristic_bold"] > 0


# --- determinism ------------------------------------------------------------------------------


@pytest.mark.parametrize("agent_cls", [RLCardRuleAgent, GreedyAgent, HeuristicAgent])
def test_agents_are_deterministic_given_the_rng(agent_cls):
    def trajectory(seed):
        engine = Engine(64, 3, seed=11, autoreset=True)
        agent = agent_cls()
        rng = np.random.default_rng(seed)
        out = []
        for _ in range(80):
            a = agent.act(engine.observation, engine.legal_mask, rng)
            out.append(a.copy())
            engine.step(a)
        return np.stack(out)

    first, again, other = trajectory(0), trajectory(0), trajectory(1)
    assert np.array_equal(first, again)
    # RLCardRule and Greedy break ties at random, the heuristic randomises its bluffs and its
    # fallbacks: a different generator must change some decision.
    assert not np.array_equal(first, other)


def test_agents_do_not_change_their_inputs():
    engine = Engine(16, 4, seed=2)
    obs, mask = engine.observation.copy(), engine.legal_mask.copy()
    for agent in make_agents(None).values():
        agent.act(engine.observation, engine.legal_mask, np.random.default_rng(0))
        assert np.array_equal(engine.observation, obs) and np.array_equal(engine.legal_mask, mask)


# --- scenarios built with Engine.set_game -----------------------------------------------------


def cards(names: str) -> list[int]:
    return [parse_card(n.strip()) for n in names.split(",") if n.strip()]


def position(hands: list[str], top: str, *, discard="", player=0, direction=1, color=None, rules=None) -> Engine:
    """One game at a position in phase play (``discard``: the cards under ``top``, bottom first);
    the rest of the deck is the draw pile."""
    rules = rules or UnoRules()
    hand_ids = [cards(h) for h in hands]
    discard = cards(discard) + cards(top)
    rest = deck_counts(rules.deck, rules.custom_wild_count).astype(np.int64)
    for c in [c for h in hand_ids for c in h] + discard:
        rest[c] -= 1
    assert (rest >= 0).all()
    engine = Engine(1, len(hands), rules, seed=0)
    engine.set_game(
        0,
        hands=hand_ids,
        discard_pile=discard,
        draw_pile=list(np.repeat(np.arange(rest.size), rest)),
        current_player=player,
        current_color=color,
        direction=direction,
    )
    return engine


def decide(agent, engine: Engine, seed: int = 0) -> str:
    """The agent's action in game 0, by name."""
    return action_name(int(agent.act(engine.observation, engine.legal_mask, np.random.default_rng(seed))[0]))


def step(engine: Engine, name: str) -> None:
    engine.step(np.array([ACTION_NAMES.index(name)]))


@pytest.mark.parametrize("num_players", [2, 3, 4])
@pytest.mark.parametrize("direction", [1, -1])
def test_heuristic_draws_two_on_a_next_player_holding_one_card(num_players, direction):
    # The red Draw Two leaves red in force, a colour it no longer holds: only the attack
    # makes it the best play. The next seat is slot 1 clockwise, slot n-1 counter-clockwise.
    me = "red draw two, blue 5, blue 8, blue 9, blue 1, blue 2"
    calm = [
        "yellow 1, yellow 2, yellow 3, green 7, green 8, green 6",
        "yellow 4, yellow 5, yellow 6, green 3, green 4, green 5",
        "yellow 7, yellow 8, yellow 9, green 1, green 2, green 0",
    ][: num_players - 1]
    threatened = list(calm)
    threatened[(1 if direction == 1 else num_players - 1) - 1] = "green 9"
    agent = HeuristicAgent()
    assert decide(agent, position([me] + threatened, "blue draw two", direction=direction)) == "play red draw two"
    assert decide(agent, position([me] + calm, "blue draw two", direction=direction)).startswith("play blue")
    if num_players > 2:
        # The player one seat the other way is no threat: holding one card there changes nothing.
        other_side = list(calm)
        other_side[(num_players - 1 if direction == 1 else 1) - 1] = "green 9"
        assert decide(agent, position([me] + other_side, "blue draw two", direction=direction)).startswith("play blue")


@pytest.mark.parametrize(
    "hand, top, expected",
    [
        ("wild, red 5, blue 9, green 3", "red 3", {"play red 5", "play green 3"}),
        ("wild draw four, green 2, yellow 6", "red 2", {"play green 2"}),
        ("wild, wild draw four, blue 7, blue 1", "yellow 7", {"play blue 7"}),
    ],
)
def test_heuristic_does_not_waste_a_wild_when_a_coloured_card_fits(hand, top, expected):
    engine = position([hand, "yellow 1, yellow 2, green 7, blue 8, blue 9, red 9, green 9"], top)
    assert decide(HeuristicAgent(), engine) in expected


def test_heuristic_plays_a_wild_when_only_a_wild_fits_and_names_its_long_colour():
    engine = position(
        ["wild, blue 1, blue 4, blue 6, green 3", "yellow 1, yellow 2, green 7, red 8, red 9, red 1, green 9"], "red 2"
    )
    assert decide(HeuristicAgent(), engine) == "play wild"
    step(engine, "play wild")
    assert decide(HeuristicAgent(), engine) == "choose blue"


@pytest.mark.parametrize("discard", ["", "yellow 1, yellow 5"])
def test_heuristic_names_the_colour_the_next_player_drew_on(discard):
    """Public history (R11 ``drew_on_color``): seat 1 drew on green and kept the card (R4), seat 2
    turned the colour to red; holding one green and one yellow card, the wild names green, the
    colour the next player had nothing for. With the history ignored, the unseen cards decide:
    with two more yellows on the discard pile (fewer yellows out there) yellow looks safer."""
    engine = scenario(
        ["wild, green 2, yellow 3", "blue 4, blue 9", "red 7, red 5, red 1, red 2"],
        "green 7",
        discard=discard,
        draw="blue 1, blue 0, blue 3",
        player=1,
    )
    act(engine, "draw")
    act(engine, "play red 7")
    check(engine, {"drew_on_color": [None, 2, None], "current_player": 0})
    assert decide(HeuristicAgent(), engine) == "play wild"
    step(engine, "play wild")
    assert decide(HeuristicAgent(), engine) == "choose green"
    blind = HeuristicAgent(drew_bias=1.0, drew_wild_bias=1.0)
    assert decide(blind, engine) == ("choose green" if not discard else "choose yellow")


def test_heuristic_chains_action_cards_to_go_out_with_two_players():
    # blue 3 also fits (by number), but red skip -> blue skip -> blue 3 empties the hand.
    engine = position(
        ["blue 3, red skip, blue skip", "yellow 1, yellow 2, green 7, red 8, blue 9, red 1, green 9"], "red 3"
    )
    agent = HeuristicAgent()
    for expected in ("play red skip", "play blue skip", "play blue 3"):
        assert decide(agent, engine) == expected
        step(engine, expected)
    assert engine.terminated[0] and engine.game_state(0)["winner"] == 0


def test_heuristic_goes_out_through_a_wild_draw_four_with_two_players():
    # No red held, so the Draw Four is legal; it gives the turn back and names green.
    engine = position(
        ["green 5, wild draw four", "yellow 1, yellow 2, green 7, red 8, blue 9, red 1, green 9"], "red 3"
    )
    agent = HeuristicAgent()
    assert decide(agent, engine) == "play wild draw four"
    step(engine, "play wild draw four")
    assert decide(agent, engine) == "choose green"
    step(engine, "choose green")
    step(engine, "accept")
    assert decide(agent, engine) == "play green 5"


@pytest.mark.parametrize("agent_cls", [RLCardRuleAgent, GreedyAgent, HeuristicAgent])
def test_agents_call_and_catch_uno_when_explicit(agent_cls):
    rules = UnoRules.preset("classic", uno_call="explicit")
    agent = agent_cls(rules)
    engine = position(["red 5, blue 9", "red 7, yellow 2, green 7"], "red 3", rules=rules)
    assert decide(agent, engine) == "call uno"
    # Seat 0 plays down to one card without calling: seat 1 may catch it (R7).
    step(engine, "play red 5")
    assert decide(agent, engine) == "catch uno"


def _pending_wild_draw_four(all_reds_visible: bool, seat0_cards: int = 7) -> Engine:
    """Seat 0 plays a (legal) Wild Draw Four on red and names green; seat 1 must answer (R6)."""
    seat0 = "wild draw four, " + ", ".join(
        ["green 1", "green 2", "green 3", "yellow 4", "yellow 5", "blue 6", "blue 7"][:seat0_cards]
    )
    if all_reds_visible:
        # Seat 1 and the discard pile hold all 25 reds, so seat 0 cannot hold one.
        seat1 = "red 1, red 2, red 3, red 4, red 5, red 6, red 7, red 8, red 9"
        below = "red 0, red 1, red 2, red 3, red 4, red 5, red 6, red 7, red 8, red skip, red skip, red reverse, red reverse, red draw two, red draw two"
    else:
        seat1, below = "blue 1, blue 2", ""
    engine = position([seat0, seat1], "red 9", discard=below)
    step(engine, "play wild draw four")
    step(engine, "choose green")
    assert engine.game_state(0)["phase"] == "respond_draw_four"
    return engine


def test_heuristic_challenges_when_the_odds_favour_it():
    # Red mostly unseen: a 7-card hand almost surely held red, so even the small default
    # prior on bluffing makes a bluff likely enough; a 4-card hand does not.
    assert decide(HeuristicAgent(), _pending_wild_draw_four(False, 7)) == "challenge"
    assert decide(HeuristicAgent(), _pending_wild_draw_four(False, 4)) == "accept"
    eager = HeuristicAgent(bluff_prior=0.5)  # opponents assumed to bluff often
    assert decide(eager, _pending_wild_draw_four(False, 4)) == "challenge"
    # Every red is in the responder's hand or the discard pile: seat 0 cannot be guilty.
    assert decide(eager, _pending_wild_draw_four(True)) == "accept"
    assert decide(HeuristicAgent(bluff_prior=0.0), _pending_wild_draw_four(False, 7)) == "accept"
    # The rule agents never challenge.
    assert decide(RLCardRuleAgent(), _pending_wild_draw_four(False)) == "accept"
    assert decide(GreedyAgent(), _pending_wild_draw_four(False)) == "accept"


def test_rlcard_rule_never_plays_a_wild_while_a_coloured_card_is_playable():
    rules = RULE_SETS["classic"]
    agent = RLCardRuleAgent(rules)
    engine = Engine(256, 2, rules, seed=9, autoreset=True)
    rng = np.random.default_rng(0)
    wild_only, coloured_chances = 0, 0
    for _ in range(300):
        obs, mask = engine.observation, engine.legal_mask
        acts = agent.act(obs, mask, rng)
        coloured = mask[:, :52].any(1) & (phases(obs) == PHASE["play"])
        coloured_chances += int(coloured.sum())
        assert not (coloured & (acts >= 52) & (acts < 57)).any()
        # With a coloured card playable it never draws either (draw only when stuck).
        assert not (coloured & (acts == int(Action.DRAW))).any()
        wild_only += int(((phases(obs) == PHASE["play"]) & ~mask[:, :52].any(1) & (acts >= 52) & (acts < 57)).sum())
        engine.step(acts)
    assert coloured_chances > 1000 and wild_only > 0


def test_rlcard_rule_scenarios():
    agent = RLCardRuleAgent()
    engine = position(["wild, red 5, blue 9", "yellow 1, yellow 2, green 7"], "red 3")
    assert decide(agent, engine) == "play red 5"
    engine = position(["wild, blue 1, blue 9, green 3", "yellow 1, yellow 2, green 7"], "red 2")
    assert decide(agent, engine) == "play wild"
    step(engine, "play wild")
    assert decide(agent, engine) == "choose blue"


def test_greedy_plays_the_highest_point_card():
    agent = GreedyAgent()
    engine = position(["red 2, red skip, red 9, blue 3", "yellow 1, yellow 2, green 7"], "red 5")
    assert decide(agent, engine) == "play red skip"
    engine = position(["red 2, red 9, blue 3, wild", "yellow 1, yellow 2, green 7"], "red 5")
    assert decide(agent, engine) == "play wild"  # 50 points beat 9


# --- arena --------------------------------------------------------------------------------------


def test_wilson_interval_matches_the_textbook_value():
    lo, hi = wilson_interval(50, 100)
    assert lo == pytest.approx(0.4038, abs=1e-4) and hi == pytest.approx(0.5962, abs=1e-4)
    lo, hi = wilson_interval(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-4)


@pytest.mark.parametrize("n", [1, 3, 6, 7, 10, 24, 999, 10_000])
def test_wilson_interval_is_exactly_clamped_at_no_wins_and_all_wins(n):
    """The formula's bound at 0 wins is 0 only up to rounding (5.6e-17 for 0 of 3): exactly 0
    (and exactly 1 at n of n) is what a reader of the table expects."""
    assert wilson_interval(0, n)[0] == 0.0 and wilson_interval(n, n)[1] == 1.0
    assert 0.0 < wilson_interval(0, n)[1] < 1.0 and 0.0 < wilson_interval(n, n)[0] < 1.0


def test_arena_agent_against_itself_is_near_half():
    result = play([HeuristicAgent(), HeuristicAgent()], 2000, seed=5)
    assert result.games == 2000 and result.wins.sum() + result.truncated == 2000
    assert (result.seat_games == 1000).all()
    # 3.6 standard deviations of a fair coin over 2000 games.
    assert abs(result.win_rate[0] - 0.5) < 0.04


def test_arena_greedy_beats_random():
    result = play([RandomAgent(), GreedyAgent()], 1000, seed=1)
    assert result.names == ["random", "greedy"]
    assert result.win_rate[1] > 0.8 and result.ci95[1][0] > 0.5


def test_arena_rotates_seats_and_is_reproducible():
    agents = [RLCardRuleAgent(), GreedyAgent(), RandomAgent()]
    a = play(agents, 300, seed=4, batch_size=64)
    b = play(agents, 300, seed=4, batch_size=64)
    assert (a.seat_games == 100).all()
    assert np.array_equal(a.wins, b.wins) and a.steps == b.steps
    fixed = play(agents, 300, seed=4, rotate_seats=False, batch_size=64)
    assert (np.diag(fixed.seat_games) == 300).all()
    for seated in (agents[:1], [RandomAgent()] * 11):
        with pytest.raises(ValueError, match=r"number of agents \(one per seat\) must be an integer in 2\.\.10"):
            play(seated, 10)
    with pytest.raises(ValueError, match="names: one per agent"):
        play(agents, 10, names=["a", "b"])
    with pytest.raises(ValueError, match="num_games must be a positive integer"):
        play(agents, 0)

    class Stuck:
        name = "stuck"

        def act(self, observation, action_mask, rng):
            return np.full(len(observation), -1, np.int64)

    with pytest.raises(ValueError, match="stuck"):
        play([Stuck(), RandomAgent()], 10)


def test_play_records_its_games_and_reports_each_end():
    """record=True keeps every game's record; on_finish sees every game end once, before its row is dealt anew."""
    rules = UnoRules.preset("classic")
    agents = [HeuristicAgent(rules), RandomAgent()]
    ended = []

    def finish(engine, rows, won, seats, games):
        ended.extend(games.tolist())

    r = play(agents, 12, rules, seed=3, batch_size=5, rotate_seats=False, record=True, on_finish=finish)
    assert r.records is not None and len(r.records) == 12 and sorted(ended) == list(range(12))
    assert sum(len(rec["actions"]) for rec in r.records) == r.steps
    assert play(agents, 12, rules, seed=3, batch_size=5).records is None


def test_agents_without_act_in_play_the_same_games_with_engine_access():
    """Agents without ``act_in`` play the same games whether or not the engine is offered."""
    rules = UnoRules.preset("classic")
    agents = [HeuristicAgent(rules), RLCardRuleAgent(rules), GreedyAgent(rules)]
    p = play(agents, 300, rules, seed=7, batch_size=64)
    e = play(agents, 300, rules, seed=7, batch_size=64, engine_access=True)
    assert e.wins.tolist() == p.wins.tolist()


def test_sample_legal_into_a_buffer():
    """sample_legal(out=) fills the given int64 buffer with the same choice as a new array."""
    from agents import sample_legal as pick

    mask = np.zeros((3, 116), bool)
    mask[0, [1, 5, 9]] = True
    mask[1, 57] = True
    buf = np.full(3, 7, np.int64)
    got = pick(mask, np.random.default_rng(4), out=buf)
    assert got is buf
    assert buf.tolist() == pick(mask, np.random.default_rng(4)).tolist()
    assert buf[1] == 57 and buf[2] == -1 and buf[0] in (1, 5, 9)
    with pytest.raises(ValueError, match="int64"):
        pick(mask, np.random.default_rng(4), out=np.zeros(3, np.int32))


# --- registry: every agent by name -------------------------------------------------------------


def test_every_plain_name_builds_its_agent():
    kinds = {
        "random": RandomAgent,
        "rlcard_rule": RLCardRuleAgent,
        "greedy": GreedyAgent,
        "heuristic": HeuristicAgent,
        "search": SEARCHES[SEARCH],
    }
    assert agent_names(models=False) == [*kinds, "ismcts", "flatmc"]
    assert agent_names() == [*kinds, "ismcts", "flatmc", "pretrained", "pretrained-4p", "belief_policy"]
    kinds.update(ismcts=SEARCHES["ismcts"], flatmc=SEARCHES["flatmc"])
    for name, cls in kinds.items():
        agent = make_agent(name)
        assert type(agent) is cls and agent.name == name
        assert name in AGENT_SPECS
    assert make_agent("search").rollouts == SEARCHES[SEARCH]().rollouts and make_agent("search").time_ms is None


@pytest.mark.parametrize(
    "spec, rollouts, time_ms",
    [
        ("flatmc:64", 64, None),
        ("flatmc:20ms", FlatMCAgent.timed_round_rollouts, 20.0),
        ("flatmc:2.5ms", FlatMCAgent.timed_round_rollouts, 2.5),
    ],
)
def test_search_budget_in_the_spec(spec, rollouts, time_ms):
    # "search" names agents.registry.SEARCH (tests/agents/test_ismcts.py); flatmc is FlatMCAgent whatever it is.
    agent = make_agent(spec)
    assert isinstance(agent, FlatMCAgent)
    assert agent.rollouts == rollouts and agent.time_ms == time_ms
    assert agent.name == spec  # two budgets of one table keep apart


def test_label_names_the_agent_only():
    fast = make_agent("fast=search:64")
    assert isinstance(fast, FlatMCAgent) and fast.name == "fast" and fast.rollouts == 64
    mine = make_agent(" mine = heuristic ")
    assert isinstance(mine, HeuristicAgent) and mine.name == "mine"
    assert make_agent("heuristic").name == "heuristic" and HeuristicAgent.name == "heuristic"


def test_make_agent_parses_the_rules_once_at_its_entry():
    """``make_agent`` reads rules as ``uno_env.parse_rules`` does; below it an agent takes a ``UnoRules``."""
    assert make_agent("search:8", UnoRules.preset("house")).rules == UnoRules.preset("house")
    assert make_agent("search:8", parse_rules('{"stack_draw_two": true}')).rules == UnoRules(stack_draw_two=True)
    # The baselines take the rules' card points: greedy sheds a wild first only when it is
    # worth the most (classic: 50 points; with 1-point wilds: red 9 first).
    engine = position(["red 2, red 9, blue 3, wild", "yellow 1, yellow 2, green 7"], "red 5")
    assert decide(make_agent("greedy", UnoRules.preset("classic")), engine) == "play wild"
    cheap_wilds = UnoRules(card_points=tuple(1 if t >= 52 else p for t, p in enumerate(UnoRules().points)))
    assert decide(make_agent("greedy", cheap_wilds), engine) == "play red 9"
    assert make_agent("search:8", "house").rules == UnoRules.preset("house")
    assert make_agent("search:8", {"stack_draw_two": True}).rules == UnoRules(stack_draw_two=True)
    for bad, message in [
        ("nope", "unknown preset 'nope'"),
        ({"stack": 1}, r"unknown option\(s\) \['stack'\]"),
        (3, "rules must be"),
    ]:
        with pytest.raises(ValueError, match=message):
            make_agent("heuristic", bad)  # type: ignore[arg-type]


def _below_the_edges() -> list:
    from agents.llm import ChatAgent
    from agents.ppo import PPOAgent
    from agents.pretrained import pretrained_agent
    from arena import tournament
    from uno_env.text import build_prompt, rules_text, seat_intro

    return [
        play,
        tournament,
        pretrained_agent,
        ChatAgent.__init__,
        PPOAgent.__init__,
        rules_text,
        seat_intro,
        build_prompt,
    ]


def test_below_the_edges_rules_are_typed_for_mypy():
    """Past the entries that parse them, ``rules`` is annotated ``UnoRules`` (None: classic) and
    mypy checks every caller; nothing checks it again at run time."""
    for function in _below_the_edges():
        hint = typing.get_type_hints(function)["rules"]
        assert hint in (UnoRules, UnoRules | None), (function.__qualname__, hint)


@pytest.mark.parametrize(
    "spec, message",
    [
        ("alphago", r"unknown agent 'alphago'.*random, rlcard_rule, greedy, heuristic, search\[:N \| :Tms\]"),
        ("search:abc", r"bad search budget in 'search:abc'.*search:256.*search:20ms"),
        ("search:", "bad search budget"),
        ("search:0", "bad search budget"),
        ("search:-5ms", "bad search budget"),
        ("search:infms", "bad search budget"),
        ("search:1.5", "bad search budget"),
        ("=heuristic", "LABEL=SPEC"),
        ("fast=", "LABEL=SPEC"),
        ("", "an agent spec is one of"),
    ],
)
def test_bad_specs_say_what_is_allowed(spec, message):
    with pytest.raises(ValueError, match=message):
        make_agent(spec)


def test_a_zip_path_is_read_as_a_saved_model(tmp_path):
    pytest.importorskip("sb3_contrib")
    bad = tmp_path / "model.zip"
    bad.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not a loadable MaskablePPO"):
        make_agent(str(bad))
    with pytest.raises(ValueError, match="not a loadable MaskablePPO"):
        make_agent(str(tmp_path / "model"))  # the .zip may be left out


def test_a_directory_is_read_as_an_rllib_checkpoint(tmp_path):
    with pytest.raises(ValueError, match="RLlib checkpoint"):
        make_agent(str(tmp_path))


def test_import_agents_loads_neither_torch_nor_ray():
    import subprocess
    import sys

    code = (
        "import sys, agents; assert 'torch' not in sys.modules and 'ray' not in sys.modules; "
        "import agents.registry; assert 'torch' not in sys.modules"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    import agents

    with pytest.raises(AttributeError, match="no attribute 'NoSuchAgent'"):
        _ = agents.NoSuchAgent


def test_trained_agents_come_from_the_package_on_first_use():
    pytest.importorskip("sb3_contrib")
    import agents
    from agents.ppo import PPOAgent

    assert agents.PPOAgent is PPOAgent


def test_rllib_agent_comes_from_the_package_on_first_use():
    pytest.importorskip("ray.rllib")
    import agents
    from agents.rllib_agent import RLlibAgent

    assert agents.RLlibAgent is RLlibAgent
