"""The belief network's inputs and its forward pass (``NetBelief``, ``agents.beliefs``).

A small MLP, trained by ``python -m training.belief_net`` on engine games (labels from the
engine: the other seat's hand), reads what one seat of a 2-player classic round knows and
predicts the other seat's hand: for each colour the chance it holds none of it (a colour void),
and for each card type a distribution of its copies (0 to ``MAX_COPIES``). The features are
built here only, for the training data and for the belief alike:

| block | width | what |
|---|---|---|
| observation | D | the seat's observation (``uno_env.observation``) |
| history counts | 2 × 14 | the per-seat counts of the round (``HISTORY_COUNT_FIELDS``), the seat and the other |
| recent history | ``NET_ROWS`` × 122 | the last ``NET_ROWS`` rows of its history (``HISTORY_FIELDS``), newest first |
| unseen | 57 | copies of each type the seat cannot see (deck − own hand − discard pile), / 4 |
| allowed | 57 | those the ``public`` belief lets the other seat be dealt, / 4 |
| public voids | 4 | the chance of each colour void under ``public`` (a hypergeometric deal) |
| hand size | 1 | the other seat's cards, / 10 |

The weights ship in ``agents/pretrained/belief_net.npz`` (float16) with their card
``belief_net.json`` (how they were trained, and on what).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from uno_env.cards import CARD_COLOR, NUM_CARD_TYPES, NUM_COLORS, WILD
from uno_env.observation import OBS_DISCARD, OBS_HAND, OBS_HAND_SIZES, drew_on_color_of
from uno_env.rules import UnoRules
from uno_env.spaces import HISTORY_COUNTS_SIZE, HISTORY_SIZE

from .mlp import NumpyMLP

NET_ROWS = 8
"""the history rows the network reads (newest first)"""
MAX_COPIES = 4
"""the largest count of one type in a hand the count head predicts (the classic deck's wilds)"""
CLASSIC_DECK = UnoRules.preset("classic").counts.astype(np.int64)
MODEL_PATH = Path(__file__).resolve().parent / "pretrained" / "belief_net.npz"
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


def public_view(observation: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For observations [N, D] of a 2-player classic round: the unseen copies [N, 57], those the
    ``public`` belief lets the other seat hold [N, 57] (no colour it drew on, no wild; all unseen
    when too few remain for its hand) and the other seat's hand size [N]."""
    own = np.rint(observation[:, OBS_HAND : OBS_HAND + NUM_CARD_TYPES]).astype(np.int64)
    discard = np.rint(observation[:, OBS_DISCARD : OBS_DISCARD + NUM_CARD_TYPES]).astype(np.int64)
    unseen = np.maximum(CLASSIC_DECK - own - discard, 0)
    allowed = unseen.copy()
    for j, o in enumerate(observation):
        c = int(drew_on_color_of(o, 1))
        if c >= 0:
            allowed[j, :WILD][CARD_COLOR[:WILD] == c] = 0
            allowed[j, WILD:] = 0
    sizes = np.rint(observation[:, OBS_HAND_SIZES + 1]).astype(np.int64)
    short = allowed.sum(-1) < sizes  # a deal that cannot meet the exclusions drops them (Engine.resample_hidden)
    allowed[short] = unseen[short]
    return unseen, allowed, sizes


def net_features(observation: np.ndarray, rows: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The network's input (module table) for observations [N, D], history rows [N, K >=
    NET_ROWS, 122] and history counts [N, >= 2, 14] of a 2-player round: float32 [N, F]."""
    if rows.ndim != 3 or rows.shape[1] < NET_ROWS or rows.shape[2] != HISTORY_SIZE:
        raise ValueError(f"rows must have shape [N, K >= {NET_ROWS}, {HISTORY_SIZE}], got {rows.shape}")
    if counts.ndim != 3 or counts.shape[1] < 2 or counts.shape[2] != HISTORY_COUNTS_SIZE:
        raise ValueError(f"counts must have shape [N, >= 2, {HISTORY_COUNTS_SIZE}], got {counts.shape}")
    unseen, allowed, sizes = public_view(observation)
    n = observation.shape[0]
    return np.concatenate(
        [
            observation.astype(np.float32),
            counts[:, :2].reshape(n, -1).astype(np.float32),
            rows[:, :NET_ROWS].reshape(n, -1).astype(np.float32),
            unseen / 4.0,
            allowed / 4.0,
            hypergeometric_voids(allowed, sizes),
            sizes[:, None] / 10.0,
        ],
        axis=1,
        dtype=np.float32,
    )


class BeliefNet(NumpyMLP):
    """The trained network in numpy (loaded from ``MODEL_PATH`` or a given ``.npz``)."""

    def __init__(self, path: str | Path = MODEL_PATH) -> None:
        super().__init__(path, "belief network", "python -m training.belief_net train")

    def __call__(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Void logits [N, 4] and count logits [N, 57, MAX_COPIES + 1] for features ``x`` [N, F]."""
        h = self.forward(x)
        return h[:, :NUM_COLORS], h[:, NUM_COLORS:].reshape(-1, NUM_CARD_TYPES, MAX_COPIES + 1)
