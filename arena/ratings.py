"""The statistics of results: Wilson intervals of win rates, Bradley–Terry ratings on the Elo scale."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = ["Z95", "wilson_interval", "paired_interval", "bradley_terry", "paired_standard_errors"]


Z95 = 1.959963984540054
"""The standard normal's two-sided 95% quantile: every interval here is at 95%."""


def wilson_interval(wins: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion; exactly 0 at 0 wins and 1 at ``n`` wins."""
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
    """95% interval of a mean over deals: ``mean ± z·sd/√deals`` of the per-deal results, clipped to [0, 1]."""
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

    ``prior`` wins are added each way for every pair that met; the anchor sits at ``anchor_rating``
    (the mean, when ``anchor`` is None) and its rating is held fixed for the standard errors.
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
    """Standard errors of ``log p`` from the observed Fisher information."""
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
    """Standard errors (Elo scale) of the ``free`` agents' ``ratings`` from games on duplicate deals.

    The sandwich ``H⁻¹ V H⁻¹`` of the Bradley–Terry likelihood, ``V`` the covariance of its score
    over deals; the other agents are held fixed (0 returned). ``tables``: per table, the agents at
    its seats and ``beat[d, a, b]`` ``[deals, seats, seats]``, the games of deal d that seat a won and b did not.
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
