"""uno-play (uno_web/terminal.py) and HumanAgent driven by scripted input."""

from __future__ import annotations

import io
import re
import subprocess
import sys

import numpy as np
import pytest
from builder import act, position
from helpers import ROOT

from uno_web.human import HumanAgent, HumanQuit
from uno_web.terminal import main

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def run(argv, text):
    out = io.StringIO()
    rc = main(argv, io.StringIO(text), out)
    return rc, out.getvalue()


def test_a_whole_round_with_scripted_first_moves():
    rc, out = run(["--seed", "1", "--no-color"], "1\n" * 3000)
    assert rc == 0
    assert "*** Round over:" in out and "Bye." not in out
    assert "Your hand:" in out and "  1) " in out
    assert not ANSI.search(out)


@pytest.mark.parametrize(
    "argv",
    [
        ["--num-players", "3", "--opponents", "random,greedy", "--rules", "house"],
        ["--num-players", "4", "--opponents", "rlcard_rule", "--rules", "official", "--seat", "2"],
        ["--num-players", "3", "--opponents", "search,heuristic", "--rules", "swap_hands", "--seat", "1"],
        ["--num-players", "2", "--opponents", "search", "--games", "2"],
        ["--num-players", "3", "--opponents", "quick=search:16,greedy"],
    ],
)
def test_rounds_against_mixed_agents_and_presets(argv):
    rc, out = run(argv + ["--seed", "5", "--no-color"], "1\n" * 6000)
    assert rc == 0
    games = int(argv[argv.index("--games") + 1]) if "--games" in argv else 1
    assert out.count("*** Round over:") == games
    for spec in argv[argv.index("--opponents") + 1].split(","):
        assert f"{spec.split('=')[0]} (seat " in out


def test_bad_input_gets_a_message_and_a_new_prompt_then_quit():
    rc, out = run(["--seed", "2", "--no-color"], "foo\n0\n99\nplay wild draw four\nchallenge\n\nq\n")
    assert rc == 0
    assert "'foo' is not a move: type a number from 1 to" in out
    assert "There is no move 0" in out and "There is no move 99" in out
    assert "'challenge' is not legal now" in out
    # Each bad answer is followed by a new prompt; the empty line shows the moves again.
    assert out.count("Your move [") == 7
    assert out.rstrip().endswith("Bye.")


def test_end_of_input_quits_cleanly():
    rc, out = run(["--seed", "2"], "")
    assert rc == 0 and out.rstrip().endswith("Bye.")


def test_cards_are_coloured_unless_no_color(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    _, out = run(["--seed", "2"], "q\n")
    assert "\x1b[1;31m" in out or "\x1b[1;33m" in out or "\x1b[1;32m" in out or "\x1b[1;34m" in out
    monkeypatch.setenv("NO_COLOR", "1")
    _, out = run(["--seed", "2"], "q\n")
    assert not ANSI.search(out)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--opponents", "alphago"], "unknown agent 'alphago'"),
        (["--opponents", "search:fast"], "bad search budget in 'search:fast'"),
        (["--num-players", "11"], "--num-players must be an integer in 2..10, got 11"),
        (
            ["--num-players", "3", "--opponents", "random,random,random"],
            "needs 1 name (for every other seat) or 2 names",
        ),
        (["--seat", "2"], "--seat must be an integer in 0..1, got 2"),
        (["--rules", "nope"], "--rules: unknown preset 'nope'; presets are"),
    ],
)
def test_bad_options_are_named(argv, message, capsys):
    rc, out = run(argv, "")
    assert rc == 2 and out == ""
    assert message in capsys.readouterr().err


def test_help_lists_every_flag_with_its_text(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--help"])
    assert stop.value.code == 0
    text = " ".join(ANSI.sub("", capsys.readouterr().out).replace("│", " ").split())
    for flag in ("--opponents", "--num-players", "--rules", "--seat", "--games", "--seed", "--color, --no-color"):
        assert flag in text
    assert "number of players, you included (2-10)" in text
    assert "search[:N | :Tms]" in text  # the spec forms come from agents.registry


def test_flags_tyro_cannot_read_exit_with_usage(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--num-players", "three"])
    assert stop.value.code == 2
    assert "--num-players" in capsys.readouterr().err


def test_color_flag_pair(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    _, plain = run(["--seed", "2", "--color", "--no-color"], "q\n")
    _, painted = run(["--seed", "2", "--no-color", "--color"], "q\n")
    assert not ANSI.search(plain) and ANSI.search(painted)


def test_moves_by_name_and_the_drawn_card():
    engine = position(["red 5, blue 7", "green 1"], "red 3", draw="blue 3")
    out = io.StringIO()
    human = HumanAgent(io.StringIO("draw\n"), out, color=False)
    a = human.act(engine.observation, engine.legal_mask, np.random.default_rng(0))
    assert a.tolist() == [57]
    act(engine, "draw")
    out = io.StringIO()
    human = HumanAgent(io.StringIO("2\n"), out, color=False)
    a = human.act(engine.observation, engine.legal_mask, np.random.default_rng(0))
    assert "You drew: blue 3" in out.getvalue()
    moves = dict(re.findall(r"^\s+(\d+)\) (.*)$", out.getvalue(), re.M))
    assert moves == {"1": "play blue 3", "2": "pass"} and a.tolist() == [58]


def test_human_sees_only_the_observation():
    engine = position(["red 5, blue 7", "green 1, yellow 9"], "red 3")
    out = io.StringIO()
    with pytest.raises(HumanQuit):
        HumanAgent(io.StringIO("q\n"), out, color=False).act(engine.observation, engine.legal_mask, None)
    text = out.getvalue()
    assert "Your hand: red 5, blue 7" in text
    assert "green 1" not in text and "yellow 9" not in text


def test_console_script_entry_point():
    """The module runs as a program with stdin (what `uno-play` calls)."""
    proc = subprocess.run(
        [sys.executable, "-m", "uno_web.terminal", "--seed", "4", "--no-color"],
        input="x\nq\n",
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "'x' is not a move" in proc.stdout and proc.stdout.rstrip().endswith("Bye.")


def _help_for(engine) -> str:
    out = io.StringIO()
    with pytest.raises(HumanQuit):
        HumanAgent(io.StringIO("?\nq\n"), out, color=False).act(engine.observation, engine.legal_mask, None)
    return out.getvalue()


def test_question_mark_explains_the_phase_and_each_legal_move():
    engine = position(["red 5, blue 3, wild, green 9", "green 1"], "red 3")
    text = _help_for(engine)
    assert "Phase play: Your turn: play a card that matches the colour or the symbol" in text
    assert "1) play red 5: matches the colour red" in text
    assert "play blue 3: matches the 3" in text
    assert "play wild: a wild card, playable on anything; you then name the next colour" in text
    assert "draw: take one card from the pile" in text
    assert "play green 9" not in text  # not legal, so not explained
    assert text.count("Your move [") == 2  # a new prompt after the help


def test_question_mark_in_the_other_phases():
    engine = position(["red 5, wild", "green 1"], "red 3", draw="blue 3")
    act(engine, "draw")
    text = _help_for(engine)
    assert "Phase post_draw: You drew blue 3: play it now or pass" in text
    assert "play blue 3: the card you just drew; matches the 3" in text
    assert "pass: keep the card you drew and end your turn" in text
    engine = position(["red 5, wild", "green 1"], "red 3")
    act(engine, "play wild")
    text = _help_for(engine)
    assert "Phase choose_color: Choose the colour for the wild you played" in text
    assert "choose red: the next player must match red (you hold 1 red card)" in text
    engine = position(["red 5, wild draw four, blue 1", "green 1, red 2"], "blue 3")
    act(engine, "play wild draw four")
    act(engine, "choose red")
    text = _help_for(engine)
    assert (
        "Phase respond_draw_four: A wild draw four is pending against you (4 cards; the colour before it was blue)"
        in text
    )
    assert "challenge: accuse the player of holding a card of the colour in play before it (blue)" in text
    assert "accept: draw the 4 cards and lose your turn" in text


def test_empty_line_still_shows_the_table_not_the_help():
    rc, out = run(["--seed", "2", "--no-color"], "\nq\n")
    assert rc == 0 and "Your legal moves:" not in out and out.count("Your hand:") == 2
    rc, out = run(["--seed", "2", "--no-color"], "?\nq\n")
    assert rc == 0 and "Your legal moves:" in out and "Type a move's number or its name" in out


def _taken(line):
    """(who, how many cards) of a narration line saying someone took cards."""
    if line.startswith("  you take: "):
        return "you", len(line.split(", "))
    who, _, rest = line.strip().partition(" takes ")
    return who, int(rest.split()[0])


def test_a_challenged_wild_draw_four_is_said_guilty_or_innocent():
    """Every Wild Draw Four the human faces is challenged (option 1), and the random opponent
    challenges some of the human's; the verdict follows the cards taken (R6: guilty 4, innocent 6)."""
    rc, out = run(["--seed", "1", "--no-color", "--opponents", "random", "--games", "10"], "1\n" * 20000)
    lines = out.splitlines()
    verdicts = [(k, line) for k, line in enumerate(lines) if line.startswith("  Challenge: ")]
    assert rc == 0 and {"GUILTY", "innocent"} == {line.split()[1] for _, line in verdicts}
    for k, line in verdicts:
        played_by = line.split(" - ")[1].split(" played ")[0]
        who, count = _taken(lines[k - 1])
        if "GUILTY" in line:  # the player of the Wild Draw Four takes the guilty draw
            assert (who, count) == (played_by, 4), (lines[k - 1], line)
        else:  # the challenger takes the innocent draw
            assert who != played_by and count == 6, (lines[k - 1], line)


def test_only_ascii_digits_are_a_move_number():
    # "²".isdigit() is true but int() refuses it; "１" is a digit of another script: neither is a number here.
    rc, out = run(["--seed", "2", "--no-color"], "²\n１\n\u22121\nq\n")
    assert rc == 0
    assert "'²' is not a move" in out and "'１' is not a move" in out and "'\u22121' is not a move" in out
    assert out.count("Your move [") == 4 and out.rstrip().endswith("Bye.")
