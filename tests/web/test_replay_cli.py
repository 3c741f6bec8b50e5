"""uno-replay (uno_env/replay_cli.py) over records from the engine and from uno-play --save."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys

import numpy as np
import pytest
from helpers import ROOT

from uno_env import Engine, UnoRules
from uno_env.cards import card_name
from uno_env.replay_cli import ReplaySteps, main
from uno_web.terminal import main as play_main


def recorded_game(seed=0, num_players=3, rules=None):
    """One random round, recorded."""
    e = Engine(1, num_players, rules, seed=seed, record=True)
    rng = np.random.default_rng(seed)
    while not (e.terminated[0] or e.truncated[0]):
        e.step(np.array([rng.choice(np.flatnonzero(e.legal_mask[0]))]))
    return e.record(0), e.game_state(0)


def run(argv, keys=""):
    out = io.StringIO()
    rc = main(argv, io.StringIO(keys), out)
    return rc, out.getvalue()


@pytest.fixture
def game_file(tmp_path):
    record, final = recorded_game()
    path = tmp_path / "game.json"
    path.write_text(json.dumps(record))
    return path, record, final


def test_every_step_ends_on_the_recorded_final_table(game_file):
    path, record, final = game_file
    rc, out = run([str(path), "--no-pause"])
    assert rc == 0
    last = len(record["actions"])
    assert out.count("--- step ") == last + 1 and f"--- step {last}/{last}" in out
    # The omniscient view shows every hand; the final hands are the engine's.
    tail = out[out.index(f"--- step {last}/{last}") :]
    for p, hand in enumerate(final["hands"]):
        assert re.search(rf"player {p} +{len(hand)} card", tail)
        if hand:
            assert f"player {p}'s hand: " + ", ".join(card_name(c) for c in hand) + "\n" in tail + "\n"
    assert "round over: winner player" in tail


def test_a_seat_view_hides_the_other_hands(game_file):
    path, record, _ = game_file
    rc, out = run([str(path), "--no-pause", "--view", "1"])
    assert rc == 0
    deal = out[: out.index("--- step 1/")]
    own = [e for e in record["events"] if e["type"] == "deal" and e["player"] == 1][0]["cards"]
    assert "player 0 is dealt 7 cards" in deal and "player 1 is dealt " + card_name(own[0]) in deal
    assert "Your hand: " + card_name(sorted(own)[0]) in deal and "(you)" in deal
    assert "player 0's hand" not in deal and "player 2's hand" not in deal


def test_open_hands_show_every_hand_in_a_seat_view(tmp_path):
    record, _ = recorded_game(rules=UnoRules(open_hands=True))
    path = tmp_path / "open.json"
    path.write_text(json.dumps(record))
    _, out = run([str(path), "--no-pause", "--view", "0"])
    first = out[: out.index("--- step 1/")]
    assert len(re.findall(r"^(Your|player \d's) hand: ", first, re.M)) == 3


def test_keys_step_back_jump_switch_view_and_quit(game_file):
    path, _, _ = game_file
    rc, out = run([str(path)], "\nn\np\n3\nv 2\nv 7\nzz\n999\nq\n")
    assert rc == 0
    shown = re.findall(r"--- step (\d+)/", out)
    assert shown == ["0", "1", "2", "1", "3", "3"]
    assert "view must be 'all' or a seat 0..2, got ' 7'" in out
    assert "'zz' is not a key here" in out and "There is no step 999" in out
    assert "(you)" in out.split("--- step 3/")[-1]


def test_a_list_of_records_and_json_lines(tmp_path):
    records = [recorded_game(seed=s)[0] for s in (1, 2)]
    (tmp_path / "list.json").write_text(json.dumps(records))
    (tmp_path / "lines.jsonl").write_text("\n".join(json.dumps(r) for r in records))
    for name in ("list.json", "lines.jsonl"):
        rc, out = run([str(tmp_path / name), "--game", "1", "--no-pause"])
        assert rc == 0 and out.count("--- step ") == len(records[1]["actions"]) + 1


@pytest.mark.parametrize(
    "content, argv, message",
    [
        (None, [], "cannot read"),
        ("not json {", [], "neither JSON nor JSON Lines"),
        ('{"a": 1}', [], "is not a game record: it needs the keys"),
        ("[]", [], "holds no record"),
        ("GAME", ["--game", "3"], r"--game must be 0..0 \(1 records"),
        ("GAME", ["--view", "5"], "view must be 'all' or a seat 0..2"),
        ("BROKEN", [], "replay differs from the record"),
    ],
)
def test_bad_files_and_options_are_named(tmp_path, capsys, content, argv, message):
    path = tmp_path / "x.json"
    record, _ = recorded_game()
    if content == "GAME":
        content = json.dumps(record)
    elif content == "BROKEN":
        record["events"][-1] = {"type": "pass", "player": 0}
        content = json.dumps(record)
    if content is not None:
        path.write_text(content)
    rc, out = run([str(path)] + argv)
    assert rc == 2 and out == ""
    assert re.search(message, capsys.readouterr().err)


def test_uno_play_save_writes_what_uno_replay_reads(tmp_path):
    path = tmp_path / "played.json"
    out = io.StringIO()
    assert (
        play_main(["--seed", "3", "--no-color", "--games", "2", "--save", str(path)], io.StringIO("1\n" * 6000), out)
        == 0
    )
    assert f"Saved the game to {path}" in out.getvalue()
    records = json.loads(path.read_text())
    assert len(records) == 2
    steps = ReplaySteps(records[1])
    assert len(steps) == len(records[1]["actions"]) + 1
    # Quitting mid-round still saves the unfinished round, and it replays.
    play_main(["--seed", "3", "--no-color", "--save", str(path)], io.StringIO("1\n1\nq\n"), io.StringIO())
    assert run([str(path), "--no-pause"])[0] == 0


def test_uno_play_save_to_a_missing_folder_is_refused_before_playing(tmp_path, capsys):
    out = io.StringIO()
    assert play_main(["--save", str(tmp_path / "nope" / "g.json")], io.StringIO("1\n"), out) == 2
    assert out.getvalue() == "" and "--save: the folder of" in capsys.readouterr().err


def test_runs_as_a_module(game_file):
    path, _, _ = game_file
    done = subprocess.run(
        [sys.executable, "-m", "uno_env.replay_cli", str(path), "--no-pause", "--view", "0"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0 and "--- step 0/" in done.stdout and "(you)" in done.stdout


def test_evaluate_save_games_writes_records_uno_replay_reads(tmp_path):
    out = tmp_path / "eval"
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "evaluate.py"),
            "--agents",
            "random,greedy",
            "--games",
            "4",
            "--save-games",
            "3",
            "--no-plots",
            "--output-dir",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = (out / "games.jsonl").read_text().splitlines()
    assert len(lines) == 3 and "games.jsonl" in done.stdout
    for k in range(3):
        rc, text = run([str(out / "games.jsonl"), "--game", str(k), "--no-pause"])
        assert rc == 0 and "round over: winner player" in text


def test_evaluate_refuses_a_negative_save_games_before_writing(tmp_path):
    out = tmp_path / "eval"
    done = subprocess.run(
        [sys.executable, str(ROOT / "evaluate.py"), "--save-games", "-1", "--output-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 1 and "--save-games must be >= 0, got -1" in done.stderr and not out.exists()


def test_help_names_the_file_and_every_option(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--help"])
    assert stop.value.code == 0
    text = " ".join(re.sub(r"\x1b\[[0-9;]*m", "", capsys.readouterr().out).replace("│", " ").split())
    for piece in ("usage: uno-replay [-h] FILE", "--game", "--view", "--pause, --no-pause", "uno-play --save"):
        assert piece in text
