"""uno_web.session: the one host of a live game with an outside seat (web, terminal, MCP)."""

from __future__ import annotations

import io

import numpy as np
import pytest

from uno_env import PRESETS, parse_rules
from uno_web.games import Game, open_game
from uno_web.mcp import UnoGames
from uno_web.session import STATUS, Session, SessionError, build_agents, check_int, seat_names
from uno_web.terminal import ConsoleGame, parse_args

RULES = parse_rules("classic")


def _session(seed: int = 0, seat: int = 1, n: int = 3, **kwargs) -> Session:
    agents, labels = build_agents(["heuristic"], RULES, n, seat)
    return Session(RULES, seat, agents, labels, seed=seed, **kwargs)


def test_one_naming_rule():
    assert seat_names(["a", "b", "c"], 1) == ["a (seat 0)", "you", "c (seat 2)"]
    s = _session()
    assert s.names == ["heuristic (seat 0)", "you", "heuristic (seat 2)"]


def test_every_front_end_hosts_its_game_in_a_session():
    assert isinstance(open_game("classic", 0, ["random"], 2, seed=1).session, Session)
    games = UnoGames()
    games.new_game(["random"], "classic", 0, 1)
    assert all(isinstance(s, Session) for s in games.games.values())
    console = ConsoleGame(parse_args(["--seed", "1"]), io.StringIO(), io.StringIO())
    assert isinstance(console.session, Session)
    assert isinstance(Game(console.session).session, Session)


def test_agents_move_until_the_outside_seat_then_refusals_change_nothing():
    s = _session(seed=3)
    moved = s.run_agents()
    assert s.your_turn and all(seat != s.seat for seat in moved)
    before, count = s.engine.snapshot().copy(), s.event_count
    legal = s.legal_actions()
    illegal = next(a for a in range(116) if a not in legal)
    refusals = [
        (lambda: s.play(illegal), "is not legal now", "invalid"),
        (lambda: s.play(True), "is not legal now", "invalid"),
        (lambda: s.play(float(legal[0])), "is not legal now", "invalid"),
        (lambda: s.advance(), "it is your turn", "conflict"),
        (lambda: s.record(), "only once the game is over", "conflict"),
        (lambda: s.action_of(True), "got bool True", "invalid"),
        (lambda: s.action_of("-1"), "a move number is an integer", "invalid"),
        (lambda: s.action_of(len(legal) + 1), f"there is no move {len(legal) + 1}", "invalid"),
        (lambda: s.hint(0), "rollouts must be an integer in 1..", "invalid"),
    ]
    for call, message, kind in refusals:
        with pytest.raises(SessionError, match=message) as err:
            call()
        assert err.value.kind == kind and kind in STATUS
        assert np.array_equal(s.engine.snapshot(), before) and s.event_count == count
    assert s.action_of(1) == legal[0] and s.action_of(str(len(legal))) == legal[-1]


def test_events_are_as_the_outside_seat_saw_them_and_page():
    s = _session(seed=5)
    rng = np.random.default_rng(5)
    while not s.over and s.moves < 60:
        s.run_agents()
        if not s.over:
            s.play(int(rng.choice(s.legal_actions())))
    every = s.events()
    assert len(every) == s.event_count and all("text" in ev for ev in every)
    assert all(not isinstance(ev.get("cards"), list) or ev["player"] == s.seat for ev in every)
    assert s.events(3, 4) == every[3:7] and s.events(s.event_count) == []


def test_the_game_stops_at_its_action_limit():
    s = _session(seed=2, max_actions=5)
    while not s.over:
        s.run_agents()
        if not s.over:
            s.play(s.legal_actions()[0])
    assert s.moves == 5 and s.at_limit
    with pytest.raises(SessionError, match="limit of 5 actions") as err:
        s.advance()
    assert err.value.kind == "conflict" and len(s.record()["actions"]) == 5


def test_the_game_is_over_for_a_seat_eliminated_from_the_match():
    rules = parse_rules({"scoring": "elimination", "episode": "match", "target_points": 50})
    game = open_game(rules, 0, ["heuristic"], 4, seed=0)
    s = game.session
    for _ in range(500):  # draw or pass whenever allowed: the seat loses points and goes out
        s.run_agents()
        if s.over:
            break
        moves = {m.label: m.action for m in s.moves_list()}
        s.play(moves.get("draw", moves.get("pass", s.legal_actions()[0])))
    assert s.eliminated and s.over and not s.engine.terminated[0] and s.to_act is None
    assert s.run_agents() == [] and game.view()["eliminated"] and game.view()["over"]
    with pytest.raises(SessionError, match="your seat was eliminated") as err:
        s.advance()
    assert err.value.kind == "conflict"


def test_run_agents_stops_at_its_budget():
    s = _session(seed=4, seat=5, n=6)
    moved = s.run_agents(max_decisions=1)
    assert len(moved) <= 1 and (s.your_turn or s.agents_to_move)
    ticks = iter(range(100))
    while s.agents_to_move:
        before = s.moves
        s.run_agents(max_seconds=1.5, clock=lambda: float(next(ticks)))
        assert 1 <= s.moves - before <= 2


@pytest.mark.parametrize(
    ("specs", "remote", "message"),
    [
        (["heuristic", "random"], True, "needs 1 name (for every other seat) or 3 names"),
        ([3], True, "an agent is a name, got int 3"),
        (["my_agent.py:Agent"], True, "is not offered here"),
        (["nobody"], False, "nobody"),
    ],
)
def test_bad_agent_specs_are_refused(specs, remote, message):
    with pytest.raises(SessionError) as err:
        build_agents(specs, RULES, 4, 0, remote=remote)
    assert message in str(err.value)


def test_strict_integers():
    assert check_int("seat", 2, 0, 3) == 2
    for bad in (True, 1.0, "1", None):
        with pytest.raises(SessionError, match="seat must be an integer, got"):
            check_int("seat", bad, 0, 3)
    with pytest.raises(SessionError, match=r"seat must be an integer in 0..3, got 4"):
        check_int("seat", 4, 0, 3)


@pytest.mark.parametrize(
    ("call", "message", "kind"),
    [
        (dict(num_players=11), "num_players must be an integer in 2..10, got 11", "invalid"),
        (
            dict(num_players=1, names={"num_players": "--num-players"}),
            "--num-players must be an integer in 2..10",
            "invalid",
        ),
        (dict(seat=3), "seat must be an integer in 0..2, got 3", "invalid"),
        (dict(seat=True, names={"seat": "--seat"}), "--seat must be an integer, got bool", "invalid"),
        (dict(seed=-1), "seed must be an integer in 0..2**63-1, got -1", "invalid"),
        (dict(seed=1.5), "seed must be an integer, got float", "invalid"),
        (dict(rules="chess"), "rules: unknown preset 'chess'", "invalid"),
        (
            dict(rules={"bogus": 1}, names={"rules": "rule options"}),
            "rule options: unknown option(s) ['bogus']",
            "invalid",
        ),
        (dict(rules=7), "rules is a preset name (classic,", "invalid"),
        (dict(rules="x" * 10_000), "got 10000 characters starting 'xxx", "too_large"),
        (dict(opponents=["heuristic"] * 3), "opponents needs 1 name (for every other seat) or 2 names", "invalid"),
        (dict(opponents=["x.py:Agent"]), "is not offered here", "invalid"),
        (dict(opponents="heuristic", num_players=None), "opponents is a list of 1 to 9 agent names", "invalid"),
        (dict(opponents=["random"] * 10, num_players=None), "opponents is a list of 1 to 9", "invalid"),
    ],
)
def test_session_open_checks_a_callers_values_once(call, message, kind):
    """Session.open is the one check of a table's values for every front end; ``names`` words them."""
    values = {"rules": "classic", "seat": 0, "opponents": ["random"], "num_players": 3, "seed": 1} | call
    with pytest.raises(SessionError) as err:
        Session.open(
            values["rules"],
            values["seat"],
            values["opponents"],
            values["num_players"],
            seed=values["seed"],
            names=call.get("names"),
        )
    assert message in str(err.value) and err.value.kind == kind and len(str(err.value)) < 1000


def test_session_open_reads_the_callers_rules_and_table():
    s = Session.open('{"stack_draw_two": true}', 1, ["random", "heuristic"], seed=3, max_actions=9)
    assert s.rules == parse_rules({"stack_draw_two": True}) and s.num_players == 3 and s.seat == 1
    assert s.names == ["random (seat 0)", "you", "heuristic (seat 2)"] and s.max_actions == 9
    assert Session.open(RULES, 0, ["random"], 2).seed is None  # no seed: a random deal
    spaced = '{"stack_draw_two": true' + " " * 300 + "}"  # a local caller's rules text is not capped
    assert Session.open(spaced, 0, ["random"], 2, remote=False).rules.stack_draw_two
    with pytest.raises(SessionError, match="refused by the front end"):

        def table_rules(rules):
            raise SessionError("refused by the front end")

        Session.open(RULES, 0, ["random"], 2, table_rules=table_rules)


def test_front_ends_pass_the_callers_values_and_word_a_refusal_in_their_transport(monkeypatch, capsys):
    """The web, MCP and terminal adapters leave the checks to Session.open and turn its SessionError
    into an HTTP status, an MCP tool error and a command-line error."""
    import anyio
    from fastapi.testclient import TestClient
    from mcp import Client

    from uno_web import terminal
    from uno_web.mcp import build_server
    from uno_web.server import create_app

    calls = []

    def refuse(cls, *args, **kwargs):
        calls.append(args)
        raise SessionError("the table says no", "too_large")

    app = create_app()
    monkeypatch.setattr(Session, "open", classmethod(refuse))
    web = TestClient(app, headers={"Content-Type": "application/json"})
    r = web.post("/api/games", json={"players": 1, "seat": 5, "agents": ["random"], "options": {"hand_size": 3}})
    assert (r.status_code, r.json()) == (413, {"error": "the table says no"}) and len(app.state.games) == 0
    assert calls[-1] == ({**PRESETS["classic"], "hand_size": 3}, 5, ["random"], 1)

    async def mcp_call():
        games = UnoGames()
        async with Client(build_server(games)) as client:
            result = await client.call_tool("new_game", {"opponents": ["random"] * 3, "seat": 9, "rules": "house"})
        assert result.is_error and result.content[0].text.endswith(": the table says no") and not games.games

    anyio.run(mcp_call)
    assert calls[-1] == ("house", 9, ["random"] * 3)

    rc = terminal.main(
        ["--num-players", "12", "--seat=-3", "--opponents", "random,greedy"], io.StringIO(), io.StringIO()
    )
    assert rc == 2 and "uno-play: error: the table says no" in capsys.readouterr().err
    assert calls[-1] == ("classic", -3, ["random", "greedy"], 12)
