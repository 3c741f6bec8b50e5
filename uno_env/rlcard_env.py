"""RLCard drop-in: ``import uno_env.rlcard_env`` registers ``uno-env`` in RLCard's registry.

RLCard (``pip install rlcard``, tested with 1.2.0) trains agents through its own ``Env`` API
(``env.run``, ``reorganize``, its DQN / NFSP / DMC / CFR agents). ``UnoRLCardEnv`` is such an
``Env`` over one ``Engine`` game, so RLCard's loop plays ``uno_env``'s rules, any rule set, 2 to
10 players::

    import rlcard
    import uno_env.rlcard_env  # registers "uno-env"

    env = rlcard.make("uno-env", config={"seed": 0, "game_num_players": 4, "game_rules": "house"})
    env.set_agents([rlcard.agents.RandomAgent(num_actions=env.num_actions) for _ in range(env.num_players)])
    trajectories, payoffs = env.run(is_training=False)

| ``config`` key | default | meaning |
|---|---|---|
| ``seed`` | ``None`` | RLCard's seed: each ``reset`` deals a game seeded from the env's ``np_random`` |
| ``allow_step_back`` | ``False`` | keep a snapshot per step so ``step_back()`` restores the previous decision |
| ``game_num_players`` | 2 | seats, 2..10 |
| ``game_rules`` | ``None`` | anything ``uno_env.parse_rules`` reads: a ``UnoRules``, a preset name, a dict, JSON text (``None``: classic) |

What RLCard's agents get, per decision (``state`` dict, RLCard's keys):

* ``obs``: the acting seat's observation, float32 ``[D]`` (``uno_env.observation.OBS_FIELDS``;
  ``state_shape[p] == [D]``), never another seat's cards.
* ``legal_actions``: an ``OrderedDict`` of legal action ids (``num_actions == 116``, the ids of
  docs/rules.md R2, the same under every rule set); ``raw_legal_actions``: their names.
* ``raw_obs``: the acting seat's view as a dict (its hand, the top card, the colour, every
  hand's size, the phase, its legal action names); ``action_record``: RLCard's list.

Differences from ``rlcard.make("uno")`` (RLCard's own UNO), by design:

* The rules are ``uno_env``'s (docs/rules.md): a wild is played, then its colour chosen (two
  decisions of the same player); a Wild Draw Four may be challenged; drawing is a choice, and
  a drawn card may be played or kept (``PASS``). RLCard's 61 actions merge a wild and its colour
  and its draws play themselves; its simplified rules are not reproduced (docs/examples.md).
* An illegal action raises ``ValueError`` and changes nothing; RLCard's UNO silently replaces
  it with a random legal action.
* ``get_payoffs()`` is right for every player count: +1 for the winner (each winner with shared
  wins), -1 for every other seat; 0 for everybody when a round is truncated at
  ``rules.max_turns``. (RLCard's UNO gives -1 to seat ``1 - winner`` only, so with more than two
  players some losers get 0.)
* ``is_over()`` is also true for a truncated round (``max_turns``, 5000 actions by default):
  RLCard's own loop (``env.run``) then ends the game with payoffs 0.

RLCard 1.2's UNO rules (``rlcard/games/uno/round.py``, ``dealer.py``, ``game.py``), read for a
``rules="rlcard"`` preset that does not exist yet: each line is an engine option ``UnoRules``
lacks, so ``uno-env`` cannot play RLCard's game exactly today.

1. A wild is played with its colour in one action (``r-wild``); there is no Wild Draw Four
   challenge; a Wild Draw Four is legal only when no other action is (not even a plain wild or
   a card of the same number).
2. Drawing is legal only when nothing can be played, and the drawn card plays itself: a wild at
   once in a colour drawn at random (a chance event outside the player's choice), a card of the
   target's colour at once (its action performed); any other card, including one of the same
   number, joins the hand and the turn passes. There is no ``PASS`` and no choice.
3. Reverse with two players gives the turn to the other player (no extra turn); Skip, Draw Two
   and Wild Draw Four skip the next player as usual.
4. The first card: never a Wild Draw Four (returned and reshuffled); a wild gets a random colour;
   a Skip skips seat 0; a Reverse makes seat ``n - 1`` start counter-clockwise; a Draw Two makes
   seat 0 draw two and then play. Seat 0 always deals first-to-act; no dealer rotation.
5. A reshuffle returns every played card to the deck, the top card included (which stays the
   target while also in the deck), so card conservation differs from R4's.
6. No UNO call, no scoring; the round ends when a hand is empty; no turn limit.
7. Payoffs: +1 to the winner, -1 to seat ``1 - winner`` only (right for two players).

Items 1-5 are rule options of their own (and 2 puts a random choice inside a step); they were
left out of this issue's time box. ``uno-env`` with the classic rules is the drop-in: the same
RLCard loop and agents, uno_env's rules.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np
import rlcard.envs
import rlcard.envs.registration

from .actions import ACTION_NAMES, NUM_ACTIONS
from .cards import CARD_NAMES, COLOR_NAMES, NUM_CARD_TYPES
from .checks import is_int
from .engine import Engine
from .observation import NUM_PHASES, OBS_COLOR, OBS_HAND, OBS_HAND_SIZES, OBS_PHASE, OBS_TOP, PHASE_NAMES
from .rules import UnoRules, parse_rules

__all__ = ["UnoRLCardEnv", "RLCARD_ID", "register"]

RLCARD_ID = "uno-env"

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
    """RLCard ``Env`` ``uno-env`` over the ``uno_env`` engine (module docstring)."""

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
        """Each seat's payoff (module docstring): right for every player count."""
        return self.game.get_payoffs()

    def get_perfect_information(self) -> dict[str, Any]:
        """The whole game (every hand) as ``Engine.game_state``; not for agents."""
        return self.game.engine.game_state(0)


def register() -> None:
    """Register ``uno-env`` in RLCard's registry (``rlcard.make("uno-env")``); idempotent."""
    if RLCARD_ID not in rlcard.envs.registration.registry.env_specs:
        rlcard.envs.registration.register(env_id=RLCARD_ID, entry_point="uno_env.rlcard_env:UnoRLCardEnv")


register()
