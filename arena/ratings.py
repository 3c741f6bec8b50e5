"""The statistics of results: Wilson intervals of win rates, Bradley–Terry ratings on the Elo scale.

**Ratings.** Each game is read as pairwise results: every winner beat every other player at
the table. The Bradley–Terry model ``P(i beats j) = p_i / (p_i + p_j)`` is fitted by maximum
likelihood (Hunter's MM iterations), with half a win added each way to every pair that met,
so that an agent that won or lost every game still gets a finite rating. Ratings are on the
Elo scale, ``400 log10(p_i)``, shifted so the anchor agent sits at ``anchor_rating`` (the mean
there when there is no anchor); a difference of 400 means 10:1 odds. Standard errors come from
the observed Fisher information with the anchor held fixed (the mean held fixed when there is
no anchor agent).

**Ratings from duplicate deals** (``paired_standard_errors``). The Fisher information treats
every pairwise result as an independent coin; on duplicate deals the games of a deal share its
cards, and at a table of more than two players one game gives several pairwise results that
move together (the winner beat everyone). The deals are what is independent, so the errors
are the sandwich ``H⁻¹ V H⁻¹`` of the same likelihood: ``H`` its observed information, ``V``
the covariance of its score (its gradient) summed over deals, each table's per-deal scores
taken about their table's mean.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = ["Z95", "wilson_interval", "paired_interval", "bradley_terry", "paired_standard_errors"]


Z95 = 1.959963984540054
"""The standard normal's two-sided 95% quantile: every interval here is at 95%."""


def wilson_interval(wins: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (95% by default).

    The bounds are exactly 0 at 0 wins and exactly 1 at ``n`` wins (the formula gives them up
    to rounding, e.g. 5.6e-17 for 0 of 3)."""
    if n <= 0:
        return (0.0, 1.0)
    p = wins / n
    denom = 1.0 + z * z / n
    center = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1.0 - p) / n + z * z / (4.0 * n * n)) / denom
    lo = 0.0 if wins <= 0 else max(0.0, center - half)
    hi = 1.0 if wins >= n else min(1.0, center + half)
    return (lo, hi)


def paired_interval(per_deal: np.ndarray, z: float = Z95) -> tuple[float, float]:
    """95% interval of a mean over deals (duplicate play): ``mean ± z·sd/√deals`` of the per-deal
    results (each deal's score averaged over its seat rotations), clipped to [0, 1].

    The deals are independent; the games within a deal are not, which is why the interval is
    taken over deals rather than games (a Wilson interval over games would ignore the pairing).
    """
    x = np.asarray(per_deal, np.float64)
    n = x.size
    if n == 0:
        return (0.0, 1.0)
    mean = float(x.mean())
    half = z * float(x.std(ddof=1)) / np.sqrt(n) if n > 1 else 1.0
    return (max(0.0, mean - half), min(1.0, mean + half))


def bradley_terry(
    beat: np.ndarray,
    anchor: int | None = None,
    anchor_rating: float = 1000.0,
    prior: float = 0.5,
    iters: int = 10_000,
    tol: float = 1e-10,
) -> tuple[np.ndarray, np.ndarray]:
    """Elo-scale Bradley–Terry ratings and standard errors from ``beat[i, j]`` (i beat j) counts.

    See the module docstring: MM iterations on the counts plus ``prior`` wins each way for
    every pair that met; ratings ``400 log10 p`` with the anchor at ``anchor_rating`` (or the
    mean there when ``anchor`` is None).
    """
    w = np.asarray(beat, np.float64)
    n = w.shape[0]
    met = (w + w.T) > 0
    w = w + prior * met
    games = w + w.T
    total_wins = w.sum(1)
    p = np.ones(n)
    for _ in range(iters):
        denom = (games / (p[:, None] + p[None, :])).sum(1)
        new = np.where(denom > 0, total_wins / np.where(denom > 0, denom, 1.0), p)
        new /= np.exp(np.log(new).mean())
        if np.max(np.abs(np.log(new) - np.log(p))) < tol:
            p = new
            break
        p = new
    scale = 400.0 / math.log(10.0)
    ratings = np.log(p) * scale
    ratings += anchor_rating - (ratings[anchor] if anchor is not None else ratings.mean())
    return ratings, _standard_errors(p, games, anchor) * scale


def _standard_errors(p: np.ndarray, games: np.ndarray, anchor: int | None) -> np.ndarray:
    """Standard errors of ``log p`` from the observed information (module docstring)."""
    n = p.shape[0]
    # H_ii = sum_j n_ij q_ij (1 - q_ij), H_ij = -n_ij q_ij (1 - q_ij).
    q = p[:, None] / (p[:, None] + p[None, :])
    v = games * q * (1.0 - q)
    np.fill_diagonal(v, 0.0)
    info = np.diag(v.sum(1)) - v
    se = np.zeros(n)
    if n > 1:
        if anchor is not None:
            keep = [i for i in range(n) if i != anchor]
            cov = np.linalg.pinv(info[np.ix_(keep, keep)])
            se[keep] = np.sqrt(np.clip(np.diag(cov), 0.0, None))
        else:
            # Mean fixed: the pseudo-inverse is the covariance under the sum-zero constraint.
            se = np.sqrt(np.clip(np.diag(np.linalg.pinv(info)), 0.0, None))
    return se


def paired_standard_errors(
    ratings: np.ndarray,
    tables: Sequence[tuple[Sequence[int], np.ndarray]],
    free: Sequence[int],
    prior: float = 0.5,
) -> np.ndarray:
    """Standard errors (Elo scale) of the ``free`` agents' Bradley–Terry ``ratings`` from games on
    duplicate deals (module docstring); the other agents' ratings are held fixed (0 returned).

    ``tables``: per table, the agents at its seats (indices into ``ratings``) and ``beat[d, a, b]``,
    int ``[deals, seats, seats]``: the games of deal ``d`` in which seat ``a``'s agent won and seat
    ``b``'s did not. ``prior`` adds the same pseudo-games to the information as ``bradley_terry``
    (and ``arena.ladder.rate_against``) add to the fit.
    """
    scale = 400.0 / math.log(10.0)
    x = np.asarray(ratings, np.float64) / scale
    m = x.size
    free = list(free)
    if not free or not all(0 <= i < m for i in free) or len(set(free)) != len(free):
        raise ValueError(f"free must be distinct indices into the {m} ratings, got {free}")
    games = np.zeros((m, m))
    score_cov = np.zeros((m, m))
    for seats, beat in tables:
        idx = list(seats)
        b = np.asarray(beat, np.float64)
        if b.ndim != 3 or b.shape[1:] != (len(idx), len(idx)):
            raise ValueError(f"a table's beat counts must be [deals, {len(idx)}, {len(idx)}], got {b.shape}")
        n = b + b.transpose(0, 2, 1)
        q = 1.0 / (1.0 + np.exp(x[idx][None, :] - x[idx][:, None]))  # q[a, b]: P(seat a's agent beats b's)
        u = (b - n * q[None]).sum(2)  # [deals, seats]: each deal's score for each seat's agent
        games[np.ix_(idx, idx)] += n.sum(0)
        deals = u.shape[0]
        if deals > 1:
            c = u - u.mean(0)
            score_cov[np.ix_(idx, idx)] += c.T @ c * (deals / (deals - 1))
    games += 2.0 * prior * (games > 0)
    q = 1.0 / (1.0 + np.exp(x[None, :] - x[:, None]))
    v = games * q * (1.0 - q)
    np.fill_diagonal(v, 0.0)
    info = (np.diag(v.sum(1)) - v)[np.ix_(free, free)]
    inv = np.linalg.pinv(info)
    cov = inv @ score_cov[np.ix_(free, free)] @ inv
    se = np.zeros(m)
    se[free] = np.sqrt(np.clip(np.diag(cov), 0.0, None)) * scale
    return se
