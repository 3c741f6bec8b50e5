"""``Engine``: a batch of UNO games stepped together by numba kernels."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple, cast

import numba
import numpy as np

from ..actions import NUM_ACTIONS, action_name
from ..cards import CARD_COLOR, IS_NUMBER, IS_WILD, MAX_DECK_SIZE, NUM_CARD_TYPES, NUM_COLORS, WILD_DRAW_FOUR
from ..checks import check_history_form, check_threads, is_int
from ..rules import CUSTOM_WILD_RULES, UnoRules, check_num_players
from ..threads import Chunks
from . import batch, invariants, kernels
from . import layout as L
from .borrow import view_at
from .events import extend_events, redact
from .history import (
    HISTORY_COUNTS_SIZE,
    HISTORY_SIZE,
    HISTORY_TOKEN_SIZE,
    clear_history,
    encode_history,
    fold_history,
    history_rows,
    read_new_tokens,
    read_tokens,
)
from .record import Recorder
from .rng import splitmix64

_MASK64 = (1 << 64) - 1
_INT64 = np.dtype(np.int64)
_JIT = not numba.config.DISABLE_JIT  # plain Python takes no argument checks from numba


class StepResult(NamedTuple):
    """What ``reset`` and ``step`` return (arrays are the engine's own, overwritten next step)."""

    observation: np.ndarray  # float32 [B, D], from the point of view of current_player
    legal_mask: np.ndarray  # bool [B, 116]
    current_player: np.ndarray  # int8 [B]
    rewards: np.ndarray  # float32 [B, num_players]
    terminated: np.ndarray  # bool [B]
    truncated: np.ndarray  # bool [B]


def game_seeds(seed: int, num_envs: int) -> np.ndarray:
    """The per-game seeds that ``reset(seed=seed)`` gives a batch of ``num_envs`` games."""
    base = splitmix64(np.array([_check_seed(seed)], np.uint64))[0]
    return base + np.arange(num_envs, dtype=np.uint64)


def _check_seed(seed: Any, name: str = "seed") -> int:
    """A seed or generator state: an integer in 0..2**64-1."""
    if not is_int(seed) or not 0 <= seed <= _MASK64:
        raise ValueError(f"{name} must be None or an integer in 0..2**64-1, got {seed!r}")
    return int(seed)


def _check_arguments(num_envs: Any, num_players: Any, rules: Any, parallel: Any) -> tuple[int, int, UnoRules]:
    """The Engine's arguments checked one by one: (num_envs, num_players, rules)."""
    if not is_int(num_envs) or num_envs < 1:
        raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
    check_num_players(num_players)
    rules = UnoRules() if rules is None else rules
    if not isinstance(rules, UnoRules):
        raise ValueError(f"rules must be a UnoRules (see UnoRules.preset), got {type(rules).__name__}")
    if not isinstance(parallel, bool):
        raise ValueError(f"parallel must be True or False, got {parallel!r}")
    return int(num_envs), int(num_players), rules


def _check_table(rules: UnoRules, num_players: int) -> np.ndarray:
    """The deck's card counts, once the rules are known to seat ``num_players`` and deal (R3, R8, R9)."""
    P = num_players
    if rules.teams and (P < 4 or P % 2):
        raise ValueError(
            f"option teams=True needs an even num_players of at least 4 (partners sit opposite, R8), "
            f"got num_players={P}"
        )
    deck = rules.counts
    if P * rules.hand_size + 1 > deck.sum():
        raise ValueError(
            f"hand_size={rules.hand_size} with num_players={P} needs "
            f"{P * rules.hand_size + 1} cards, but the {rules.deck!r} deck has {deck.sum()}"
        )
    left = int(deck.sum()) - P * rules.hand_size
    sent_back = int(sum(deck[t] for t in range(NUM_CARD_TYPES) if _first_card_returned(rules, t)))
    if left <= sent_back:
        raise ValueError(
            f"hand_size={rules.hand_size} with num_players={P} leaves {left} cards after the deal, and "
            f"{sent_back} cards of the {rules.deck!r} deck go back when turned first (R9, "
            f"first_card_rule={rules.first_card_rule!r}, wild_first_card={rules.wild_first_card!r}): the "
            f"first card could never be turned; use a smaller hand_size or fewer players"
        )
    return deck


def _config_vector(rules: UnoRules, num_players: int, autoreset: bool, observations: bool) -> np.ndarray:
    cfg = np.zeros(L.C_SIZE, np.int64)
    cfg[L.C_WRITE_OBS] = observations
    cfg[L.C_NUM_PLAYERS] = num_players
    cfg[L.C_HAND_SIZE] = rules.hand_size
    cfg[L.C_VOLUNTARY_DRAW] = rules.allow_voluntary_draw
    cfg[L.C_DRAW_UNTIL_PLAYABLE] = rules.draw_until_playable
    cfg[L.C_END_ON_EMPTY_DECK] = rules.end_on_empty_deck
    cfg[L.C_WD4_WILDS_MATCH] = rules.wd4_wilds_count_as_match
    cfg[L.C_BLUFFING] = rules.bluffing
    cfg[L.C_CHALLENGE] = rules.challenge
    cfg[L.C_GUILTY_DRAW] = rules.challenge_guilty_draw
    cfg[L.C_INNOCENT_DRAW] = rules.challenge_innocent_draw
    cfg[L.C_FORBID_LAST_ACTION] = rules.forbid_last_action_card
    cfg[L.C_MAX_TURNS] = rules.max_turns or 0
    cfg[L.C_FEWEST_CARDS_WINS] = rules.turn_limit_rule == "fewest_cards_wins"
    cfg[L.C_REDRAW_SPECIAL] = rules.first_card_rule == "redraw_special"
    cfg[L.C_REDRAW_WILD] = rules.wild_first_card == "redraw"
    cfg[L.C_PENALTY] = rules.illegal_action == "penalty"
    cfg[L.C_OPEN_HANDS] = rules.open_hands
    cfg[L.C_AUTORESET] = autoreset
    cfg[L.C_DECK_SIZE] = int(rules.counts.sum())
    cfg[L.C_STACK_DRAW_TWO] = rules.stack_draw_two
    cfg[L.C_STACK_DRAW_FOUR] = rules.stack_draw_four
    cfg[L.C_DOUBLES] = rules.allow_doubles
    cfg[L.C_EXPLICIT_UNO] = rules.uno_call == "explicit"
    cfg[L.C_UNO_PENALTY] = rules.uno_penalty
    cfg[L.C_CUSTOM_RULE] = CUSTOM_WILD_RULES.index(rules.custom_wild_rule)
    cfg[L.C_ELIMINATION] = rules.scoring == "elimination"
    cfg[L.C_MATCH] = rules.episode == "match"
    cfg[L.C_TARGET_POINTS] = rules.target_points
    cfg[L.C_TEAMS] = rules.teams
    cfg[L.C_ALWAYS_RESPOND] = rules.always_respond
    cfg[L.C_WD4_ONLY_WHEN_STUCK] = rules.wd4_only_when_stuck
    cfg[L.C_DRAWN_PLAYS] = rules.drawn_card == "play_color_or_wild"
    cfg[L.C_RESHUFFLE_ALL] = rules.reshuffle == "every_played_card"
    cfg[L.C_REVERSE_SKIPS_TWO] = rules.two_player_reverse_skips
    cfg[L.C_FIRST_DEALER_LAST] = rules.first_dealer == "last_seat"
    cfg[L.C_RANDOM_WILD_FIRST] = rules.wild_first_card == "random_color"
    cfg[L.C_FIRST_DRAW_TWO_SKIPS] = rules.first_draw_two_skips
    return cfg


def _first_card_returned(rules: UnoRules, card: int) -> bool:
    """R9: whether a card turned first goes back into the pile (mirrors the kernel's rule)."""
    if card == WILD_DRAW_FOUR:
        return True
    if rules.first_card_rule == "redraw_special" and not IS_NUMBER[card]:
        return True
    return rules.wild_first_card == "redraw" and bool(IS_WILD[card])


def _field_shapes(B: int, P: int, D: int, width: int, history: int) -> list[tuple[int, ...]]:
    """The shape of each array of ``layout.FIELDS`` for these sizes (event width, history length)."""
    sizes = {
        "B": B,
        "P": P,
        "P+1": P + 1,
        "D": D,
        "W": width,
        "K": history,
        "T": NUM_CARD_TYPES,
        "DECK": MAX_DECK_SIZE,
        "A": NUM_ACTIONS,
    }
    return [tuple(sizes[d] if isinstance(d, str) else d for d in dims) for _name, _dtype, dims in L.FIELDS]


def _check_out(arr: Any, shape: tuple[int, ...], name: str, dtype: Any = np.float32) -> np.ndarray:
    """``arr`` if it can take an output of ``shape`` in place, else a ValueError naming ``name``."""
    if (
        not isinstance(arr, np.ndarray)
        or arr.shape != shape
        or arr.dtype != dtype
        or not arr.flags.c_contiguous
        or not arr.flags.writeable
    ):
        got = f"{arr.dtype} {arr.shape}" if isinstance(arr, np.ndarray) else type(arr).__name__
        raise ValueError(
            f"{name} must be a writeable C-contiguous {np.dtype(dtype).name} array of shape {shape}, got {got}"
        )
    return arr


# The views of the engine's buffer that are public outputs; every other field is a private ``_name``.
_OUTPUT_VIEWS = (
    "observation",
    "legal_mask",
    "current_player",
    "rewards",
    "terminated",
    "truncated",
    "final_observation",
)


class Engine:
    """A batch of ``num_envs`` UNO games with ``num_players`` seats each, under one ``UnoRules``.

    ``reset`` and ``step`` return a ``StepResult`` whose arrays are the engine's attributes, overwritten
    in place by the next call (copy to keep them). Options: docs/engine.md; rewards: docs/spaces.md."""

    def __init__(
        self,
        num_envs: int = 1,
        num_players: int = 2,
        rules: UnoRules | None = None,
        seed: int | Sequence[int] | None = None,
        *,
        autoreset: bool = False,
        record: bool = False,
        observations: bool = True,
        parallel: bool = False,
        history: int = 0,
        threads: int = 1,
    ) -> None:
        B, P, rules = _check_arguments(num_envs, num_players, rules, parallel)
        self.threads = check_threads(threads)
        if parallel and self.threads > 1:
            raise ValueError(
                f"parallel=True steps on numba's threads and threads={threads!r} on the engine's own: use one of them"
            )
        if not is_int(history) or not 0 <= history <= L.MAX_HISTORY:
            raise ValueError(
                f"history must be an integer in 0..{L.MAX_HISTORY} (events kept per game; 0: none), got {history!r}"
            )
        self.history_length = int(history)
        self.num_envs, self.num_players, self.rules = B, P, rules
        self.autoreset = bool(autoreset)
        self.parallel = parallel
        deck = _check_table(rules, P)
        self.observation_size = L.observation_size(rules.open_hands)
        self._allocate(bool(record), self.history_length)
        self._deck[:] = deck
        self._cfg[:] = _config_vector(rules, P, self.autoreset, bool(observations))
        self._points[:] = rules.points
        self._recorder = Recorder(P, rules, self._events, self._event_counts, self._rng) if record else None
        self.reset(seed)

    def _allocate(self, record: bool, history: int) -> None:
        """One zeroed byte buffer holding every array (``layout.FIELDS``) and the engine's views of it."""
        B, P, D = self.num_envs, self.num_players, self.observation_size
        # Scalars are int64 like every loop index: one integer type means one numba specialisation.
        # The event width is 0 unless recording or keeping a history: the kernels then skip events.
        width = L.MAX_EVENTS_PER_STEP if record or history else 0
        offsets = []
        end = L.HEADER_SIZE * 8
        for (_name, dtype, _dims), shape in zip(L.FIELDS, _field_shapes(B, P, D, width, history), strict=True):
            end = -(-end // L.FIELD_ALIGN) * L.FIELD_ALIGN
            offsets.append(end)
            end += int(np.prod(shape)) * np.dtype(dtype).itemsize
        self._buf = np.zeros(end, np.uint8)
        header = self._buf[: L.HEADER_SIZE * 8].view(np.int64)
        header[[L.H_NUM_ENVS, L.H_NUM_PLAYERS, L.H_OBS_SIZE, L.H_EVENT_WIDTH, L.H_HISTORY]] = (
            B,
            P,
            D,
            width,
            history,
        )
        header[L.H_OFFSETS :] = offsets
        self._bind_views()

    # Attribute names of the views of ``_buf`` (``layout.FIELDS`` order).
    _VIEW_NAMES = tuple(name if name in _OUTPUT_VIEWS else f"_{name}" for name, _dtype, _dims in L.FIELDS)
    _DERIVED = ("_state", "_result", "_window_out", "_driver", "_chunks")
    # The views' types (made by _bind_views, so a type checker cannot see them being set).
    _g: np.ndarray
    _pl: np.ndarray
    _hands: np.ndarray
    _piles: np.ndarray
    _rng: np.ndarray
    _events: np.ndarray
    _event_counts: np.ndarray
    _cfg: np.ndarray
    _points: np.ndarray
    _deck: np.ndarray
    observation: np.ndarray
    legal_mask: np.ndarray
    current_player: np.ndarray
    rewards: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    final_observation: np.ndarray
    _codes: np.ndarray
    _history: np.ndarray
    _history_meta: np.ndarray
    _history_counts: np.ndarray
    _history_tokens: np.ndarray
    _history_read: np.ndarray

    def _bind_views(self) -> None:
        """(Re)make the views of ``_buf`` named in ``_VIEW_NAMES`` (after allocation or unpickling)."""
        buf = self._buf
        header = buf[: L.HEADER_SIZE * 8].view(np.int64)
        shapes = _field_shapes(
            self.num_envs,
            self.num_players,
            self.observation_size,
            int(header[L.H_EVENT_WIDTH]),
            int(header[L.H_HISTORY]),
        )
        for k, (attr, (_name, dtype, _dims), shape) in enumerate(zip(self._VIEW_NAMES, L.FIELDS, shapes, strict=True)):
            setattr(self, attr, view_at(buf, int(header[L.H_OFFSETS + k]), shape, dtype))
        self._state = (self._g, self._pl, self._hands, self._piles, self._rng, self._events, self._event_counts)
        self._result = StepResult(
            self.observation, self.legal_mask, self.current_player, self.rewards, self.terminated, self.truncated
        )
        self._all = np.ones(self.num_envs, bool)
        self._seat_buffer = np.zeros(self.num_envs, np.int64)
        if self.threads > 1:
            self._chunks = Chunks(self.threads)
            self._driver = self._step_chunks
        else:
            self._driver = batch.step_batch_parallel if self.parallel else batch.step_batch

    @property
    def buf(self) -> np.ndarray:
        """The one byte buffer that holds every array of the engine (the kernels' argument), live, not a copy."""
        return self._buf

    @property
    def arrays(self) -> dict[str, np.ndarray]:
        """Every array of the engine by its ``layout.FIELDS`` name, as live views of ``buf``."""
        return {
            name: getattr(self, attr) for (name, _dtype, _dims), attr in zip(L.FIELDS, self._VIEW_NAMES, strict=True)
        }

    @property
    def state_arrays(self) -> tuple[np.ndarray, ...]:
        """The arrays the games' state lives in, live: ``g, pl, hands, piles, rng, events, event_counts``."""
        return self._state

    @property
    def chunks(self) -> Chunks | None:
        """The games in ``threads`` contiguous chunks, one per thread (None with one thread); agents' ``act_chunked`` runs on them."""
        return self._chunks if self.threads > 1 else None

    def _step_chunks(self, buf: np.ndarray, actions: np.ndarray, validate: bool) -> int:
        """``step_batch`` (same arguments, same result) with the games in ``threads`` contiguous chunks."""
        err = batch.check_step(buf, actions, validate)
        if not err:
            self._chunks.run(self.num_envs, batch.step_range, buf, actions)
        return err

    def __getstate__(self) -> dict[str, Any]:
        # The views would pickle (and deepcopy) as separate copies of the buffer's bytes; keep
        # the buffer alone and cut the views out of the copy.
        return {k: v for k, v in self.__dict__.items() if k not in self._VIEW_NAMES and k not in self._DERIVED}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._bind_views()
        if self._recorder is not None:
            self._recorder.rebind(self._events, self._event_counts, self._rng)

    # --- stepping --------------------------------------------------------------------------

    def reset(
        self,
        seed: int | Sequence[int] | np.ndarray | None = None,
        games: Any = None,
        *,
        rng_state: int | Sequence[int] | None = None,
    ) -> StepResult:
        """Start a new episode in every game, or only in ``games`` (a bool mask [B] or indices).

        ``seed``: an int, or one per game; game i gets ``game_seeds(seed, B)[i]``. ``rng_state`` (instead of
        ``seed``): the generator state to deal from as it is, e.g. a record's ``start["rng_state"]``."""
        which = self._games_mask(games)
        if rng_state is not None:
            if seed is not None:
                raise ValueError("pass seed or rng_state to reset, not both")
            self._rng[which, 0] = self._rng_state_array(rng_state)[which]
        elif seed is not None or not self._rng.any():
            self._rng[which, 0] = splitmix64(self._seed_array(seed))[which]
        self._run_codes(which, batch.RESET)
        self.rewards[which] = 0.0
        if self._recorder is not None:
            self._recorder.on_reset(np.flatnonzero(which))
        return self._result

    def _games_mask(self, games: Any) -> np.ndarray:
        if games is None:
            return self._all
        arr = np.asarray(games)
        if arr.dtype == bool:
            if arr.shape != (self.num_envs,):
                raise ValueError(f"games as a mask must have shape ({self.num_envs},), got {arr.shape}")
            return arr
        if arr.dtype.kind not in "iu" or arr.ndim > 1 or (arr.size and (arr.min() < 0 or arr.max() >= self.num_envs)):
            raise ValueError(f"games must be a bool mask or indices in 0..{self.num_envs - 1}, got {games!r}")
        which = np.zeros(self.num_envs, bool)
        which[arr] = True
        return which

    def _run_codes(self, which: np.ndarray, code: int) -> None:
        """Run the internal code RESET or REFRESH (batch.py) in every game b with which[b]."""
        codes = self._codes
        codes[:] = batch.NONE
        codes[which] = code
        self._drive(codes, False)
        if self.threads > 1:
            batch.seal(batch.check_step)
            batch.seal(batch.step_range)
        else:
            batch.seal(self._driver)
        if self.history_length and code == batch.RESET:
            fold_history(self._buf, codes)

    def _drive(self, actions: np.ndarray, validate: bool) -> int:
        """The step driver on the buffer and these int64 actions or codes.

        numba raises RuntimeError in a thread that queued to compile the driver while another sealed it;
        the compiled copy exists by then, so the call is made again."""
        try:
            return self._driver(self._buf, actions, validate)
        except RuntimeError:
            return self._driver(self._buf, actions, validate)

    def step(self, actions: np.ndarray | Sequence[int] | int) -> StepResult:
        """Apply one action per game (``-1`` leaves that game as it is); see docs/rules.md R10."""
        if type(actions) is np.ndarray and actions.dtype is _INT64 and _JIT:
            # The common case costs no checks here: the sealed driver refuses (TypeError) any
            # array but a writeable C-contiguous 1-D int64 one, and reports a wrong length.
            try:
                err = self._driver(self._buf, actions, True)
            except TypeError:
                err = -1
            except RuntimeError:  # another thread sealed the driver first (see _drive)
                err = self._drive(actions, True)
        else:
            err = -1
        if err:
            if err < 0 or err >> 32 == batch.ERR_SHAPE:
                actions = self._check_actions(actions)  # raises for what cannot be converted
                err = self._drive(actions, True)
            if err:
                self.raise_step_error(int(err), cast(np.ndarray, actions))
        if self.history_length:
            fold_history(self._buf, cast(np.ndarray, actions))
        if self._recorder is not None:
            self._recorder.on_step(
                cast(np.ndarray, actions), (self.terminated | self.truncated) if self.autoreset else None
            )
        return self._result

    def observe(
        self, seats: np.ndarray | Sequence[int] | int, out: np.ndarray | None = None, games: Any = None
    ) -> np.ndarray:
        """Each game from a seat's view (an int, or one seat per game): float32 [B, D].

        ``out`` float32 [B, D] is filled in place; with ``games`` (as in ``reset``) only those rows are written."""
        seats_arr, which, out = self._view_args(seats, out, games, self.observation_size)
        if self.threads > 1:
            self._chunks.run(
                self.num_envs, batch.observe_range, self._buf, seats_arr, self._all if which is None else which, out
            )
        else:
            batch.observe_batch(self._buf, seats_arr, self._all if which is None else which, out)
        return out

    def state(
        self, seats: np.ndarray | Sequence[int] | int, out: np.ndarray | None = None, games: Any = None
    ) -> np.ndarray:
        """Hidden information: each game's whole state in a seat's frame, float32 [B, STATE_SIZE].

        For critics and centralised training, never agents. Arguments as in ``observe``."""
        seats_arr, which, out = self._view_args(seats, out, games, L.STATE_SIZE)
        batch.state_batch(self._buf, seats_arr, self._all if which is None else which, out)
        return out

    def history(
        self,
        seats: np.ndarray | Sequence[int] | int,
        games: Any = None,
        out: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """A seat's view of each game's round (needs ``history=K``): ``(rows, counts)``.

        ``rows`` float32 [B, K, HISTORY_SIZE], newest first; ``counts`` float32 [B, 10, HISTORY_COUNTS_SIZE].
        Arguments as in ``observe``; ``out`` is a tuple of two such arrays."""
        if not self.history_length:
            raise ValueError("this Engine keeps no history; create it with history=K (events kept per game)")
        seats_arr, which, _ = self._view_args(seats, None, games, 0)
        shapes = (
            (self.num_envs, self.history_length, HISTORY_SIZE),
            (self.num_envs, L.MAX_PLAYERS, HISTORY_COUNTS_SIZE),
        )
        if out is None:
            make = np.empty if which is None else np.zeros
            rows, counts = (make(shape, np.float32) for shape in shapes)
        else:
            if not isinstance(out, tuple) or len(out) != 2:
                raise ValueError(
                    f"out must be a tuple (rows, counts) of arrays of shapes {shapes}, got {type(out).__name__}"
                )
            rows, counts = _check_out(out[0], shapes[0], "out[0]"), _check_out(out[1], shapes[1], "out[1]")
        encode_history(self._buf, seats_arr, self._all if which is None else which, rows, counts)
        return rows, counts

    def history_tokens(
        self, seats: np.ndarray | Sequence[int] | int, games: Any = None, out: np.ndarray | None = None
    ) -> np.ndarray:
        """A seat's last K events as int8 tokens [B, K, HISTORY_TOKEN_SIZE], oldest first (needs ``history=K``)."""
        if out is None or out is not self._window_out or games is not None or type(seats) is not np.ndarray:
            out = self._token_out(out, None)
            seats, which = self._token_seats(seats, games)
            bad = read_tokens(self._buf, seats, self._all if which is None else which, out)
        elif seats.dtype is _INT64 and seats.shape == self._all.shape:
            # An env's read every step: its out checked before, its seats array as it is (the
            # kernel checks the range; another memory layout only compiles another copy).
            bad = read_tokens(self._buf, seats, self._all, out)
        else:
            seats, _ = self._token_seats(seats, None)
            bad = read_tokens(self._buf, seats, self._all, out)
        if bad >= 0:
            self._raise_bad_seat(seats, bad)
        return out

    def history_tokens_new(
        self, seats: np.ndarray | Sequence[int] | int, games: Any = None, out: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The events each seat has not read through this method yet, as tokens: ``(tokens, n)``.

        ``tokens`` int8 [B, M, HISTORY_TOKEN_SIZE] (M = K or ``out``'s rows), oldest first from row 0;
        ``n`` int64 [B] counts them (more than M when the oldest were dropped)."""
        out = self._token_out(out, 0)
        seats_arr, which = self._token_seats(seats, games)
        n = np.zeros(self.num_envs, np.int64)
        bad = read_new_tokens(self._buf, seats_arr, self._all if which is None else which, out, n)
        if bad >= 0:
            self._raise_bad_seat(seats_arr, bad)
        return out, n

    def _token_seats(self, seats: Any, games: Any) -> tuple[np.ndarray, np.ndarray | None]:
        """Seats int64 [B] and the games mask (or None) of a token read."""
        if not self.history_length:
            raise ValueError("this Engine keeps no history; create it with history=K (events kept per game)")
        if (
            type(seats) is np.ndarray
            and seats.dtype is _INT64
            and seats.shape == (self.num_envs,)
            and seats.flags.c_contiguous
        ):
            return seats, None if games is None else np.ascontiguousarray(self._games_mask(games))
        seats_arr, which, _ = self._view_args(seats, self._no_out, games, 0)
        return seats_arr, which

    def _raise_bad_seat(self, seats: np.ndarray, b: int) -> None:
        raise ValueError(f"seats must be integers in 0..{self.num_players - 1}, got {int(seats[b])} for game {b}")

    def _token_out(self, out: np.ndarray | None, width: int | None) -> np.ndarray:
        """The int8 out array of a token read (new if None); ``width`` None: its rows must be K."""
        K = self.history_length
        if not K:
            raise ValueError("this Engine keeps no history; create it with history=K (events kept per game)")
        if out is None:
            return np.zeros((self.num_envs, K, HISTORY_TOKEN_SIZE), np.int8)
        if width is None:
            if out is self._window_out:  # checked at its first read (a batch of one reads every step)
                return out
            self._window_out = _check_out(out, (self.num_envs, K, HISTORY_TOKEN_SIZE), "out", np.int8)
            return out
        if not isinstance(out, np.ndarray) or out.ndim != 3 or out.shape[1] < 1:
            raise ValueError(
                f"out must be an int8 array of shape ({self.num_envs}, M, {HISTORY_TOKEN_SIZE}) with M >= 1, "
                f"got {getattr(out, 'shape', type(out).__name__)}"
            )
        return _check_out(out, (self.num_envs, out.shape[1], HISTORY_TOKEN_SIZE), "out", np.int8)

    def history_observation(
        self,
        seats: np.ndarray | Sequence[int] | int,
        form: str = "rows",
        length: int | None = None,
        games: Any = None,
    ) -> dict[str, np.ndarray]:
        """The entries an env adds for the history: ``{"history", "history_counts"}`` or ``{"history_tokens"}``.

        ``length`` (default K) keeps the latest events only; new arrays."""
        form = check_history_form(form)
        K = self.history_length
        if not K:
            raise ValueError("this Engine keeps no history; create it with history=K (events kept per game)")
        length = K if length is None else length
        if not is_int(length) or not 1 <= length <= K:
            raise ValueError(f"length must be an integer in 1..{K} (the events this engine keeps), got {length!r}")
        if form == "tokens":
            tokens = self.history_tokens(seats, games)
            return {"history_tokens": tokens if length == K else np.ascontiguousarray(tokens[:, K - length :])}
        rows, counts = self.history(seats, games)
        return {"history": rows if length == K else np.ascontiguousarray(rows[:, :length]), "history_counts": counts}

    def history_count(self, i: int) -> int:
        """Events of game i's round so far that enter a history (however many ``history`` keeps)."""
        if not self.history_length:
            raise ValueError("this Engine keeps no history; create it with history=K (events kept per game)")
        return int(self._history_meta[self._check_index(i), L.HM_COUNT])

    def history_events(self, i: int, seat: int | None) -> list[dict[str, Any]]:
        """Game i's last K events as record events, oldest first, redacted for ``seat`` (None: omniscient)."""
        if not self.history_length:
            raise ValueError("this Engine keeps no history; create it with history=K (events kept per game)")
        i = self._check_index(i)
        if seat is not None and (not is_int(seat) or not 0 <= seat < self.num_players):
            raise ValueError(f"seat must be an integer in 0..{self.num_players - 1} or None, got {seat!r}")
        events: list[dict[str, Any]] = []
        extend_events(events, {}, history_rows(self._history[i], self._history_meta[i]))
        return [redact(ev, seat, self.rules.open_hands) for ev in events]

    _no_out = np.zeros(0, np.float32)  # _view_args' out when the caller makes its own
    _window_out: np.ndarray | None = None  # the last out history_tokens checked

    def _view_args(
        self, seats: Any, out: np.ndarray | None, games: Any, size: int
    ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
        """``observe``/``state``'s arguments checked: seats int64 [B], the games mask or None, the out array."""
        if is_int(seats) and 0 <= seats < self.num_players:
            seats_arr = self._seat_buffer
            seats_arr[:] = seats
        else:
            seats_arr = np.asarray(seats)
            if seats_arr.ndim > 1 or seats_arr.size not in (1, self.num_envs):
                raise ValueError(
                    f"seats must be one seat or {self.num_envs} seats (one per game), got shape {seats_arr.shape}"
                )
            seats_arr = np.broadcast_to(seats_arr.reshape(-1), (self.num_envs,))
            if seats_arr.dtype.kind not in "iu" or seats_arr.min() < 0 or seats_arr.max() >= self.num_players:
                raise ValueError(f"seats must be integers in 0..{self.num_players - 1}, got {seats!r}")
            seats_arr = np.ascontiguousarray(seats_arr, np.int64)
        which = None if games is None else np.ascontiguousarray(self._games_mask(games))
        if out is self._no_out:
            return seats_arr, which, out
        if out is None:
            out = (np.empty if which is None else np.zeros)((self.num_envs, size), np.float32)
        else:
            out = _check_out(out, (self.num_envs, size), "out")
        return seats_arr, which, out

    def _seed_array(self, seed: Any) -> np.ndarray:
        if seed is None:
            seed = cast(int, np.random.SeedSequence().entropy) & _MASK64  # an int when drawn from the OS
        if is_int(seed):
            return game_seeds(seed, self.num_envs)
        return self._per_game_uint64(seed, "seed")

    def _rng_state_array(self, rng_state: Any) -> np.ndarray:
        if is_int(rng_state):
            return np.full(self.num_envs, _check_seed(rng_state, "rng_state"), np.uint64)
        return self._per_game_uint64(rng_state, "rng_state")

    def _per_game_uint64(self, values: Any, name: str) -> np.ndarray:
        items = list(np.asarray(values, dtype=object).reshape(-1)) if np.ndim(values) == 1 else None
        if items is None or len(items) != self.num_envs:
            raise ValueError(
                f"{name} must be None, an integer, or a sequence of {self.num_envs} integers (one per "
                f"game), got {values!r}"
            )
        return np.array([_check_seed(x, name) for x in items], np.uint64)

    def _check_actions(self, actions: Any) -> np.ndarray:
        if (
            type(actions) is np.ndarray
            and actions.dtype == np.int64
            and actions.shape == (self.num_envs,)
            and actions.flags.c_contiguous
            and actions.flags.writeable
        ):
            return actions  # the common case, checked first because it runs every step
        if is_int(actions) and self.num_envs == 1:
            return np.array([actions], np.int64)
        arr = np.asarray(actions)
        if arr.dtype.kind not in "iu":
            raise ValueError(
                f"actions must be integers (action ids 0..{NUM_ACTIONS - 1}, or -1 to leave a game), "
                f"got dtype {arr.dtype}"
            )
        if arr.shape != (self.num_envs,):
            raise ValueError(f"actions must have shape ({self.num_envs},), got {arr.shape}")
        if arr.dtype.kind == "u" and arr.size and arr.max() >= NUM_ACTIONS:
            b = int(np.argmax(arr >= NUM_ACTIONS))  # before the int64 cast wraps huge values to -1
            raise ValueError(f"game {b}: action {arr[b]} is out of range; action ids are 0..{NUM_ACTIONS - 1}")
        # numba compiles anew for read-only or strided arrays: hand it a plain int64 copy.
        return np.array(arr, dtype=np.int64, order="C", copy=True)

    def raise_step_error(self, err: int, actions: np.ndarray) -> None:
        """Raise the ValueError for a step driver's error code ``err`` on these ``actions``."""
        code, b = divmod(err, 2**32)
        if code == batch.ERR_SHAPE:
            raise ValueError(f"actions must have shape ({self.num_envs},), got {np.shape(actions)}")
        a = int(actions[b])
        if code == batch.ERR_OUT_OF_RANGE:
            raise ValueError(
                f"game {b}: action {a} is out of range; action ids are 0..{NUM_ACTIONS - 1} (-1 leaves a game as it is)"
            )
        if code == batch.ERR_FINISHED:
            kind = "terminated" if self._g[b, L.G_DONE] == 1 else "truncated"
            raise ValueError(
                f"game {b}: the round is over ({kind}); call reset(), pass -1 for this game, or "
                f"create the Engine with autoreset=True"
            )
        legal = ", ".join(f"{x} ({action_name(int(x))})" for x in np.flatnonzero(self.legal_mask[b]))
        phase = L.PHASE_NAMES[self._g[b, L.G_PHASE]]
        raise ValueError(
            f"game {b}: action {a} ({action_name(a)}) is not legal for player "
            f"{self._g[b, L.G_PLAYER]} in phase '{phase}'; legal actions: [{legal}]"
        )

    # --- inspection ------------------------------------------------------------------------

    @property
    def scores(self) -> np.ndarray:
        """Points per game and seat, int64 [B, num_players] (R8), a read-only view."""
        view = self._pl[:, :, L.PL_SCORE]
        view.flags.writeable = False
        return view

    def game_state(self, i: int = 0) -> dict[str, Any]:
        """Game i as a JSON-serialisable dict; it holds every hand (hidden information; keys: docs/engine.md)."""
        i = self._check_index(i)
        g, pl, n = self._g[i], self._pl[i], self.num_players
        hands = [np.repeat(np.arange(NUM_CARD_TYPES), self._hands[i, p]).tolist() for p in range(n)]
        winners = [p for p in range(n) if (int(g[L.G_WINNERS]) >> p) & 1]
        color = int(g[L.G_COLOR])
        return {
            "num_players": n,
            "current_player": int(g[L.G_PLAYER]),
            "phase": L.PHASE_NAMES[g[L.G_PHASE]],
            "direction": int(g[L.G_DIRECTION]),
            "current_color": color if color >= 0 else None,
            "top_card": int(g[L.G_TOP]),
            "hands": hands,
            "draw_pile_size": int(g[L.G_DRAW_SIZE]),
            "discard_pile": self._piles[i, L.PILE_DISCARD, : g[L.G_DISCARD_SIZE]].tolist(),
            "pending_draw": int(g[L.G_PENDING]),
            "scores": pl[:, L.PL_SCORE].tolist(),
            "uno_called": (
                [bool(x) for x in pl[:, L.PL_UNO_CALLED]]
                if self.rules.uno_call == "explicit"
                else [len(h) == 1 for h in hands]
            ),
            "winner": (winners[0] if len(winners) == 1 else winners) if winners else None,
            "turn": int(g[L.G_TURN]),
            "dealer": int(g[L.G_DEALER]),
            "eliminated": [bool(x) for x in pl[:, L.PL_ELIMINATED]],
            "round": int(g[L.G_ROUND]),
            # Public history (R11): colour index or None per seat.
            "drew_on_color": [int(x) - 1 if x else None for x in pl[:, L.PL_DREW_ON]],
            "named_color": [int(x) - 1 if x else None for x in pl[:, L.PL_NAMED]],
        }

    def check_invariants(self) -> list[tuple[int, str]]:
        """Every game whose state breaks an invariant, with what broke (empty when all hold)."""
        out = np.zeros(self.num_envs, np.int64)
        invariants.check_batch(self._state, self._cfg, self._deck, self.legal_mask, out)
        return [(int(b), invariants.MESSAGES[out[b]]) for b in np.flatnonzero(out)]

    def draw_pile(self, i: int = 0) -> list[int]:
        """Hidden information: game i's draw pile, bottom to top (for tests and tools, never agents)."""
        i = self._check_index(i)
        return self._piles[i, L.PILE_DRAW, : self._g[i, L.G_DRAW_SIZE]].tolist()

    def record(self, i: int = 0) -> dict[str, Any]:
        """Game i's current round as a JSON-serialisable record (needs ``record=True``)."""
        if self._recorder is None:
            raise ValueError("this Engine does not record; create it with record=True")
        return self._recorder.record(self._check_index(i))

    def record_events(self, i: int = 0, start: int = 0) -> list[dict[str, Any]]:
        """Game i's current round's record events from number ``start`` on (needs ``record=True``)."""
        if self._recorder is None:
            raise ValueError("this Engine does not record; create it with record=True")
        if not is_int(start) or start < 0:
            raise ValueError(f"start must be an integer >= 0, got {start!r}")
        return self._recorder.events(self._check_index(i), int(start))

    def last_record(self, i: int = 0) -> dict[str, Any] | None:
        """Game i's previous round (finished before an auto-reset), or None."""
        if self._recorder is None:
            raise ValueError("this Engine does not record; create it with record=True")
        return self._recorder.last_record(self._check_index(i))

    def _check_index(self, i: Any) -> int:
        if not is_int(i) or not 0 <= i < self.num_envs:
            raise ValueError(f"game index must be an integer in 0..{self.num_envs - 1}, got {i!r}")
        return int(i)

    # --- search support --------------------------------------------------------------------

    def copy_game(self, source: Engine, i: int, j: int) -> None:
        """Make game j of this engine an exact copy of game i of ``source`` (same rules and seats)."""
        self.copy_games(source, np.array([source._check_index(i)]), np.array([self._check_index(j)]))

    def copy_games(self, source: Engine, i: Any, j: Any) -> None:
        """Copy games ``i[k]`` of ``source`` into games ``j[k]`` (``source`` may be this engine; ``j`` unique)."""
        if not isinstance(source, Engine) or source.rules != self.rules or source.num_players != self.num_players:
            raise ValueError("copy_game(s) needs an engine with the same rules and num_players")
        i, j = source._index_array(i, "i"), self._index_array(j, "j")
        if i.shape != j.shape:
            raise ValueError(f"i and j must have the same length, got {i.size} and {j.size}")
        if np.unique(j).size != j.size:
            raise ValueError("j must not repeat a game (each destination is written once)")
        if self.history_length and source.history_length != self.history_length:
            raise ValueError(
                "copy_game(s) into an engine that keeps a history needs a source with the same history length, "
                f"got {source.history_length} and {self.history_length}"
            )
        for dst, src in zip(self._state[:5], source._state[:5], strict=True):
            dst[j] = src[i]
        if self.history_length:  # an engine without one (a search's rollouts) takes the games alone
            for name in ("_history", "_history_meta", "_history_counts", "_history_tokens", "_history_read"):
                getattr(self, name)[j] = getattr(source, name)[i]
        for name in ("observation", "legal_mask", "current_player", "terminated", "truncated", "rewards"):
            getattr(self, name)[j] = getattr(source, name)[i]

    def _index_array(self, idx: Any, name: str) -> np.ndarray:
        arr = np.asarray(idx)
        if arr.ndim != 1 or arr.dtype.kind not in "iu" or (arr.size and (arr.min() < 0 or arr.max() >= self.num_envs)):
            raise ValueError(f"{name} must be a 1-D array of game indices in 0..{self.num_envs - 1}, got {idx!r}")
        return arr.astype(np.int64)

    def resample_hidden(
        self, games: Any, seat: int, rng: np.random.Generator, exclude: Any = None, max_tries: int = 64
    ) -> np.ndarray:
        """Redeal what ``seat`` cannot see in ``games`` (an index, indices or a bool mask) and reseed them from ``rng``.

        ``exclude`` bool [num_players, 57] (or one per listed game): ``exclude[p, t]`` forbids seat ``p``
        cards of type ``t``. Returns int8 per listed game: 0 exact, 1 valid after ``max_tries``, 2 dropped."""
        if is_int(games):
            which = np.zeros(self.num_envs, bool)
            which[self._check_index(games)] = True
        else:
            which = self._games_mask(games)
        if not is_int(seat) or not 0 <= seat < self.num_players:
            raise ValueError(f"seat must be an integer in 0..{self.num_players - 1}, got {seat!r}")
        if not isinstance(rng, np.random.Generator):
            raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
        games_arr = np.flatnonzero(which).astype(np.int64)
        status = np.zeros(games_arr.size, np.int8)
        if exclude is None:
            u = rng.random((games_arr.size, self._piles.shape[2]))
            seeds = rng.integers(0, 2**64, size=games_arr.size, dtype=np.uint64)
            batch.resample_batch(self._state, self._cfg, games_arr, int(seat), u, seeds)
        else:
            ex = self._exclusions(exclude, games_arr.size)
            if not is_int(max_tries) or max_tries < 1:
                raise ValueError(f"max_tries must be a positive integer, got {max_tries!r}")
            seeds = rng.integers(0, 2**64, size=(2, games_arr.size), dtype=np.uint64)
            batch.resample_constrained_batch(
                self._state, self._cfg, games_arr, int(seat), ex, seeds[0], seeds[1], int(max_tries), status
            )
        self._run_codes(which, batch.REFRESH)
        return status

    def hand_counts(self, games: Any) -> np.ndarray:
        """Hidden information: every seat's hand in the listed games, int64 [G, num_players, 57]."""
        idx = self._index_array(games, "games")
        return self._hands[idx, : self.num_players].astype(np.int64)

    def shuffle_draw_pile(self, games: Any, rng: np.random.Generator) -> None:
        """Shuffle the draw pile of ``games`` (an index, indices or a bool mask) and reseed them from ``rng``.

        Every hand stays, so a search dealing this way reads hidden state (fair only with open hands)."""
        if is_int(games):
            which = np.zeros(self.num_envs, bool)
            which[self._check_index(games)] = True
        else:
            which = self._games_mask(games)
        if not isinstance(rng, np.random.Generator):
            raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
        if self._recorder is not None:
            raise ValueError(
                "shuffle_draw_pile() would change draws a record cannot replay; create it with record=False"
            )
        games_arr = np.flatnonzero(which).astype(np.int64)
        u = rng.random((games_arr.size, self._piles.shape[2]))
        seeds = rng.integers(0, 2**64, size=games_arr.size, dtype=np.uint64)
        batch.shuffle_draw_batch(self._state, games_arr, u, seeds)
        self._run_codes(which, batch.REFRESH)

    def _exclusions(self, exclude: Any, num_games: int) -> np.ndarray:
        ex = np.asarray(exclude)
        one = (self.num_players, NUM_CARD_TYPES)
        if ex.dtype != np.bool_ or ex.shape not in (one, (num_games, *one)):
            raise ValueError(
                f"exclude must be a bool array of shape {one} or {(num_games, *one)} (one per listed game), "
                f"got {ex.dtype} {ex.shape}"
            )
        return np.ascontiguousarray(np.broadcast_to(ex, (num_games, *one)))

    def snapshot(self) -> np.ndarray:
        """A copy of the whole engine state as one byte array, for ``restore``."""
        return self._buf.copy()

    def restore(self, snapshot: np.ndarray) -> None:
        """Put back a ``snapshot`` of an engine of the same sizes and rules (not while recording)."""
        if self._recorder is not None:
            raise ValueError("restore() cannot rewind a recording engine; create it with record=False")
        if not isinstance(snapshot, np.ndarray) or snapshot.dtype != np.uint8 or snapshot.shape != self._buf.shape:
            raise ValueError("snapshot must come from snapshot() of an engine with the same sizes")
        # Sizes (the header) and rules (cfg) must match; compared as bytes, the cheapest way.
        head = L.HEADER_SIZE * 8
        if snapshot[:head].tobytes() != self._buf[:head].tobytes():
            raise ValueError("snapshot must come from snapshot() of an engine with the same sizes")
        at = self._cfg.ctypes.data - self._buf.ctypes.data
        if snapshot[at : at + self._cfg.nbytes].tobytes() != self._cfg.tobytes():
            raise ValueError("snapshot was taken under other rules or engine options")
        np.copyto(self._buf, snapshot)

    def set_next_draws(self, i: int, cards: Sequence[int]) -> None:
        """Make ``cards`` (type ids, first drawn first) the next draws of game i.

        An empty draw pile is refilled from the discard pile first (R12.2), so call this just before the
        action that draws. Hidden information only changes."""
        i = self._check_index(i)
        if self._recorder is not None:
            raise ValueError("set_next_draws() would change draws a record cannot replay; create it with record=False")
        want = [int(c) for c in cards] if not isinstance(cards, (str, bytes)) else None
        if want is None or any(not 0 <= c < NUM_CARD_TYPES for c in want):
            raise ValueError(f"cards must be card type ids 0..{NUM_CARD_TYPES - 1}, got {cards!r}")
        if want and self._g[i, L.G_DRAW_SIZE] == 0:
            kernels.reshuffle(self._state, i, self._cfg[L.C_RESHUFFLE_ALL])
        pile = self.draw_pile(i)
        rest = list(pile)
        for c in want:
            if c not in rest:
                raise ValueError(
                    f"game {i}: cannot draw {want} next: the draw pile holds {sorted(pile)} (the discard pile "
                    f"is reshuffled only once the draw pile is empty, R12.2)"
                )
            rest.reverse()
            rest.remove(c)  # the copy nearest the top, so the others keep their places
            rest.reverse()
        self._piles[i, L.PILE_DRAW, : len(pile)] = rest + want[::-1]
        which = np.zeros(self.num_envs, bool)
        which[i] = True
        self._run_codes(which, batch.REFRESH)

    # --- positions -------------------------------------------------------------------------

    def set_game(
        self,
        i: int,
        *,
        hands: Sequence[Sequence[int]],
        discard_pile: Sequence[int],
        draw_pile: Sequence[int],
        current_player: int,
        current_color: int | None = None,
        direction: int = 1,
        dealer: int | None = None,
        scores: Sequence[int] | None = None,
        rng_state: int | None = None,
        top_card: int | None = None,
    ) -> StepResult:
        """Put game i in phase ``play`` at a given position (every card of the deck placed once; docs/engine.md).

        Piles are bottom to top; ``current_color`` must be given when the top card is a wild; ``top_card`` only
        for an empty ``discard_pile`` under ``reshuffle='every_played_card'``."""
        i = self._check_index(i)
        self._check_position_args(hands, discard_pile, draw_pile, current_player, dealer, scores)
        top = self._top_card(discard_pile, top_card)
        counts = self._count_cards(hands, discard_pile, draw_pile)
        current_color = self._current_color(top, current_player, current_color, direction)
        if rng_state is not None:
            rng_state = _check_seed(rng_state, "rng_state")
        self._write_position(
            i, counts, discard_pile, draw_pile, top, current_player, current_color, direction, dealer, scores
        )
        if rng_state is not None:
            self._rng[i, 0] = rng_state
        which = np.zeros(self.num_envs, bool)
        which[i] = True
        self._run_codes(which, batch.REFRESH)
        if self.history_length:  # a position has no history: it starts here
            clear_history(self._history_meta, self._history_counts, self._history_read, i, int(self._g[i, L.G_COLOR]))
        if self._recorder is not None:
            self._recorder.on_set(i, self.game_state(i), self.draw_pile(i))
        return self._result

    def _check_position_args(
        self, hands: Any, discard_pile: Any, draw_pile: Any, current_player: Any, dealer: Any, scores: Any
    ) -> None:
        n = self.num_players
        if len(hands) != n:
            raise ValueError(f"hands must list {n} hands, got {len(hands)}")
        piles = [
            *((f"hands[{p}]", h) for p, h in enumerate(hands)),
            ("discard_pile", discard_pile),
            ("draw_pile", draw_pile),
        ]
        for name, cards in piles:
            arr = np.asarray(cards) if isinstance(cards, (list, tuple, np.ndarray)) else None
            if (
                arr is not None
                and arr.ndim == 1
                and arr.dtype.kind in "iu"
                and ((arr >= 0) & (arr < NUM_CARD_TYPES)).all()
            ):
                continue  # the common case, checked at once (searches set many positions)
            bad = [c for c in cards if not is_int(c) or not 0 <= c < NUM_CARD_TYPES]
            if bad:
                raise ValueError(f"{name} holds {bad[:3]!r}: card type ids are integers 0..{NUM_CARD_TYPES - 1} (R1)")
        for name, value in (("current_player", current_player), ("dealer", dealer)):
            if value is not None and (not is_int(value) or not 0 <= value < n):
                raise ValueError(f"{name} must be a seat 0..{n - 1}, got {value!r}")
        if scores is not None and (len(scores) != n or not all(is_int(x) for x in scores)):
            raise ValueError(f"scores must be {n} integers (one per seat), got {scores!r}")

    def _count_cards(self, hands: Any, discard_pile: Any, draw_pile: Any) -> np.ndarray:
        """The hands' card counts [P + 1, NUM_CARD_TYPES] (last row left for the discard pile),
        once every card of the deck is placed exactly once and a top card is there."""
        n = self.num_players
        counts = np.zeros((n + 1, NUM_CARD_TYPES), np.int64)
        for p, hand in enumerate(hands):
            np.add.at(counts[p], np.asarray(hand, np.int64), 1)
        placed = counts[:n].sum(0) + np.bincount(
            np.asarray(list(discard_pile) + list(draw_pile), np.int64), minlength=NUM_CARD_TYPES
        )
        if not np.array_equal(placed, self._deck):
            diff = {int(t): int(placed[t] - self._deck[t]) for t in np.flatnonzero(placed != self._deck)}
            raise ValueError(
                f"every card of the deck must be placed exactly once; surplus (+) / missing (-) by type: {diff}"
            )
        return counts

    def _top_card(self, discard_pile: Any, top_card: Any) -> int:
        """The card to match: the top of ``discard_pile``, or ``top_card`` when that pile is empty."""
        if len(discard_pile):
            if top_card is not None:
                raise ValueError("top_card is given only with an empty discard_pile (its top is the card to match)")
            return int(discard_pile[-1])
        if self.rules.reshuffle != "every_played_card":
            raise ValueError(
                f"discard_pile must hold at least the top card (an empty one needs reshuffle='every_played_card', "
                f"got reshuffle={self.rules.reshuffle!r})"
            )
        if top_card is None or not is_int(top_card) or not 0 <= top_card < NUM_CARD_TYPES:
            raise ValueError(
                f"with an empty discard_pile, top_card must be the card type to match (0..{NUM_CARD_TYPES - 1}), "
                f"got {top_card!r}"
            )
        return int(top_card)

    def _current_color(self, top: int, current_player: int, current_color: Any, direction: Any) -> int:
        """The position's colour: the one given, else the top card's (a wild's must be given)."""
        if current_color is None:
            if IS_WILD[top]:
                raise ValueError("current_color must be given when the top card is a wild")
            current_color = int(CARD_COLOR[top])
        if (
            not 0 <= current_color < NUM_COLORS
            or direction not in (1, -1)
            or not 0 <= current_player < self.num_players
        ):
            raise ValueError("current_color must be 0..3, direction +1/-1, current_player a seat")
        return current_color

    def _write_position(
        self,
        i: int,
        counts: np.ndarray,
        discard_pile: Any,
        draw_pile: Any,
        top: int,
        current_player: int,
        current_color: int,
        direction: int,
        dealer: int | None,
        scores: Any,
    ) -> None:
        n = self.num_players
        g = self._g[i]
        g[:] = 0
        g[L.G_PLAYER] = current_player
        g[L.G_DIRECTION] = direction
        g[L.G_PHASE] = L.PHASE_PLAY
        g[L.G_COLOR] = current_color
        g[L.G_DRAWN] = -1
        g[L.G_WD4_PLAYER] = -1
        g[L.G_PREV_COLOR] = -1
        g[L.G_CATCH] = -1
        g[L.G_ACTIVE] = n
        g[L.G_DEALER] = (current_player - 1) % n if dealer is None else dealer
        g[L.G_DRAW_SIZE] = len(draw_pile)
        g[L.G_DISCARD_SIZE] = len(discard_pile)
        g[L.G_TOP] = top
        self._hands[i] = counts
        self._hands[i, n] = np.bincount(np.asarray(discard_pile, np.int64), minlength=NUM_CARD_TYPES)
        self._piles[i] = 0
        self._piles[i, L.PILE_DRAW, : len(draw_pile)] = draw_pile
        self._piles[i, L.PILE_DISCARD, : len(discard_pile)] = discard_pile
        self._pl[i] = 0
        self._pl[i, :, L.PL_HAND_SIZE] = counts[:n].sum(1)
        if scores is not None:
            self._pl[i, :, L.PL_SCORE] = scores
