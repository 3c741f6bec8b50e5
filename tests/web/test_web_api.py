"""uno-web's API through FastAPI's TestClient: no hidden card ever reaches the browser (checked
against the engine's ``game_state()`` over random games), every bad request gets a 4xx with a
clear message and changes nothing, games expire and are capped, and replays step both ways."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from helpers import ROOT

pytest.importorskip("fastapi", reason="the web extra is not installed: pip install -e '.[web]'")
pytest.importorskip("httpx", reason="the web extra is not installed: pip install -e '.[web]'")
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # starlette's notice about httpx's successor
    from fastapi.testclient import TestClient

from uno_env import PRESETS, Engine, parse_rules
from uno_web.server import Settings, create_app, main

# Keys that would carry hidden information: every hand, the piles' order, the deal's generator.
FORBIDDEN_KEYS = {"hands", "draw_pile", "discard_pile", "rng_state", "start", "actions", "seed"}
PUBLIC_CARD_EVENTS = {"play", "flip", "return_first_card", "discard_wild"}


# The page sends every POST and DELETE as JSON (the server refuses others: a cross-site defence).
JSON = {"Content-Type": "application/json"}


def client(**settings) -> TestClient:
    return TestClient(create_app(Settings(**settings)), raise_server_exceptions=False, headers=JSON)


def _walk(node, path=""):
    if isinstance(node, dict):
        for k, v in node.items():
            yield path + "." + k, k, v
            yield from _walk(v, path + "." + k)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _walk(v, f"{path}[{i}]")


def check_no_hidden_card(response: dict, game, human: int) -> None:
    """The response holds the human's hand exactly, and no card of any other hand or the pile."""
    state = game.engine.game_state(0)  # the test's side only: the server never sends this
    bad = [p for p, k, _ in _walk(response) if k in FORBIDDEN_KEYS]
    assert not bad, f"hidden-information keys in a response: {bad}"
    assert sorted(c["id"] for c in response["table"]["hand"]) == sorted(state["hands"][human])
    assert response["table"]["top_card"]["id"] == state["top_card"]
    sizes = [s["hand_size"] for s in response["table"]["seats"]]
    assert sizes == [len(h) for h in state["hands"]]
    drawn = response["table"]["drawn_card"]
    assert drawn is None or drawn["id"] in state["hands"][human]
    for ev in response["events"]:
        if isinstance(ev.get("cards"), list):  # (a reshuffle's "cards" is a count)
            assert ev.get("player") == human, f"another seat's cards sent: {ev}"
        if "card" in ev:
            assert ev["type"] in PUBLIC_CARD_EVENTS, f"a card in a non-public event: {ev}"
    # Moves are offered only to the human, and only legal ones.
    if response["your_turn"]:
        assert sorted(a["id"] for a in response["legal"]) == np.flatnonzero(game.engine.legal_mask[0]).tolist()
    else:
        assert response["legal"] == []


# Random play can run to the turn limit; a low one keeps each game to a few hundred requests.
@pytest.mark.parametrize(
    "players,preset,options,seed",
    [
        (2, "classic", {"max_turns": 400}, 1),
        (3, "official", {"uno_call": "explicit", "max_turns": 300}, 2),
        (4, "swap_hands", {"custom_wild_rule": "others_draw_two", "max_turns": 300}, 3),
        (5, "house", {"allow_doubles": True, "max_turns": 300}, 4),
        (3, "classic", {"episode": "match", "target_points": 60, "max_turns": 300}, 5),
    ],
)
def test_no_hidden_card_in_any_response_over_random_games(players, preset, options, seed):
    with client() as c:
        _play_random_game_checking_every_response(c, players, preset, options, seed)


def _play_random_game_checking_every_response(c, players, preset, options, seed):
    rng = np.random.default_rng(seed)
    human = seed % players
    r = c.post(
        "/api/games",
        json={
            "players": players,
            "seat": human,
            "agents": ["random"],
            "preset": preset,
            "options": options,
            "seed": seed,
        },
    )
    assert r.status_code == 200, r.text
    view = r.json()
    gid = view["game_id"]
    game = c.app.state.games.get(gid)
    check_no_hidden_card(view, game, human)
    since, steps, seen_events = view["event_count"], 0, 0
    log = list(view["events"])
    while not view["over"]:
        assert steps < 6000
        if view["your_turn"]:
            action = int(rng.choice([a["id"] for a in view["legal"]]))
            r = c.post(f"/api/games/{gid}/move?since={since}", json={"action": action})
        else:
            assert c.get(f"/api/games/{gid}/record").status_code == 409  # the record shows every hand
            r = c.post(f"/api/games/{gid}/advance?since={since}")
        assert r.status_code == 200, r.text
        view = r.json()
        check_no_hidden_card(view, game, human)
        seen_events += len(view["events"])
        log += view["events"]
        since = view["event_count"]
        steps += 1
        if view["last_move"] is not None:
            assert view["last_move"]["seat"] in range(players) and view["last_move"]["text"]
    assert seen_events > 0
    assert view["current_player"] is None and view["legal"] == []
    record = c.get(f"/api/games/{gid}/record")
    assert record.status_code == 200 and record.json()["actions"]
    # The log the page assembled from ``since`` answers is the record's, redacted for the human.
    from uno_web.views import public_event

    full = [public_event(e, human, game.names) for e in record.json()["events"]]
    assert len(log) == len(full) and [e["type"] for e in log] == [e["type"] for e in full]


def _check_round_summary(view, game, rules, round_only):
    """The last round's summary: every hand the round ended with, its points, what was scored."""
    last = view["last_round"]
    assert last["round"] == view["rounds_finished"] == len(game.rounds)
    winner = last["winners"][0]
    assert last["hands"][winner]["cards"] == []
    for h in last["hands"]:
        assert h["points"] == sum(rules.points[c["id"]] for c in h["cards"])
    if round_only:  # the engine still holds the hands the round ended with
        state = game.engine.game_state(0)
        assert [sorted(c["id"] for c in h["cards"]) for h in last["hands"]] == [sorted(h) for h in state["hands"]]
    if rules.scoring == "winner_takes":  # the engine scored exactly the hands shown
        assert last["scored"][winner] == sum(h["points"] for h in last["hands"]) > 0
        assert sum(last["scored"]) == last["scored"][winner]


@pytest.mark.parametrize(
    "players,preset,options,seed",
    [
        (2, "classic", {}, 1),
        (3, "official", {"uno_call": "explicit"}, 2),
        (4, "swap_hands", {"custom_wild_rule": "others_draw_two"}, 3),
        (3, "house", {"allow_doubles": True}, 4),
        (3, "swap_hands", {"episode": "match", "target_points": 400}, 5),
    ],
)
def test_round_end_summaries_reveal_the_hands_and_their_points(players, preset, options, seed):
    """The human plays a card whenever it can (so rounds end), against the heuristic."""
    c = client()
    body = {"players": players, "seat": 0, "agents": ["heuristic"], "preset": preset, "options": options, "seed": seed}
    view = c.post("/api/games", json=body).json()
    gid = view["game_id"]
    game = c.app.state.games.get(gid)
    rules = parse_rules({**PRESETS[preset], **options})
    summaries = 0
    while not view["over"]:
        if view["your_turn"]:
            plays = [a for a in view["legal"] if a["kind"] != "draw"]
            action = (plays or view["legal"])[0]["id"]
            r = c.post(f"/api/games/{gid}/move", json={"action": action})
        else:
            r = c.post(f"/api/games/{gid}/advance")
        assert r.status_code == 200, r.text
        view = r.json()
        if view["rounds_finished"] > summaries:
            summaries = view["rounds_finished"]
            _check_round_summary(view, game, rules, options.get("episode") != "match")
    assert summaries >= 1 and not view["truncated"]
    if options.get("episode") == "match":
        assert summaries >= 2  # a match of several rounds, each summarised


def test_a_leak_is_caught_by_the_check():
    """The checker above fails on a response carrying another seat's cards (so it can fail)."""
    c = client()
    view = c.post("/api/games", json={"players": 2, "seat": 0, "agents": ["random"], "seed": 9}).json()
    game = c.app.state.games.get(view["game_id"])
    leaked = json.loads(json.dumps(view))
    leaked["events"].append({"type": "deal", "player": 1, "cards": game.engine.game_state(0)["hands"][1]})
    with pytest.raises(AssertionError, match="another seat"):
        check_no_hidden_card(leaked, game, 0)
    with pytest.raises(AssertionError, match="hidden-information keys"):
        check_no_hidden_card({**view, "hands": []}, game, 0)


def _new(c, **body):
    return c.post("/api/games", json={"players": 2, "seat": 0, "agents": ["random"], "seed": 11, **body})


BAD_GAMES = [
    ({"players": 1}, "players must be an integer in 2..10, got 1"),
    ({"players": 11}, "players must be an integer in 2..10, got 11"),
    ({"players": "2"}, "players: Input should be a valid integer"),
    ({"seat": 2}, "seat must be an integer in 0..1, got 2"),
    ({"seat": -1}, "seat must be an integer in 0..1, got -1"),
    ({"preset": "nope"}, "unknown preset 'nope'; presets are"),
    ({"options": {"stack_draw_two": "yes"}}, "option stack_draw_two must be True or False"),
    ({"options": {"bogus": 1}}, "unknown option(s) ['bogus']"),
    ({"options": {"open_hands": True}}, "open_hands is not offered"),
    ({"options": {"illegal_action": "penalty"}}, "illegal_action must be 'raise'"),
    ({"options": {"max_turns": None}}, "option max_turns must be 1..20000 at the web table, got None"),
    ({"options": {"max_turns": 10**6}}, "option max_turns must be 1..20000"),
    ({"options": {"hand_size": 50}, "players": 10, "agents": ["random"]}, "cannot deal this table"),
    ({"options": []}, "options: Input should be a valid dictionary"),
    ({"agents": ["/etc/passwd"]}, "agent '/etc/passwd' is not offered"),
    ({"agents": ["runs/x/model.zip"]}, "is not offered"),
    ({"agents": ["search:999999"]}, "is not offered"),
    ({"agents": ["search:0"]}, "bad search budget in 'search:0'"),
    ({"agents": ["search:20ms@peek"]}, "@peek sees every hand"),
    ({"agents": ["my_agent.py:MyAgent"]}, "it is an agent class of yours"),
    ({"agents": ["chat:some-model"]}, "it is a language model at a chat endpoint"),
    ({"agents": ["heuristik"]}, "unknown agent 'heuristik'; did you mean 'heuristic'?"),
    ({"agents": ["random,heuristic"]}, "',' is no part of one registry name"),
    ({"agents": ["heuristic", "random"]}, "agents needs 1 name"),
    ({"agents": [3]}, "agents.0: Input should be a valid string"),
    (
        {"agents": ["search:" + "9" * 10_000]},
        "an agent's name is at most 200 characters, got 10007 starting 'search:999",
    ),
    ({"players": "2" * 10_000}, "(got '22222"),
    ({"seed": -1}, "seed must be an integer in 0..2**63-1"),
    ({"seed": 1.5}, "seed: Input should be a valid integer"),
    ({"foo": 1}, "unknown field 'foo'"),
]


@pytest.mark.parametrize("body,message", BAD_GAMES)
def test_bad_new_game_requests_get_422_with_a_clear_message(body, message):
    c = client()
    r = _new(c, **body)
    assert r.status_code == 422, r.text
    assert message in r.json()["error"] and len(r.json()["error"]) < 1000  # a refusal quotes briefly
    assert len(c.app.state.games) == 0


@pytest.mark.parametrize(
    "content,status,message",
    [
        (b"{", 422, "not valid JSON"),
        (b"[1, 2]", 422, "must be a JSON object"),
        (b"x" * 20_000, 413, "request body over 16384 bytes"),
    ],
)
def test_malformed_bodies(content, status, message):
    r = client().post("/api/games", content=content, headers={"Content-Type": "application/json"})
    assert r.status_code == status and message in r.json()["error"]


def _game_at_human_turn(c):
    view = _new(c).json()
    gid = view["game_id"]
    while not view["your_turn"]:
        view = c.post(f"/api/games/{gid}/advance").json()
    return gid, view


def test_illegal_and_malformed_moves_change_nothing():
    c = client()
    gid, view = _game_at_human_turn(c)
    legal = {a["id"] for a in view["legal"]}
    illegal = next(a for a in range(116) if a not in legal)
    for body, status, message in [
        ({"action": illegal}, 422, f"action {illegal} is not legal now; legal actions:"),
        ({"action": 999}, 422, "action 999 is not legal now"),
        ({"action": -1}, 422, "action -1 is not legal now"),
        ({"action": "5"}, 422, "action: Input should be a valid integer"),
        ({"action": True}, 422, "action: Input should be a valid integer"),
        ({}, 422, "missing field 'action'"),
        ({"action": 1, "x": 2}, 422, "unknown field 'x'"),
    ]:
        r = c.post(f"/api/games/{gid}/move", json=body)
        assert r.status_code == status and message in r.json()["error"], (body, r.text)
    after = c.get(f"/api/games/{gid}").json()
    assert after["moves"] == view["moves"] and after["table"] == view["table"]
    r = c.post(f"/api/games/{gid}/advance")
    assert r.status_code == 409 and "it is your turn" in r.json()["error"]
    for path in (f"/api/games/{gid}?since=-1", f"/api/games/{gid}/advance?since=x"):
        r = c.request("POST" if "advance" in path else "GET", path)
        assert r.status_code == 422 and "since:" in r.json()["error"], r.text


def test_moving_out_of_turn_is_409():
    c = client()
    view = c.post("/api/games", json={"players": 3, "seat": 0, "agents": ["random"], "seed": 5}).json()
    gid = view["game_id"]
    while view["your_turn"]:
        view = c.post(f"/api/games/{gid}/move", json={"action": view["legal"][0]["id"]}).json()
    r = c.post(f"/api/games/{gid}/move", json={"action": 57})
    assert r.status_code == 409 and "it is not your turn" in r.json()["error"]


@pytest.mark.parametrize(
    "method,path,status,message",
    [
        ("GET", "/api/games/unknown", 404, "no game with id 'unknown'"),
        ("GET", "/api/games/bad!id", 400, "a game id is 1-64 characters"),
        ("POST", "/api/games/unknown/advance", 404, "no game with id"),
        ("DELETE", "/api/games/unknown", 404, "no game with id"),
        ("GET", "/api/replays/unknown/frames/0", 404, "no replay with id"),
        ("GET", "/api/nothing", 404, "no such page or endpoint: GET /api/nothing"),
        ("PUT", "/api/games", 405, "PUT is not allowed on /api/games"),
    ],
)
def test_unknown_ids_and_routes(method, path, status, message):
    r = client().request(method, path)
    assert r.status_code == status and message in r.json()["error"], r.text


def test_games_expire_after_inactivity_and_the_store_is_capped():
    c = client(max_games=3, idle_minutes=1)
    now = [1000.0]
    c.app.state.games.clock = lambda: now[0]
    ids = [_new(c).json()["game_id"] for _ in range(3)]
    r = _new(c)
    assert r.status_code == 503 and "maximum of 3 games" in r.json()["error"]
    assert c.delete(f"/api/games/{ids[0]}").status_code == 200
    assert _new(c).status_code == 200
    now[0] += 30
    assert c.get(f"/api/games/{ids[1]}").status_code == 200  # a request restarts its timer
    now[0] += 45
    assert c.get(f"/api/games/{ids[1]}").status_code == 200
    r = c.get(f"/api/games/{ids[2]}")
    assert r.status_code == 404 and "expired after 1 minutes" in r.json()["error"]
    assert _new(c).status_code == 200  # the expired games were swept, so there is room


class _Broken:
    name = "broken"

    def act(self, observation, mask, rng):
        raise RuntimeError("this agent always fails")


def test_one_games_error_does_not_affect_another():
    c = client(extra_agents={"broken": _Broken()})
    bad = c.post("/api/games", json={"players": 2, "seat": 1, "agents": ["broken"], "seed": 1}).json()
    good = _new(c).json()
    bid, view = bad["game_id"], bad
    while view["your_turn"]:
        view = c.post(f"/api/games/{bid}/move", json={"action": view["legal"][0]["id"]}).json()
    r = c.post(f"/api/games/{bid}/advance")
    assert r.status_code == 500 and "internal error" in r.json()["error"]
    assert c.get(f"/api/games/{bad['game_id']}").status_code == 200  # its lock was released
    gid, view = good["game_id"], good
    while not view["over"]:
        r = (
            c.post(f"/api/games/{gid}/move", json={"action": view["legal"][0]["id"]})
            if view["your_turn"]
            else c.post(f"/api/games/{gid}/advance")
        )
        assert r.status_code == 200, r.text
        view = r.json()


def _finished_game(c, seed=4):
    view = _new(c, seed=seed).json()
    gid = view["game_id"]
    while not view["over"]:
        view = (
            c.post(f"/api/games/{gid}/move", json={"action": view["legal"][0]["id"]})
            if view["your_turn"]
            else c.post(f"/api/games/{gid}/advance")
        ).json()
    return gid


def test_replay_of_a_finished_game_steps_forward_and_back():
    with client() as c:
        _check_replay_steps(c)


def _check_replay_steps(c):
    gid = _finished_game(c)
    info = c.post(f"/api/games/{gid}/replay").json()
    rid, n = info["replay_id"], info["length"]
    frames = [c.get(f"/api/replays/{rid}/frames/{k}").json() for k in range(n + 1)]
    assert frames[-1]["over"] and not frames[0]["over"]
    assert all(len(f["table"]["hands"]) == 2 for f in frames)  # omniscient: every hand
    back = [c.get(f"/api/replays/{rid}/frames/{k}").json() for k in range(n, -1, -1)]
    assert back[::-1] == frames
    seat_view = c.get(f"/api/replays/{rid}/frames/3?seat=1").json()
    assert "hands" not in seat_view["table"] and seat_view["table"]["seat"] == 1
    assert all(not isinstance(ev.get("cards"), list) or ev["player"] == 1 for ev in seat_view["events"])
    for path, message in [
        (f"frames/{n + 1}", f"frame must be in 0..{n}"),
        ("frames/0?seat=2", "seat must be in 0..1"),
        ("frames/x", "k: Input should be a valid integer"),
    ]:
        r = c.get(f"/api/replays/{rid}/{path}")
        assert r.status_code == 422 and message in r.json()["error"], r.text


def test_uploaded_records_replay_and_bad_ones_are_refused():
    c = client()
    e = Engine(1, 3, parse_rules("house"), seed=7, record=True)
    rng = np.random.default_rng(0)
    while not (e.terminated[0] or e.truncated[0]):
        e.step(np.array([rng.choice(np.flatnonzero(e.legal_mask[0]))]))
    rec = e.record(0)
    r = c.post("/api/replays", content=json.dumps(rec), headers={"Content-Type": "application/json"})
    assert r.status_code == 200, r.text
    info = r.json()
    last = c.get(f"/api/replays/{info['replay_id']}/frames/{info['length']}").json()
    assert last["event_count"] == len(rec["events"]) and last["over"]
    tampered = {**rec, "actions": rec["actions"][:-1] + [(rec["actions"][-1] + 1) % 116]}
    for body, message in [
        ([], "a record is a JSON object"),
        ({"num_players": 2}, "a record needs the keys"),
        ({**rec, "num_players": 11}, "num_players must be an integer in 2..10"),
        ({**rec, "actions": ["x"]}, "actions must be a list of integer"),
        ({**rec, "rules": {"deck": "nope"}}, "not a valid game record"),
        (tampered, "not a valid game record"),
    ]:
        r = c.post("/api/replays", content=json.dumps(body), headers={"Content-Type": "application/json"})
        assert r.status_code == 422 and message in r.json()["error"], (message, r.text)
    r = c.post("/api/replays", content=b"{nope", headers={"Content-Type": "application/json"})
    assert r.status_code == 422 and "not valid JSON" in r.json()["error"]
    lines = (json.dumps(tampered) + "\n" + json.dumps(rec) + "\n").encode()  # games.jsonl of evaluate.py
    assert c.post("/api/replays?index=1", content=lines).status_code == 200
    r = c.post("/api/replays?index=0", content=lines)
    assert r.status_code == 422 and "not a valid game record" in r.json()["error"]
    r = c.post("/api/replays?index=2", content=lines)
    assert r.status_code == 422 and "index must be 0..1 for these 2 JSON Lines records" in r.json()["error"]


def test_page_and_config_are_served_locally_with_a_strict_policy():
    c = client()
    page = c.get("/")
    assert page.status_code == 200 and "/static/app.js" in page.text
    assert "default-src 'self'" in page.headers["content-security-policy"]
    for asset in ("/static/app.js", "/static/style.css", "/"):
        text = c.get(asset).text
        assert "http://" not in text and "https://" not in text, f"{asset} refers to another site"
    cfg = c.get("/api/config").json()
    assert {"random", "greedy", "heuristic", "rlcard_rule", "search"} <= set(cfg["agents"])
    assert set(cfg["presets"]) == {"classic", "official", "swap_hands", "house", "rlcard"}


def test_host_header_is_checked_when_serving_localhost():
    c = TestClient(
        create_app(Settings(allowed_hosts=["127.0.0.1", "localhost"])), base_url="http://evil.example", headers=JSON
    )
    assert c.get("/api/config").status_code == 400
    ok = TestClient(create_app(Settings(allowed_hosts=["127.0.0.1", "localhost"])), base_url="http://127.0.0.1:8000")
    assert ok.get("/api/config").status_code == 200


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--port", "0"], "--port must be 1..65535"),
        (["--agent", "nolabel"], "--agent takes LABEL=SPEC"),
        (["--agent", "x=nowhere.zip"], "no saved model at 'nowhere.zip'"),
    ],
)
def test_cli_refuses_bad_options(argv, message, capsys):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_uno_web_agent_takes_your_own_agent_class(tmp_path):
    """``uno-web --agent LABEL=FILE.py:NAME`` offers your class at the table by its label."""
    from uno_web.server import parse_args

    (tmp_path / "my_agent.py").write_text(
        "import numpy as np\n"
        "class FirstLegal:\n"
        "    name = 'first-legal'\n"
        "    def act(self, observation, action_mask, rng):\n"
        "        return np.argmax(action_mask, axis=1).astype(np.int64)\n"
    )
    _, extra = parse_args(["--agent", f"mine={tmp_path / 'my_agent.py'}:FirstLegal"])
    assert list(extra) == ["mine"] and extra["mine"].name == "mine"
    c = client(extra_agents=extra)
    view = c.post("/api/games", json={"players": 2, "seat": 0, "agents": ["mine"], "seed": 4}).json()
    assert view["names"][1] == "mine (seat 1)"
    refused = c.post("/api/games", json={"players": 2, "seat": 0, "agents": ["my_agent.py:FirstLegal"]})
    assert refused.status_code == 422 and "it is an agent class of yours" in refused.json()["error"]
    long = f"{tmp_path}/{'d' * 80}/my_agent.py:FirstLegal"  # refused for its length before any file is looked at
    refused = c.post("/api/games", json={"players": 2, "seat": 0, "agents": [long]})
    assert refused.status_code == 422 and "a remote spec is at most 80 characters" in refused.json()["error"]


def test_load_test_script_plays_games_to_the_end(tmp_path, capsys):
    """``python -m tools.loadtest`` against a real server subprocess, in miniature."""
    from tools.loadtest import main as load_main

    out = tmp_path / "load.json"
    assert load_main(["--games", "3", "--agent", "random", "--json-out", str(out)]) == 0
    figures = json.loads(out.read_text())
    assert figures["games"] == 3 and figures["requests"] > 3
    assert 0 < figures["p50_ms"] <= figures["p95_ms"] <= figures["p99_ms"]
    assert figures["server_rss_peak_mb"] > 0


def test_uno_web_sits_above_agents_and_uses_public_names_only():
    """README, Architecture: uno_web may import uno_env's public modules and agents.registry,
    never the engine package or a private module (tests/clients/test_layers.py covers the other packages)."""
    import ast

    root = ROOT / "uno_web"
    bad = []
    for f in sorted(root.glob("*.py")):
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.ImportFrom) and not node.level:
                module, names = node.module or "", [a.name for a in node.names]
            elif isinstance(node, ast.Import):
                module, names = node.names[0].name, []
            else:
                continue
            parts = module.split(".")
            if parts[0] in ("arena", "training") or (parts[0] == "agents" and module != "agents.registry"):
                bad.append(f"{f.name} imports {module}")
            if parts[0] == "uno_env" and (
                "engine" in parts or any(p.startswith("_") for p in parts) or any(n.startswith("_") for n in names)
            ):
                bad.append(f"{f.name} imports {module} {names}")
    assert not bad, bad


class _FourSeater:
    name = "four"
    num_players = 4  # as a trained policy (agents.ppo.PPOAgent) records its table size

    def act(self, observation, mask, rng):
        raise AssertionError("never asked to play at a table it was not trained for")


def test_an_operator_agent_trained_for_another_table_size_is_refused_with_its_size():
    c = client(extra_agents={"four": _FourSeater()})
    r = c.post("/api/games", json={"players": 2, "seat": 0, "agents": ["four"], "seed": 1})
    assert r.status_code == 422 and "trained for 4 players; this table has 2" in r.json()["error"]
    assert c.post("/api/games", json={"players": 4, "seat": 0, "agents": ["four"], "seed": 1}).status_code == 200


def test_an_operator_model_is_refused_a_table_its_card_does_not_name():
    pytest.importorskip("sb3_contrib")
    from agents.ppo import PPOAgent
    from agents.pretrained import model_path

    # Loaded as uno-web loads --agent models: for any table, each game checks the card.
    model = PPOAgent(model_path("pretrained"), allow_other_table=True)
    c = client(extra_agents={"mine": model})
    r = c.post("/api/games", json={"players": 3, "seat": 0, "agents": ["mine"], "seed": 1})
    assert r.status_code == 422 and "was trained for 2 players, rules classic; asked for 3 players" in r.json()["error"]
    r = c.post("/api/games", json={"players": 2, "seat": 0, "agents": ["mine"], "preset": "house", "seed": 1})
    assert r.status_code == 422 and "the rules asked for differ" in r.json()["error"]
    assert c.post("/api/games", json={"players": 2, "seat": 0, "agents": ["mine"], "seed": 1}).status_code == 200
    other = client(extra_agents={"mine": model}, allow_other_table=True)
    assert other.post("/api/games", json={"players": 3, "seat": 0, "agents": ["mine"], "seed": 1}).status_code == 200


# --- closed to other websites ----------------------------------------------------------------


def test_requests_another_website_could_send_are_refused_and_change_nothing():
    """What a hostile page can make the browser send without asking (forms, text/plain fetches)
    and what carries another Origin or Sec-Fetch-Site: each is a 403 saying why, and nothing changes."""
    c = TestClient(create_app(Settings()), raise_server_exceptions=False)  # no default JSON header
    ok = c.post("/api/games", json={"players": 2, "seat": 0, "agents": ["random"], "seed": 3})
    assert ok.status_code == 200
    gid = ok.json()["game_id"]
    before = c.get(f"/api/games/{gid}").json()
    record = json.dumps(Engine(1, 2, parse_rules("classic"), seed=1, record=True).record(0))
    game_body = json.dumps({"players": 2, "seat": 0, "agents": ["random"]})
    evil = {"Origin": "http://evil.example"}
    attempts = [
        ("POST", "/api/replays", record, {"Content-Type": "text/plain", **evil}, "Content-Type: application/json"),
        ("POST", "/api/replays", record, {"Content-Type": "text/plain"}, "Content-Type: application/json"),
        (
            "POST",
            "/api/games",
            game_body,
            {"Content-Type": "application/x-www-form-urlencoded"},
            "got application/x-www",
        ),
        (
            "POST",
            "/api/games",
            game_body,
            {"Content-Type": "multipart/form-data; boundary=x"},
            "got multipart/form-data",
        ),
        ("POST", f"/api/games/{gid}/advance", "", {"Content-Type": "text/plain", **evil}, "Content-Type"),
        ("POST", f"/api/games/{gid}/advance", None, {}, "(got none)"),
        ("POST", f"/api/games/{gid}/advance", None, {"Content-Type": "application/json", **evil}, "Origin"),
        ("POST", "/api/games", game_body, {"Content-Type": "application/json", "Origin": "null"}, "Origin 'null'"),
        (
            "POST",
            f"/api/games/{gid}/advance",
            None,
            {"Content-Type": "application/json", "Sec-Fetch-Site": "cross-site"},
            "Sec-Fetch-Site: cross-site",
        ),
        (
            "POST",
            "/api/replays",
            record,
            {"Content-Type": "application/json", "Sec-Fetch-Site": "same-site", "Origin": "http://testserver:9"},
            "Sec-Fetch-Site: same-site",
        ),
        ("DELETE", f"/api/games/{gid}", None, evil, "Content-Type"),
        ("DELETE", f"/api/games/{gid}", None, {"Content-Type": "application/json", **evil}, "another website"),
    ]
    for method, path, body, headers, message in attempts:
        r = c.request(method, path, content=body, headers=headers)
        assert r.status_code == 403 and message in r.json()["error"], (method, path, headers, r.text)
    assert len(c.app.state.games) == 1 and len(c.app.state.replays) == 0
    after = c.get(f"/api/games/{gid}").json()
    assert after["moves"] == before["moves"] and after["table"] == before["table"]
    # The same requests from the page itself (same Origin, JSON) are served.
    same = {"Content-Type": "application/json", "Origin": "http://testserver", "Sec-Fetch-Site": "same-origin"}
    assert c.post("/api/replays", content=record, headers=same).status_code == 200
    assert c.post("/api/games", content=game_body, headers=same).status_code == 200
    headers = c.get("/").headers
    assert "frame-ancestors 'none'" in headers["content-security-policy"] and headers["x-frame-options"] == "DENY"


# --- no request can crash it -----------------------------------------------------------------


@pytest.mark.parametrize(
    "path,content",
    [
        ("/api/replays", b"[" * 200_000 + b"]" * 200_000),
        ("/api/games", b"[" * 5_000 + b"]" * 5_000),
        ("/api/games", b'{"players": 2, "options": {"card_points": ' + b"[" * 40 + b"]" * 40 + b"}}"),
    ],
)
def test_deeply_nested_json_is_a_422(path, content):
    c = client()
    r = c.post(path, content=content)
    assert r.status_code == 422 and "deeper than 32 levels" in r.json()["error"], r.text
    assert len(c.app.state.games) == 0 and len(c.app.state.replays) == 0


def test_brackets_inside_strings_do_not_count_as_nesting():
    from uno_web.server import json_depth

    assert json_depth(b'{"a": "[[[[[[\\"{{{{", "b": [[1]]}') == 3
    assert json_depth(b"") == 0


@pytest.mark.parametrize("target", [2**63, 2**63 - 1, 10_001, 0])
def test_match_target_points_are_bounded(target):
    c = client()
    r = _new(c, options={"episode": "match", "target_points": target})
    assert r.status_code == 422, r.text
    assert "target_points must be" in r.json()["error"]
    assert len(c.app.state.games) == 0


def test_a_game_stops_at_its_action_limit_rounds_of_a_match_included(monkeypatch):
    from uno_web import games

    monkeypatch.setattr(games, "MAX_GAME_ACTIONS", 60)
    c = client()
    view = _new(c, players=3, options={"episode": "match", "target_points": 10_000}).json()
    gid = view["game_id"]
    while not view["over"]:
        assert view["moves"] < 60
        r = (
            c.post(f"/api/games/{gid}/move", json={"action": view["legal"][0]["id"]})
            if view["your_turn"]
            else c.post(f"/api/games/{gid}/advance")
        )
        assert r.status_code == 200, r.text
        view = r.json()
    assert view["moves"] == 60 and view["at_action_limit"] and view["truncated"]
    r = c.post(f"/api/games/{gid}/advance")
    assert r.status_code == 409 and "limit of 60 actions" in r.json()["error"]
    rec = c.get(f"/api/games/{gid}/record")
    assert rec.status_code == 200 and len(rec.json()["actions"]) == 60
    assert c.post(f"/api/games/{gid}/replay").json()["length"] == 60  # still watchable


def test_a_body_that_never_completes_gets_408(monkeypatch):
    import asyncio

    from uno_web import server

    monkeypatch.setattr(server, "BODY_TIMEOUT_S", 0.2)
    sent, chunks = [], []

    async def app(scope, receive, send):
        raise AssertionError("the app must not be reached")

    async def receive():
        if not chunks:
            chunks.append(1)
            return {"type": "http.request", "body": b'{"players":', "more_body": True}
        await asyncio.sleep(3600)

    async def send(message):
        sent.append(message)

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/api/games",
        "headers": [(b"content-type", b"application/json")],
    }
    asyncio.run(server.Guard(app)(scope, receive, send))
    assert sent[0]["status"] == 408 and b"did not arrive within 0.2 s" in sent[1]["body"]


def test_replays_can_be_closed_and_the_page_has_a_favicon():
    c = client()
    gid = _finished_game(c)
    rid = c.post(f"/api/games/{gid}/replay").json()["replay_id"]
    assert c.delete(f"/api/replays/{rid}").json() == {"ended": rid}
    assert c.get(f"/api/replays/{rid}/frames/0").status_code == 404
    r = c.delete(f"/api/replays/{rid}")
    assert r.status_code == 404 and "no replay with id" in r.json()["error"]
    icon = c.get("/favicon.ico")
    assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg+xml")


def test_repeated_agent_options_are_all_kept():
    from uno_web.server import parse_args

    _, extra = parse_args(["--agent", "a=random", "--agent", "b=greedy", "--port", "8001"])
    assert sorted(extra) == ["a", "b"] and extra["a"].name == "a" and extra["b"].name == "b"
    with pytest.raises(ValueError, match="given twice"):
        parse_args(["--agent", "a=random", "--agent", "a=greedy"])


# --- agents cannot starve the server ---------------------------------------------------------


class _Waiting:
    """An agent that thinks until the test lets it go (a slow search, without the CPU)."""

    name = "waiting"

    def __init__(self):
        import threading

        self.go = threading.Event()
        self.thinking = 0

    def act(self, observation, mask, rng):
        self.thinking += 1
        assert self.go.wait(60), "never released"
        return np.array([int(np.flatnonzero(mask[0])[0])])


def test_slow_agents_in_many_games_do_not_starve_other_requests():
    """More games waiting on an agent than the server has request threads (40): a page, the
    config and another game's view are still answered while every agent thinks."""
    import threading

    slow = _Waiting()
    with client(extra_agents={"waiting": slow}) as c:
        ids = []
        for k in range(45):
            view = c.post("/api/games", json={"players": 2, "seat": 0, "agents": ["waiting"], "seed": k}).json()
            ids.append(view["game_id"])
            while view["your_turn"]:
                view = c.post(f"/api/games/{ids[-1]}/move", json={"action": view["legal"][0]["id"]}).json()
        other = _new(c).json()["game_id"]
        results = {}

        def ask(key, method, path):
            results[key] = c.request(method, path).status_code

        movers = [threading.Thread(target=ask, args=(g, "POST", f"/api/games/{g}/advance")) for g in ids]
        for t in movers:
            t.start()
        for _ in range(400):
            if slow.thinking >= 2:
                break
            threading.Event().wait(0.05)
        assert slow.thinking >= 1
        probes = [threading.Thread(target=ask, args=(p, "GET", p)) for p in ("/api/config", "/", f"/api/games/{other}")]
        for t in probes:
            t.start()
        for t in probes:
            t.join(30)
        assert [results.get(p) for p in ("/api/config", "/", f"/api/games/{other}")] == [200, 200, 200], results
        r = c.post(f"/api/games/{ids[0]}/advance")
        assert r.status_code == 409 and "already under way" in r.json()["error"]
        slow.go.set()
        for t in movers:
            t.join(60)
        assert [results[g] for g in ids] == [200] * len(ids)


@pytest.mark.parametrize("preset,options", [("house", {}), ("swap_hands", {"episode": "match", "target_points": 200})])
def test_record_events_from_any_start_match_the_record(preset, options):
    """``Engine.record_events(i, k)`` (the web log's source, converted incrementally) equals the
    record's events from k on, at every step; a bad start is refused."""
    e = Engine(1, 3, parse_rules({**PRESETS[preset], **options}), seed=3, record=True)
    rng = np.random.default_rng(0)
    steps = 0
    while not (e.terminated[0] or e.truncated[0]) and steps < 3000:
        events = e.record(0)["events"]
        k = int(rng.integers(0, len(events) + 1))
        assert e.record_events(0, k) == events[k:]
        e.step(np.array([rng.choice(np.flatnonzero(e.legal_mask[0]))]))
        steps += 1
    assert e.record_events(0, 0) == e.record(0)["events"]
    with pytest.raises(ValueError, match="start must be an integer >= 0"):
        e.record_events(0, -1)
