"""A seat's history (``Engine(history=K)``): each game's public events, folded as they happen
and encoded for the seat that reads them.

The fold appends each step's events to the game's ring of its last K rows (``layout.HR_*``) and
updates per-seat counts over the whole round (``layout.HC_*``), so a K shorter than the round
still keeps the round's facts; a deal clears both. Who may see what is the event table's."""

from __future__ import annotations

import numpy as np
from numba import njit

from ..cards import CARD_COLOR, NUM_CARD_TYPES
from ..observation import field_offsets
from ..rules import MAX_PLAYERS
from .borrow import prefetch, view_at
from .events import CARD_COLUMN, DRAW_REASONS, EVENT_NAMES, EXTRA_COLUMN, IN_HISTORY, NUM_EVENT_KINDS
from .layout import (
    C_OPEN_HANDS,
    C_SIZE,
    DRAW_VOLUNTARY,
    EV_COLOR,
    EV_DEAL,
    EV_DRAW,
    EV_FLIP,
    EV_PLAY,
    EV_RETURN_FIRST,
    EV_SHUFFLE_HANDS,
    EV_SWAP,
    F_CFG,
    F_EVENT_COUNTS,
    F_EVENTS,
    F_G,
    F_HISTORY,
    F_HISTORY_COUNTS,
    F_HISTORY_META,
    F_HISTORY_READ,
    F_HISTORY_TOKENS,
    G_PHASE,
    G_PLAYER,
    G_SIZE,
    H_EVENT_WIDTH,
    H_HISTORY,
    H_NUM_ENVS,
    H_NUM_PLAYERS,
    H_OFFSETS,
    HC_DRAWN,
    HC_KEPT,
    HC_NAMED,
    HC_OFF,
    HC_PLAYED,
    HC_SIZE,
    HEADER_SIZE,
    HF_DRAWN_PLAYED,
    HM_COLOR,
    HM_COUNT,
    HM_DEALING,
    HM_DRAW_CARD,
    HM_DRAW_COLOR,
    HM_DRAW_SEAT,
    HM_SIZE,
    HR_CARD,
    HR_COLOR,
    HR_EXTRA,
    HR_FLAGS,
    HR_KIND,
    HR_PLAYER,
    HR_SIZE,
    HT_SIZE,
    PHASE_POST_DRAW,
)

# The encoded history row: (name, length, meaning), in order; offsets follow from the lengths.
HISTORY_FIELDS: tuple[tuple[str, int, str], ...] = (
    ("present", 1, "1 for a row holding an event (rows past the round's events are 0)"),
    ("actor", MAX_PLAYERS, "one-hot relative seat that acted (all 0 for table events: flip, reshuffle, round end)"),
    ("kind", NUM_EVENT_KINDS, "one-hot event kind: " + ", ".join(EVENT_NAMES)),
    (
        "card",
        NUM_CARD_TYPES,
        "one-hot card: played, turned up, put under the top card or tried illegally; a drawn card only for the drawer (every seat with open_hands)",
    ),
    ("color_before", 4, "one-hot colour in play before the event (all 0 while none)"),
    ("color", 4, "one-hot colour chosen (color events)"),
    ("reason", len(DRAW_REASONS), "one-hot reason of a draw: " + ", ".join(DRAW_REASONS)),
    (
        "number",
        1,
        "cards played at once (play), accepted (accept), reshuffled (reshuffle) or shuffled (shuffle_hands); points (score); actions (truncate)",
    ),
    (
        "target",
        MAX_PLAYERS,
        "relative seat the event names: challenged, swapped with, caught (one-hot); winners (round_end, match_end)",
    ),
    ("guilty", 1, "1 for a challenge that found the Wild Draw Four a bluff (R6)"),
    ("flag", 1, "1 for a colour drawn at random (color), or a reshuffle of every played card (reshuffle)"),
    ("drawn_played", 1, "1 for a play of the card its player had just drawn (R4)"),
)
# The per-seat counts over the round: (name, length, meaning), by relative seat.
HISTORY_COUNT_FIELDS: tuple[tuple[str, int, str], ...] = (
    ("played", 1, "cards the seat played this round"),
    ("drawn", 1, "cards the seat drew this round, for any reason"),
    ("kept_on", 4, "per colour: turns the seat ended keeping a card it chose to draw while that colour was in play"),
    ("off_color_on", 4, "per colour: cards it played that did not match that colour in play (a wild, or by rank)"),
    ("named", 4, "per colour: times it named that colour with a wild"),
)

# A history token (int8), for embedding layers: (name, vocabulary size, meaning), in column
# order. Every value lies in 0..size-1 and 0 means "none", so a row of zeros is padding.
TOKEN_NONE = 0
TOKEN_HIDDEN_CARD = NUM_CARD_TYPES + 1  # a card the reading seat may not see (another's draw)
TOKEN_MAX_VALUE = 127  # numbers above it read as it
HISTORY_TOKEN_FIELDS: tuple[tuple[str, int, str], ...] = (
    ("kind", NUM_EVENT_KINDS + 1, "event kind + 1: " + ", ".join(f"{k + 1} {n}" for k, n in enumerate(EVENT_NAMES))),
    ("actor", MAX_PLAYERS + 1, "relative seat that acted + 1 (1: the reading seat); 0 for table events"),
    (
        "card",
        NUM_CARD_TYPES + 2,
        "card id + 1 (played, turned up, put under the top card, tried illegally, or drawn by the reading seat); "
        f"{NUM_CARD_TYPES + 1}: a card drawn that the reading seat may not see (every seat sees them with open_hands)",
    ),
    ("color", 5, "colour in play before the event + 1; 0 while none"),
    (
        "value",
        TOKEN_MAX_VALUE + 1,
        "by kind: colour chosen + 1 (color), reason + 1 (draw: "
        + ", ".join(f"{i + 1} {r}" for i, r in enumerate(DRAW_REASONS))
        + "), action id + 1 (penalty), number of winners (round_end, match_end), else the event's number "
        f"(cards played, accepted, reshuffled or shuffled; points; actions), at most {TOKEN_MAX_VALUE}",
    ),
    (
        "target",
        MAX_PLAYERS + 1,
        "relative seat the event names + 1: challenged, swapped with, caught; the first winner clockwise from the "
        "reading seat (round_end, match_end); 0 none",
    ),
    (
        "flags",
        8,
        "bits: 1 a play of the card its player had just drawn (R4); 2 a colour drawn at random, or a reshuffle of "
        "every played card; 4 a challenge that found the Wild Draw Four a bluff (R6)",
    ),
)
HISTORY_TOKEN_SIZE = len(HISTORY_TOKEN_FIELDS)
assert HISTORY_TOKEN_SIZE == HT_SIZE
# Each column's vocabulary size, for nn.Embedding(size, dim) per column.
HISTORY_TOKEN_VOCAB: tuple[int, ...] = tuple(size for _name, size, _meaning in HISTORY_TOKEN_FIELDS)
TK_KIND, TK_ACTOR, TK_CARD, TK_COLOR, TK_VALUE, TK_TARGET, TK_FLAGS = range(HT_SIZE)
TF_DRAWN_PLAYED, TF_FLAG, TF_GUILTY = 1, 2, 4

HISTORY_OFFSETS = field_offsets(HISTORY_FIELDS)
HISTORY_SIZE = HISTORY_OFFSETS["_end"]
HISTORY_COUNTS_SIZE = field_offsets(HISTORY_COUNT_FIELDS)["_end"]
assert HISTORY_COUNTS_SIZE == HC_SIZE
_PRESENT = HISTORY_OFFSETS["present"]
_ACTOR = HISTORY_OFFSETS["actor"]
_KIND = HISTORY_OFFSETS["kind"]
_CARD = HISTORY_OFFSETS["card"]
_COLOR_BEFORE = HISTORY_OFFSETS["color_before"]
_COLOR = HISTORY_OFFSETS["color"]
_REASON = HISTORY_OFFSETS["reason"]
_NUMBER = HISTORY_OFFSETS["number"]
_TARGET = HISTORY_OFFSETS["target"]
_GUILTY = HISTORY_OFFSETS["guilty"]
_FLAG = HISTORY_OFFSETS["flag"]
_DRAWN_PLAYED = HISTORY_OFFSETS["drawn_played"]
# events.py's column type codes (events._TYPE_CODES), as the encoder reads them.
_T_CARD, _T_SEAT, _T_SEATS, _T_NUMBER, _T_REASON, _T_COLOR, _T_VERDICT, _T_FLAG, _T_ACTION = range(1, 10)
_ACTOR_ONLY = 16
_CARD_COLUMN = CARD_COLUMN
_EXTRA_COLUMN = EXTRA_COLUMN
_IN_HISTORY = IN_HISTORY


@njit(cache=True, inline="always")
def unpack_history(buf):
    """(g, events, event_counts, cfg, history, history_meta, history_counts) of the engine's buffer."""
    h = view_at(buf, 0, (HEADER_SIZE,), np.int64)
    B, P, W, K = h[H_NUM_ENVS], h[H_NUM_PLAYERS], h[H_EVENT_WIDTH], h[H_HISTORY]
    o = H_OFFSETS
    return (
        view_at(buf, h[o + F_G], (B, G_SIZE), np.int64),
        view_at(buf, h[o + F_EVENTS], (W, B, 4), np.int32),
        view_at(buf, h[o + F_EVENT_COUNTS], (B,), np.int32),
        view_at(buf, h[o + F_CFG], (C_SIZE,), np.int64),
        view_at(buf, h[o + F_HISTORY], (B, K, HR_SIZE), np.int32),
        view_at(buf, h[o + F_HISTORY_META], (B, HM_SIZE), np.int64),
        view_at(buf, h[o + F_HISTORY_COUNTS], (B, P, HC_SIZE), np.int32),
    )


@njit(cache=True, inline="always")
def unpack_tokens(buf):
    """(history_meta, history_tokens [B, P, K, HT_SIZE], history_read) of the engine's buffer."""
    h = view_at(buf, 0, (HEADER_SIZE,), np.int64)
    B, P, K = h[H_NUM_ENVS], h[H_NUM_PLAYERS], h[H_HISTORY]
    o = H_OFFSETS
    return (
        view_at(buf, h[o + F_HISTORY_META], (B, HM_SIZE), np.int64),
        view_at(buf, h[o + F_HISTORY_TOKENS], (B, P, K, HT_SIZE), np.int8),
        view_at(buf, h[o + F_HISTORY_READ], (B, P), np.int64),
    )


@njit(cache=True)
def clear_history(meta, counts, read, b, color):
    """Game b starts a round (or a position) with no history; ``color`` is in play."""
    meta[b, HM_COUNT] = 0
    meta[b, HM_COLOR] = color
    meta[b, HM_DRAW_SEAT] = -1
    meta[b, HM_DRAW_CARD] = -1
    meta[b, HM_DRAW_COLOR] = -1
    meta[b, HM_DEALING] = 0
    counts[b, :, :] = 0
    read[b, :] = 0


@njit(cache=True, inline="always")
def _write_tokens(tok, b, r, open_hands, kind, p, card, extra, color, flags):
    """Row r of game b's token ring of every seat: the event in that seat's frame, redacted."""
    n = tok.shape[1]
    t_card = _CARD_COLUMN[kind]
    t_extra = _EXTRA_COLUMN[kind] & (_ACTOR_ONLY - 1)
    value = 0
    if t_extra == _T_NUMBER:
        value = min(extra, TOKEN_MAX_VALUE)
    elif t_extra == _T_REASON or t_extra == _T_COLOR:
        value = extra + 1
    elif t_extra == _T_VERDICT and extra:
        flags |= TF_GUILTY
    elif t_extra == _T_SEATS:
        for q in range(n):
            value += (extra >> q) & 1
    tc = t_card & (_ACTOR_ONLY - 1)
    if tc == _T_FLAG and card == 1:
        flags |= TF_FLAG
    elif tc == _T_ACTION:
        value = card + 1
    for seat in range(n):
        row = tok[b, seat, r]
        row[TK_KIND] = kind + 1
        rel = p - seat  # _rel without a division: this runs once per event and seat
        row[TK_ACTOR] = (rel + n if rel < 0 else rel) + 1 if p >= 0 else 0
        c = 0
        if tc == _T_CARD:
            c = card + 1 if p == seat or open_hands or (t_card & _ACTOR_ONLY) == 0 else TOKEN_HIDDEN_CARD
        elif tc == _T_ACTION and card < NUM_CARD_TYPES:
            c = card + 1
        row[TK_CARD] = c
        row[TK_COLOR] = color + 1
        row[TK_VALUE] = value
        target = 0
        if tc == _T_SEAT:
            target = _rel(card, seat, n) + 1
        elif t_extra == _T_SEATS:
            for j in range(n):
                if (extra >> ((seat + j) % n)) & 1:
                    target = j + 1
                    break
        row[TK_TARGET] = target
        row[TK_FLAGS] = flags


@njit(cache=True, inline="always")
def _fold_row(hist, meta, counts, tok, open_hands, b, kind, p, card, extra):
    K = hist.shape[1]
    color = meta[b, HM_COLOR]
    flags = 0
    # A voluntary draw whose seat plays the card drawn next (R4 post_draw, or drawn_card) is
    # not kept; fold_history counts the draws still pending when the drawer's turn is over.
    if kind == EV_PLAY and p == meta[b, HM_DRAW_SEAT] and card == meta[b, HM_DRAW_CARD]:
        flags |= HF_DRAWN_PLAYED
        meta[b, HM_DRAW_SEAT] = -1
    if _IN_HISTORY[kind]:
        r = meta[b, HM_COUNT] % K
        hist[b, r, HR_KIND] = kind
        hist[b, r, HR_PLAYER] = p
        hist[b, r, HR_CARD] = card
        hist[b, r, HR_EXTRA] = extra
        hist[b, r, HR_COLOR] = color
        hist[b, r, HR_FLAGS] = flags
        _write_tokens(tok, b, r, open_hands, kind, p, card, extra, color, flags)
        meta[b, HM_COUNT] += 1
    if kind == EV_PLAY:
        counts[b, p, HC_PLAYED] += extra
        c = CARD_COLOR[card]
        if color >= 0 and c != color:
            counts[b, p, HC_OFF + color] += 1
        if c >= 0:
            meta[b, HM_COLOR] = c
    elif kind == EV_FLIP or kind == EV_RETURN_FIRST:
        meta[b, HM_COLOR] = CARD_COLOR[card] if kind == EV_FLIP else -1
    elif kind == EV_COLOR:
        meta[b, HM_COLOR] = extra
        if p >= 0 and card != 1:
            counts[b, p, HC_NAMED + extra] += 1
    elif kind == EV_DRAW:
        counts[b, p, HC_DRAWN] += 1
        if extra == DRAW_VOLUNTARY:
            meta[b, HM_DRAW_SEAT] = p
            meta[b, HM_DRAW_CARD] = card
            meta[b, HM_DRAW_COLOR] = color
    elif kind == EV_SWAP:
        for k in range(HC_SIZE):
            tmp = counts[b, p, k]
            counts[b, p, k] = counts[b, card, k]
            counts[b, card, k] = tmp
    elif kind == EV_SHUFFLE_HANDS:
        counts[b, :, :] = 0


_RESET = -2  # batch.RESET: a deal; every code >= 0 is an action
_AHEAD = 8  # games ahead whose rows the fold asks the CPU to fetch
_READ_AHEAD = 4  # games ahead whose token rings a read asks the CPU to fetch


@njit(cache=True)
def fold_history(buf, codes):
    """Fold the events of this step into the history of every game that stepped or was dealt
    (``codes[b]`` an action, or RESET)."""
    g, ev, evn, cfg, hist, meta, counts = unpack_history(buf)
    _meta, tok, read = unpack_tokens(buf)
    open_hands = cfg[C_OPEN_HANDS] != 0
    K = hist.shape[1]
    base = buf.ctypes.data
    for b in range(codes.shape[0]):
        # Each game's rows lie far apart in the buffer, so every game costs cache misses one
        # after another; fetching a later game's rows now overlaps them with this game's work.
        a = b + _AHEAD
        if a < codes.shape[0]:
            prefetch(buf, meta[a].ctypes.data - base)
            prefetch(buf, counts[a].ctypes.data - base)
            prefetch(buf, g[a].ctypes.data - base)
            r = meta[a, HM_COUNT] % K  # meta[a] is not fetched yet: a guess from a stale line is fine
            prefetch(buf, hist[a, r].ctypes.data - base)
            for q in range(tok.shape[1]):
                prefetch(buf, tok[a, q, r].ctypes.data - base)
        c = codes[b]
        if c < 0 and c != _RESET:
            continue
        for i in range(min(evn[b], ev.shape[0])):
            kind, p, card, extra = ev[i, b, 0], ev[i, b, 1], ev[i, b, 2], ev[i, b, 3]
            if kind == EV_DEAL:
                if not meta[b, HM_DEALING]:
                    clear_history(meta, counts, read, b, -1)
                    meta[b, HM_DEALING] = 1
                continue
            meta[b, HM_DEALING] = 0
            _fold_row(hist, meta, counts, tok, open_hands, b, kind, p, card, extra)
        ds = meta[b, HM_DRAW_SEAT]
        if ds >= 0 and not (g[b, G_PHASE] == PHASE_POST_DRAW and g[b, G_PLAYER] == ds):
            # The drawer's turn is over and the card drawn stayed in its hand.
            if meta[b, HM_DRAW_COLOR] >= 0:
                counts[b, ds, HC_KEPT + meta[b, HM_DRAW_COLOR]] += 1
            meta[b, HM_DRAW_SEAT] = -1


@njit(cache=True)
def _rel(p, seat, n):
    return (p - seat + n) % n


@njit(cache=True)
def encode_history(buf, seats, which, out, out_counts):
    """Game b's history as seat ``seats[b]`` saw it, for every b with ``which[b]``, into out and out_counts."""
    _g, _ev, _evn, cfg, hist, meta, counts = unpack_history(buf)
    K = hist.shape[1]
    n = counts.shape[1]
    open_hands = cfg[C_OPEN_HANDS] != 0
    for b in range(seats.shape[0]):
        if not which[b]:
            continue
        seat = seats[b]
        out[b, :, :] = 0.0
        out_counts[b, :, :] = 0.0
        total = meta[b, HM_COUNT]
        for j in range(min(total, K)):
            r = (total - 1 - j) % K
            kind = hist[b, r, HR_KIND]
            p = hist[b, r, HR_PLAYER]
            card = hist[b, r, HR_CARD]
            extra = hist[b, r, HR_EXTRA]
            row = out[b, j]
            row[_PRESENT] = 1.0
            if p >= 0:
                row[_ACTOR + _rel(p, seat, n)] = 1.0
            row[_KIND + kind] = 1.0
            if hist[b, r, HR_COLOR] >= 0:
                row[_COLOR_BEFORE + hist[b, r, HR_COLOR]] = 1.0
            if hist[b, r, HR_FLAGS] & HF_DRAWN_PLAYED:
                row[_DRAWN_PLAYED] = 1.0
            t = _CARD_COLUMN[kind]
            seen = p == seat or open_hands or (t & _ACTOR_ONLY) == 0
            t &= _ACTOR_ONLY - 1
            if (t == _T_CARD and seen) or (t == _T_ACTION and card < NUM_CARD_TYPES):
                row[_CARD + card] = 1.0
            elif t == _T_SEAT:
                row[_TARGET + _rel(card, seat, n)] = 1.0
            elif t == _T_FLAG and card == 1:
                row[_FLAG] = 1.0
            t = _EXTRA_COLUMN[kind] & (_ACTOR_ONLY - 1)
            if t == _T_NUMBER:
                row[_NUMBER] = extra
            elif t == _T_REASON:
                row[_REASON + extra] = 1.0
            elif t == _T_COLOR:
                row[_COLOR + extra] = 1.0
            elif t == _T_VERDICT:
                row[_GUILTY] = extra
            elif t == _T_SEATS:
                for q in range(n):
                    if (extra >> q) & 1:
                        row[_TARGET + _rel(q, seat, n)] = 1.0
        for q in range(n):
            rel = _rel(q, seat, n)
            for k in range(HC_SIZE):
                out_counts[b, rel, k] = counts[b, q, k]


@njit(cache=True)
def _copy_bytes(dst, d0, src, s0, n):
    """dst[d0 : d0 + n] = src[s0 : s0 + n], as a loop LLVM vectorises (unsigned indices: a signed
    one brings numba's negative-index check into the loop, and a byte at a time); n <= 0 copies none."""
    d, s = np.uint64(d0), np.uint64(s0)
    for i in range(np.uint64(max(n, 0))):
        dst[d + i] = src[s + i]


@njit(cache=True)
def _zero_bytes(dst, d0, n):
    d = np.uint64(d0)
    for i in range(np.uint64(max(n, 0))):
        dst[d + i] = 0


@njit(cache=True)
def _bad_seat(seats, n):
    """The first game whose seat is not in 0..n-1, else -1 (checked before anything is read)."""
    for b in range(seats.shape[0]):
        if seats[b] < 0 or seats[b] >= n:
            return b
    return -1


@njit(cache=True)
def read_tokens(buf, seats, which, out):
    """Game b's last K tokens as seat ``seats[b]`` saw them (oldest first) into out, for every b with ``which[b]``.

    Returns -1, or the first game whose seat is out of range (nothing read then)."""
    meta, tok, _read = unpack_tokens(buf)
    B, P, K = tok.shape[0], tok.shape[1], tok.shape[2]
    bad = _bad_seat(seats, P)
    if bad >= 0:
        return bad
    W = K * HT_SIZE
    ring = tok.reshape(B, P, W)
    flat = out.reshape(out.shape[0], W)
    for b in range(seats.shape[0]):
        a = b + _READ_AHEAD  # as in fold_history: a later game's ring on its way meanwhile
        if a < seats.shape[0]:
            ahead = ring[a, seats[a]]
            for k in range(0, W, 64):
                prefetch(ahead, k)
        if not which[b]:
            continue
        src, dst = ring[b, seats[b]], flat[b]
        total = meta[b, HM_COUNT]
        if total >= K:
            cut = (total % K) * HT_SIZE
            _copy_bytes(dst, 0, src, cut, W - cut)
            _copy_bytes(dst, W - cut, src, 0, cut)
        else:
            pad = (K - total) * HT_SIZE
            _zero_bytes(dst, 0, pad)
            _copy_bytes(dst, pad, src, 0, W - pad)
    return -1


@njit(cache=True)
def read_new_tokens(buf, seats, which, out, n_out):
    """The tokens of game b seat ``seats[b]`` has not read yet into out (oldest first), their number into n_out[b].

    Returns -1, or the first game whose seat is out of range (nothing read then)."""
    meta, tok, read = unpack_tokens(buf)
    B, P, K = tok.shape[0], tok.shape[1], tok.shape[2]
    bad = _bad_seat(seats, P)
    if bad >= 0:
        return bad
    M = out.shape[1]
    ring = tok.reshape(B, P, K * HT_SIZE)
    flat = out.reshape(out.shape[0], M * HT_SIZE)
    for b in range(seats.shape[0]):
        if not which[b]:
            continue
        seat = seats[b]
        src, dst = ring[b, seat], flat[b]
        total = meta[b, HM_COUNT]
        n = total - read[b, seat]
        n_out[b] = n
        read[b, seat] = total
        m = min(n, M, K)
        first = (total - m) % K  # ring row of the oldest event copied
        head = min(m, K - first)
        _copy_bytes(dst, 0, src, first * HT_SIZE, head * HT_SIZE)
        _copy_bytes(dst, head * HT_SIZE, src, 0, (m - head) * HT_SIZE)
        _zero_bytes(dst, m * HT_SIZE, (M - m) * HT_SIZE)
    return -1


def history_rows(buf_history: np.ndarray, meta_row: np.ndarray) -> list[tuple[int, int, int, int]]:
    """One game's history ring as raw event rows (kind, player, card, extra), oldest first."""
    K = buf_history.shape[0]
    total = int(meta_row[HM_COUNT])
    first = max(0, total - K)
    return [tuple(int(x) for x in buf_history[i % K, :4]) for i in range(first, total)]  # type: ignore[misc]
