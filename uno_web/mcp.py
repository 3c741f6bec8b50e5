"""``uno-mcp``: an MCP server that seats a language-model client at an UNO table.

The client starts a game against registry agents (``agents.registry``) under any rules, reads
its seat's text view (``uno_env.text``), lists its legal moves, plays one and reads the round's
record as its seat saw it. The opponents play between the client's turns. A bad call (an unknown
game, a move that is not legal, a finished game, bad settings) is refused with what was wrong
and what is allowed, and changes nothing.

| tool | what it does |
|---|---|
| ``new_game(opponents, rules, seat, seed)`` | deals a game: the client at ``seat``, one registry agent per other seat; the opponents play until the client's turn; the game's id and the view |
| ``view(game_id)`` | the seat's prompt: its view, the round so far, the numbered legal moves |
| ``legal_moves(game_id)`` | the legal moves: number, action id and name |
| ``play(game_id, move)`` | one move, by number or name (``uno_env.text.parse_reply``); the opponents answer; the new view |
| ``record(game_id)`` | the round's events as the seat saw them, each with its line of text |
| ``end_game(game_id)`` | forgets a game |

``UnoGames`` holds the games and does the work without the SDK; ``build_server`` wraps it in the
official ``mcp`` SDK's ``MCPServer`` (the ``mcp`` extra); ``main`` serves it over stdio.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from uno_env import Engine, describe_event, parse_rules, redact
from uno_env.checks import is_int
from uno_env.policy import history_length_of
from uno_env.table import Table
from uno_env.text import BadReply, engine_prompt, legal_moves, parse_reply

from .registry import REMOTE_LIMITS, agent_names, remote_agent

__all__ = ["MAX_GAMES", "UnoGames", "build_server", "main"]

MAX_GAMES = 64  # games kept at once; end_game frees one


class GameError(ValueError):
    """A call the server refuses: the message says what was wrong and what is allowed."""


@dataclass
class _Game:
    engine: Engine
    table: Table
    seat: int
    names: list[str]
    opponents: list[str] = field(default_factory=list)

    @property
    def over(self) -> bool:
        return bool(self.engine.terminated[0] or self.engine.truncated[0])


class UnoGames:
    """The games of one server (module table); each method raises ``GameError`` for a bad call."""

    def __init__(self) -> None:
        self.games: dict[str, _Game] = {}
        self._ids = itertools.count(1)

    def _game(self, game_id: Any) -> _Game:
        if game_id not in self.games:
            known = ", ".join(sorted(self.games)) or "none (start one with new_game)"
            raise GameError(f"no game {game_id!r}; the games are: {known}")
        return self.games[game_id]

    def new_game(
        self, opponents: list[str] | None = None, rules: Any = "classic", seat: int = 0, seed: int = 0
    ) -> dict[str, Any]:
        """Deal a game (module table); its id, the players and the seat's view."""
        if len(self.games) >= MAX_GAMES:
            raise GameError(f"{MAX_GAMES} games are open; end one with end_game first")
        opponents = ["heuristic"] if opponents is None else list(opponents)
        if not 1 <= len(opponents) <= 9 or not all(isinstance(o, str) for o in opponents):
            raise GameError(
                f"opponents is a list of 1 to 9 agent names ({', '.join(agent_names())}), got {opponents!r}"
            )
        n = len(opponents) + 1
        if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < n:
            raise GameError(f"seat must be an integer in 0..{n - 1} for {n} players, got {seat!r}")
        if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
            raise GameError(f"seed must be an integer >= 0, got {seed!r}")
        try:
            parsed = parse_rules(rules)
            # A tool call is untrusted: it names registry agents only, never a file, module or model.
            agents = [remote_agent(spec, parsed, n) for spec in opponents]
            history = max(history_length_of(a) for a in agents)
            engine = Engine(1, n, parsed, seed=seed, record=True, history=history)
        except ValueError as exc:
            raise GameError(str(exc)) from exc
        table = Table(engine, agents, [np.random.default_rng([seed, k]) for k in range(len(agents))])
        others = [s for s in range(n) if s != seat]
        table.seat_agent[0, others] = np.arange(len(agents))
        names = [f"player {seat}"] * n
        for k, s in enumerate(others):
            names[s] = f"{opponents[k]} (seat {s})"
        game = _Game(engine, table, seat, names, opponents)
        self._opponents_play(game)
        game_id = f"g{next(self._ids)}"
        self.games[game_id] = game
        return {"game_id": game_id, "seat": seat, "players": names, "view": self.view(game_id)}

    def _opponents_play(self, game: _Game) -> None:
        while not game.over and int(game.engine.current_player[0]) != game.seat:
            game.table.step()

    def view(self, game_id: str) -> str:
        """The seat's prompt (``uno_env.text.engine_prompt``), with the result once the game is over."""
        game = self._game(game_id)
        text = engine_prompt(game.engine, 0, game.seat, game.names)
        if game.over:
            text += "\n" + self._result(game)
        return text

    def _result(self, game: _Game) -> str:
        reward = float(game.engine.rewards[0, game.seat])
        if game.engine.truncated[0]:
            return "The game is over: it was cut off at the turn limit."
        return f"The game is over: you {'won' if reward > 0 else 'lost'}."

    def legal_moves(self, game_id: str) -> list[dict[str, Any]]:
        """The numbered legal moves of the seat (empty once the game is over)."""
        game = self._game(game_id)
        if game.over:
            return []
        moves = legal_moves(game.engine.legal_mask[0], game.seat, game.engine.num_players, game.names)
        return [{"number": m.number, "action": m.action, "name": m.label} for m in moves]

    def play(self, game_id: str, move: Any) -> str:
        """Play ``move`` (a number or a move's name); the opponents answer; the new view."""
        game = self._game(game_id)
        if game.over:
            raise GameError(f"game {game_id} is over: {self._result(game)} Start another with new_game")
        e = game.engine
        moves = legal_moves(e.legal_mask[0], game.seat, e.num_players, game.names)
        try:
            action = parse_reply(str(move) if is_int(move) else move, moves)
        except BadReply as exc:
            raise GameError(str(exc)) from exc
        e.step(np.array([action], np.int64))
        self._opponents_play(game)
        return self.view(game_id)

    def record(self, game_id: str) -> list[dict[str, Any]]:
        """The round's events as the seat saw them (``uno_env.redact``), each with its ``text``."""
        game = self._game(game_id)
        out = []
        for ev in game.engine.record_events(0):
            seen = redact(ev, game.seat, game.engine.rules.open_hands)
            seen["text"] = describe_event(seen, game.seat, game.names)
            out.append(seen)
        return out

    def end_game(self, game_id: str) -> str:
        """Forget a game."""
        self._game(game_id)
        del self.games[game_id]
        return f"game {game_id} ended"


def build_server(games: UnoGames | None = None) -> Any:
    """The MCP server (the official ``mcp`` SDK's ``MCPServer``) over ``games``."""
    try:
        from mcp.server.mcpserver import MCPServer
        from mcp.server.mcpserver.exceptions import ToolError
    except ImportError as exc:
        raise ImportError("uno-mcp needs the mcp SDK: pip install 'uno_env[mcp]'") from exc

    games = games if games is not None else UnoGames()
    server = MCPServer(
        "uno",
        instructions=(
            "Play UNO: new_game seats you against registry agents; view shows your seat and numbers your legal "
            "moves; play takes one move by number or name. Opponents: "
            + ", ".join(agent_names())
            + f" or a search with a budget up to {REMOTE_LIMITS['max_iterations']} rollouts or "
            f"{REMOTE_LIMITS['max_ms']:g} ms (search:256, search:20ms)"
        ),
    )

    def refusing(method: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return method(*args, **kwargs)
            except GameError as exc:  # the SDK shows a ToolError's message to the model
                raise ToolError(str(exc)) from exc

        return call

    @server.tool()
    def new_game(
        opponents: list[str] | None = None, rules: str = "classic", seat: int = 0, seed: int = 0
    ) -> dict[str, Any]:
        """Deal a game: you at `seat`, one registry agent per other seat (e.g. ["heuristic", "random"]);
        rules: a preset name (classic, official, swap_hands, house, rlcard) or JSON options over classic."""
        return refusing(games.new_game)(opponents, rules, seat, seed)

    @server.tool()
    def view(game_id: str) -> str:
        """Your seat's view: hand, table, the round so far and the numbered legal moves."""
        return refusing(games.view)(game_id)

    @server.tool()
    def legal_moves(game_id: str) -> list[dict[str, Any]]:
        """Your legal moves: number, action id and name."""
        return refusing(games.legal_moves)(game_id)

    @server.tool()
    def play(game_id: str, move: str | int) -> str:
        """Play one legal move, by its number or its name; the opponents answer; your new view."""
        return refusing(games.play)(game_id, move)

    @server.tool()
    def record(game_id: str) -> list[dict[str, Any]]:
        """The round's events as your seat saw them, each with a line of text."""
        return refusing(games.record)(game_id)

    @server.tool()
    def end_game(game_id: str) -> str:
        """Forget a game."""
        return refusing(games.end_game)(game_id)

    return server


def main() -> None:
    """``uno-mcp``: serve the tools over stdio (an MCP client launches it as a subprocess)."""
    build_server().run("stdio")


if __name__ == "__main__":
    main()
