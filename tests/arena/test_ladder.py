"""The reference ladder (arena.ladder, evaluate.py --ladder): the rating maths, determinism, the stored file."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest
from helpers import ROOT

from agents.registry import make_agent
from arena import bradley_terry, play
from arena.ladder import (
    LADDER,
    LADDER_V2,
    LADDER_V3,
    LADDERS,
    LadderSpec,
    _deal_beats,
    _encode_deals,
    build_reference,
    check_rung_weights,
    load_reference,
    rate_against,
    rate_on_ladder,
    reference_path,
    rung_weights,
    write_reference,
)
from arena.ratings import paired_standard_errors
from arena.tournament import Chunk, derive_seed, play_chunks_here
from uno_env import UnoRules


def _decode_deals(columns: list[str]) -> np.ndarray:
    """``arena.ladder._encode_deals`` read back: int64 [deals, seats]."""
    return np.array([[int(c) for c in column] for column in columns], np.int64).T.reshape(-1, len(columns))


# Fast rungs only (no search): a whole ladder in seconds. Four rungs so that 4-player reference tables exist.
TINY = LadderSpec(
    version="test",
    rungs=("random", "greedy", "rlcard_rule", "heuristic"),
    rules="classic",
    games=((2, 60), (4, 40)),
    seed=3,
    batch_size=64,
)


# The same on duplicate deals, with what v2 added: a rung at one table size only, fewer games at a
# costly rung's tables, more games at the rungs' own tables.
TINY_DUPLICATE = dataclasses.replace(
    TINY,
    version="test-dup",
    duplicate=True,
    player_rungs=((2, ("h2=heuristic",)),),
    rung_games=(("rlcard_rule", ((2, 20),)),),
    reference_scale=2,
)


@pytest.fixture(scope="module")
def tiny_reference():
    """The TINY ladder's reference results for 2 and 4 players, as a stored file holds them."""
    return {"definition": TINY.to_dict(), "players": {str(p): build_reference(TINY, p) for p, _ in TINY.games}}


# --- the newcomer's rating against fixed rungs ----------------------------------------------


@pytest.fixture(scope="module")
def tiny_duplicate_reference():
    spec = TINY_DUPLICATE
    return {"definition": spec.to_dict(), "players": {str(p): build_reference(spec, p) for p, _ in spec.games}}


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
    alone = play(
        [make_agent("greedy"), make_agent("heuristic")], 60, rules=UnoRules.preset("classic"), seed=seed, batch_size=64
    )
    assert r.tables[3][0] == ["greedy (newcomer)", "heuristic"]
    assert r.tables[3][1].wins.tolist() == alone.wins.tolist() and r.tables[3][1].steps == alone.steps


def test_a_ladder_refuses_player_counts_it_does_not_define():
    with pytest.raises(ValueError, match="defined for 2 and 4 players, got --num-players 3"):
        LADDER.games_per_table(3)


# --- ladders on duplicate deals (v2's form) --------------------------------------------------


@pytest.mark.parametrize("players", [2, 4])
def test_a_duplicate_ladder_rates_the_same_on_every_run_from_paired_deals(tiny_duplicate_reference, players):
    spec = TINY_DUPLICATE
    runs = [rate_on_ladder(make_agent("greedy"), players, spec, reference=tiny_duplicate_reference) for _ in range(2)]
    assert json.dumps(runs[0].to_dict()) == json.dumps(runs[1].to_dict()) and runs[0].markdown() == runs[1].markdown()
    r = runs[0]
    rungs = spec.rungs_for(players)
    assert r.rungs == rungs and len(r.rung_ratings) == len(rungs)
    assert [t.games for _, t in r.tables] == [spec.games_per_table(players, s) for s, _ in r.tables]
    if players == 2:
        assert rungs[-1] == "h2=heuristic" and [t.games for _, t in r.tables] == [60, 60, 20, 60, 60]
    assert all(t.deal_wins is not None and t.deal_wins.shape == (t.games // players, players) for _, t in r.tables)
    # The interval comes from the deals: the sandwich over the newcomer's tables, the rungs held fixed.
    names = [r.name, *rungs]
    per_deal = [([names.index(n) for n in s], _deal_beats(t.deal_wins)) for s, t in r.tables]
    expected = paired_standard_errors(np.array([r.rating, *r.rung_ratings]), per_deal, free=[0])[0]
    assert r.rating_se == pytest.approx(expected) and 0 < r.rating_se < math.inf
    lo, hi = r.ci95
    assert lo < r.rating < hi
    if players == 2:  # a mirror match on duplicate deals is exactly even: every deal splits its rotations
        mirror = next(d for d in r.per_rung() if d["rung"] == "greedy")
        assert mirror["win_rate"] == 0.5 and mirror["ci95"] == [0.5, 0.5]
    text = r.markdown()
    assert "duplicate deals, 95% intervals paired over deals" in text and "greedy (newcomer) ◀" in text


def test_the_duplicate_newcomers_tables_are_the_seeded_duplicate_tables(tiny_duplicate_reference):
    r = rate_on_ladder(make_agent("greedy"), 2, TINY_DUPLICATE, reference=tiny_duplicate_reference)
    seed = derive_seed(derive_seed(TINY_DUPLICATE.seed, 1000 + 2), 2)  # table 2: against rlcard_rule
    alone = play(
        [make_agent("greedy"), make_agent("rlcard_rule")],
        20,
        rules=UnoRules.preset("classic"),
        seed=seed,
        batch_size=7,
        duplicate=True,
    )
    assert r.tables[2][0] == ["greedy (newcomer)", "rlcard_rule"]
    assert r.tables[2][1].deal_wins.tolist() == alone.deal_wins.tolist()  # fixed deals, whatever the batch


def test_deal_wins_round_trip_and_give_the_pairwise_counts():
    deal_wins = np.array([[2, 0], [1, 1], [0, 1]])  # the last deal: one game truncated
    assert _encode_deals(deal_wins) == ["210", "011"]
    assert _decode_deals(["210", "011"]).tolist() == deal_wins.tolist()
    beat = _deal_beats(deal_wins)
    assert beat[:, 0, 1].tolist() == [2, 1, 0] and beat[:, 1, 0].tolist() == [0, 1, 1]
    assert (beat[:, [0, 1], [0, 1]] == 0).all()


@pytest.mark.parametrize(
    "change, message",
    [
        ({"games": ((2, 61),)}, "multiples of the players"),
        ({"rung_games": (("greedy", ((4, 42),)),)}, "multiples of the players"),
        ({"rules": '{"teams": true}'}, "cannot have teams"),
        ({"player_rungs": ((3, ("greedy",)),)}, "defines no games"),
        ({"reference_scale": 0}, "reference_scale must be >= 1"),
    ],
)
def test_a_ladder_spec_refuses_what_duplicate_deals_cannot_play(change, message):
    with pytest.raises(ValueError, match=message):
        LadderSpec(**{**TINY_DUPLICATE.__dict__, **change})


def test_paired_standard_errors_match_fishers_for_one_game_per_deal_and_vanish_for_mirrors():
    # 1,000 deals of one game each, 600 won: the deals are the games, so the sandwich is Fisher's.
    won = np.zeros(1000, np.int64)
    won[:600] = 1
    beat = np.zeros((1000, 2, 2), np.int64)
    beat[:, 0, 1], beat[:, 1, 0] = won, 1 - won
    ratings, fisher = bradley_terry(beat.sum(0), anchor=1)
    paired = paired_standard_errors(ratings, [([0, 1], beat)], free=[0])
    assert paired[1] == 0.0 and paired[0] == pytest.approx(fisher[0], rel=2e-3)
    # Two rotations of a deal that always split 1-1 (a mirror match): no sampling error at all.
    split = np.ones((500, 2, 2), np.int64)
    split[:, [0, 1], [0, 1]] = 0
    assert paired_standard_errors(np.array([1500.0, 1500.0]), [([0, 1], split)], free=[0])[0] == 0.0
    with pytest.raises(ValueError, match="distinct indices"):
        paired_standard_errors(ratings, [([0, 1], beat)], free=[2])
    with pytest.raises(ValueError, match=r"\[deals, 2, 2\]"):
        paired_standard_errors(ratings, [([0, 1], beat[:, :1])], free=[0])


# --- the stored reference files ---------------------------------------------------------------


def test_the_current_ladder_is_v3_and_its_rungs_load_no_shipped_weights():
    assert LADDER is LADDER_V3 is LADDERS["v3"] and LADDERS["v2"] is LADDER_V2
    for p, _ in LADDER.games:
        assert rung_weights(LADDER, p) == {}  # a new shipped model never moves this scale


def test_the_stored_v3_games_replay_from_their_seeds():
    """The cheap stored tables, replayed: fails when an engine or agent change alters the ladder's games
    (then the ladder needs a new version, not a silent new scale)."""
    data = load_reference(LADDER_V3)
    for p in (2, 4):
        rungs = LADDER_V3.rungs_for(p)
        t = 0  # table 0: the first rungs (random, greedy[, rlcard_rule, heuristic]), no search
        stored = data["players"][str(p)]["tables"][t]
        assert "flatmc:64@uniform" not in stored["seats"]
        seats = tuple(rungs.index(s) for s in stored["seats"])
        chunk = Chunk(t, seats, stored["games"], derive_seed(derive_seed(LADDER_V3.seed, p), t), True)
        agents = [make_agent(s, UnoRules.preset("classic")) for s in rungs]
        (r,) = play_chunks_here([chunk], agents, list(rungs), UnoRules.preset("classic"), LADDER_V3.batch_size)
        assert r.wins.tolist() == stored["wins"] and r.beat.tolist() == stored["beat"] and r.steps == stored["steps"]
        assert _encode_deals(r.deal_wins) == stored["deal_wins"]


@pytest.mark.parametrize("version", sorted(LADDERS))
def test_each_stored_file_holds_its_deals_and_its_ratings_fit_them(version):
    spec = LADDERS[version]
    data = load_reference(spec)
    assert data["definition"] == spec.to_dict()
    assert {"seconds", "cpu_seconds", "machine", "load_average_1_5_15_min"} <= set(data["build"])
    for p, _ in spec.games:
        rungs = spec.rungs_for(p)
        ref = data["players"][str(p)]
        assert set(ref["rung_weights"]) == set(rungs) & {"pretrained", "pretrained-4p"}
        assert len(ref["tables"]) == math.comb(len(rungs), p)
        beat = np.zeros((len(rungs), len(rungs)), np.int64)
        per_deal = []
        for t in ref["tables"]:
            idx = [rungs.index(s) for s in t["seats"]]
            assert t["games"] == spec.games_per_table(p, t["seats"], reference=True)
            deal_wins = _decode_deals(t["deal_wins"])
            assert deal_wins.shape == (t["games"] // p, p) and deal_wins.sum(0).tolist() == t["wins"]
            beat[np.ix_(idx, idx)] += np.array(t["beat"])
            per_deal.append((idx, _deal_beats(deal_wins)))
        ratings, _ = bradley_terry(beat, anchor=0)
        assert np.allclose(ratings, ref["ratings"])
        assert np.allclose(paired_standard_errors(ratings, per_deal, range(1, len(rungs))), ref["rating_se"])


def test_a_ladder_whose_rung_weights_changed_refuses_to_rate():
    """v2's rungs hold the shipped models: once one ships new weights, its stored games no longer
    rate anyone, and the error names the current ladder."""
    ref = load_reference(LADDER_V2)["players"]["4"]
    other = {**ref, "rung_weights": {"pretrained-4p": "0" * 64}}
    with pytest.raises(ValueError, match="other weights of the rung pretrained-4p .*Rate on ladder v3"):
        check_rung_weights(LADDER_V2, 4, other)
    with pytest.raises(ValueError, match="other weights of the rung pretrained-4p"):
        rate_on_ladder(make_agent("greedy"), 4, LADDER_V2, reference={"players": {"4": other}})
    check_rung_weights(LADDER_V2, 4, {**ref, "rung_weights": rung_weights(LADDER_V2, 4)})  # the installed: no error
    for p, name in ((2, "pretrained"), (4, "pretrained-4p")):  # both shipped new weights in 0.2.0
        with pytest.raises(ValueError, match=f"other weights of the rung {name} "):
            check_rung_weights(LADDER_V2, p, load_reference(LADDER_V2)["players"][str(p)])


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
    import evaluate

    path = str(tmp_path / "ladder_test.json")
    write_reference(TINY, tiny_reference["players"], path)
    monkeypatch.setitem(evaluate.LADDERS, TINY.version, TINY)
    monkeypatch.setattr("arena.ladder.reference_path", lambda spec: path)
    texts = []
    for run in ("a", "b"):
        evaluate.main(
            evaluate.Args(ladder="mine=greedy", ladder_version="test", num_players=4, output_dir=str(tmp_path / run))
        )
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
        (["--duplicate"], "drop --duplicate"),
        (["--ladder-version", "v9"], "--ladder-version must be one of ['v2', 'v3']"),
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


def test_ladder_version_needs_ladder(tmp_path):
    import evaluate

    with pytest.raises(ValueError, match="--ladder-version applies to --ladder AGENT only"):
        evaluate.main(evaluate.Args(ladder_version="v0", output_dir=str(tmp_path)))


def test_reference_path_is_versioned():
    assert reference_path().endswith(os.path.join("arena", "ladder_v3.json"))
    assert reference_path(LADDER_V2).endswith(os.path.join("arena", "ladder_v2.json"))
