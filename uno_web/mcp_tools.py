"""The tools of ``uno-mcp`` as the ``mcp`` SDK sees them: one method of ``UnoTools`` per tool, over
the games of a ``uno_web.mcp_games.UnoGames``.

Imported only where the SDK is installed (``uno_web.mcp.build_server`` imports it): the SDK reads
the methods' annotations, the SDK's ``Context`` among them, at run time.
"""

# No ``from __future__ import annotations``: the SDK reads the tools' annotations at run time.
from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from pydantic import BaseModel, ConfigDict, Field

from agents.registry import REMOTE_LIMITS
from uno_env.rules import MAX_PLAYERS, PRESETS

from .mcp_games import MAX_RECORD_PAGE, UnoGames
from .session import HINT_ROLLOUTS, MAX_HINT_ROLLOUTS, MAX_MOVE_CHARS, SessionError, brief, shown

__all__ = ["TOOLS", "UnoTools"]

TOOLS = ("new_game", "view", "legal_moves", "play", "resume", "hint", "record", "rules", "end_game")
"""The tools, in the order a client lists them: the names of ``UnoTools``' methods."""


class LegalMove(BaseModel):
    number: int
    action: int
    name: str


class GameState(BaseModel):
    game_id: str
    seat: int
    players: list[str]
    done: bool
    eliminated: bool
    others_to_move: bool
    winners: list[int]
    truncated: bool
    rewards: list[float]
    scores: list[int]
    your_turn: bool
    to_act: int | None
    legal_moves: list[LegalMove]
    moves_played: int
    event_count: int
    view: str


class Hint(BaseModel):
    number: int
    action: int
    name: str
    rollouts: int


class RecordPage(BaseModel):
    events: list[dict[str, Any]]
    since: int
    next: int | None
    total: int


def _arg(description: str, schema: dict[str, Any]) -> Any:
    """An argument the SDK passes as sent (``UnoGames`` checks it, with messages of its own),
    described by ``schema`` and ``description`` for the client; ``{offered}`` and ``{budget}`` in
    ``description`` are filled per server (``UnoTools.words``)."""
    return Field(description=description, json_schema_extra=schema)


GameId = Annotated[Any, _arg("the game's id, as new_game gave it", {"type": "string"})]
Rules = Annotated[
    Any,
    _arg(
        f"a preset name ({', '.join(PRESETS)}) or a JSON object of rule options over classic",
        {"anyOf": [{"type": "string"}, {"type": "object"}]},
    ),
]
Opponents = Annotated[
    Any,
    _arg(
        f'one registry agent per other seat, 1 to {MAX_PLAYERS - 1} (e.g. ["heuristic", "random"]): '
        "{offered}, or a {budget}",
        {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": MAX_PLAYERS - 1},
    ),
]
Seat = Annotated[Any, _arg("your seat, 0 .. number of opponents (seats run clockwise)", {"type": "integer"})]
Seed = Annotated[Any, _arg("seed of the deal and of the agents, an integer >= 0", {"type": "integer"})]
MoveArg = Annotated[
    Any,
    _arg(
        "one legal move: its number (an integer from 1, as listed) or its name (e.g. 'play red 7', 'draw'), "
        f"at most {MAX_MOVE_CHARS} characters",
        {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "string", "maxLength": MAX_MOVE_CHARS}]},
    ),
]
Rollouts = Annotated[
    Any,
    _arg(
        f"the search's play-outs, 1..{MAX_HINT_ROLLOUTS} (more is stronger and slower)",
        {"type": "integer", "minimum": 1, "maximum": MAX_HINT_ROLLOUTS},
    ),
]
Since = Annotated[Any, _arg("the first event number wanted (from 0)", {"type": "integer", "minimum": 0})]
Limit = Annotated[Any, _arg(f"at most this many events, 1..{MAX_RECORD_PAGE}", {"type": "integer", "minimum": 1})]


def _owner(ctx: Context) -> str | None:
    """The MCP session of a call (streamable HTTP with a handshake), set by the transport, not the client; else None."""
    connection = getattr(ctx.request_context.session, "_connection", None)  # the SDK keeps it private
    return getattr(connection, "session_id", None)


def _refusing(method: Callable[..., Any], *args: Any) -> Any:
    try:
        return method(*args)
    except SessionError as exc:  # the SDK shows a ToolError's message to the model
        raise ToolError(brief(str(exc), 2000)) from exc


class StrictTool(Tool):
    """A tool that refuses, in plain words, an argument it does not name (a misspelled ``seed`` is
    not ignored) or a required one left out, before the SDK's validation words it."""

    async def run(self, arguments: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        names = list(self.parameters["properties"])
        takes = f"{self.name} takes {', '.join(names)}" if names else f"{self.name} takes no arguments"
        unknown = [k for k in arguments if k not in names]
        if unknown:
            quoted = ", ".join(shown(k, 40) for k in unknown[:5]) + (", …" if len(unknown) > 5 else "")
            raise ToolError(f"unknown argument{'s' if len(unknown) > 1 else ''} {quoted}: {takes}")
        missing = [k for k in self.parameters.get("required", []) if k not in arguments]
        if missing:
            raise ToolError(f"{self.name} needs {', '.join(missing)}: {takes}")
        return await super().run(arguments, *args, **kwargs)


class UnoTools:
    """The MCP tools over ``games``: each method is one tool (its docstring the description the
    client reads, ``{...}`` filled from ``words``), each refusal a ``ToolError``."""

    def __init__(self, games: UnoGames) -> None:
        self.games = games
        budget = (
            f"search with a budget up to {REMOTE_LIMITS['max_iterations']} rollouts or "
            f"{REMOTE_LIMITS['max_ms']:g} ms (search:256, search:20ms)"
        )
        self.words = {
            "offered": games.offered(),
            "budget": budget,
            "call_budget": (
                f"at most {games.call_decisions} of their decisions per call, none begun after "
                f"{games.call_seconds:g} s; when others_to_move is true, call resume"
            ),
        }

    def tools(self) -> list[Tool]:
        """Every tool of ``TOOLS``, strict about its arguments."""
        return [self._strict(getattr(self, name)) for name in TOOLS]

    def _strict(self, method: Callable[..., Any]) -> Tool:
        tool = StrictTool.from_function(method, description=(method.__doc__ or "").format(**self.words))
        base = tool.fn_metadata.arg_model
        tool.fn_metadata.arg_model = type(
            f"{tool.name} arguments", (base,), {"model_config": ConfigDict(**base.model_config, extra="forbid")}
        )
        tool.parameters["additionalProperties"] = False
        for schema in tool.parameters["properties"].values():
            schema["description"] = schema["description"].format(**self.words)
        return tool

    def instructions(self) -> str:
        """What the server tells a client it is for."""
        return (
            "Play UNO: new_game seats you against registry agents; view shows your seat and numbers your legal "
            "moves; play takes one move by number or name; resume lets the others go on when a call's budget "
            "left them still to move; rules explains the rules; hint asks a fair search. "
            f"Opponents: {self.words['offered']}, or a {self.words['budget']}"
        )

    def new_game(
        self, ctx: Context, opponents: Opponents = None, rules: Rules = "classic", seat: Seat = 0, seed: Seed = 0
    ) -> GameState:
        """Deal a game: you at `seat`, one registry agent per other seat; they play until your turn ({call_budget})."""
        return GameState(**_refusing(self.games.new_game, opponents, rules, seat, seed, _owner(ctx)))

    def view(self, ctx: Context, game_id: GameId) -> GameState:
        """Your seat's state: done, winners, points, the numbered legal moves and the text view."""
        return GameState(**_refusing(self.games.view, game_id, _owner(ctx)))

    def legal_moves(self, ctx: Context, game_id: GameId) -> list[LegalMove]:
        """Your legal moves: number, action id and name (none when it is not your turn)."""
        return [LegalMove(**m) for m in _refusing(self.games.legal_moves, game_id, _owner(ctx))]

    def play(self, ctx: Context, game_id: GameId, move: MoveArg) -> GameState:
        """Play one legal move, by its number or its name; the opponents answer ({call_budget}); your new state."""
        return GameState(**_refusing(self.games.play, game_id, move, _owner(ctx)))

    def resume(self, ctx: Context, game_id: GameId) -> GameState:
        """Let the other seats go on moving when a call left them still to move ({call_budget})."""
        return GameState(**_refusing(self.games.resume, game_id, _owner(ctx)))

    def hint(self, ctx: Context, game_id: GameId, rollouts: Rollouts = HINT_ROLLOUTS) -> Hint:
        """The fair search's suggested move for your seat (it reads only what you see)."""
        return Hint(**_refusing(self.games.hint, game_id, rollouts, _owner(ctx)))

    def record(self, ctx: Context, game_id: GameId, since: Since = 0, limit: Limit = 100) -> RecordPage:
        """A page of the game's events as your seat saw them, each with a line of text; `next` pages on."""
        return RecordPage(**_refusing(self.games.record, game_id, since, limit, _owner(ctx)))

    def rules(self, rules: Rules = "classic") -> str:
        """The rules of a preset or option set, in words: the goal, the classic rules, what differs."""
        return str(_refusing(self.games.rules, rules))

    def end_game(self, ctx: Context, game_id: GameId) -> str:
        """Forget a game."""
        return str(_refusing(self.games.end_game, game_id, _owner(ctx)))
