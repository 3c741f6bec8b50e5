"""The ``net`` belief: the belief network's inputs, its forward pass and ``NetBelief``.

The network (one per table size, ``MODEL_PATHS``, trained by ``python -m training.fit_belief_net``)
predicts, for the seat in one relative slot, each colour void and the copies of each card type.
Its features are built here only (``net_features``), for the training data and the belief alike.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from uno_env.cards import CARD_COLOR, NUM_CARD_TYPES, NUM_COLORS, WILD
from uno_env.observation import OBS_DISCARD, OBS_HAND, OBS_HAND_SIZES, drew_on_color_of, num_seats
from uno_env.rules import MAX_PLAYERS, UnoRules, check_num_players
from uno_env.spaces import DRAW_REASONS, EVENT_NAMES, HISTORY_COUNTS_SIZE, HISTORY_OFFSETS, HISTORY_SIZE

from ..model_card import read_card, trained_for
from .public import PublicBelief

NET_ROWS = 8
"""the history rows the network reads whole (newest first)"""
EVIDENCE_ROWS = 128
"""the history rows the void evidence reads: the whole round but for the longest rounds"""
EVIDENCE_SIZE = 6 * NUM_COLORS
"""the void evidence's width: six figures per colour (``void_evidence``)"""
MAX_COPIES = 4
"""the largest count of one type in a hand the count head predicts (the classic deck's wilds)"""
TRAINED_RULES = UnoRules.preset("classic")
"""the rules of the rounds the network learned from"""
_OUTSIDE_THE_ROUND = ("card_points", "scoring", "target_points", "episode", "max_turns", "turn_limit_rule")


def reads_rules(rules: UnoRules) -> bool:
    """Whether the network reads rounds under ``rules``: those it learned, scoring and limits aside."""
    return rules.replace(**{k: getattr(TRAINED_RULES, k) for k in _OUTSIDE_THE_ROUND}) == TRAINED_RULES


CLASSIC_DECK = TRAINED_RULES.counts.astype(np.int64)
MODEL_PATH = Path(__file__).resolve().parent.parent / "pretrained" / "belief_net.npz"
MODEL_PATHS = {2: MODEL_PATH, 4: MODEL_PATH.with_name("belief_net_4p.npz")}
"""the shipped network of each table size it reads"""
_LOG_FACT = np.concatenate([[0.0], np.cumsum(np.log(np.arange(1, 256)))])


def log_choose(n: np.ndarray, k: np.ndarray) -> np.ndarray:
    """log C(n, k) elementwise (integer arrays, 0 <= k <= n < 256); -inf where k is out of 0..n."""
    n, k = np.asarray(n, np.int64), np.asarray(k, np.int64)
    ok = (k >= 0) & (k <= n)
    nn, kk = np.clip(n, 0, 255), np.clip(k, 0, 255)
    out = _LOG_FACT[nn] - _LOG_FACT[np.clip(kk, 0, nn)] - _LOG_FACT[np.clip(nn - kk, 0, 255)]
    return np.where(ok, out, -np.inf)


def colour_sums(counts: np.ndarray) -> np.ndarray:
    """Per colour, the coloured cards of ``counts`` [..., 57]: int [..., 4]."""
    out = np.zeros((*counts.shape[:-1], NUM_COLORS), np.int64)
    for c in range(NUM_COLORS):
        out[..., c] = counts[..., :WILD][..., CARD_COLOR[:WILD] == c].sum(-1)
    return out


def hypergeometric_voids(allowed: np.ndarray, hand_size: np.ndarray) -> np.ndarray:
    """P(no card of colour c) for a hand of ``hand_size`` cards dealt uniformly from ``allowed``
    ([N, 57] copies): float [N, 4]."""
    total = allowed.sum(-1)
    by_colour = colour_sums(allowed)
    h = np.asarray(hand_size)[:, None]
    return np.exp(log_choose(total[:, None] - by_colour, h) - log_choose(total[:, None], h))


def count_log_marginals(allowed: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """log P(k copies of type t), k = 0..MAX_COPIES, in a hand of ``sizes`` cards dealt uniformly
    from ``allowed`` ([N, 57] copies; hypergeometric marginals): float [N, 57, MAX_COPIES + 1]."""
    k = np.arange(MAX_COPIES + 1)[None, None, :]
    h = np.asarray(sizes)[:, None, None]
    total = allowed.sum(-1)[:, None, None]
    a = allowed[:, :, None]
    return log_choose(a, k) + log_choose(total - a, h - k) - log_choose(total, h)


def public_view(observation: np.ndarray, slot: Any = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The unseen copies [N, 57], those ``public`` lets the seat in ``slot`` hold [N, 57], and its hand size [N]."""
    n = observation.shape[0]
    slots = np.broadcast_to(np.asarray(slot, np.int64), (n,))
    own = np.rint(observation[:, OBS_HAND : OBS_HAND + NUM_CARD_TYPES]).astype(np.int64)
    discard = np.rint(observation[:, OBS_DISCARD : OBS_DISCARD + NUM_CARD_TYPES]).astype(np.int64)
    unseen = np.maximum(CLASSIC_DECK - own - discard, 0)
    allowed = unseen.copy()
    for j, o in enumerate(observation):
        c = int(drew_on_color_of(o, slots[j]))
        if c >= 0:
            allowed[j, :WILD][CARD_COLOR[:WILD] == c] = 0
            allowed[j, WILD:] = 0
    sizes = np.rint(observation[np.arange(n), OBS_HAND_SIZES + slots]).astype(np.int64)
    short = allowed.sum(-1) < sizes  # a deal that cannot meet the exclusions drops them (Engine.resample_hidden)
    allowed[short] = unseen[short]
    return unseen, allowed, sizes


_CARD_COLOURS = np.zeros((NUM_CARD_TYPES, NUM_COLORS), np.float32)
_CARD_COLOURS[np.arange(WILD), CARD_COLOR[:WILD]] = 1.0
_PLAY, _DRAW = EVENT_NAMES.index("play"), EVENT_NAMES.index("draw")
_VOLUNTARY = DRAW_REASONS.index("voluntary")


def void_evidence(rows: np.ndarray, slot: Any = 1) -> np.ndarray:
    """What the history rows [N, K, 122] (newest first) say about the seat in relative ``slot`` lacking
    each colour: float32 [N, 4 × 6] (docs/agents.md, the ``net`` belief)."""
    # Facing colour c and playing another colour or drawing suggests no c then; a hand gains cards
    # only by drawing, so each such fact holds until the seat's next draw.
    o = HISTORY_OFFSETS
    r = rows.astype(np.float32, copy=False)
    slots = np.broadcast_to(np.asarray(slot, np.int64), (r.shape[0],))
    actor = np.take_along_axis(r[..., o["actor"] : o["actor"] + MAX_PLAYERS], slots[:, None, None], 2)[..., 0]
    other = (r[..., o["present"]] > 0.5) & (actor > 0.5)
    kind = r[..., o["kind"] : o["kind"] + len(EVENT_NAMES)]
    play = other & (kind[..., _PLAY] > 0.5)
    draw = other & (kind[..., _DRAW] > 0.5)
    voluntary = draw & (r[..., o["reason"] + _VOLUNTARY] > 0.5)
    before = r[..., o["color_before"] : o["color_before"] + NUM_COLORS] > 0.5
    played = (r[..., o["card"] : o["card"] + NUM_CARD_TYPES] @ _CARD_COLOURS > 0.5) & play[..., None]
    off = play[..., None] & before & ~played
    on_draw = voluntary[..., None] & before
    fact = off | on_draw
    # Rows are newest first: what came after row t is rows 0..t-1.
    d = draw.astype(np.float32)
    drawn_after = np.cumsum(d, 1) - d
    played_after: np.ndarray = np.cumsum(played, 1) - played
    has = fact.any(1)
    latest = fact.argmax(1)[:, None, :]  # the newest fact per colour (0 where none: masked by has)
    drawn_since = np.take_along_axis(np.broadcast_to(drawn_after[..., None], fact.shape), latest, 1)[:, 0]
    played_since = np.take_along_axis(played_after, latest, 1)[:, 0] > 0
    fresh = (fact & (drawn_after[..., None] == 0)).sum(1)
    return np.concatenate(
        [
            np.log1p(off.sum(1)),
            np.log1p(on_draw.sum(1)),
            has,
            np.log1p(fresh),
            np.where(has, drawn_since / 5.0, 0.0),
            has & played_since,
        ],
        axis=1,
        dtype=np.float32,
    )


def net_features(
    observation: np.ndarray, rows: np.ndarray, counts: np.ndarray, evidence: np.ndarray | None = None, slot: Any = 1
) -> np.ndarray:
    """The network's input about the seat in relative ``slot``: float32 [N, F].

    ``observation`` [N, D], history ``rows`` [N, K >= NET_ROWS, 122], ``counts`` [N, > slot, 14];
    ``evidence``: ``void_evidence`` [N, 24] of the whole round when ``rows`` hold only the recent ones."""
    n = observation.shape[0]
    slots = np.broadcast_to(np.asarray(slot, np.int64), (n,))
    if rows.ndim != 3 or rows.shape[1] < NET_ROWS or rows.shape[2] != HISTORY_SIZE:
        raise ValueError(f"rows must have shape [N, K >= {NET_ROWS}, {HISTORY_SIZE}], got {rows.shape}")
    if counts.ndim != 3 or counts.shape[1] <= slots.max(initial=1) or counts.shape[2] != HISTORY_COUNTS_SIZE:
        raise ValueError(
            f"counts must have shape [N, > {slots.max(initial=1)}, {HISTORY_COUNTS_SIZE}], got {counts.shape}"
        )
    if evidence is None:
        evidence = void_evidence(rows, slots)
    elif evidence.shape != (n, EVIDENCE_SIZE):
        raise ValueError(f"evidence must have shape [{n}, {EVIDENCE_SIZE}], got {evidence.shape}")
    unseen, allowed, sizes = public_view(observation, slots)
    pair = np.stack([counts[:, 0], counts[np.arange(n), slots]], axis=1)
    return np.concatenate(
        [
            observation.astype(np.float32),
            pair.reshape(n, -1).astype(np.float32),
            rows[:, :NET_ROWS].reshape(n, -1).astype(np.float32),
            evidence.astype(np.float32),
            np.eye(MAX_PLAYERS, dtype=np.float32)[slots],
            unseen / 4.0,
            allowed / 4.0,
            hypergeometric_voids(allowed, sizes),
            sizes[:, None] / 10.0,
        ],
        axis=1,
        dtype=np.float32,
    )


class NumpyMLP:
    """A network written by ``save_mlp``, run in float32 numpy."""

    def __init__(self, path: str | Path, what: str, trained_by: str) -> None:
        """Load ``path``; ``what`` and ``trained_by`` (the command that writes it) word the missing-file error."""
        if not Path(path).is_file():
            raise ValueError(f"no {what} at {str(path)!r}: give the .npz that `{trained_by}` writes")
        with np.load(path) as f:
            self.mean, self.scale = f["mean"].astype(np.float32), f["scale"].astype(np.float32)
            self.layers = [
                (f[f"w{i}"].astype(np.float32), f[f"b{i}"].astype(np.float32)) for i in range(int(f["depth"]))
            ]
        self.num_features = self.mean.size

    def forward(self, x: np.ndarray) -> np.ndarray:
        """The last layer's output [N, out] for inputs ``x`` [N, num_features]."""
        h = (np.asarray(x, np.float32) - self.mean) * self.scale
        for i, (w, b) in enumerate(self.layers):
            h = h @ w + b
            if i < len(self.layers) - 1:
                np.maximum(h, 0.0, out=h)
        return h


def save_mlp(path: str | Path, mean: np.ndarray, scale: np.ndarray, layers: list[tuple[Any, Any]]) -> None:
    """Write a network ``NumpyMLP`` loads (float16: the shipped files stay small)."""
    arrays = {"mean": mean.astype(np.float16), "scale": scale.astype(np.float16), "depth": np.int64(len(layers))}
    for i, (w, b) in enumerate(layers):
        arrays[f"w{i}"], arrays[f"b{i}"] = np.asarray(w, np.float16), np.asarray(b, np.float16)
    np.savez_compressed(path, **arrays)


class BeliefNet(NumpyMLP):
    """The trained network in numpy (loaded from ``MODEL_PATH`` or a given ``.npz``)."""

    def __init__(self, path: str | Path = MODEL_PATH, num_players: int | None = None) -> None:
        """Load ``path`` and check its card, if any: classic rounds and ``num_players`` (None: unchecked)."""
        super().__init__(path, "belief network", "python -m training.fit_belief_net train")
        card = read_card(path)
        if card is not None:
            if not reads_rules(UnoRules.from_dict(card["rules"])):
                raise ValueError(f"{path}: {trained_for(card)}; a belief network reads classic rounds")
            if num_players is not None and card["num_players"] != num_players:
                raise ValueError(
                    f"{path}: {trained_for(card)}; asked for {num_players} players "
                    f"(python -m training.fit_belief_net generate --num-players {num_players}, then train)"
                )

    def __call__(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Void logits [N, 4] and count logits [N, 57, MAX_COPIES + 1] for features ``x`` [N, F]."""
        h = self.forward(x)
        return h[:, :NUM_COLORS], h[:, NUM_COLORS:].reshape(-1, NUM_CARD_TYPES, MAX_COPIES + 1)


POLICY_INPUTS = NUM_COLORS + NUM_CARD_TYPES
"""what ``policy_inputs`` gives a policy about each other seat: its colour voids and expected copies"""


def policy_inputs(
    observation: np.ndarray, rows: np.ndarray, counts: np.ndarray, net: BeliefNet, num_players: int
) -> np.ndarray:
    """The network's reading of every other hand for a policy: float32 [N, POLICY_INPUTS × (num_players − 1)].

    Per other seat in slot order: the chance of each colour void, then the expected copies of each
    type / 4. ``rows`` [N, K >= NET_ROWS, 122] newest first, ``counts`` [N, >= n, 14]."""
    check_num_players(num_players)
    if rows.ndim != 3 or rows.shape[1] < NET_ROWS or rows.shape[2] != HISTORY_SIZE:
        raise ValueError(f"rows must have shape [N, K >= {NET_ROWS}, {HISTORY_SIZE}], got {rows.shape}")
    present = rows[..., HISTORY_OFFSETS["present"]] > 0.5
    # A round's rows are a prefix (newest first); the empty tail changes no feature.
    keep = max(int(present.sum(1).max(initial=0)), NET_ROWS)
    rows = rows[:, :keep]
    evidence_rows = rows[:, :EVIDENCE_ROWS]
    out = []
    for slot in range(1, num_players):
        x = net_features(observation, rows, counts, void_evidence(evidence_rows, slot), slot)
        void_logits, count_logits = net(x)
        _, allowed, _ = public_view(observation, slot)
        feasible = np.arange(MAX_COPIES + 1)[None, None, :] <= allowed[:, :, None]
        z = np.where(feasible, count_logits.astype(np.float64), -np.inf)
        p = np.exp(z - z.max(-1, keepdims=True))
        expected = (p * np.arange(MAX_COPIES + 1)).sum(-1) / p.sum(-1) / MAX_COPIES
        voids = 1.0 / (1.0 + np.exp(-void_logits.astype(np.float64)))
        out += [voids, expected]
    return np.concatenate(out, axis=1).astype(np.float32)


_TYPE_ROWS = np.arange(NUM_CARD_TYPES) * (MAX_COPIES + 1)


class NetBelief(PublicBelief):
    """``public``'s exclusions, and deals weighted by the belief network (as ``public`` where it has none)."""

    name = "net"
    history_length = EVIDENCE_ROWS
    """history rows the network reads (the engine keeps them: ``Engine(history=K)``)"""
    history_form = "arrays"
    """the search hands it the seat's encoded history (``Engine.history``: rows and counts), not events"""
    mode = "types"
    """what the weights tilt: ``voids`` (each colour void), ``types`` (copies of each type), ``both``"""
    clip = 1e-3
    """probabilities are kept in [clip, 1 - clip]: no deal is ruled out by the network"""
    needs_rules = True
    """``make_belief`` builds it for the search's rules: it weighs only under the rules it learned"""

    def __init__(
        self, rules: UnoRules | None = None, models: dict[int, str | Path] | None = None, mode: str = "types"
    ) -> None:
        """``rules`` of the rounds it reads (None: classic); ``models``: a network per table size (None: shipped)."""
        if mode not in ("voids", "types", "both"):
            raise ValueError(f"mode must be one of 'voids', 'types', 'both', got {mode!r}")
        self.mode = mode
        self.nets = {int(n): BeliefNet(p, int(n)) for n, p in (MODEL_PATHS if models is None else models).items()}
        self.applies = reads_rules(UnoRules() if rules is None else rules)

    def tilts(
        self, x: np.ndarray, allowed: np.ndarray, sizes: np.ndarray, num_players: int = 2
    ) -> tuple[np.ndarray, np.ndarray]:
        """The network's log-odds of each void [N, 4] and log-ratio per type and count [N, 57, 5] over the public deal.

        ``x`` [N, F] from ``net_features``; ``allowed`` [N, 57] and ``sizes`` [N]: the public deal."""
        void_logits, count_logits = self.nets[num_players](x)
        p = np.clip(1.0 / (1.0 + np.exp(-void_logits.astype(np.float64))), self.clip, 1 - self.clip)
        q = np.clip(hypergeometric_voids(allowed, sizes), self.clip, 1 - self.clip)
        theta_v = np.log(p / (1 - p)) - np.log(q / (1 - q))
        feasible = np.arange(MAX_COPIES + 1)[None, None, :] <= allowed[:, :, None]
        z = np.where(feasible, count_logits, -np.inf)
        net = np.log(np.clip(np.exp(z - np.logaddexp.reduce(z, axis=-1, keepdims=True)), self.clip, None))
        theta_t = np.where(feasible, net - count_log_marginals(allowed, sizes), 0.0)
        return theta_v, theta_t

    def hand_log_weights(self, hands: np.ndarray, theta_v: np.ndarray, theta_t: np.ndarray) -> np.ndarray:
        """Log-weights [G] of one seat's dealt hands [G, 57] under one decision's tilts (``tilts``' rows)."""
        out = np.zeros(hands.shape[0])
        if self.mode in ("voids", "both"):
            out += (colour_sums(hands) == 0) @ theta_v
        if self.mode in ("types", "both"):
            # One flat gather: theta_t[t, copies of t] for every type of every hand.
            at = np.minimum(hands, MAX_COPIES) + _TYPE_ROWS
            out += np.take(theta_t.ravel(), at).sum(1)
        return out

    def log_weights(
        self, observation: np.ndarray, seat: int, hands: np.ndarray, history: tuple[np.ndarray, np.ndarray] | None
    ) -> np.ndarray | None:
        """The log-weights [G] of the dealt hands [G, n, 57]; ``history``: rows [K, 122], counts [10, 14]."""
        n = int(num_seats(observation))
        if history is None or not self.applies or n not in self.nets:
            return None
        if hands.shape[0] == 0:
            return np.zeros(0)
        rows, counts = history
        slots = np.arange(1, n)
        o = np.repeat(observation[None], n - 1, 0)
        x = net_features(o, np.repeat(rows[None], n - 1, 0), np.repeat(counts[None], n - 1, 0), slot=slots)
        _, allowed, sizes = public_view(o, slots)
        theta_v, theta_t = self.tilts(x, allowed, sizes, n)
        out = np.zeros(hands.shape[0])
        for j, k in enumerate(slots):
            out += self.hand_log_weights(hands[:, (seat + k) % n], theta_v[j], theta_t[j])
        return out
