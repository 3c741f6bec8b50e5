"""Evaluate UNO agents (a tournament, or one agent on the reference ladder): ``python evaluate.py --help``.
The code is ``arena.evaluate`` (the installed command ``uno-evaluate`` runs the same); this script
stays at the root as the entry point of a clone."""

from arena.evaluate import (
    LADDER,
    LADDER_FIXES,
    LADDERS,
    Args,
    cli,
    ladder_main,
    main,
    plot_results,
    prepare_play,
    save_games,
)

__all__ = [
    "LADDER",
    "LADDERS",
    "LADDER_FIXES",
    "Args",
    "cli",
    "ladder_main",
    "main",
    "plot_results",
    "prepare_play",
    "save_games",
]

if __name__ == "__main__":
    cli(script="evaluate.py")
