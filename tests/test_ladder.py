"""The reference ladder (arena.ladder, evaluate.py --ladder): the rating maths, determinism, the stored file."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

from agents.registry import make_agent
from arena import bradley_terry, play_table
from arena.ladder import (
    LADDER_V1,
    LadderSpec,
    build_reference,
    load_reference,
    rate_against,
    rate_on_ladder,
    reference_path,
    write_reference,
)
from arena.tournament import derive_seed

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Fast rungs only (no search): a whole ladder in seconds. Four rungs so that 4-player reference tables exist.
TINY = LadderSpec(
    version="test",
    rungs=("random", "greedy", "rlcard_rule", "heuristic"),
    rules="classic",
    games=((2, 60), (4, 40)),
    seed=3,
    batch_size=64,
)


@pytest.fixture(scope="module")
def tiny_reference():
    """The TINY ladder's reference results for 2 and 4 players, as a stored file holds them."""
    return {"definition": TINY.to_dict(), "players": {str(p): build_reference(TINY, p) for p, _ in TINY.games}}


# --- the newcomer's rating against fixed rungs ----------------------------------------------


def test_rate_against_recovers_known_odds_and_its_standard_error():
    # 300 wins to 100 against one rung at 1200: odds 3, so 400 log10(3) above it (no prior).
    rating, se = rate_against(np.array([300]), np.array([100]), np.array([1200.0]), prior=0.0)
    assert rating == pytest.approx(1200 + 400 * math.log10(3), abs=1e-6)
    # One binomial log-odds from 400 games at p = 0.75, in Elo points.
    assert se == pytest.approx(400 / math.log(10) / math.sqrt(400 * 0.75 * 0.25), rel=1e-6)
    # Even results against two rungs 200 apart: halfway between them.
    rating, _ = rate_against(np.array([50, 50]), np.array([50, 50]), np.array([1000.0, 1200.0]))
    assert rating == pytest.approx(1100.0, abs=1e-6)


def test_rate_against_is_finite_when_every_game_is_won_and_refuses_no_games():
    rating, se = rate_against(np.array([100, 0]), np.array([0, 0]), np.array([1000.0, 1500.0]))
    assert 1000 + 400 < rating < 1000 + 1500 and math.isfinite(se)  # only the rung it met counts
    with pytest.raises(ValueError, match="never won or lost"):
        rate_against(np.array([0, 0]), np.array([0, 0]), np.array([1000.0, 1500.0]))


# --- ladders: games, determinism, the table --------------------------------------------------


def test_reference_tables_are_every_table_of_distinct_rungs_rated_with_random_at_1000(tiny_reference):
    two, four = tiny_reference["players"]["2"], tiny_reference["players"]["4"]
    assert len(two["tables"]) == 6 and len(four["tables"]) == 1  # C(4, 2), C(4, 4)
    assert all(t["games"] == 60 for t in two["tables"]) and four["tables"][0]["games"] == 40
    assert two["ratings"][0] == pytest.approx(1000.0) and two["rating_se"][0] == 0.0
    # The stored ratings are the Bradley–Terry fit of the stored games.
    beat = np.zeros((4, 4), np.int64)
    for t in two["tables"]:
        idx = [TINY.rungs.index(s) for s in t["seats"]]
        beat[np.ix_(idx, idx)] += np.array(t["beat"])
    assert np.allclose(bradley_terry(beat, anchor=0)[0], two["ratings"])


@pytest.mark.parametrize("players", [2, 4])
def test_a_newcomer_is_rated_the_same_on_every_run_and_never_moves_a_rung(tiny_reference, players):
    runs = [rate_on_ladder(make_agent("heuristic"), players, TINY, reference=tiny_reference) for _ in range(2)]
    assert json.dumps(runs[0].to_dict()) == json.dumps(runs[1].to_dict())
    assert runs[0].markdown() == runs[1].markdown()
    r = runs[0]
    assert r.name == "heuristic (newcomer)"  # same spec as a rung: its row is told apart
    assert r.rung_ratings.tolist() == tiny_reference["players"][str(players)]["ratings"]
    # 2 players: one table per rung; 4 players: one per three rungs, C(4, 3): 4 either way.
    assert len(r.tables) == 4 and all(t.games == dict(TINY.games)[players] for _, t in r.tables)
    assert all(s[0] == r.name for s, _ in r.tables)
    lo, hi = r.ci95
    assert lo < r.rating < hi and math.isfinite(hi - lo)
    per = {d["rung"]: d for d in r.per_rung()}
    assert set(per) == set(TINY.rungs)
    shared = 1 if players == 2 else 3  # tables the newcomer shares with a given rung
    assert all(
        d["games"] == shared * dict(TINY.games)[players] and d["ci95"][0] <= d["win_rate"] <= d["ci95"][1]
        for d in per.values()
    )
    text = r.markdown()
    assert "| rank | agent | rating | 95% CI |" in text and "heuristic (newcomer) ◀" in text
    assert text.count("\n| ") >= len(TINY.rungs) + 1 + len(TINY.rungs)  # ladder rows + per-rung rows


def test_the_newcomers_games_follow_the_ladders_seeds(tiny_reference):
    r = rate_on_ladder(make_agent("greedy"), 2, TINY, reference=tiny_reference)
    seed = derive_seed(derive_seed(TINY.seed, 1000 + 2), 3)  # table 3: against the fourth rung
    alone = play_table([make_agent("greedy"), make_agent("heuristic")], 60, rules="classic", seed=seed, batch_size=64)
    assert r.tables[3][0] == ["greedy (newcomer)", "heuristic"]
    assert r.tables[3][1].wins.tolist() == alone.wins.tolist() and r.tables[3][1].steps == alone.steps


def test_a_ladder_refuses_player_counts_it_does_not_define():
    with pytest.raises(ValueError, match="defined for 2 and 4 players, got --num-players 3"):
        LADDER_V1.games_per_table(3)


# --- the stored reference file of ladder v1 --------------------------------------------------


def test_the_stored_v1_file_matches_its_definition_and_its_ratings_fit_its_games():
    data = load_reference(LADDER_V1)
    for p, games in LADDER_V1.games:
        ref = data["players"][str(p)]
        assert len(ref["tables"]) == math.comb(len(LADDER_V1.rungs), p)
        assert all(t["games"] == games and sum(t["wins"]) + t["truncated"] == games for t in ref["tables"])
        beat = np.zeros((5, 5), np.int64)
        for t in ref["tables"]:
            idx = [LADDER_V1.rungs.index(s) for s in t["seats"]]
            beat[np.ix_(idx, idx)] += np.array(t["beat"])
        assert np.allclose(bradley_terry(beat, anchor=0)[0], ref["ratings"])
        assert ref["ratings"][0] == pytest.approx(1000.0)


def test_the_stored_v1_games_replay_from_their_seeds():
    """The cheap stored tables, replayed: fails when an engine or agent change alters the ladder's games
    (then the ladder needs a new version, not a silent new scale)."""
    data = load_reference(LADDER_V1)
    for p in (2, 4):
        seed = derive_seed(LADDER_V1.seed, p)
        t = 0  # table 0: the first rungs (random, greedy[, rlcard_rule, heuristic]), no search
        stored = data["players"][str(p)]["tables"][t]
        assert "search:64" not in stored["seats"]
        r = play_table(
            [make_agent(s, "classic") for s in stored["seats"]],
            stored["games"],
            rules="classic",
            seed=derive_seed(seed, t),
            batch_size=LADDER_V1.batch_size,
        )
        assert r.wins.tolist() == stored["wins"] and r.beat.tolist() == stored["beat"] and r.steps == stored["steps"]


def test_load_reference_refuses_a_missing_file_or_another_definition(tmp_path, tiny_reference):
    with pytest.raises(ValueError, match="no reference results for ladder test"):
        load_reference(TINY, str(tmp_path / "missing.json"))
    other = LadderSpec(**{**TINY.__dict__, "seed": 4})
    path = str(tmp_path / "ladder.json")
    write_reference(TINY, tiny_reference["players"], path)
    assert load_reference(TINY, path)["players"] == json.loads(json.dumps(tiny_reference["players"]))
    with pytest.raises(ValueError, match="another ladder definition"):
        load_reference(other, path)


# --- evaluate.py --ladder ---------------------------------------------------------------------


def test_evaluate_ladder_prints_the_table_and_writes_the_same_json_every_run(
    tmp_path, monkeypatch, tiny_reference, capsys
):
    sys.path.insert(0, ROOT)
    import evaluate

    path = str(tmp_path / "ladder_test.json")
    write_reference(TINY, tiny_reference["players"], path)
    monkeypatch.setattr(evaluate, "LADDER_V1", TINY)
    monkeypatch.setattr("arena.ladder.reference_path", lambda spec: path)
    texts = []
    for run in ("a", "b"):
        evaluate.main(evaluate.Args(ladder="mine=greedy", num_players=4, output_dir=str(tmp_path / run)))
        texts.append(capsys.readouterr().out)
    assert texts[0] == texts[1] and "| mine ◀ |" in texts[0]
    a, b = ((tmp_path / run / "ladder.json").read_text() for run in ("a", "b"))
    assert a == b
    data = json.loads(a)
    assert data["spec"] == "mine=greedy" and data["agent"] == "mine" and data["num_players"] == 4
    assert data["ladder"]["version"] == "test" and len(data["per_rung"]) == 4 and len(data["tables"]) == 4


@pytest.mark.parametrize(
    "args, message",
    [
        (["--games", "5"], "drop --games"),
        (["--seed", "1", "--rules", "house"], "drop --rules, --seed"),
        (["--num-players", "3"], "defined for 2 and 4 players"),
    ],
)
def test_evaluate_ladder_refuses_settings_the_ladder_fixes(tmp_path, args, message):
    proc = subprocess.run(
        [
            sys.executable,
            os.path.join(ROOT, "evaluate.py"),
            "--ladder",
            "heuristic",
            *args,
            "--output-dir",
            str(tmp_path / "out"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1 and message in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "out").exists()


def test_reference_path_is_versioned():
    assert reference_path(LADDER_V1).endswith(os.path.join("arena", "ladder_v1.json"))
