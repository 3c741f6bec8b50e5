"""Tournaments in chunks: Ray tasks give exactly the single-process table."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("ray")

import evaluate
from agents.registry import make_agent
from arena import chunk_plan, tournament
from arena.remote import ray_chunks
from uno_env import UnoRules


def _tables(result):
    return [
        (idx, r.games, r.wins.tolist(), r.points.tolist(), r.beat.tolist(), r.truncated, r.steps)
        for idx, r in result.tables
    ]


def _run(agents, games, chunk_games, on_ray, num_players=2, rules=None, seed=7):
    return tournament(
        agents,
        games,
        num_players=num_players,
        rules=rules or UnoRules(),
        seed=seed,
        batch_size=64,
        chunk_games=chunk_games,
        play_chunks=ray_chunks("", 2) if on_ray else None,
    )


@pytest.mark.parametrize("num_players,rules", [(2, "classic"), (3, "house")])
def test_ray_tournament_equals_the_single_process_table(num_players, rules):
    rules = UnoRules.preset(rules)
    agents = [make_agent(n, rules) for n in ["random", "greedy", "rlcard_rule", "random"]]
    # 250 games in chunks of 100: 3 chunks per table (the last one short), several tables.
    here = _run(agents, 250, 100, False, num_players, rules)
    remote = _run(agents, 250, 100, True, num_players, rules)
    assert _tables(remote) == _tables(here)
    assert np.array_equal(remote.ratings, here.ratings) and np.array_equal(remote.rating_se, here.rating_se)
    assert all(r.games == 250 and r.wins.sum() + r.truncated <= 250 for _, r in here.tables)


def test_one_chunk_per_table_is_the_default_tournament():
    rules = UnoRules()
    agents = [make_agent(n, rules) for n in ["random", "greedy", "heuristic"]]
    ours = _run(agents, 150, 150, False)
    theirs = tournament(agents, 150, num_players=2, rules=rules, seed=7, batch_size=64)
    assert _tables(ours) == _tables(theirs)
    assert np.array_equal(ours.ratings, theirs.ratings)


def test_chunks_have_their_own_seeds_and_cover_the_games():
    plan = chunk_plan(num_agents=3, num_players=2, games=250, chunk_games=100, seed=7)
    assert [(c.table, c.games) for c in plan] == [
        (0, 100),
        (0, 100),
        (0, 50),
        (1, 100),
        (1, 100),
        (1, 50),
        (2, 100),
        (2, 100),
        (2, 50),
    ]
    assert len({c.seed for c in plan}) == len(plan)
    # Chunk c of table t depends on (seed, t, c) only: another chunk size keeps the seeds of the
    # chunks both plans have, and another seed changes every one.
    other = chunk_plan(3, 2, 250, 50, 7)
    assert len(other) == 15 and [c.seed for c in other if c.table == 0][:3] == [c.seed for c in plan if c.table == 0]
    assert not {c.seed for c in chunk_plan(3, 2, 250, 100, 8)} & {c.seed for c in plan}


def test_evaluate_refuses_bad_chunk_and_cpu_settings():
    for flag in ("chunk_games", "num_cpus"):
        args = evaluate.Args(agents="random,greedy", games=10, plots=False, **{flag: 0})
        with pytest.raises(ValueError, match=f"--{flag.replace('_', '-')} must be >= 1"):
            evaluate.main(args)
