"""The shipped pretrained agents: loading by name, the checks that refuse rules,
table sizes and observations they were not trained for, their cards, and the package data."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import subprocess
import sys
import typing
from fnmatch import fnmatch
from pathlib import Path

import numpy as np
import pytest
import tomllib
from helpers import ROOT

pytest.importorskip("sb3_contrib")

from agents.pretrained import PRETRAINED, card_path, check_fits, load_card, model_path, pretrained_agent
from agents.registry import AGENT_SPECS, make_agent
from arena import play
from tools.card import PLAYED_BY_CARD, PLAYED_BY_TRAIN, make_card
from tools.card import Args as CardArgs
from uno_env import Engine, UnoRules, action_name, parse_rules
from uno_env.observation import observation_size

PLAYERS = {"pretrained": 2, "pretrained-4p": 4}
CARD_FIELDS = {
    "name",
    "model_file",
    "command",
    "train_args",
    "commit",
    "started",
    "finished",
    "machine",
    "steps",
    "train_minutes",
    "train_cpu_minutes",
    "stopped_early",
    "rules_name",
    "rules",
    "num_players",
    "observation_size",
    "model_bytes",
    "model_sha256",
    "evaluation",
    "ladder",
    "note",
}


def test_every_shipped_name_is_in_the_registry_help():
    assert set(PLAYERS) == set(PRETRAINED)
    for name in PRETRAINED:
        assert name in AGENT_SPECS


@pytest.mark.parametrize("name", PRETRAINED)
def test_loads_by_name_and_plays_only_legal_actions(name):
    n = PLAYERS[name]
    agent = make_agent(f"mine={name}", UnoRules.preset("classic"), num_players=n)
    assert agent.name == "mine" and agent.num_players == n and agent.deterministic
    engine = Engine(16, n, parse_rules("classic"), seed=3, autoreset=True)
    rng = np.random.default_rng(0)
    for _ in range(60):
        obs, mask = engine.observation, engine.legal_mask
        actions = agent.act(obs, mask, rng)
        ok = mask[np.arange(16), actions]
        assert ok.all(), [action_name(a) for a in actions[~ok]]
        engine.step(actions)
    # and through the arena, as evaluate.py plays it
    result = play([agent] + [make_agent("heuristic", UnoRules.preset("classic")) for _ in range(n - 1)], 8, seed=1)
    assert result.games == 8


@pytest.mark.parametrize(
    "name, rules, num_players, message",
    [
        (
            "pretrained",
            "house",
            None,
            r"trained for 2 players, rules classic; the rules asked for differ in "
            r"draw_until_playable: trained False, asked True",
        ),
        ("pretrained", '{"open_hands": true}', 2, r"differ in open_hands: trained False, asked True"),
        ("pretrained", '{"hand_size": 5}', None, r"differ in hand_size: trained 7, asked 5"),
        ("pretrained", "classic", 4, r"trained for 2 players, rules classic; asked for 4 players.*pretrained-4p"),
        ("pretrained-4p", "classic", 2, r"trained for 4 players, rules classic; asked for 2 players.*pretrained\b"),
        ("pretrained-4p", "official", 4, r"trained for 4 players, rules classic; the rules asked for differ in deck"),
        ("lbl=pretrained", "swap_hands", None, r"differ in deck: trained 'classic', asked 'swap_hands'"),
    ],
)
def test_loading_refuses_what_the_model_was_not_trained_for(name, rules, num_players, message):
    with pytest.raises(ValueError, match=message):
        make_agent(name, parse_rules(rules), num_players=num_players)


@pytest.mark.parametrize("name, table", [("pretrained-4p", 2), ("pretrained", 3)])
def test_an_agent_loaded_without_a_player_count_refuses_another_table_when_it_plays(name, table):
    agent = make_agent(name, UnoRules.preset("classic"))
    others = [make_agent("random") for _ in range(table - 1)]
    with pytest.raises(ValueError, match=rf"trained for {PLAYERS[name]} players, asked to play at a table of {table}"):
        play([agent, *others], 4, seed=0)


def test_a_card_whose_observation_size_is_not_the_rules_is_refused():
    card = {**load_card("pretrained"), "observation_size": observation_size(True)}
    with pytest.raises(
        ValueError,
        match=rf"observation of {observation_size(True)} values; these rules give "
        rf"{observation_size(False)}",
    ):
        check_fits(card, parse_rules("classic"), 2)


def test_pretrained_agent_with_its_defaults_is_the_classic_two_player_model():
    """``pretrained_agent(name)`` alone loads for classic rules; its rules are a ``UnoRules`` (mypy checks callers)."""
    agent = pretrained_agent("pretrained")
    result = play([agent, make_agent("random")], num_games=4, seed=0)
    assert result.games == 4 and result.wins.sum() + result.truncated == 4
    assert typing.get_type_hints(pretrained_agent)["rules"] == UnoRules | None
    assert pretrained_agent("pretrained", UnoRules()).name == "pretrained"


def test_an_unknown_pretrained_name_lists_the_shipped_ones():
    with pytest.raises(ValueError, match="the package ships pretrained, pretrained-4p"):
        model_path("pretrained-3p")


@pytest.mark.parametrize("name", PRETRAINED)
def test_the_card_is_complete_and_matches_its_model(name):
    card = load_card(name)
    assert CARD_FIELDS <= set(card), CARD_FIELDS - set(card)
    assert card["name"] == name and card["model_file"] == f"{name}.zip"
    data = Path(model_path(name)).read_bytes()
    assert len(data) == card["model_bytes"] < 5_000_000
    assert hashlib.sha256(data).hexdigest() == card["model_sha256"]
    agent = make_agent(name, parse_rules(card["rules"]), num_players=card["num_players"])
    assert agent.obs_size == card["observation_size"] == observation_size(card["rules"]["open_hands"])
    args = card["train_args"]
    assert card["num_players"] == args["num_players"] == PLAYERS[name]
    assert card["rules"] == parse_rules(args["rules"]).to_dict() and card["rules_name"] == args["rules"]
    assert card["command"].startswith("python train.py")
    assert (f"--num-players {args['num_players']}" in card["command"]) == (args["num_players"] != 2)
    assert len(card["commit"]) == 40 and int(card["commit"], 16) >= 0
    ev = card["evaluation"]
    rows = ev["rows"]
    assert rows and all(r["games"] == ev["games_per_opponent"] for r in rows)
    if ev.get("played_by", PLAYED_BY_TRAIN) == PLAYED_BY_TRAIN:
        assert ev["games_per_opponent"] == args["final_eval_games"]
    else:  # the run made none; tools.card played it against the run's evaluation opponents
        assert ev["played_by"] == PLAYED_BY_CARD and args["final_eval_games"] == 0
    assert [r["opponent"] for r in rows] == args["eval_opponents"].split(",")
    if card["ladder"] is not None:
        assert card["ladder"]["num_players"] == card["num_players"] and card["ladder"]["version"]


def test_the_card_writer_reads_everything_from_the_run(tmp_path):
    shipped = load_card("pretrained")
    run = tmp_path / "run"
    run.mkdir()
    (run / "model.zip").write_bytes(Path(model_path("pretrained")).read_bytes())
    (run / "model.json").write_text(Path(card_path("pretrained")).read_text())  # as train.py writes beside it
    (run / "args.json").write_text(json.dumps(shipped["train_args"]))
    (run / "command.txt").write_text(shipped["command"] + "\n")
    rows = shipped["evaluation"]["rows"]
    (run / "final_eval.json").write_text(
        json.dumps(
            {
                "steps": 123,
                "train_seconds": 600.0,
                "train_cpu_seconds": 540.0,
                "stopped_early": True,
                "final_eval": rows,
            }
        )
    )
    card = make_card(CardArgs(run_dir=str(run), name="pretrained", out_dir=str(tmp_path / "out")))
    assert CARD_FIELDS <= set(card)
    same = ["command", "train_args", "rules", "rules_name", "num_players", "observation_size", "model_sha256"]
    assert {k: card[k] for k in same} == {k: shipped[k] for k in same}
    assert (card["steps"], card["train_minutes"], card["train_cpu_minutes"]) == (123, 10.0, 9.0)
    assert card["ladder"] is None
    with pytest.raises(ValueError, match="must be one of pretrained, pretrained-4p"):
        make_card(CardArgs(run_dir=str(run), name="mine"))
    summary = json.loads((run / "final_eval.json").read_text())
    (run / "final_eval.json").write_text(json.dumps({**summary, "final_eval": None}))
    with pytest.raises(ValueError, match="no final evaluation .*give --eval-games N"):
        make_card(CardArgs(run_dir=str(run), name="pretrained"))
    with pytest.raises(ValueError, match="--eval-games must be >= 0, got -1"):
        make_card(CardArgs(run_dir=str(run), name="pretrained", eval_games=-1))
    played = [make_card(CardArgs(run_dir=str(run), name="pretrained", eval_games=20))["evaluation"] for _ in range(2)]
    assert played[0] == played[1] and played[0]["played_by"] == PLAYED_BY_CARD
    assert [(r["opponent"], r["games"]) for r in played[0]["rows"]] == [("rlcard_rule", 20), ("heuristic", 20)]
    (run / "final_eval.json").unlink()
    with pytest.raises(ValueError, match="lacks final_eval.json"):
        make_card(CardArgs(run_dir=str(run), name="pretrained"))


def test_the_card_writer_replaces_only_the_ladder_rating_of_a_shipped_card(tmp_path):
    from tools.card import main as card_main

    out = tmp_path / "out"
    out.mkdir()
    (out / "pretrained.json").write_text(Path(card_path("pretrained")).read_text())
    rated = {"spec": "pretrained", "num_players": 2, "ladder": {"version": "v9"}, "rating": 1800.0}
    rated |= {"rating_se": 5.0, "ci95": [1790.0, 1810.0], "per_rung": [], "rungs": []}
    (tmp_path / "ladder.json").write_text(json.dumps(rated))
    card_main(CardArgs(name="pretrained", ladder=str(tmp_path / "ladder.json"), out_dir=str(out)))
    card = json.loads((out / "pretrained.json").read_text())
    assert card["ladder"]["version"] == "v9" and card["ladder"]["rating"] == 1800.0
    assert {k: v for k, v in card.items() if k != "ladder"} == {
        k: v for k, v in load_card("pretrained").items() if k != "ladder"
    }
    with pytest.raises(ValueError, match="rates 'pretrained' with 2 players, not 'pretrained-4p' with 4"):
        (out / "pretrained-4p.json").write_text(Path(card_path("pretrained-4p")).read_text())
        card_main(CardArgs(name="pretrained-4p", ladder=str(tmp_path / "ladder.json"), out_dir=str(out)))
    with pytest.raises(ValueError, match="give --run-dir to ship a run, or --ladder"):
        card_main(CardArgs(name="pretrained", out_dir=str(out)))
    with pytest.raises(ValueError, match="--eval-games and --note describe a run: give its --run-dir"):
        card_main(CardArgs(name="pretrained", ladder=str(tmp_path / "ladder.json"), eval_games=10, out_dir=str(out)))


def test_the_models_are_package_data_found_through_the_installed_package(tmp_path):
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    patterns = declared["agents.pretrained"]
    shipped = [Path(f(n)).name for n in PRETRAINED for f in (model_path, card_path)]
    assert all(any(fnmatch(f, p) for p in patterns) for f in shipped), (shipped, patterns)
    # From another directory: the files come from the package, not from the working directory.
    code = (
        "import agents, os; from agents.pretrained import PRETRAINED, model_path, card_path; "
        "home = os.path.join(os.path.dirname(agents.__file__), 'pretrained'); "
        "paths = [f(n) for n in PRETRAINED for f in (model_path, card_path)]; "
        "assert all(os.path.dirname(p) == home and os.path.isfile(p) for p in paths), paths; print(len(paths))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": ""},
    )
    assert proc.returncode == 0 and proc.stdout.strip() == "4", proc.stderr


def test_the_docs_render_every_card():
    import importlib.util

    spec = importlib.util.spec_from_file_location("uno_docs_hook", ROOT / "docs" / "_hooks" / "uno_docs.py")
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    out = hook.expand("<!-- uno:pretrained -->")
    assert "<!-- uno:pretrained -->" in (ROOT / "docs" / "agents.md").read_text()
    for name in PRETRAINED:
        card = load_card(name)
        assert f"### `{name}`" in out and card["command"] in out
        for r in card["evaluation"]["rows"]:
            assert f"| {r['opponent']} | {r['games']:,} | {r['win_rate']:.1%} |" in out
        if card["ladder"] is not None:
            assert f"**{card['ladder']['rating']:.0f}**" in out


@pytest.mark.parametrize("name", PRETRAINED)
def test_the_cards_command_is_what_train_py_records_for_its_arguments(name):
    """command.txt (training.run.command_line) rebuilds the shipped card's command from its arguments."""
    import train
    from training.run import command_line

    fields = {f.name: f.type for f in dataclasses.fields(train.Args)}
    args = {k: tuple(v) if isinstance(v, list) else v for k, v in load_card(name)["train_args"].items() if k in fields}
    assert command_line(train.Args(**args)) == load_card(name)["command"]


def test_command_line_names_only_the_changed_flags():
    import train
    from training.run import command_line

    assert command_line(train.Args()) == "python train.py"
    assert command_line(train.Args(num_players=4, hidden=(128, 64), progress=False, rules="house")) == (
        "python train.py --num-players 4 --rules house --hidden 128 64 --no-progress"
    )
