"""One live game with one outside seat (a person or a client) among agents: the host every front
end of ``uno_web`` shares (the browser table, ``uno-play`` in the terminal, ``uno-mcp``).

Agents are asked one at a time through ``uno_env.table.ask_one``; every refused request leaves the
game unchanged.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from agents.registry import agent_names, make_agent, parse_spec, remote_agent
from uno_env import Engine, UnoRules, checks, describe_event, parse_rules, redact
from uno_env.checks import is_int
from uno_env.policy import history_length_of
from uno_env.rules import MAX_PLAYERS, PRESETS, check_num_players
from uno_env.table import ask_one
from uno_env.text import BadReply, legal_moves, parse_reply

__all__ = [
    "HINT_ROLLOUTS",
    "MAX_HINT_ROLLOUTS",
    "MAX_MOVE_CHARS",
    "MAX_SPEC_CHARS",
    "STATUS",
    "Session",
    "SessionError",
    "brief",
    "build_agents",
    "owner_agents",
    "check_int",
    "check_seed",
    "offered_agents",
    "read_rules",
    "seat_names",
    "shown",
]

HINT_ROLLOUTS = 256  # the hint's default budget: a fraction of a second per decision
MAX_HINT_ROLLOUTS = 4096
# The longest move name is a few dozen characters: a longer move text is refused before any parser reads it.
MAX_MOVE_CHARS = 200
MAX_SPEC_CHARS = 200  # a remote caller's agent name (search:20ms, a label), refused longer before the registry reads it

STATUS = {"invalid": 422, "conflict": 409, "unknown": 404, "full": 503, "too_large": 413, "malformed": 400}
"""The HTTP status the web answers for each ``SessionError.kind``."""


class SessionError(ValueError):
    """A refused request: the message says what was wrong and what is allowed; ``kind`` is one of
    ``STATUS``'s keys (``invalid`` argument, ``conflict`` with the game's state, ``unknown`` id,
    ``full`` store, ``too_large`` body, ``malformed`` id)."""

    def __init__(self, message: str, kind: str = "invalid") -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind


def shown(value: Any, limit: int = 80) -> str:
    """``repr(value)`` cut to ``limit`` characters: a refusal quotes what came from outside, briefly."""
    text = repr(value[: limit + 1] if isinstance(value, str | list) else value)  # a huge text is not copied whole
    return text if len(text) <= limit else text[: limit - 1] + "…"


def brief(message: str, limit: int = 1000) -> str:
    """``message`` cut to ``limit`` characters: a refusal that quotes what was sent stays short."""
    return message if len(message) <= limit else message[: limit - 1] + "…"


def check_int(name: str, value: Any, low: int, high: int | None = None) -> int:
    """``uno_env.checks.check_int`` for input from outside: a ``SessionError`` that names the type
    of what came instead of an integer (a JSON number without fraction; never a bool)."""
    if not is_int(value):
        raise SessionError(f"{name} must be an integer, got {type(value).__name__} {shown(value)}")
    try:
        return checks.check_int(name, value, low, high)
    except ValueError as exc:
        raise SessionError(str(exc)) from None


def check_seed(name: str, value: Any) -> int | None:
    """A caller's seed: None (a random deal) or an integer in 0..2**63-1, else ``SessionError``."""
    if value is None:
        return None
    if not is_int(value):
        raise SessionError(f"{name} must be an integer, got {type(value).__name__} {shown(value)}")
    if not 0 <= value < 2**63:
        raise SessionError(f"{name} must be an integer in 0..2**63-1, got {value}")
    return int(value)


def read_rules(value: Any, *, remote: bool = True, name: str = "rules") -> UnoRules:
    """A caller's rules (a ``UnoRules``, a preset name, JSON text or a dict of options over
    classic) parsed once; ``SessionError`` saying what is allowed. ``remote``: text is capped at
    ``MAX_SPEC_CHARS`` before it is parsed."""
    if isinstance(value, UnoRules):
        return value
    allowed = f"{name} is a preset name ({', '.join(PRESETS)}) or JSON options over classic"
    if not isinstance(value, str | dict):
        raise SessionError(f"{allowed}, got {shown(value)}")
    if remote and isinstance(value, str) and len(value) > MAX_SPEC_CHARS:
        raise SessionError(f"{allowed}; got {len(value)} characters starting {shown(value, 40)}", "too_large")
    try:
        return parse_rules(value)
    except (ValueError, TypeError) as exc:
        raise SessionError(brief(f"{name}: {exc}")) from None


def seat_names(labels: Sequence[str], seat: int) -> list[str]:
    """The names of a table's seats: ``you`` for the outside ``seat`` (every text view says "you" for
    the viewer's seat), ``LABEL (seat s)`` for the others."""
    return ["you" if s == seat else f"{label} (seat {s})" for s, label in enumerate(labels)]


def offered_agents(extra: Mapping[str, Any] | None = None) -> str:
    """The agent names a remote caller may give: the registry's and the owner's labels (``extra``)."""
    return ", ".join([*agent_names(), *(extra or {})])


def owner_agents(specs: Sequence[str]) -> dict[str, Any]:
    """The agents of ``--agent LABEL=SPEC`` options, by label (any ``make_agent`` spec: the owner's
    command line is trusted); ``ValueError`` for a spec without a label or a label taken."""
    extra: dict[str, Any] = {}
    for spec in specs:
        label = parse_spec(spec).label
        if label is None:
            raise ValueError(
                f"--agent takes LABEL=SPEC (mine=runs/x/model.zip, mine=my_agent.py:MyAgent), got {spec!r}"
            )
        if label in extra or label in agent_names():
            raise ValueError(f"--agent label {label!r} is given twice or names a built-in agent")
        # Loaded for any table: each new game checks the model's card against its own rules and size.
        extra[label] = make_agent(spec, UnoRules.preset("classic"), allow_other_table=True)
    return extra


def build_agents(
    specs: Sequence[Any],
    rules: UnoRules,
    num_players: int,
    seat: int,
    *,
    remote: bool = True,
    extra: Mapping[str, Any] | None = None,
    allow_other_table: bool = False,
    what: str = "agents",
) -> tuple[list[Any], list[str]]:
    """One agent per seat but ``seat`` (None there) and each seat's label, from one spec for every
    other seat or one per other seat, clockwise from the outside seat's left.

    ``remote``: only ``remote_agent`` names or ``extra``'s labels; else any ``make_agent`` spec."""
    others = num_players - 1
    specs = list(specs)
    if len(specs) == 1:
        specs = specs * others
    if len(specs) != others:
        raise SessionError(
            f"{what} needs 1 name (for every other seat) or {others} names (one per other seat, clockwise from "
            f"your left) for {num_players} players, got {len(specs)}"
        )
    extra = extra or {}
    agents: list[Any] = [None] * num_players
    labels = ["you"] * num_players
    for k, s in enumerate(p for p in range(num_players) if p != seat):
        spec = specs[k]
        if not isinstance(spec, str):
            raise SessionError(f"an agent is a name, got {type(spec).__name__} {shown(spec)}")
        if remote and len(spec) > MAX_SPEC_CHARS:
            raise SessionError(
                f"an agent's name is at most {MAX_SPEC_CHARS} characters, got {len(spec)} starting {shown(spec, 40)}"
            )
        try:
            if spec.strip() in extra:
                agent = extra[spec.strip()]
            elif remote:
                agent = remote_agent(spec, rules, num_players)
            else:
                agent = make_agent(spec, rules, num_players=num_players, allow_other_table=allow_other_table)
        except ValueError as exc:
            also = f"; this server also offers {', '.join(extra)}" if extra else ""
            raise SessionError(f"{exc}{also}") from None
        check_table = getattr(agent, "check_table", None)  # a saved model knows its table (its card)
        if check_table is not None and not allow_other_table:
            try:
                check_table(rules, num_players)
            except ValueError as exc:
                raise SessionError(f"agent {shown(spec)}: {exc}") from None
        size = getattr(agent, "num_players", None)  # a trained policy may know its table size
        if is_int(size) and size != num_players and not allow_other_table:
            raise SessionError(f"agent {shown(spec)} was trained for {size} players; this table has {num_players}")
        agents[s] = agent
        labels[s] = str(getattr(agent, "name", spec.strip()))
    return agents, labels


# A reply that is only a number (maybe signed, with any dash or minus sign, or with a fraction) is a
# move number or nothing; digits are ASCII, as the chat parser reads them (uno_env.text).
_NUMBER = re.compile(r"\s*[-+\u2010-\u2015\u2212\u2043\ufe58\ufe63\uff0b\uff0d]?[0-9]+(\.[0-9]*)?\s*")


class Session:
    """One game: the outside ``seat`` among ``agents`` (one per seat, None at ``seat``) in a recorded ``Engine``.

    ``Session.open`` reads a caller's values; the constructor takes them checked and typed.
    ``max_actions`` (None: the rules' own limits only) stops the game after that many actions."""

    def __init__(
        self,
        rules: UnoRules,
        seat: int,
        agents: Sequence[Any],
        labels: Sequence[str] | None = None,
        seed: int | None = None,
        max_actions: int | None = None,
        hints: bool = False,
    ) -> None:
        self.rules = rules
        n = len(agents)
        self.num_players = n
        self.seat = seat
        self.agents = list(agents)
        self.names = seat_names(list(labels) if labels is not None else ["agent"] * n, self.seat)
        self.seed = seed
        self.max_actions = max_actions
        self._hinter: tuple[int, Any] | None = None
        if hints:
            self._hinter = (HINT_ROLLOUTS, remote_agent(f"search:{HINT_ROLLOUTS}", self.rules, n))
        readers = [a for a in self.agents if a is not None] + ([self._hinter[1]] if self._hinter else [])
        history = max((history_length_of(a) for a in readers), default=0)
        try:
            self.engine = Engine(1, n, self.rules, seed=seed, record=True, history=history)
        except ValueError as exc:  # e.g. more cards dealt than the deck holds
            raise SessionError(f"cannot deal this table: {exc}") from None
        self.rng = np.random.default_rng(seed)
        self.moves = 0
        self.last_action = -1  # the last action taken (every action is public)
        self.event_count = 0
        self.winners: list[int] = []
        self.eliminated = False  # the outside seat is out of an elimination match: the game is over for it
        self.sync()

    @classmethod
    def open(
        cls,
        rules: Any,
        seat: Any,
        opponents: Any,
        num_players: Any = None,
        *,
        seed: Any = None,
        remote: bool = True,
        extra: Mapping[str, Any] | None = None,
        allow_other_table: bool = False,
        table_rules: Callable[[UnoRules], None] | None = None,
        names: Mapping[str, str] | None = None,
        max_actions: int | None = None,
        hints: bool = False,
    ) -> Session:
        """A game from a caller's values, each checked here once: ``num_players`` (None: one more than
        the ``opponents``), ``seat``, ``seed``, ``rules`` (``read_rules``, then the front end's own
        ``table_rules``) and the ``opponents`` (``build_agents``). ``names``: how the caller spells
        ``num_players``, ``seat``, ``seed``, ``rules`` and ``opponents``, for its refusals."""
        name = {k: k for k in ("num_players", "seat", "seed", "rules", "opponents")} | dict(names or {})
        if num_players is None:
            if (
                not isinstance(opponents, list)
                or not 1 <= len(opponents) <= MAX_PLAYERS - 1
                or not all(isinstance(o, str) for o in opponents)
            ):
                raise SessionError(
                    f"{name['opponents']} is a list of 1 to {MAX_PLAYERS - 1} agent names ({offered_agents(extra)}, or "
                    f"search:N), got {shown(opponents)}"
                )
            num_players = len(opponents) + 1
        try:
            n = check_num_players(num_players, name["num_players"])
        except ValueError as exc:
            raise SessionError(str(exc)) from None
        seat = check_int(name["seat"], seat, 0, n - 1)
        seed = check_seed(name["seed"], seed)
        parsed = read_rules(rules, remote=remote, name=name["rules"])
        if table_rules is not None:
            table_rules(parsed)
        agents, labels = build_agents(
            opponents,
            parsed,
            n,
            seat,
            remote=remote,
            extra=extra,
            allow_other_table=allow_other_table,
            what=name["opponents"],
        )
        return cls(parsed, seat, agents, labels, seed, max_actions=max_actions, hints=hints)

    @property
    def at_limit(self) -> bool:
        """Whether the game stopped at ``max_actions`` before the rules ended it."""
        ended = bool(self.engine.terminated[0] or self.engine.truncated[0])
        return self.max_actions is not None and self.moves >= self.max_actions and not ended

    @property
    def over(self) -> bool:
        """Whether the episode (round, or match with ``episode='match'``) ended, the game hit ``max_actions``,
        or the outside seat was eliminated (the others' play is not run for nobody to watch)."""
        return bool(self.engine.terminated[0] or self.engine.truncated[0]) or self.at_limit or self.eliminated

    @property
    def to_act(self) -> int | None:
        """The seat to act; None once over."""
        return None if self.over else int(self.engine.current_player[0])

    @property
    def your_turn(self) -> bool:
        """Whether the outside seat is to act."""
        return self.to_act == self.seat

    def legal_actions(self) -> list[int]:
        """The outside seat's legal action ids (empty when it is not to act)."""
        return [int(a) for a in np.flatnonzero(self.engine.legal_mask[0])] if self.your_turn else []

    def moves_list(self) -> list[Any]:
        """The outside seat's legal moves as numbered ``uno_env.text.Move`` records (empty when not to act)."""
        if not self.your_turn:
            return []
        return legal_moves(self.engine.legal_mask[0], self.seat, self.num_players, self.names)

    def sync(self) -> list[dict[str, Any]]:
        """Read the record events the last action added (unredacted: host only); returns them."""
        new = self.engine.record_events(0, self.event_count)
        for ev in new:
            if "winners" in ev:  # a round_end or match_end (the event table gives them that field)
                self.winners = list(ev["winners"])
            elif ev["type"] == "eliminated" and ev["player"] == self.seat:
                self.eliminated = True
        self.event_count += len(new)
        return new

    def reset(self) -> None:
        """A new deal (the next round of ``uno-play --games``): a fresh record, the same agents."""
        self.engine.reset()
        self.moves, self.last_action, self.event_count, self.winners = 0, -1, 0, []
        self.eliminated = False
        self.sync()

    def check_running(self) -> None:
        """``SessionError`` (conflict) once the game is over."""
        if self.at_limit:
            raise SessionError(f"the game stopped at this table's limit of {self.max_actions} actions", "conflict")
        if self.eliminated:
            raise SessionError("the game is over for you: your seat was eliminated from the match", "conflict")
        if self.over:
            raise SessionError("the game is over: start a new game (its record shows every hand)", "conflict")

    def step(self, action: int) -> list[dict[str, Any]]:
        """One legal action of the seat to act; the new record events (host only)."""
        self.engine.step(np.array([action], np.int64))
        self.moves += 1
        self.last_action = action
        return self.sync()

    def play(self, action: Any) -> list[dict[str, Any]]:
        """The outside seat's action id, checked against the legal mask; a refused one changes nothing."""
        self.check_running()
        if not self.your_turn:
            current = int(self.engine.current_player[0])
            raise SessionError(
                f"it is not your turn: seat {current} ({self.names[current]}) is to act; let the agents move",
                "conflict",
            )
        legal = self.legal_actions()
        if not is_int(action) or isinstance(action, bool) or int(action) not in legal:
            moves = self.moves_list()
            allowed = ", ".join(f"{m.action} ({m.label})" for m in moves)
            raise SessionError(f"action {shown(action)} is not legal now; legal actions: {allowed}")
        return self.step(int(action))

    def action_of(self, move: Any) -> int:
        """The action id a move names: its number (an int, 1..k, never a bool) or its name (text
        ``uno_env.text.parse_reply`` reads); ``SessionError`` saying what is allowed otherwise."""
        self.check_running()
        moves = self.moves_list()
        if not moves:
            raise SessionError("it is not your turn: let the agents move", "conflict")
        listed = "; the legal moves: " + ", ".join(f"{m.number}. {m.label}" for m in moves)
        if isinstance(move, bool) or not isinstance(move, int | str):
            raise SessionError(
                f"a move is its number (an integer 1..{len(moves)}) or its name, got "
                f"{type(move).__name__} {shown(move)}{listed}"
            )
        if isinstance(move, str) and len(move) > MAX_MOVE_CHARS:
            raise SessionError(
                f"a move is its number or its name, at most {MAX_MOVE_CHARS} characters; got {len(move)} "
                f"characters starting {shown(move, 40)}{listed}",
                "too_large",
            )
        if isinstance(move, str) and _NUMBER.fullmatch(move):
            if not move.strip().isdigit():
                raise SessionError(f"a move number is an integer 1..{len(moves)}, got {shown(move.strip())}{listed}")
            move = int(move)
        if isinstance(move, int):
            if not 1 <= move <= len(moves):
                raise SessionError(f"there is no move {move}: give a number 1..{len(moves)} or a name{listed}")
            return moves[move - 1].action
        try:
            return parse_reply(move, moves)
        except BadReply as exc:
            raise SessionError(str(exc)) from None

    def advance(self) -> int:
        """One agent's move (the seat to act when it is not the outside seat's); returns that seat."""
        self.check_running()
        seat = int(self.engine.current_player[0])
        if seat == self.seat:
            raise SessionError("it is your turn: make one of the legal moves", "conflict")
        self.step(ask_one(self.agents[seat], self.engine, 0, self.rng))
        return seat

    def run_agents(
        self,
        max_decisions: int | None = None,
        max_seconds: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> list[int]:
        """The agents move until the outside seat's turn or the end, or until ``max_decisions`` were
        made or ``max_seconds`` have passed (no decision is begun after that); the seats that moved."""
        moved: list[int] = []
        start = clock()
        while not self.over and not self.your_turn:
            if max_decisions is not None and len(moved) >= max_decisions:
                break
            if max_seconds is not None and moved and clock() - start >= max_seconds:
                break
            moved.append(self.advance())
        return moved

    @property
    def agents_to_move(self) -> bool:
        """Whether the game runs and another seat than the outside one is to act."""
        return not self.over and not self.your_turn

    def events(self, since: int = 0, limit: int | None = None) -> list[dict[str, Any]]:
        """The game's record events from number ``since`` (at most ``limit``) as the outside seat saw
        them (``uno_env.redact``), each with its line of ``text`` (``describe_event``)."""
        stop = self.event_count if limit is None else min(self.event_count, since + limit)
        out = []
        for ev in self.engine.record_events(0, since)[: max(0, stop - since)]:
            seen = redact(ev, self.seat, self.rules.open_hands)
            seen["text"] = describe_event(seen, self.seat, self.names)
            out.append(seen)
        return out

    def record(self) -> dict[str, Any]:
        """The finished game's record (it shows every hand, so never while the game runs)."""
        if not self.over:
            raise SessionError(
                "the record of a game is given only once the game is over (it shows every hand)", "conflict"
            )
        return self.engine.record(0)

    def hint(self, rollouts: int = HINT_ROLLOUTS, rng: np.random.Generator | None = None) -> int:
        """The fair search's move for the outside seat (``search:ROLLOUTS`` from the registry, asked
        with ``act_in`` on this engine: it re-deals what the seat cannot see); the game is unchanged."""
        self.check_running()
        if not self.your_turn:
            raise SessionError("a hint is given on your turn only: let the agents move", "conflict")
        rollouts = check_int("rollouts", rollouts, 1, MAX_HINT_ROLLOUTS)
        if self._hinter is None or self._hinter[0] != rollouts:
            self._hinter = (rollouts, remote_agent(f"search:{rollouts}", self.rules, self.num_players))
        rng = rng if rng is not None else np.random.default_rng([self.seed or 0, self.moves])
        return ask_one(self._hinter[1], self.engine, 0, rng)
