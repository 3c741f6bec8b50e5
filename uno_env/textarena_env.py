"""UNO as a TextArena game: ``textarena.make("UNO-v0")`` and one id per preset (docs/llm.md).

Every move goes through ``Engine.step`` and every word comes from ``uno_env.text``: nothing here
knows a rule."""

from __future__ import annotations

from typing import Any

import numpy as np

from .checks import is_int
from .engine import Engine, describe_event, redact
from .engine.events import ENDING_EVENTS
from .engine.layout import MAX_HISTORY
from .rules import PRESETS, UnoRules, parse_rules
from .text import MAX_REPLY_CHARS, BadReply, engine_prompt, legal_moves, parse_reply, refusal, seat_intro

try:
    import textarena as ta
    from textarena.envs.registration import ENV_REGISTRY, register_with_versions
except ImportError as exc:  # pragma: no cover - the message is the point
    raise ImportError(
        'uno_env.textarena_env needs textarena: pip install "uno_env[textarena]" (in a virtualenv of its own: '
        "its dependencies upgrade packages of a shared environment; docs/llm.md)"
    ) from exc

__all__ = ["ENV_IDS", "UnoTextArenaEnv", "register_textarena"]

BASE_ID = "UNO-v0"
ENTRY_POINT = "uno_env.textarena_env:UnoTextArenaEnv"
# TextArena ids name variants with dashes (LiarsDice-v0-large); the presets use underscores.
ENV_IDS = {(BASE_ID if name == "classic" else f"{BASE_ID}-{name.replace('_', '-')}"): name for name in PRESETS}
"""Each registered id (without its ``-raw`` variant) and the preset it plays."""


class UnoTextArenaEnv(ta.Env):
    """One UNO game for TextArena's API (``reset``, ``get_observation``, ``step``, ``close``).

    ``history``: the events each prompt shows; ``error_allowance``: bad replies in a row before a forfeit."""

    def __init__(self, rules: Any = None, history: int = 40, error_allowance: int = 1) -> None:
        self.rules: UnoRules = parse_rules(rules)
        if not is_int(history) or not 1 <= history <= MAX_HISTORY:
            raise ValueError(
                f"history must be an integer in 1..{MAX_HISTORY} (events each prompt shows), got {history!r}"
            )
        if not is_int(error_allowance) or error_allowance < 0:
            raise ValueError(
                f"error_allowance must be an integer >= 0 (bad replies in a row before a forfeit), got {error_allowance!r}"
            )
        self.history = int(history)
        self.error_allowance = int(error_allowance)
        self.engine: Engine | None = None

    # --- TextArena's API ----------------------------------------------------------------------

    def reset(self, num_players: int = 2, seed: int | None = None) -> None:
        """Deal a new game for ``num_players`` seats (2-10; teams need an even number of at least
        4) from ``seed`` (None: a fresh one; TextArena's state also seeds ``random`` with it). A bad argument raises ``ValueError`` and leaves the
        current game as it was."""
        # The record gives each step's new events; the history ring, the last events a prompt shows
        # (without converting the whole round again at every turn).
        engine = Engine(1, num_players, self.rules, seed=seed, record=True, history=self.history)
        self.engine = engine
        self.names = [f"Player {p}" for p in range(engine.num_players)]  # TextArena's names of the seats
        self.state = ta.MinimalMultiPlayerState(
            num_players=engine.num_players, seed=seed, error_allowance=self.error_allowance
        )
        self.state.reset(
            game_state=engine.game_state(0),
            player_prompt_function=self._intro,
            role_mapping=dict(enumerate(self.names)),
        )
        self._seen = 0  # record events already sent
        self._returns = np.zeros(engine.num_players)
        self._send_events()
        self._next_turn()

    def get_observation(self) -> tuple[int, Any]:
        self._check_reset()
        return super().get_observation()

    def step(self, action: str) -> tuple[bool, dict[str, Any]]:
        """Play the move ``action`` names (``uno_env.text.parse_reply``) for the seat to act.
        Returns TextArena's ``(done, info)``."""
        engine = self._check_reset()
        if self.state.done:
            raise ValueError("the game is over: close() gives its rewards, reset() deals a new one")
        seat = self.state.current_player_id
        shown = action if isinstance(action, str) else repr(action)
        if len(shown) > MAX_REPLY_CHARS:  # refused below; the seat's messages keep a prefix, not the whole
            shown = shown[:200] + f"… ({len(shown):,} characters)"
        self.state.add_observation(shown, ta.ObservationType.PLAYER_ACTION, from_id=seat, to_id=seat)
        try:
            move = parse_reply(action, legal_moves(engine.legal_mask[0], seat, engine.num_players, self.names))
        except BadReply as error:
            if self.state.set_invalid_move(reason=str(error)):
                self._forfeit(seat, error)
            else:
                self._board(seat, refused=error)  # the game is unchanged: the same seat is asked again
            return self.state.step()
        result = engine.step(np.array([move]))
        self._returns += result.rewards[0]
        self._send_events()
        done, info = self.state.step()  # counts the move as the acting seat's turn
        if not done:
            self._next_turn()
        return done, info

    # --- the messages ---------------------------------------------------------------------------

    def _intro(self, player_id: int, game_state: Any) -> str:
        return seat_intro(self.rules, player_id, self.state.num_players, self.names)

    def _board(self, seat: int, refused: BadReply | None = None) -> None:
        engine = self._check_reset()
        text = engine_prompt(engine, 0, seat, self.names, self.history)
        if refused is not None:
            text = f"{refusal(refused)}\n\n{text}"
        self.state.add_observation(text, ta.ObservationType.GAME_BOARD, to_id=seat)

    def _send_events(self) -> None:
        """Send each seat the new events as it saw them, and end the game when the engine's
        episode has ended."""
        engine = self._check_reset()
        events = engine.record_events(0, self._seen)
        self._seen += len(events)
        for ev in events:
            for p in range(engine.num_players):
                line = describe_event(redact(ev, p, self.rules.open_hands), p, self.names)
                self.state.add_observation(line, ta.ObservationType.GAME_ACTION_DESCRIPTION, to_id=p)
        self.state.game_state = engine.game_state(0)
        if engine.terminated[0] or engine.truncated[0]:
            rewards = {p: _number(r) for p, r in enumerate(self._returns.tolist())}
            self.state.set_game_outcome(rewards, reason=self._ending(events))

    def _ending(self, events: list[dict[str, Any]]) -> str:
        """The lines of the events that ended the episode: from the last round's end on."""
        ends = [k for k, ev in enumerate(events) if ev["type"] in ENDING_EVENTS] or [len(events) - 1]
        return "; ".join(describe_event(ev, None, self.names) for ev in events[ends[-1] :])

    def _next_turn(self) -> None:
        seat = int(self._check_reset().current_player[0])
        self.state.manually_set_current_player_id(seat, force=True)
        self._board(seat)

    def _forfeit(self, seat: int, error: BadReply) -> None:
        # As TextArena's TwoPlayerState settles an invalid move: the opponent wins. Its multi-player
        # states leave the others' outcome to each game; here they neither win nor lose.
        others = 1 if self.state.num_players == 2 else 0
        rewards = {p: -1 if p == seat else others for p in range(self.state.num_players)}
        self.state.set_game_outcome(
            rewards,
            reason=f"{self.names[seat]} forfeits after {self.error_allowance + 1} refused replies in a row; the last: {error}",
        )

    def _check_reset(self) -> Engine:
        if self.engine is None:
            raise ValueError("no game yet: call reset(num_players=...) first")
        return self.engine


def _number(x: float) -> int | float:
    return int(x) if float(x).is_integer() else float(x)


def register_textarena() -> None:
    """Register ``ENV_IDS`` (and their ``-train`` and ``-raw`` variants) with TextArena; idempotent."""
    wrappers = [ta.wrappers.GameBoardObservationWrapper, ta.wrappers.ActionFormattingWrapper]
    # The board already holds the seat's whole view and the last events, so the training variant
    # (TextArena's -train ids) keeps it: the messages wrappers would grow the prompt every turn.
    variants = {"default": wrappers, "-train": wrappers}
    for env_id, preset in ENV_IDS.items():
        if env_id not in ENV_REGISTRY:
            register_with_versions(id=env_id, entry_point=ENTRY_POINT, wrappers=variants, rules=preset)


register_textarena()
