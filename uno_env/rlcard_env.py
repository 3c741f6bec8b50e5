"""RLCard drop-in: ``import uno_env.rlcard_env`` registers ``uno-env`` in RLCard's registry (docs/rlcard.md)."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np
import rlcard.envs
import rlcard.envs.registration

from .actions import ACTION_NAMES, CHOOSE_RED, DRAW, NUM_ACTIONS
from .cards import CARD_NAMES, COLOR_NAMES, NUM_CARD_TYPES, WILD, WILD_DRAW_FOUR
from .checks import is_int
from .engine import Engine
from .observation import NUM_PHASES, OBS_COLOR, OBS_HAND, OBS_HAND_SIZES, OBS_PHASE, OBS_TOP, PHASE_NAMES
from .rules import UnoRules, parse_rules

__all__ = [
    "UnoRLCardEnv",
    "RLCARD_ID",
    "RLCARD_ACTIONS",
    "RLCARD_COLORS",
    "register",
    "rlcard_card",
    "from_rlcard_action",
    "to_rlcard_action",
    "set_rlcard_game",
]

RLCARD_ID = "uno-env"

# RLCard's colour letters (rlcard/games/uno/card.py) -> uno_env colour ids (R1: 0 red, 1 yellow, 2 green, 3 blue).
RLCARD_COLORS = {"r": 0, "g": 2, "b": 3, "y": 1}
# RLCard's traits in its action order (rlcard/games/uno/utils.py TRAIT_MAP): ranks 0-12, then the two wilds.
_RLCARD_TRAITS = ("0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "skip", "reverse", "draw_2", "wild", "wild_draw_4")


def _rlcard_action_table() -> tuple[tuple[int, int | None], ...]:
    table: list[tuple[int, int | None]] = []
    for letter in "rgby":  # RLCard's action order (jsondata/action_space.json)
        color = RLCARD_COLORS[letter]
        for rank, trait in enumerate(_RLCARD_TRAITS):
            if trait == "wild":
                table.append((WILD, CHOOSE_RED + color))
            elif trait == "wild_draw_4":
                table.append((WILD_DRAW_FOUR, CHOOSE_RED + color))
            else:
                table.append((color * 13 + rank, None))
    table.append((DRAW, None))
    return tuple(table)


RLCARD_ACTIONS = _rlcard_action_table()
"""Entry ``k``: RLCard action ``k`` as uno_env's ``(action, CHOOSE_COLOR action or None)``."""


def from_rlcard_action(action_id: int) -> tuple[int, int | None]:
    """RLCard's UNO action id (0..60) as uno_env's ``(action, colour action or None)``."""
    if not is_int(action_id) or not 0 <= action_id < len(RLCARD_ACTIONS):
        raise ValueError(f"an RLCard UNO action id is an integer 0..60, got {action_id!r}")
    return RLCARD_ACTIONS[int(action_id)]


def to_rlcard_action(action: int, color: int | None = None) -> int:
    """The RLCard UNO action id of uno_env's ``action`` (and, for a wild, its CHOOSE_COLOR action)."""
    key = (action, color)
    if key not in _RLCARD_IDS:
        raise ValueError(
            f"({action!r}, {color!r}) has no RLCard UNO action: RLCard plays a card of ids 0..51, a wild "
            f"({WILD}, {WILD_DRAW_FOUR}) with its CHOOSE_COLOR ({CHOOSE_RED}..{CHOOSE_RED + 3}), or DRAW ({DRAW})"
        )
    return _RLCARD_IDS[key]


_RLCARD_IDS = {pair: k for k, pair in enumerate(RLCARD_ACTIONS)}


def rlcard_card(card: Any) -> int:
    """The uno_env card type id (R1) of an RLCard ``UnoCard`` (a wild's colour is not its type)."""
    if card.trait == "wild":
        return WILD
    if card.trait == "wild_draw_4":
        return WILD_DRAW_FOUR
    return RLCARD_COLORS[card.color] * 13 + _RLCARD_TRAITS.index(card.trait)


def set_rlcard_game(engine: Engine, i: int, game: Any) -> None:
    """Put game ``i`` of ``engine`` at the position of an RLCard 1.2 ``UnoGame`` waiting for a decision.

    The engine should play ``rules="rlcard"`` (played cards may be empty after a reshuffle; seat
    ``n - 1`` deals). RLCard's game is not changed."""
    rnd = game.round
    n = engine.num_players
    if len(game.players) != n:
        raise ValueError(f"the RLCard game seats {len(game.players)} players, the engine {n}")
    if rnd.is_over:
        raise ValueError("the RLCard game is over: there is no decision to set")
    played = [rlcard_card(c) for c in rnd.played_cards]
    top = rlcard_card(rnd.target)
    if played and played[-1] != top:
        raise ValueError(f"RLCard's target {rnd.target.str} is not its last played card {rnd.played_cards[-1].str}")
    engine.set_game(
        i,
        hands=[[rlcard_card(c) for c in player.hand] for player in game.players],
        discard_pile=played,
        draw_pile=[rlcard_card(c) for c in game.dealer.deck],
        current_player=int(rnd.current_player),
        current_color=RLCARD_COLORS[rnd.target.color],
        direction=int(rnd.direction),
        dealer=n - 1,
        top_card=None if played else top,
    )


DEFAULT_GAME_CONFIG: dict[str, Any] = {"game_num_players": 2, "game_rules": None}
_HAND = slice(OBS_HAND, OBS_HAND + NUM_CARD_TYPES)
_TOP = slice(OBS_TOP, OBS_TOP + NUM_CARD_TYPES)


class UnoRLCardGame:
    """RLCard's ``Game`` protocol over an ``Engine`` batch of one (what ``rlcard.envs.Env`` calls)."""

    def __init__(self, num_players: int, rules: UnoRules, allow_step_back: bool = False) -> None:
        self.engine = Engine(1, num_players, rules, autoreset=False)
        self.num_players = self.engine.num_players
        self.allow_step_back = allow_step_back
        self.np_random: Any = np.random.RandomState()  # RLCard's Env.seed replaces it
        self.payoffs = np.zeros(self.num_players, np.float32)
        self._history: list[Engine] = []  # snapshots for step_back (one-game engines)
        self._spare: list[Engine] = []  # snapshots popped by step_back, reused

    def init_game(self) -> tuple[dict[str, Any], int]:
        """Deal a new game seeded from ``np_random``; (the first player's state, that player)."""
        self.engine.reset(int(self.np_random.randint(0, 2**63 - 1, dtype=np.int64)))
        self.payoffs[:] = 0.0
        self._spare.extend(self._history)
        self._history.clear()
        p = self.get_player_id()
        return self.get_state(p), p

    def step(self, action: int) -> tuple[dict[str, Any], int]:
        """Apply the current player's action id (``ValueError`` if illegal, nothing changed)."""
        if self.is_over():
            raise ValueError("the game is over; call reset() (RLCard: env.reset()) before step()")
        snapshot = None
        if self.allow_step_back:
            snapshot = self._spare.pop() if self._spare else Engine(1, self.num_players, self.engine.rules)
            snapshot.copy_game(self.engine, 0, 0)
        result = self.engine.step(np.array([action], np.int64))
        if snapshot is not None:
            self._history.append(snapshot)
        if self.is_over():
            self.payoffs[:] = result.rewards[0]  # the engine's rewards of the step that ended the game
        p = self.get_player_id()
        return self.get_state(p), p

    def step_back(self) -> bool:
        """Restore the position before the last ``step``; False when there is none."""
        if not self._history:
            return False
        snapshot = self._history.pop()
        self.engine.copy_game(snapshot, 0, 0)
        self._spare.append(snapshot)
        self.payoffs[:] = 0.0  # a position before the end: nothing is paid yet
        return True

    def get_state(self, player_id: int) -> dict[str, Any]:
        """``player_id``'s view (any phase, also once the game is over)."""
        e = self.engine
        if player_id == self.get_player_id() and not self.is_over():
            obs = e.observation[0].copy()  # the engine wrote the acting seat's view in its step
            legal = self.get_legal_actions()
        else:
            obs, legal = e.observe(player_id)[0], []
        # raw_obs is decoded from the seat's own observation (cheaper than Engine.game_state,
        # and it cannot show what the seat may not see).
        P = self.num_players
        sizes = obs[OBS_HAND_SIZES : OBS_HAND_SIZES + P]  # by relative seat
        color = obs[OBS_COLOR : OBS_COLOR + 4]
        return {
            "obs": obs,
            "legal_ids": legal,
            "hand": [CARD_NAMES[t] for t in np.repeat(np.arange(NUM_CARD_TYPES), obs[_HAND].astype(np.int64))],
            "top_card": CARD_NAMES[int(obs[_TOP].argmax())],
            "current_color": COLOR_NAMES[int(color.argmax())] if color.any() else None,
            "num_cards": [int(sizes[(p - player_id) % P]) for p in range(P)],
            "phase": PHASE_NAMES[int(obs[OBS_PHASE : OBS_PHASE + NUM_PHASES].argmax())],
            "legal_actions": [ACTION_NAMES[a] for a in legal],
            "num_players": P,
            "current_player": self.get_player_id(),
            "player_id": player_id,
        }

    def get_payoffs(self) -> np.ndarray:
        """Each seat's result: +1 winner(s), -1 the others, 0 for all on a truncated round (0 while playing)."""
        return self.payoffs.copy()

    def get_legal_actions(self) -> list[int]:
        """The current player's legal action ids."""
        return np.flatnonzero(self.engine.legal_mask[0]).tolist()

    def get_num_players(self) -> int:
        """Seats at the table."""
        return self.num_players

    @staticmethod
    def get_num_actions() -> int:
        """116, the action ids of docs/rules.md R2."""
        return NUM_ACTIONS

    def get_player_id(self) -> int:
        """The seat to decide."""
        return int(self.engine.current_player[0])

    def is_over(self) -> bool:
        """Whether the round ended (won, or truncated at ``rules.max_turns``)."""
        return bool(self.engine.terminated[0] or self.engine.truncated[0])


class UnoRLCardEnv(rlcard.envs.Env):
    """RLCard ``Env`` ``uno-env`` over the ``uno_env`` engine (docs/rlcard.md)."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.name = RLCARD_ID
        self.default_game_config = DEFAULT_GAME_CONFIG
        unknown = sorted(k for k in config if k.startswith("game_") and k not in DEFAULT_GAME_CONFIG)
        if unknown:
            raise ValueError(f"unknown config key(s) {unknown}; uno-env reads {sorted(DEFAULT_GAME_CONFIG)}")
        game_config = {**DEFAULT_GAME_CONFIG, **{k: v for k, v in config.items() if k in DEFAULT_GAME_CONFIG}}
        # The engine checks game_num_players (2..10) and parse_rules the rules, naming what is allowed.
        self.game = UnoRLCardGame(game_config["game_num_players"], parse_rules(game_config["game_rules"]))
        config = {"allow_step_back": False, "seed": None, **config}
        super().__init__(config)
        self.rules = self.game.engine.rules
        size = self.game.engine.observation_size
        self.state_shape = [[size] for _ in range(self.num_players)]
        self.action_shape = [None for _ in range(self.num_players)]

    def _extract_state(self, state: dict[str, Any]) -> dict[str, Any]:
        raw = {k: v for k, v in state.items() if k not in ("obs", "legal_ids")}
        return {
            "obs": state["obs"],
            "legal_actions": OrderedDict((a, None) for a in state["legal_ids"]),
            "raw_obs": raw,
            "raw_legal_actions": list(raw["legal_actions"]),
            "action_record": self.action_recorder,
        }

    def _decode_action(self, action_id: Any) -> int:
        """An action id the current player may take, else ``ValueError`` (never a silent replacement)."""
        if not is_int(action_id):
            raise ValueError(f"action must be an action id (an integer 0..{NUM_ACTIONS - 1}), got {action_id!r}")
        if not 0 <= action_id < NUM_ACTIONS or not self.game.engine.legal_mask[0, action_id]:
            legal = self.game.get_legal_actions()
            raise ValueError(
                f"action {action_id!r} is not legal for player {self.game.get_player_id()}; legal: "
                f"{[f'{a} ({ACTION_NAMES[a]})' for a in legal]}"
            )
        return int(action_id)

    def step(self, action: Any, raw_action: bool = False) -> tuple[dict[str, Any], int]:
        """RLCard's ``Env.step``; a raw action is an action name (``uno_env.ACTION_NAMES``)."""
        if raw_action:
            if action not in ACTION_NAMES:
                raise ValueError(f"raw action must be one of uno_env.ACTION_NAMES, got {action!r}")
            action = ACTION_NAMES.index(action)
        return super().step(self._decode_action(action), raw_action=True)

    def _get_legal_actions(self) -> OrderedDict:
        return OrderedDict((a, None) for a in self.game.get_legal_actions())

    def get_payoffs(self) -> np.ndarray:
        """Each seat's payoff: +1 winner(s), -1 the others, 0 for all on a truncated round."""
        return self.game.get_payoffs()

    def get_perfect_information(self) -> dict[str, Any]:
        """The whole game (every hand) as ``Engine.game_state``; not for agents."""
        return self.game.engine.game_state(0)


def register() -> None:
    """Register ``uno-env`` in RLCard's registry (``rlcard.make("uno-env")``); idempotent."""
    if RLCARD_ID not in rlcard.envs.registration.registry.env_specs:
        rlcard.envs.registration.register(env_id=RLCARD_ID, entry_point="uno_env.rlcard_env:UnoRLCardEnv")


register()
