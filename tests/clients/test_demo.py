"""``uno-demo``: one logged game and the engine's speed; bad options are one clear line."""

import pytest

from uno_env import UnoRules
from uno_env.demo import main, play_logged_game


def test_logged_game_ends_with_the_scores():
    lines = play_logged_game(3, UnoRules(), seed=5)
    assert sum(line.startswith("player ") and " is dealt " in line for line in lines[:3]) == 3
    assert "first card turned" in lines[3]
    assert lines[-1].startswith("final scores: [")


def test_main_prints_a_game_and_a_speed(capsys):
    main(["--num-players", "2", "--num-envs", "8", "--seconds", "0.05", "--rules", '{"stack_draw_two": true}'])
    out = capsys.readouterr().out
    assert "== One game, 2 players" in out and "steps/s" in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--rules", "nope"], "unknown preset 'nope'"),
        (["--num-players", "11"], "num_players must be an integer in 2..10"),
    ],
)
def test_bad_options_exit_with_one_line(argv, message):
    with pytest.raises(SystemExit) as exc:
        main(argv + ["--seconds", "0.01"])
    assert message in str(exc.value)
