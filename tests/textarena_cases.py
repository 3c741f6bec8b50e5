"""UNO through TextArena's own API, wrappers and agents (uno_env.textarena_env).

These run in the virtualenv that holds textarena (``.venvs/textarena``, built by
``bash .ci/install``): ``tests/envs/test_textarena.py`` runs this file there with that venv's pytest.
Every connection is checked: one to an address other than the loopback fails the test (the only
server here is the scripted chat endpoint on 127.0.0.1).
"""

from __future__ import annotations

import ipaddress
import json
import re
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

CONNECTIONS: list[object] = []  # every address a socket of this process connected to
_connect, _connect_ex = socket.socket.connect, socket.socket.connect_ex


def is_loopback(address: object) -> bool:
    """Whether a socket address is on this machine: a loopback IP, or a Unix socket path."""
    if not isinstance(address, tuple):
        return True  # AF_UNIX
    host = str(address[0])
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


def _guarded(original):
    def connect(self, address):
        CONNECTIONS.append(address)
        if not is_loopback(address):
            raise ConnectionRefusedError(f"the tests connect only to the loopback, not to {address!r}")
        return original(self, address)

    return connect


# Installed before textarena is imported, so that its import is guarded too.
socket.socket.connect = _guarded(_connect)
socket.socket.connect_ex = _guarded(_connect_ex)

import textarena as ta  # noqa: E402
from textarena.agents import OpenAIAgent  # noqa: E402
from textarena.agents.wrappers import AnswerTokenAgentWrapper  # noqa: E402
from textarena.envs.registration import ENV_REGISTRY  # noqa: E402

import uno_env.textarena_env as uta  # noqa: E402
from uno_env import PRESETS, Engine, parse_rules  # noqa: E402
from uno_env.text import engine_prompt, legal_moves, parse_reply  # noqa: E402

MOVE_LINE = re.compile(r"^(\d+)\. (.+)$", re.M)


@pytest.fixture(autouse=True)
def only_the_loopback():
    """After each test (and the imports before the first): no connection left this machine,
    not even one refused and swallowed by a library."""
    yield
    assert all(is_loopback(a) for a in CONNECTIONS), [a for a in CONNECTIONS if not is_loopback(a)]


def legal_lines(observation: str) -> list[tuple[str, str]]:
    """The (number, name) lines of the last "Legal moves:" block of a prompt."""
    block = observation[observation.rindex("Legal moves:") :].split("\n\n")[0]
    return MOVE_LINE.findall(block)


class ScriptedPlayer(ta.Agent):
    """A TextArena agent that reads only its observation text and names one of the legal moves
    it lists, drawn with its own seeded generator (mostly a card to play, so that games end as
    they do between players who want to win), in one of the ways a model might."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def __call__(self, observation: str) -> str:
        lines = legal_lines(observation)
        plays = [line for line in lines if line[1].startswith("play ")]
        if plays and self.rng.random() < 0.9:
            lines = plays
        number, name = lines[int(self.rng.integers(len(lines)))]
        forms = [number, name, f"[{name}]", f"I play {number}", f"[{number}]", name.upper()]
        return forms[int(self.rng.integers(len(forms)))]


def core_of(env):
    """The UnoTextArenaEnv under TextArena's wrappers."""
    while hasattr(env, "env"):
        env = env.env
    return env


def play(env, agents, twin: Engine | None = None) -> tuple[int, dict[int, float]]:
    """Play ``env`` (made and reset) to its end with ``agents``, checking that each seat reads
    the engine's prompt for it; with ``twin``, step a twin engine by the parsed replies. Returns
    the moves made and the twin's summed rewards per seat."""
    core = core_of(env)
    done, moves = False, 0
    returns = np.zeros(core.engine.num_players)
    while not done:
        player_id, observation = env.get_observation()
        assert player_id == int(core.engine.current_player[0])
        assert engine_prompt(core.engine, 0, player_id, core.names, core.history) in observation
        reply = agents[player_id](observation)
        if twin is not None:  # TextArena's brackets ("[3]") read as the bare reply
            action = parse_reply(reply, legal_moves(twin.legal_mask[0], player_id, twin.num_players, core.names))
            returns += twin.step(np.array([action])).rewards[0]
        done, _ = env.step(reply)
        moves += 1
        assert moves <= 20_000, "a game that does not end"
    return moves, dict(enumerate(returns.tolist()))


# --- registration -----------------------------------------------------------------------------


def test_every_preset_is_registered_with_textarenas_wrappers():
    assert set(uta.ENV_IDS.values()) == set(PRESETS)
    for env_id, preset in uta.ENV_IDS.items():
        assert env_id in ENV_REGISTRY and f"{env_id}-raw" in ENV_REGISTRY and f"{env_id}-train" in ENV_REGISTRY
        for variant in (env_id, f"{env_id}-train"):  # TextArena's own games register both
            env = ta.make(variant)
            assert isinstance(env, ta.wrappers.ActionFormattingWrapper)
            assert isinstance(env.env, ta.wrappers.GameBoardObservationWrapper)
            assert isinstance(env.env.env, uta.UnoTextArenaEnv) and env.env.env.rules == parse_rules(preset)
        assert isinstance(ta.make(f"{env_id}-raw"), uta.UnoTextArenaEnv)
    uta.register_textarena()  # again: nothing changes, nothing raises
    assert sum(k.startswith(uta.BASE_ID) for k in ENV_REGISTRY) == 3 * len(PRESETS)


def test_a_train_id_plays_a_game():
    env = ta.make("UNO-v0-train")
    env.reset(num_players=2, seed=6)
    play(env, [ScriptedPlayer(0), ScriptedPlayer(1)])
    rewards, _ = env.close()
    assert sorted(rewards.values()) == [-1, 1] or set(rewards.values()) == {0}


# --- complete games ---------------------------------------------------------------------------


@pytest.mark.parametrize("num_players", [2, 4])
@pytest.mark.parametrize("env_id", sorted(uta.ENV_IDS))
def test_scripted_players_play_complete_games(env_id, num_players):
    env = ta.make(env_id)
    env.reset(num_players=num_players, seed=num_players)
    core = core_of(env)
    twin = Engine(1, num_players, core.rules, seed=num_players)
    moves, returns = play(env, [ScriptedPlayer(seed) for seed in range(num_players)], twin)
    rewards, game_info = env.close()
    # The game is the engine's: a twin stepped by the parsed replies ends in the same state.
    assert core.engine.game_state(0) == twin.game_state(0)
    assert bool(twin.terminated[0] or twin.truncated[0])
    assert rewards == returns
    winner = twin.game_state(0)["winner"]
    if winner is None:
        assert rewards == dict.fromkeys(range(num_players), 0)
        assert game_info[0]["reason"].startswith("round truncated")
    else:
        winners = winner if isinstance(winner, list) else [winner]
        assert rewards == {p: 1 if p in winners else -1 for p in range(num_players)}
        assert game_info[0]["reason"].startswith("round over: winner")
    assert sum(info["turn_count"] for info in game_info.values()) == moves
    assert not any(info["invalid_move"] for info in game_info.values())


def test_a_match_sums_the_rounds_rewards():
    rules = {"episode": "match", "target_points": 200}
    env = ta.make("UNO-v0", rules=rules)
    env.reset(num_players=2, seed=3)
    twin = Engine(1, 2, parse_rules(rules), seed=3)
    _, returns = play(env, [ScriptedPlayer(0), ScriptedPlayer(1)], twin)
    rewards, game_info = env.close()
    rounds = [ev for ev in core_of(env).engine.record_events(0) if ev["type"] == "round_end"]
    assert len(rounds) >= 2, "a match of one round tests nothing here: pick another seed"
    assert rewards == returns and "match over: winner" in game_info[0]["reason"]


def test_textarenas_llm_observation_wrapper_plays_a_game():
    env = ta.wrappers.ActionFormattingWrapper(ta.wrappers.LLMObservationWrapper(ta.make("UNO-v0-raw")))
    env.reset(num_players=3, seed=5)
    play(env, [ScriptedPlayer(seed) for seed in range(3)])
    rewards, _ = env.close()
    assert sorted(rewards.values()) == [-1, -1, 1] or set(rewards.values()) == {0}


def test_same_seed_same_game_and_reset_deals_anew():
    def transcript(env):
        env.reset(num_players=3, seed=11)
        agents = [ScriptedPlayer(seed) for seed in range(3)]
        lines, done = [], False
        while not done:
            player_id, messages = env.get_observation()  # the raw env: TextArena's message tuples
            board = [text for _, text, kind in messages if kind == ta.ObservationType.GAME_BOARD][-1]
            reply = agents[player_id](board)
            lines.append((player_id, reply))
            done, _ = env.step(reply)
        return lines, env.close()[0]

    env = ta.make("UNO-v0-house-raw")
    first = transcript(env)
    assert transcript(env) == first  # the same env, reset with the same seed
    assert transcript(ta.make("UNO-v0-house-raw")) == first


def textarena_section() -> str:
    """docs/llm.md's TextArena section."""
    page = (Path(__file__).resolve().parents[1] / "docs" / "llm.md").read_text()
    return page.split("## TextArena", 1)[1].split("\n## ", 1)[0]


def test_the_docs_example_plays_a_game(capsys):
    (code,) = [block for block in re.findall(r"```python\n(.*?)^```", textarena_section(), re.M | re.S)]
    exec(compile(code, "docs/llm.md", "exec"), {"__name__": "docs_example"})
    assert "round over: winner" in capsys.readouterr().out


def test_the_docs_inline_calls_run_as_written():
    # Every `ta.…(...)` the section's prose shows: a local endpoint's agent, make with settings.
    prose = re.sub(r"^```.*?^```", "", textarena_section(), flags=re.M | re.S).replace("\n", " ")
    calls = [c for c in re.findall(r"`([^`]+)`", prose) if c.startswith("ta.") and c.endswith(")")]
    assert any(c.startswith("ta.make(") for c in calls) and any("OpenAIAgent(" in c for c in calls), calls
    for call in calls:
        made = eval(call, {"ta": ta})  # builds only: an OpenAIAgent connects when first asked
        if call.startswith("ta.make("):
            made.reset(num_players=2, seed=0)
            assert core_of(made).history == 20 and core_of(made).rules.stack_draw_two


# --- what each seat is sent -------------------------------------------------------------------


def test_each_seat_sees_its_own_cards_only():
    env = ta.make("UNO-v0-raw")
    env.reset(num_players=4, seed=2)
    core = core_of(env)
    hands = core.engine.game_state(0)["hands"]
    for seat in range(4):
        messages = core.state.observations[seat]
        kinds = [kind for _, _, kind in messages]
        assert kinds[0] == ta.ObservationType.PROMPT
        assert messages[0][1].startswith(f"You are Player {seat} (seat {seat}) at a table of 4 players")
        deals = [text for _, text, _ in messages if "dealt" in text]
        own = [t for t in deals if t.startswith("you are dealt")]
        assert len(own) == 1 and len(own[0].split(", ")) == len(hands[seat])
        assert sum(t.endswith("is dealt 7 cards") for t in deals) == 3
    acting = int(core.engine.current_player[0])
    boards = {
        seat: [t for _, t, k in core.state.observations[seat] if k == ta.ObservationType.GAME_BOARD]
        for seat in range(4)
    }
    assert [seat for seat, b in boards.items() if b] == [acting]


# --- bad replies --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "reply, message",
    [
        ("", "is empty"),
        ("play purple 12", "names no legal move"),
        ("99", "there is no move 99"),
        ("TWO MOVES", "names more than one move"),
        (None, "a reply is text"),
        ("\u22121", "negative number"),  # a minus sign, not move 1
        ("\u20132", "negative number"),
        ("<think>" * 200_000, "characters, more than the 200,000 read"),
        ("<think>" * 5_000, "no answer after it"),
    ],
    ids=lambda v: repr(v)[:24],
)
def test_a_bad_reply_is_refused_and_changes_nothing(reply, message):
    env = ta.make("UNO-v0-raw", error_allowance=1)
    env.reset(num_players=4, seed=7)
    core = env
    seat = core.state.current_player_id
    before = core.engine.game_state(0)
    _, opening = env.get_observation()
    if reply == "TWO MOVES":
        (_, first), (_, second) = legal_lines(opening[-1][1])[:2]
        reply = f"{first} or {second}"
    done, _ = env.step(reply)
    assert not done and core.engine.game_state(0) == before
    player_id, messages = env.get_observation()
    assert player_id == seat
    admin = [text for _, text, kind in messages if kind == ta.ObservationType.GAME_ADMIN]
    board = [text for _, text, kind in messages if kind == ta.ObservationType.GAME_BOARD]
    assert len(admin) == 1 and message in admin[0] and "The legal moves: 1. " in admin[0]
    assert board[-1].startswith("That reply was refused: ") and message in board[-1]
    assert board[-1].endswith(engine_prompt(core.engine, 0, seat, core.names, core.history))
    # A good reply then plays as if the bad one had not been given.
    number = legal_lines(board[-1])[0][0]
    done, _ = env.step(number)
    assert core.engine.game_state(0) != before and core.state.game_info[seat]["invalid_move"] is False


def test_a_full_width_digit_plays_as_the_ascii_one():
    states = []
    for reply in ("1", "\uff11", "[\uff11]"):
        env = ta.make("UNO-v0-raw")
        env.reset(num_players=2, seed=3)
        assert env.step(reply) == (False, {})
        states.append(env.engine.game_state(0))
    assert states[0] == states[1] == states[2]


def test_bad_replies_past_the_allowance_forfeit_the_game():
    env = ta.make("UNO-v0", error_allowance=2)  # with TextArena's wrappers: the reply becomes "[...]"
    env.reset(num_players=4, seed=1)
    core = core_of(env)
    seat = core.state.current_player_id
    before = core.engine.game_state(0)
    for _ in range(2):
        assert env.step("I fold") == (False, {})
        assert core.engine.game_state(0) == before
        player_id, observation = env.get_observation()
        assert player_id == seat and "That reply was refused: the reply '[I fold]' names no legal move" in observation
    done, _ = env.step("I fold")
    assert done and core.engine.game_state(0) == before
    rewards, game_info = env.close()
    assert rewards == {p: -1 if p == seat else 0 for p in range(4)}
    assert game_info[seat]["invalid_move"] and "forfeits after 3 refused replies" in game_info[seat]["reason"]
    with pytest.raises(ValueError, match="the game is over: close"):
        env.step("1")


def test_no_allowance_forfeits_at_the_first_bad_reply():
    env = ta.make("UNO-v0-raw", error_allowance=0)
    env.reset(num_players=2, seed=0)
    seat = env.state.current_player_id
    assert env.step("blah")[0]
    # As TextArena's two-player games settle an invalid move (TwoPlayerState): the opponent wins.
    assert env.close()[0] == {seat: -1, 1 - seat: 1}


def test_a_two_player_forfeit_pays_what_textarenas_two_player_state_pays():
    ours = ta.make("UNO-v0-raw", error_allowance=0)
    ours.reset(num_players=2, seed=1)
    theirs = ta.TwoPlayerState(num_players=2, seed=1, error_allowance=0)
    theirs.reset()
    theirs.current_player_id = ours.state.current_player_id
    ours.step("blah")
    theirs.set_invalid_move(reason="blah")
    assert ours.close()[0] == theirs.rewards


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"history": 0}, r"history must be an integer in 1\.\.1024 \(events each prompt shows\), got 0"),
        ({"history": "all"}, "history must be an integer in 1..1024"),
        ({"history": 1025}, "history must be an integer in 1..1024"),
        ({"error_allowance": -1}, "error_allowance must be an integer >= 0"),
        ({"rules": "nope"}, "unknown preset 'nope'"),
    ],
)
def test_bad_settings_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        ta.make("UNO-v0", **kwargs)


def test_bad_calls_are_refused_and_leave_the_game_as_it_was():
    env = ta.make("UNO-v0-raw")
    with pytest.raises(ValueError, match=r"no game yet: call reset\(num_players=...\) first"):
        env.step("1")
    with pytest.raises(ValueError, match="no game yet"):
        env.get_observation()
    env.reset(num_players=3, seed=4)
    before, state = env.engine.game_state(0), env.state
    for kwargs, message in (
        ({"num_players": 1}, r"num_players must be an integer in 2\.\.10, got 1"),
        ({"num_players": 11}, r"num_players must be an integer in 2\.\.10, got 11"),
        ({"num_players": 3, "seed": "x"}, "seed"),
    ):
        with pytest.raises(ValueError, match=message):
            env.reset(**kwargs)
        assert env.engine.game_state(0) == before and env.state is state
    teams = ta.make("UNO-v0-raw", rules={"teams": True})
    with pytest.raises(ValueError, match="teams=True needs an even num_players of at least 4"):
        teams.reset(num_players=3)


# --- TextArena's own agent, against a scripted endpoint on the loopback -------------------------


class ScriptedEndpoint:
    """An OpenAI-compatible chat endpoint on 127.0.0.1 that answers from a script (each entry a
    reply text), then with a legal move of the prompt after some thinking, as "Final Answer: [N]"."""

    def __init__(self, script: list[str]) -> None:
        self.script, self.requests = list(script), 0
        self.rng = np.random.default_rng(0)
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                endpoint.requests += 1
                prompt = body["messages"][-1]["content"]
                if endpoint.script:
                    reply = endpoint.script.pop(0)
                else:
                    lines = legal_lines(prompt)
                    plays = [line for line in lines if line[1].startswith("play ")]
                    if plays and endpoint.rng.random() < 0.9:  # as ScriptedPlayer: games that end
                        lines = plays
                    number, _ = lines[int(endpoint.rng.integers(len(lines)))]
                    reply = f"Let me think about the colours.\nFinal Answer: [{number}]"
                data = json.dumps(
                    {
                        "id": f"chat-{endpoint.requests}",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body["model"],
                        "choices": [
                            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": reply}}
                        ],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.parametrize("num_players", [2, 4])
def test_textarenas_openai_agent_plays_through_a_loopback_endpoint(num_players, monkeypatch):
    for variable in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(variable, raising=False)
    endpoint = ScriptedEndpoint(["Let me see.\nFinal Answer: [play purple 12]"])
    start = len(CONNECTIONS)
    try:
        agent = AnswerTokenAgentWrapper(
            OpenAIAgent(model_name="scripted", api_key="unused", base_url=endpoint.base_url)
        )
        env = ta.make("UNO-v0-official")
        env.reset(num_players=num_players, seed=9)
        core = core_of(env)
        seat, observation = env.get_observation()
        assert env.step(agent(observation)) == (False, {})  # refused, one retry allowed
        assert "That reply was refused: the reply ': [play purple 12]' names no legal move" in env.get_observation()[1]
        play(env, [agent] * num_players)
        rewards, game_info = env.close()
    finally:
        endpoint.close()
    assert endpoint.requests > num_players
    assert {a[0] for a in CONNECTIONS[start:]} == {"127.0.0.1"}  # the guard saw the agent's requests
    assert not any(info["invalid_move"] for info in game_info.values())
    assert set(rewards.values()) <= {-1, 0, 1} and bool(core.engine.terminated[0] or core.engine.truncated[0])


def test_the_connection_guard_tells_the_loopback_from_the_rest():
    assert not is_loopback(("192.0.2.1", 443)) and not is_loopback(("example.org", 443))
    assert is_loopback(("127.0.0.1", 80)) and is_loopback(("::1", 80, 0, 0)) and is_loopback("/tmp/socket")
