"""Fine-tune a trained policy into one that reads the round through the belief network: ``train.py --beliefs net``
with the shipped ``belief_policy``'s settings.

    python -m training.fit_belief_policy                                          # from `pretrained`, 6M steps
    python -m training.fit_belief_policy --init runs/b1/model.zip --exp-name b2   # continue a run
    python -m training.fit_belief_policy --ship runs/belief_policy --note "..."   # into agents/pretrained

The options are ``train.py``'s (``training.main.Args``; docs/training.md) with other defaults:
``--beliefs net`` (the policy reads the observation and, per other seat, the belief network's
reading of the round: ``training.belief_inputs``), ``--init pretrained`` (the base policy widened with
the new inputs at zero weight, so the run starts from its play and can only learn what the
belief adds; a model of this recipe continues it), ``--bc-positions 0``, and the learning rate,
entropy bonus, seed, steps and opponents below. The run is ``train.py``'s
(``training.main.main``): its folder, checkpoints, card and evaluation; its ``command.txt`` and
card give the ``train.py`` command that repeats it.

``--ship RUN_DIR`` (no training) copies a finished run's model into ``agents/pretrained`` as
``belief_policy.zip`` (a 4-player run's as ``belief_policy-4p.zip``) with its card (``ship``):
the searches' ``"belief"`` blueprint at that table. Measure the result with
``python -m lab.search_agent --agents pretrained agents.belief_policy:... --duplicate``
(``benchmarks/results/training.md`` has the runs and their figures).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
from dataclasses import dataclass

import tyro

from agents.model_card import commit_at, machine, read_card, utc, write_card
from agents.pretrained import model_path

from .belief_inputs import Beliefs
from .main import Args as TrainArgs
from .main import main as train


@dataclass
class Args(TrainArgs):
    """``train.py``'s options with the belief policy's defaults, and ``--ship``."""

    exp_name: str = "belief_policy"
    """name of the run: written to <output_dir>/<exp_name>/"""
    seed: int = 5
    """seed of python, numpy, torch, the games and the opponents"""
    total_timesteps: int = 6_000_000
    """learner decisions to train on"""
    learning_rate: float = 2e-4
    """Adam step size at the start, annealed linearly to 0 (lower than train.py's: a trained policy is tuned)"""
    ent_coef: float = 0.003
    """entropy bonus coefficient (pretrained's recipe)"""
    beliefs: Beliefs = "net"
    """what the policy reads besides its observation: the belief network's reading of each other seat"""
    opponent_mix: str = "0.5*heuristic,0.25*rlcard_rule,0.25*pretrained"
    """opponent mix, 'weight*spec,...': agent specs or mixed tables 'a+b+c' (one per other seat)"""
    bc_positions: int = 0
    """no cloned warm start: the run starts from --init"""
    init: str = "pretrained"
    """the trained policy to widen (a shipped model's name or a train.py .zip of the same table), or a model of this recipe to continue"""
    ship: str = ""
    """no training: copy this finished run's model into agents/pretrained as belief_policy.zip (4 players: belief_policy-4p.zip), with its card"""
    note: str = ""
    """with --ship: free text for the card, what the run does not record (the machine's load, say)"""


def main(args: Args) -> str:
    """Train with ``train.py`` (module docs); returns the model's path."""
    train(TrainArgs(**{f.name: getattr(args, f.name) for f in dataclasses.fields(TrainArgs)}))
    return os.path.join(args.output_dir, args.exp_name, "model.zip")


def ship(run_dir: str, note: str = "", out_dir: str = "", name: str = "") -> str:
    """Copy ``run_dir``'s model into ``out_dir`` (default: the ``agents.pretrained`` folder) as ``NAME.zip``,
    with its card ``NAME.json``: the run's, with its times, commit and machine, the model's size and hash and
    the ``note``. ``NAME`` defaults to ``belief_policy`` at 2 players, ``belief_policy-4p`` at 4. Returns the card's path."""
    files = {f: os.path.join(run_dir, f) for f in ("model.zip", "args.json", "final_eval.json")}
    card = read_card(files["model.zip"]) if os.path.isfile(files["model.zip"]) else None
    if card is None or card.get("beliefs") != "net" or not all(map(os.path.isfile, files.values())):
        raise ValueError(
            f"{run_dir} is not a finished run of train.py --beliefs net (model.zip with its card, args.json, "
            "final_eval.json)"
        )
    with open(files["final_eval.json"]) as f:
        final = json.load(f)
    num_players = card["num_players"]
    name = name or ("belief_policy" if num_players == 2 else f"belief_policy-{num_players}p")
    out_dir = out_dir or os.path.dirname(os.path.abspath(model_path("pretrained")))
    model = os.path.join(out_dir, f"{name}.zip")
    shutil.copyfile(files["model.zip"], model)
    data = open(model, "rb").read()
    card.update(
        name=name,
        model_file=f"{name}.zip",
        commit=commit_at(os.path.getmtime(files["args.json"])),
        started=utc(os.path.getmtime(files["args.json"])),
        finished=utc(os.path.getmtime(files["final_eval.json"])),
        machine=machine(),
        train_minutes=round(final["train_seconds"] / 60, 2),
        train_cpu_minutes=round(final["train_cpu_seconds"] / 60, 2),
        model_bytes=len(data),
        model_sha256=hashlib.sha256(data).hexdigest(),
        note=note,
    )
    return write_card(model, card)


if __name__ == "__main__":
    cli = tyro.cli(Args, description=__doc__.split("\n\n")[0])
    try:
        print(ship(cli.ship, cli.note) if cli.ship else main(cli))
    except ValueError as exc:  # a bad setting: one line on stderr, not a traceback
        raise SystemExit(f"error: {exc}") from None
