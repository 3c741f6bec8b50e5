"""OpenSpiel games over the engine: ``python_uno`` and ``python_mini_uno`` (docs/openspiel.md).

Importing this module (it needs ``open_spiel``) registers both games with ``pyspiel.register_game``;
every move goes through ``Engine.step``."""

from __future__ import annotations

import copy
import dataclasses
import itertools
import json
from typing import Any

import numpy as np
import pyspiel

from .actions import ACTION_NAMES, DRAW, NUM_ACTIONS
from .cards import CARD_NAMES, NUM_CARD_TYPES, card_type
from .checks import is_int
from .engine import Engine
from .engine.events import EV_SHUFFLE_HANDS, EV_SWAP, EVENT_NAMES
from .engine.history import HISTORY_COUNTS_SIZE, HISTORY_OFFSETS, HISTORY_SIZE
from .engine.layout import MAX_HISTORY
from .observation import OBS_OFFSETS
from .rules import MAX_PLAYERS, MIN_PLAYERS, UnoRules, check_num_players, parse_rules
from .seat_view import observation_fields

__all__ = [
    "MINI_DEFAULTS",
    "UnoGame",
    "MiniUnoGame",
    "info_state_fields",
    "mini_history_bound",
    "mini_rules",
    "rules_from_parameters",
]

_FIELDS = dataclasses.fields(UnoRules)


def _option_parameters() -> dict[str, Any]:
    """One game parameter per ``UnoRules`` option (OpenSpiel parameters are bool, int, float or
    str): ``None`` becomes ``0`` for ``max_turns`` and ``""`` for the tables (JSON lists)."""
    out: dict[str, Any] = {}
    for f in _FIELDS:
        if f.name == "always_respond":
            continue  # forced on with stacking (R12.7)
        if f.name in ("card_points", "card_counts"):
            out[f.name] = ""
        elif f.name == "max_turns":
            out[f.name] = f.default
        else:
            out[f.name] = f.default
    return out


# The history rows of python_uno's information state tensor (``history`` parameter): a round
# with more events keeps its last ones there (its per-seat counts cover the whole round); the
# tensor is exact perfect recall for rounds of at most that many events.
UNO_HISTORY_DEFAULT = 256
_UNO_PARAMETERS = {
    "players": 2,
    "seed": -1,
    "rules": "classic",
    "history": UNO_HISTORY_DEFAULT,
    **_option_parameters(),
}


def rules_from_parameters(params: dict[str, Any]) -> tuple[UnoRules, int]:
    """The ``UnoRules`` and player count of ``python_uno``'s parameters (docs/openspiel.md, Parameters)."""
    base = parse_rules(params.get("rules", "classic")).to_dict()
    for f in _FIELDS:
        if f.name not in params or f.name == "always_respond":
            continue
        value = params[f.name]
        if f.name in ("card_points", "card_counts"):
            value = json.loads(value) if value else None
        elif f.name == "max_turns" and value == 0:
            value = None
        if value != f.default:
            base[f.name] = value
    base["always_respond"] = bool(base["stack_draw_two"] or base["stack_draw_four"])
    rules = UnoRules.from_dict(base)
    if rules.max_turns is None:
        raise ValueError("python_uno needs a turn limit (OpenSpiel games have a maximum length): max_turns >= 1")
    players = params.get("players", 2)
    return rules, check_num_players(players, "players")


# --- observations ----------------------------------------------------------------------------------


def observation_key(obs: np.ndarray) -> str:
    """The R11 observation as a short exact text (hex of its non-zero indices and values), for
    the information state: the same observation gives the same key."""
    nz = np.flatnonzero(obs)
    return nz.astype(np.uint16).tobytes().hex() + "/" + obs[nz].astype(np.float32).tobytes().hex()


def observation_string(obs: np.ndarray) -> str:
    """The R11 observation as text: each field's non-zero entries (exact: tabular algorithms key on it)."""
    parts = []
    for name, seg in observation_fields(obs).items():
        nz = np.flatnonzero(seg)
        if name == "open_hands":  # (R11)
            parts.append("open: " + ",".join(str(i) for i in nz))
        elif nz.size:
            if name in ("hand", "top_card", "discard_counts"):
                items = [CARD_NAMES[i] + ("" if seg[i] == 1 else f" x{seg[i]:g}") for i in nz]
            else:
                items = [str(i) if seg[i] == 1 else f"{i}={seg[i]:g}" for i in nz]
            parts.append(f"{name}: {', '.join(items)}")
    return "; ".join(parts)


# --- the information state tensor -------------------------------------------------------------------

_PRESENT = HISTORY_OFFSETS["present"]
_ACTOR = HISTORY_OFFSETS["actor"]
_KIND = HISTORY_OFFSETS["kind"]
_CARD = HISTORY_OFFSETS["card"]
_TARGET = HISTORY_OFFSETS["target"]
_HAND = OBS_OFFSETS["hand"]


def info_state_fields(obs_size: int, history: int) -> tuple[tuple[str, tuple[int, ...], str], ...]:
    """The information state tensor's fields: (name, shape, meaning), in order (docs/openspiel.md)."""
    return (
        (
            "deal_stage",
            (4,),
            "one-hot: no hand dealt, seat 0's hand dealt, both hands dealt (python_mini_uno's chance nodes "
            "before the top card), play started",
        ),
        ("draw_pending", (1,), "1 while a DRAW awaits its chance card (python_mini_uno)"),
        (
            "first_card",
            (NUM_CARD_TYPES,),
            "one-hot top card the history starts on: python_mini_uno's top-card chance outcome or the "
            "position of UnoState.set_game (all 0 in a dealt python_uno round: its flip is a history row)",
        ),
        (
            "observation",
            (obs_size,),
            "the seat's R11 observation (OBS_FIELDS); before python_mini_uno's top card only its hand field, "
            "the cards dealt to the seat",
        ),
        (
            "history_counts",
            (MAX_PLAYERS, HISTORY_COUNTS_SIZE),
            "per relative seat, counts over the round (HISTORY_COUNT_FIELDS)",
        ),
        (
            "history",
            (history, HISTORY_SIZE),
            "the round's events as the seat saw them, newest first; rows past the round's events are 0 (HISTORY_FIELDS); "
            "in a swap or shuffle_hands row that gave the seat a hand, card holds that hand (copies per card type)",
        ),
    )


def mini_history_bound(max_turns: int) -> int:
    """The most history rows a ``python_mini_uno`` round can hold (its tensor's rows).

    An action adds at most two rows (a play and an automatic UNO call, a draw and its reshuffle), and
    the round's end two more; the tests check the bound against every state."""
    return 2 * max_turns + 2


# --- the full game ---------------------------------------------------------------------------------

_UNO_TYPE = pyspiel.GameType(
    short_name="python_uno",
    long_name="Python UNO (uno_env engine)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.GENERAL_SUM,
    reward_model=pyspiel.GameType.RewardModel.REWARDS,
    max_num_players=MAX_PLAYERS,
    min_num_players=MIN_PLAYERS,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=_UNO_PARAMETERS,
)


class _Game(pyspiel.Game):
    """What both games share: the rules, one scratch engine, the observer."""

    rules: UnoRules
    players: int

    def _setup(self, rules: UnoRules, players: int, history: int, refusal: str = "") -> None:
        self.rules, self.players = rules, players
        self.history = history
        # One row more than the tensor holds: a present last row says the round outgrew it.
        self.engine = Engine(1, players, rules, seed=0, history=history + 1)
        self.obs_size = self.engine.observation_size
        self.loaded: bytes | None = None  # the snapshot the scratch engine holds now
        self.info_fields = info_state_fields(self.obs_size, history)
        self.info_offsets: dict[str, int] = {}
        at = 0
        for name, shape, _ in self.info_fields:
            self.info_offsets[name] = at
            at += int(np.prod(shape))
        self.info_size = at
        # Why this game's tensor cannot have perfect recall ("" when it can).
        self.info_refusal = refusal
        # Only these decks hold Swap Hands and Shuffle Hands, whose new hands no history row holds.
        self.hands_change = rules.deck != "classic"

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> _Observer:
        """The observer OpenSpiel's ``make_observation`` asks for (R11 view, or information state)."""
        if params:
            raise ValueError(f"observation parameters are not supported, got {params!r}")
        perfect_recall = bool(iig_obs_type is not None and iig_obs_type.perfect_recall)
        return _Observer(self, perfect_recall)


class UnoGame(_Game):
    """``python_uno``: the full game, every ``UnoRules`` option a parameter (docs/openspiel.md)."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        params = {**_UNO_PARAMETERS, **(params or {})}
        rules, players = rules_from_parameters(params)
        assert rules.max_turns is not None
        history = params["history"]
        if not isinstance(history, int) or not 1 <= history < MAX_HISTORY:
            raise ValueError(
                f"python_uno: history must be an integer in 1..{MAX_HISTORY - 1} (the information state "
                f"tensor's event rows), got {history!r}"
            )
        info = pyspiel.GameInfo(
            num_distinct_actions=NUM_ACTIONS,
            max_chance_outcomes=0,
            num_players=players,
            min_utility=-1.0 if rules.episode == "round" else -float(rules.max_turns),
            max_utility=1.0 if rules.episode == "round" else float(rules.max_turns),
            utility_sum=None,
            max_game_length=rules.max_turns,
        )
        super().__init__(_UNO_TYPE, info, params)
        refusal = ""
        if rules.episode == "match":
            refusal = "episode='match': the engine's history holds one round, so earlier rounds would be forgotten"
        self._setup(rules, players, history, refusal)
        seed = params["seed"]
        self._rng = np.random.default_rng(None if seed < 0 else seed)

    def get_rng_state(self) -> str:
        """The state of the generator that seeds the deals (OpenSpiel copies games with it)."""
        return json.dumps(self._rng.bit_generator.state)

    def set_rng_state(self, rng_state: str) -> None:
        """Restore ``get_rng_state``."""
        self._rng.bit_generator.state = json.loads(rng_state)

    def new_initial_state(self) -> UnoState:
        """A new deal (sampled chance: the game's generator seeds the engine's)."""
        return UnoState(self, int(self._rng.integers(0, 2**63)))


def _joined(view: Any) -> str:
    """The lines of a linked view, oldest first."""
    lines = []
    while view is not None:
        view, line = view
        lines.append(line)
    return "\n".join(reversed(lines))


class _Fields:
    """A state's data, every field immutable, so a clone shares them: OpenSpiel clones a Python
    state by deep-copying its ``__dict__``, and this one entry copies in one shallow step."""

    __slots__ = (
        "snap",
        "player",
        "over",
        "rewards",
        "returns",
        "views",
        "deal",
        "pending_draw",
        "first",
        "rows",
        "received",
    )

    def __init__(self, players: int) -> None:
        self.snap: bytes | None = None  # Engine.snapshot() as bytes
        self.player = int(pyspiel.PlayerId.CHANCE)
        self.over = False
        self.rewards = (0.0,) * players
        self.returns = (0.0,) * players
        # Each seat's information state as a linked list (earlier, line): a move adds a node in
        # O(1) and a clone shares the whole list; information_state_string joins it.
        self.views: tuple[Any, ...] = tuple((None, f"p{p}") for p in range(players))
        self.deal: tuple[tuple[int, ...], ...] = ()  # python_mini_uno: the hands dealt so far
        self.pending_draw = False  # python_mini_uno: a DRAW awaits its chance card
        self.first = -1  # the top card a position without a flip row started on (info_state_fields)
        # Swap Hands / Shuffle Hands decks: history rows of the round so far, and per seat the
        # hands it received, as (the row's index in the round, copies per card type).
        self.rows = 0
        self.received: tuple[tuple[tuple[int, tuple[int, ...]], ...], ...] = ((),) * players

    def __deepcopy__(self, memo: Any) -> _Fields:
        return copy.copy(self)


class _State(pyspiel.State):
    """A position kept as an ``Engine.snapshot`` plus each seat's view of the moves so far."""

    def __init__(self, game: _Game) -> None:
        super().__init__(game)
        self._s = _Fields(game.players)

    @property
    def _g(self) -> Any:
        # Not an attribute: OpenSpiel clones a Python state by deep-copying its __dict__.
        return self.get_game()

    # -- stepping over the engine --

    def _engine(self) -> Engine:
        """The game's scratch engine holding this position."""
        game = self._g
        engine = game.engine
        assert self._s.snap is not None
        if game.loaded is not self._s.snap:
            engine.restore(np.frombuffer(self._s.snap, np.uint8))
            game.loaded = self._s.snap
        return engine

    def _after_step(self, engine: Engine, token: str, seen_by: Any = None, stepped: bool = True) -> None:
        """Keep the engine's new position and add the move to each seat's view."""
        game = self._g
        self._s.snap = game.loaded = engine.snapshot().tobytes()
        # set_game and reset leave no reward; a scratch engine's rewards may be another state's.
        rewards = tuple(engine.rewards[0].tolist()) if stepped else (0.0,) * game.players
        self._s.rewards = rewards
        self._s.returns = tuple(a + b for a, b in zip(self._s.returns, rewards, strict=True))
        self._s.over = bool(engine.terminated[0] or engine.truncated[0])
        self._s.player = pyspiel.PlayerId.TERMINAL if self._s.over else int(engine.current_player[0])
        obs = [engine.observe(p)[0] for p in range(game.players)]
        if game.hands_change:
            self._note_received(engine, obs)
        hidden = token.split(":")[0] + ": ?"
        self._s.views = tuple(
            (view, (token if seen_by is None or p == seen_by else hidden) + " | " + observation_key(obs[p]))
            for p, view in enumerate(self._s.views)
        )

    def _note_received(self, engine: Engine, obs: list[np.ndarray]) -> None:
        """Keep the hand each seat holds after a step that swapped or shuffled hands: its
        observation shows it then, and no history row does."""
        n = self._g.players
        rows, _ = engine.history(0)
        total = int(rows[0, :, _PRESENT].sum())
        new, self._s.rows = total - self._s.rows, total
        received = list(self._s.received)
        for j in range(max(new, 0)):
            kind = int(np.argmax(rows[0, j, _KIND : _KIND + len(EVENT_NAMES)]))
            if kind == EV_SWAP:
                actor = int(np.argmax(rows[0, j, _ACTOR : _ACTOR + MAX_PLAYERS]))
                seats = {actor, int(np.argmax(rows[0, j, _TARGET : _TARGET + MAX_PLAYERS]))}
            elif kind == EV_SHUFFLE_HANDS:
                seats = set(range(n))
            else:
                continue
            for p in seats:
                hand = tuple(int(x) for x in obs[p][_HAND : _HAND + NUM_CARD_TYPES])
                received[p] = (*received[p], (total - 1 - j, hand))
        self._s.received = tuple(received)

    def position_engine(self) -> Engine:
        """The scratch engine holding this position in game 0, for an ``act_in`` agent (it may change it)."""
        engine = self._engine()
        self._g.loaded = None
        return engine

    def _step(self, action: int) -> None:
        engine = self._engine()
        player = self._s.player
        engine.step(np.array([action], np.int64))
        self._after_step(engine, f"p{player} {ACTION_NAMES[action]}")

    # -- the pyspiel.State API --

    def current_player(self) -> int:
        """Seat to act, CHANCE, or TERMINAL."""
        return pyspiel.PlayerId.TERMINAL if self._s.over else self._s.player

    def _legal_actions(self, player: int) -> list[int]:
        """The engine's legal mask for the seat to act (R2)."""
        if self._s.over or player != self._s.player:
            return []
        return np.flatnonzero(self._engine().legal_mask[0]).tolist()

    def _action_to_string(self, player: int, action: int) -> str:
        """Name of an action id (R2), or of a chance outcome."""
        if player == pyspiel.PlayerId.CHANCE:
            return self._chance_name(action)
        return ACTION_NAMES[action]

    def _chance_name(self, outcome: int) -> str:
        raise NotImplementedError

    def is_terminal(self) -> bool:
        """Whether the round (or match) is over, by the rules or the turn limit."""
        return self._s.over

    def returns(self) -> list[float]:
        """Rewards summed so far (R8: +1 each winner, -1 each other seat when a round ends)."""
        return list(self._s.returns)

    def rewards(self) -> list[float]:
        """Rewards of the last move."""
        return list(self._s.rewards)

    def information_state_string(self, player: int | None = None) -> str:
        """Every move so far as this seat saw it, each with the seat's R11 observation after it."""
        p = self._s.player if player is None else player
        return _joined(self._s.views[p])

    def _seat(self, player: int | None) -> int:
        """The seat asked about: ``player``, or the seat to act when None."""
        p = self._s.player if player is None else player
        if not is_int(p) or not 0 <= p < self._g.players:
            raise ValueError(f"player must be a seat in 0..{self._g.players - 1}, got {p!r}")
        return int(p)

    def information_state_tensor(self, player: int | None = None) -> list[float]:
        """The seat's information state as numbers (``info_state_fields``, docs/openspiel.md)."""
        out = np.zeros(self._g.info_size, np.float32)
        self.write_information_state(self._seat(player), out)
        return out.tolist()

    def write_information_state(self, player: int, out: np.ndarray) -> None:
        """Fill ``out`` (float32 [info_size]) with the seat's information state tensor: what it
        saw before play started, its observation, and every event of the round as it saw it."""
        game = self._g
        if game.info_refusal:
            raise ValueError(
                f"{game.get_type().short_name} has no perfect-recall information state tensor with {game.info_refusal}; "
                "use the information state string, or the observation (rl_environment: "
                "observation_type=ObservationType.OBSERVATION)"
            )
        o = game.info_offsets
        out[:] = 0.0
        if self._s.snap is None:  # python_mini_uno's deal: only the hands dealt so far
            out[o["deal_stage"] + len(self._s.deal)] = 1.0
            if player < len(self._s.deal):
                for t in self._s.deal[player]:
                    out[o["observation"] + OBS_OFFSETS["hand"] + t] += 1.0
            return
        out[o["deal_stage"] + 3] = 1.0
        out[o["draw_pending"]] = float(self._s.pending_draw)
        if self._s.first >= 0:
            out[o["first_card"] + self._s.first] = 1.0
        engine = self._engine()
        out[o["observation"] : o["observation"] + game.obs_size] = engine.observe(player)[0]
        rows, counts = engine.history(player)
        out[o["history_counts"] : o["history"]] = counts[0].ravel()
        out[o["history"] : game.info_size] = rows[0, : game.history].ravel()
        total = engine.history_count(0)
        for index, hand in self._s.received[player]:
            row = total - 1 - index
            if row < game.history:  # an older event than the tensor's rows keeps no hand
                at = o["history"] + row * HISTORY_SIZE + _CARD
                out[at : at + NUM_CARD_TYPES] = hand

    def observation_string(self, player: int | None = None) -> str:
        """The seat's R11 observation as text."""
        p = self._s.player if player is None else player
        return f"p{p} " + ("" if self._s.snap is None else observation_string(self._engine().observe(p)[0]))

    def observation_tensor(self, player: int | None = None) -> list[float]:
        """The seat's R11 observation (``uno_env.observation.OBS_FIELDS``)."""
        p = self._s.player if player is None else player
        if self._s.snap is None:
            return [0.0] * self._g.obs_size
        return self._engine().observe(p)[0].tolist()

    def __str__(self) -> str:
        if self._s.snap is None:
            return "dealing"
        return json.dumps(self._engine().game_state(0))


class UnoState(_State):
    """A ``python_uno`` position (sampled chance: the deal is made at creation)."""

    def __init__(self, game: UnoGame, seed: int) -> None:
        super().__init__(game)
        engine = game.engine
        engine.reset(seed=seed)
        self._after_step(engine, "deal", stepped=False)

    def set_game(self, **position: Any) -> None:
        """Put this state at a position: ``Engine.set_game``'s keyword arguments (for tests and
        analysis; the seats' views start again from it)."""
        engine = self._g.engine
        engine.set_game(0, **position)
        self._s.views = tuple((None, f"p{p} set") for p in range(self._g.players))
        self._s.returns = (0.0,) * self._g.players
        self._s.rows, self._s.received = 0, ((),) * self._g.players
        self._s.first = int(engine.game_state(0)["discard_pile"][-1])
        self._after_step(engine, "set", stepped=False)

    def _apply_action(self, action: int) -> None:
        """Step the engine with one legal action."""
        self._step(action)

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> UnoState:
        """A state with the same information state for ``player_id``: the hidden cards redealt
        (``Engine.resample_hidden``, R11), for ISMCTS."""
        new = self.clone()
        if self._s.over:
            return new
        seed = int(probability_sampler() * 2**62)
        engine = self._engine()
        engine.resample_hidden(0, player_id, np.random.default_rng(seed))
        new._s.snap = self._g.loaded = engine.snapshot().tobytes()
        return new

    def _chance_name(self, outcome: int) -> str:
        return f"chance {outcome}"


# --- the mini game ---------------------------------------------------------------------------------

MINI_DEFAULTS = {"colors": 2, "ranks": 3, "copies": 1, "hand_size": 2, "max_turns": 4}

_MINI_TYPE = pyspiel.GameType(
    short_name="python_mini_uno",
    long_name="Python mini UNO (uno_env engine, explicit chance)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=2,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=dict(MINI_DEFAULTS),
)


def mini_rules(colors: int = 2, ranks: int = 3, copies: int = 1, hand_size: int = 2, max_turns: int = 4) -> UnoRules:
    """The rules of ``python_mini_uno``: number cards 1..``ranks`` in ``colors`` colours, ``copies`` of each."""
    for name, value, lo, hi in (
        ("colors", colors, 1, 4),
        ("ranks", ranks, 1, 9),
        ("copies", copies, 1, 2),
        ("hand_size", hand_size, 1, 10),
        ("max_turns", max_turns, 1, 200),
    ):
        if not isinstance(value, int) or not lo <= value <= hi:
            raise ValueError(f"python_mini_uno: {name} must be an integer in {lo}..{hi}, got {value!r}")
    counts = [0] * NUM_CARD_TYPES
    for c in range(colors):
        for r in range(1, ranks + 1):
            counts[card_type(c, r)] = copies
    if sum(counts) < 2 * hand_size + 1:
        raise ValueError(
            f"python_mini_uno: {sum(counts)} cards cannot deal two hands of {hand_size} and a top card; "
            "use more colours, ranks or copies, or a smaller hand"
        )
    return UnoRules(card_counts=tuple(counts), hand_size=hand_size, max_turns=max_turns)


class MiniUnoGame(_Game):
    """``python_mini_uno``: 2 players, a small deck of number cards, explicit chance (docs/openspiel.md)."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        params = {**MINI_DEFAULTS, **(params or {})}
        rules = mini_rules(**{k: params[k] for k in MINI_DEFAULTS})
        self.deck = np.array(rules.card_counts, np.int64)
        self.types = np.flatnonzero(self.deck).tolist()
        h = rules.hand_size
        # Chance outcome ids: a card type (0..56) for the top card and draws, 57 + k for the k-th hand.
        self.hands = [
            hand
            for hand in itertools.combinations_with_replacement(self.types, h)
            if all(hand.count(t) <= self.deck[t] for t in set(hand))
        ]
        assert rules.max_turns is not None
        info = pyspiel.GameInfo(
            num_distinct_actions=NUM_ACTIONS,
            max_chance_outcomes=NUM_CARD_TYPES + len(self.hands),
            num_players=2,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=0.0,
            max_game_length=3 + 2 * rules.max_turns,
        )
        super().__init__(_MINI_TYPE, info, params)
        self._setup(rules, 2, mini_history_bound(rules.max_turns))

    def new_initial_state(self) -> MiniUnoState:
        """Before the deal: three chance nodes (seat 0's hand, seat 1's hand, the top card)."""
        return MiniUnoState(self)


def _hand_probability(hand: tuple[int, ...], left: np.ndarray) -> float:
    """Probability that a hand of len(hand) cards drawn from ``left`` is this multiset."""
    from math import comb

    n = int(left.sum())
    ways = 1
    for t in set(hand):
        ways *= comb(int(left[t]), hand.count(t))
    return ways / comb(n, len(hand))


class MiniUnoState(_State):
    """A ``python_mini_uno`` position: chance deals seat 0's hand, seat 1's hand and the top
    card; seat 0 plays first; every DRAW is followed by a chance node for the card drawn."""

    def __init__(self, game: MiniUnoGame) -> None:
        super().__init__(game)

    def _left(self) -> np.ndarray:
        """Copies of each type the next chance card can be: the undealt cards, or the draw pile
        (the discard pile under its top once the draw pile is empty, R12.2)."""
        game: MiniUnoGame = self._g
        if self._s.snap is None:
            left = game.deck.copy()
            for hand in self._s.deal:
                for t in hand:
                    left[t] -= 1
            return left
        engine = self._engine()
        pile = engine.draw_pile(0) or engine.game_state(0)["discard_pile"][:-1]
        return np.bincount(np.asarray(pile, np.int64), minlength=NUM_CARD_TYPES)

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """(outcome id, probability) of the next chance node."""
        game: MiniUnoGame = self._g
        left = self._left()
        if self._s.snap is None and len(self._s.deal) < 2:
            out = [(NUM_CARD_TYPES + k, _hand_probability(hand, left)) for k, hand in enumerate(game.hands)]
            return [(a, p) for a, p in out if p > 0]
        n = left.sum()
        return [(int(t), float(left[t] / n)) for t in np.flatnonzero(left)]

    def current_player(self) -> int:
        if self._s.over:
            return pyspiel.PlayerId.TERMINAL
        if self._s.snap is None or self._s.pending_draw:
            return pyspiel.PlayerId.CHANCE
        return self._s.player

    def _legal_actions(self, player: int) -> list[int]:
        if self._s.snap is None or self._s.pending_draw:
            return []
        return super()._legal_actions(player)

    def _apply_action(self, action: int) -> None:
        """A chance outcome (a hand, the top card, a drawn card) or a seat's action."""
        game: MiniUnoGame = self._g
        if self._s.snap is None:
            if action not in dict(self.chance_outcomes()):
                raise ValueError(f"python_mini_uno: {action} is not a chance outcome here")
            if len(self._s.deal) < 2:
                seat = len(self._s.deal)
                hand = game.hands[action - NUM_CARD_TYPES]
                self._s.deal = (*self._s.deal, hand)
                shown = ", ".join(CARD_NAMES[t] for t in hand)
                self._s.views = tuple(
                    (view, f"deal p{seat}: " + (shown if p == seat else "?")) for p, view in enumerate(self._s.views)
                )
                return
            left = self._left()
            left[action] -= 1
            engine = game.engine
            draw = np.repeat(np.arange(NUM_CARD_TYPES), left).tolist()
            engine.set_game(
                0, hands=[list(h) for h in self._s.deal], discard_pile=[action], draw_pile=draw, current_player=0
            )
            self._s.first = action
            self._after_step(engine, f"top {CARD_NAMES[action]}", stepped=False)
            return
        if self._s.pending_draw:
            if action not in dict(self.chance_outcomes()):
                raise ValueError(f"python_mini_uno: {action} is not a card that can be drawn here")
            engine = self._engine()
            player = self._s.player
            engine.set_next_draws(0, [action])
            engine.step(np.array([DRAW], np.int64))
            self._s.pending_draw = False
            self._after_step(engine, f"p{player} drew: {CARD_NAMES[action]}", seen_by=player)
            return
        if action == DRAW:
            self._s.pending_draw = True  # the card drawn is the next chance outcome
            return
        self._step(action)

    def _chance_name(self, outcome: int) -> str:
        game: MiniUnoGame = self._g
        if outcome >= NUM_CARD_TYPES:
            return "hand " + ", ".join(CARD_NAMES[t] for t in game.hands[outcome - NUM_CARD_TYPES])
        return CARD_NAMES[outcome]

    def information_state_string(self, player: int | None = None) -> str:
        p = self._s.player if player is None else player
        pending = f"\np{self._s.player} draw" if self._s.pending_draw else ""
        return _joined(self._s.views[p]) + pending

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> MiniUnoState:
        """A state with the same information state for ``player_id`` (hidden cards redealt)."""
        new = self.clone()
        if self._s.snap is None or self._s.over:
            return new
        engine = self._engine()
        engine.resample_hidden(0, player_id, np.random.default_rng(int(probability_sampler() * 2**62)))
        new._s.snap = self._g.loaded = engine.snapshot().tobytes()
        return new


# --- observer (OpenSpiel's make_observation) -------------------------------------------------------


class _Observer:
    """The R11 observation (tensor and string), or with perfect recall the information state
    (tensor: ``info_state_fields``, each field a view in ``dict``; string)."""

    def __init__(self, game: _Game, perfect_recall: bool) -> None:
        self.perfect_recall = perfect_recall
        self.dict: dict[str, np.ndarray] = {}
        if not perfect_recall:
            self.tensor = np.zeros(game.obs_size, np.float32)
            self.dict["observation"] = self.tensor
            return
        self.tensor = np.zeros(game.info_size, np.float32)
        for name, shape, _ in game.info_fields:
            at = game.info_offsets[name]
            self.dict[name] = self.tensor[at : at + int(np.prod(shape))].reshape(shape)

    def set_from(self, state: _State, player: int) -> None:
        """Fill ``tensor`` with the seat's information state or R11 observation."""
        if self.perfect_recall:
            state.write_information_state(state._seat(player), self.tensor)
        else:
            self.tensor[:] = state.observation_tensor(player)

    def string_from(self, state: _State, player: int) -> str:
        """The information state string (perfect recall) or the observation string."""
        if self.perfect_recall:
            return state.information_state_string(player)
        return state.observation_string(player)


def _register() -> None:
    for game_type, cls in ((_UNO_TYPE, UnoGame), (_MINI_TYPE, MiniUnoGame)):
        if game_type.short_name not in pyspiel.registered_names():
            pyspiel.register_game(game_type, cls)


_register()
