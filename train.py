"""Train a UNO agent: ``python train.py --help``. The code is ``training.main`` (the installed
command ``uno-train`` runs the same); this script stays at the root as the entry point of a clone."""

from training.main import Args, check_args, cli, main

__all__ = ["Args", "check_args", "cli", "main"]

if __name__ == "__main__":
    cli(script="train.py")
