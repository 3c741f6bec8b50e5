"""Time to skill: training minutes until a learner first holds >= 55% vs ``rlcard_rule`` and ``heuristic``.

    python -m benchmarks.time_to_skill              # both learners, 20 wall-minutes of training each
    python -m benchmarks.time_to_skill --quick      # smoke: seconds, tiny sizes, numbers not meaningful
    python -m benchmarks.time_to_skill --learners ours --train-set bc_positions=250000

The learners and what the minutes count: docs/benchmarks.md.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import tyro

from benchmarks._timing import loadavg
from benchmarks.engine_speed import machine_info, machine_lines
from uno_env import UnoRules

REPO = Path(__file__).resolve().parents[1]


@dataclasses.dataclass
class Args:
    """Options of the time-to-skill benchmark (``python -m benchmarks.time_to_skill --help``)."""

    quick: bool = False
    """smoke run: tiny rollouts and evaluations, a few seconds of training (numbers not meaningful);
    explicit options still apply"""
    budget_minutes: float = 20.0
    """training wall-clock minutes each learner gets at most (evaluations not counted) (0.05 with --quick)"""
    eval_every_minutes: float = 0.5
    """training wall-clock minutes between evaluations of a learner (0.02 with --quick)"""
    eval_games: int = 2000
    """games per evaluation against the opponent, seats rotated (20 with --quick)"""
    threshold: float = 0.55
    """win rate (point estimate) a learner must reach"""
    opponents: str = "rlcard_rule,heuristic"
    """the evaluation opponents (comma-separated agents.registry specs), a row each"""
    learners: str = "ours,tutorial"
    """comma-separated learners to train (ours, tutorial)"""
    seed: int | None = None
    """seed of both learners, their games and the evaluation deals (default: train.py's --seed)"""
    train_set: str = ""
    """train.py settings to change from its defaults, as comma-separated name=value pairs of its Args
    (e.g. 'bc_positions=250000'); they apply to both learners where a learner uses the setting, and the
    table names them"""
    results_dir: str = "benchmarks/results"
    """where time_to_skill.md and time_to_skill.json are written"""


QUICK = dict(budget_minutes=0.05, eval_every_minutes=0.02, eval_games=20)
# Tiny rollouts and updates for the smoke run; the full run uses train.py's and MaskablePPO's own.
QUICK_OURS = dict(num_envs=16, n_steps=16, batch_size=128, n_epochs=1, bc_epochs=1, bc_batch_size=128)
QUICK_TUTORIAL = dict(n_steps=64, batch_size=32, n_epochs=1)
LEARNERS = ("ours", "tutorial")
# What a network is in train.Args: the tutorial learner gets these from train.py too.
NETWORK_FIELDS = ("hidden", "head", "activation")
WARM_FIELDS = ("bc_positions", "bc_teacher", "bc_opponents", "bc_epochs")
PPO_FIELDS = (
    "learning_rate",
    "n_steps",
    "batch_size",
    "n_epochs",
    "gamma",
    "gae_lambda",
    "clip_range",
    "ent_coef",
    "vf_coef",
    "max_grad_norm",
)


def parse_args(argv: list[str] | None = None) -> Args:
    """The options, quick sizes filled in; SystemExit naming a bad one."""
    args = tyro.cli(Args, args=argv, description=__doc__)
    if args.quick:  # quick sizes, unless given explicitly
        given = {a.split("=")[0][2:].replace("-", "_") for a in (argv if argv is not None else sys.argv[1:])}
        args = dataclasses.replace(args, **{k: v for k, v in QUICK.items() if k not in given})
    check_args(args)
    return args


def check_args(args: Args) -> None:
    """SystemExit saying what was wrong and what is allowed."""
    unknown = set(_names(args.learners)) - set(LEARNERS)
    if unknown or not _names(args.learners):
        raise SystemExit(f"--learners: unknown or none {sorted(unknown)}; allowed: {', '.join(LEARNERS)}")
    if not args.budget_minutes > 0 or not args.eval_every_minutes > 0:
        raise SystemExit(
            f"--budget-minutes and --eval-every-minutes must be > 0, got {args.budget_minutes} "
            f"and {args.eval_every_minutes}"
        )
    if args.eval_games < 1:
        raise SystemExit(f"--eval-games must be >= 1, got {args.eval_games}")
    if not _names(args.opponents):
        raise SystemExit("--opponents: give at least one agents.registry spec, e.g. rlcard_rule,heuristic")
    if not 0 < args.threshold < 1:
        raise SystemExit(f"--threshold must be in (0, 1), got {args.threshold}")


def _names(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def train_defaults() -> dict[str, Any]:
    """``train.py --backend sb3``'s defaults (its learners are MaskablePPO): ``training.main.Args``'s fields."""
    from training.main import Args as TrainArgs

    return dataclasses.asdict(TrainArgs(backend="sb3"))


# --- the learners ---------------------------------------------------------------------------------


class Learner:
    """A MaskablePPO model trained one rollout at a time, with its training clocks and evaluations."""

    name: str
    model: Any

    def __init__(self) -> None:
        self.train_wall = self.train_cpu = self.eval_wall = self.eval_cpu = 0.0
        self.setup_wall = 0.0
        self.evals: list[dict[str, Any]] = []
        self.stop_reason = ""

    def rollout(self) -> None:
        """One ``model.learn`` of one rollout and its update."""
        raise NotImplementedError

    def exhausted(self) -> bool:
        """Whether the learner's own schedule is over."""
        return False

    @property
    def steps(self) -> int:
        return int(self.model.num_timesteps)

    def train_until(self, wall_seconds: float) -> None:
        """Rollouts until the training wall clock passes ``wall_seconds`` (or the schedule ends)."""
        while self.train_wall < wall_seconds and not self.exhausted():
            t, c = time.perf_counter(), time.process_time()
            self.rollout()
            self.train_wall += time.perf_counter() - t
            self.train_cpu += time.process_time() - c

    def evaluate(self, opponent: str, games: int, seed: int, rules: UnoRules, num_players: int) -> dict[str, Any]:
        """``training.opponents.eval_rows`` of the current policy (deterministic) vs ``opponent``."""
        from agents.ppo import PPOAgent
        from training.opponents import eval_rows, opponent_tables

        t, c = time.perf_counter(), time.process_time()
        agent = PPOAgent(self.model.policy, deterministic=True, name=self.name)
        row = eval_rows(agent, opponent_tables(opponent, rules, num_players), rules, games, seed)[0]
        self.eval_wall += time.perf_counter() - t
        self.eval_cpu += time.process_time() - c
        entry = {
            "opponent": opponent,
            "steps": self.steps,
            "train_wall_s": self.train_wall,
            "train_cpu_s": self.train_cpu,
            "win_rate": row["win_rate"],
            "ci95": row["ci95"],
            "games": row["games"],
            "load": loadavg(),
        }
        self.evals.append(entry)
        return entry


class Ours(Learner):
    """``train.py``'s default run, built by ``training.main``'s own pieces."""

    name = "ours: train.py defaults, UnoSB3VecEnv"

    def __init__(self, d: Any) -> None:
        super().__init__()
        from agents.registry import parse_list
        from training.belief_inputs import learner_env
        from training.league import league_members
        from training.main import build_env
        from training.opponents import opponent_groups, parse_mix
        from training.sb3 import LinearSchedule, make_model, with_update_threads
        from uno_env import parse_rules

        t = time.perf_counter()
        rules = parse_rules(d.rules)
        groups = opponent_groups(
            parse_mix(d.opponent_mix), d.num_envs, rules, d.self_play_groups, d.league_groups, num_players=d.num_players
        )
        venv, self.league = build_env(d, rules, groups, league_members(parse_list(d.league_opponents), rules, groups))
        self.schedule = LinearSchedule(d.learning_rate, d.total_timesteps, d.anneal_lr)
        self.model = make_model(d, learner_env(venv, d), self.schedule)
        if d.update_threads:
            with_update_threads(self.model, d.update_threads)
        self.d = d
        self.next_snapshot = d.snapshot_every
        self.ppo = {
            k: getattr(d, k)
            for k in PPO_FIELDS
            + WARM_FIELDS
            + ("num_envs", "total_timesteps", "anneal_lr", "opponent_mix", "update_threads")
        }
        self.setup_wall = time.perf_counter() - t
        self.rules = rules
        self.started = False

    def warm_start(self) -> None:
        """train.py's warm start (``training.main.warm_start``): the teacher labels positions, the policy is cloned on them."""
        from agents.registry import make_agent
        from training.main import warm_start
        from training.opponents import opponent_tables

        d = self.d
        teacher = make_agent(d.bc_teacher, self.rules)
        warm_start(d, self.model, self.rules, teacher, opponent_tables(d.bc_opponents, self.rules, d.num_players))

    def rollout(self) -> None:
        # The warm start counts as training and comes with the first rollout, so that every
        # evaluation follows at least one PPO rollout (a slow warm start could spend a short budget).
        if not self.started:
            from training.main import warm_start_positions

            if warm_start_positions(self.d):
                self.warm_start()
            self.league.start(self.model.policy)
            self.started = True
        self.schedule.done = self.model.num_timesteps
        self.model.learn(self.d.num_envs * self.d.n_steps, reset_num_timesteps=False, callback=self.league)
        if self.model.num_timesteps >= self.next_snapshot:
            self.league.add_snapshot(self.model.policy, self.model.num_timesteps)
            self.next_snapshot += self.d.snapshot_every
        self.league.redraw()

    def exhausted(self) -> bool:
        return self.model.num_timesteps >= self.d.total_timesteps


class Tutorial(Learner):
    """The PettingZoo SB3 tutorial setup (``benchmarks.pipeline.tutorial_env``), our network, MaskablePPO's defaults."""

    name = "tutorial: 1 AEC env, self-play"

    def __init__(self, d: Any, quick: bool) -> None:
        super().__init__()
        from sb3_contrib import MaskablePPO

        from benchmarks.pipeline import tutorial_env
        from training.sb3 import LinearSchedule, make_model

        if d.rules != "classic":
            raise SystemExit(
                f"the tutorial learner plays uno_env.env()'s classic rules; train.py's default "
                f"rules are {d.rules!r}: the two would not learn the same game"
            )
        t = time.perf_counter()
        defaults = {k: p.default for k, p in inspect.signature(MaskablePPO.__init__).parameters.items()}
        ppo = {k: defaults[k] for k in PPO_FIELDS}
        ppo.update(QUICK_TUTORIAL if quick else {})
        args = SimpleNamespace(**ppo, **{k: getattr(d, k) for k in NETWORK_FIELDS}, seed=d.seed)
        schedule = LinearSchedule(ppo["learning_rate"], 1, anneal=False)  # the tutorial's constant rate
        self.model = make_model(args, tutorial_env(d.num_players, d.seed), schedule)
        self.ppo = ppo
        self.setup_wall = time.perf_counter() - t

    def rollout(self) -> None:
        self.model.learn(self.model.n_steps, reset_num_timesteps=False)


# --- the run --------------------------------------------------------------------------------------


def parse_train_set(text: str) -> dict[str, Any]:
    """``--train-set``'s pairs as a dict (values read as Python literals, else kept as strings);
    SystemExit naming a setting train.py's ``Args`` does not have."""
    defaults, out = train_defaults(), {}
    for pair in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = pair.partition("=")
        if not sep or name.strip() not in defaults:
            raise SystemExit(
                f"--train-set: {pair!r} is not name=value with a name of train.py's Args ({', '.join(sorted(defaults))})"
            )
        try:
            out[name.strip()] = ast.literal_eval(value.strip())
        except (ValueError, SyntaxError):
            out[name.strip()] = value.strip()
    return out


def build_learners(args: Args) -> tuple[list[Learner], Any]:
    """The learners of ``--learners`` and train.py's defaults (``--seed`` and quick sizes applied)."""
    import torch

    from training.main import Args as TrainArgs
    from training.run import seed_everything

    d = dataclasses.replace(TrainArgs(), **parse_train_set(args.train_set))
    if args.seed is not None:
        d = dataclasses.replace(d, seed=args.seed)
    if args.quick:
        d = dataclasses.replace(d, **QUICK_OURS, bc_positions=min(d.bc_positions, 500))
    seed_everything(d.seed, 1)
    # As train.py: the categorical's argument checks cost a share of every update and cannot fail here.
    torch.distributions.Distribution.set_default_validate_args(False)
    made: dict[str, Callable[[], Learner]] = {"ours": lambda: Ours(d), "tutorial": lambda: Tutorial(d, args.quick)}
    learners = [made[n]() for n in _names(args.learners)]
    for ln in learners:
        if isinstance(ln, Ours) and args.train_set:
            ln.name += f" (train.py with {args.train_set})"
    return learners, d


def measure(args: Args, log: Callable[[str], None]) -> dict[str, Any]:
    """Train the learners in turns and evaluate them; the report's rows."""
    from uno_env import parse_rules

    learners, d = build_learners(args)
    rules = parse_rules(d.rules)
    opponents = _names(args.opponents)
    budget, every = 60 * args.budget_minutes, 60 * args.eval_every_minutes
    todo = {ln.name: list(opponents) for ln in learners}  # the opponents each learner has not reached
    active = list(learners)
    while active:
        for ln in list(active):
            # The next multiple of the interval past the learner's clock: a warm start longer than
            # one interval is then evaluated once, not once per interval it spanned.
            ln.train_until(min((ln.train_wall // every + 1) * every, budget))
            for opponent in list(todo[ln.name]):
                e = ln.evaluate(opponent, args.eval_games, d.seed + 10**9, rules, d.num_players)
                log(
                    f"    {ln.name}: {ln.train_wall / 60:5.2f} min, {ln.steps:,} steps: {e['win_rate']:.1%} "
                    f"[{e['ci95'][0]:.1%}, {e['ci95'][1]:.1%}] vs {opponent}"
                )
                if e["win_rate"] >= args.threshold:
                    todo[ln.name].remove(opponent)
            if not todo[ln.name]:
                ln.stop_reason = "reached"
            elif ln.exhausted():
                ln.stop_reason = "train.py's total_timesteps done"
            elif ln.train_wall >= budget:
                ln.stop_reason = "budget spent"
            if ln.stop_reason:
                active.remove(ln)
    rows = [_row(ln, opponent, args.threshold) for ln in learners for opponent in opponents]
    return {"rows": rows, "train_defaults": dataclasses.asdict(d)}


def _row(ln: Learner, opponent: str, threshold: float) -> dict[str, Any]:
    evals = [e for e in ln.evals if e["opponent"] == opponent]
    reached = next((e for e in evals if e["win_rate"] >= threshold), None)
    best = max(evals, key=lambda e: e["win_rate"])
    at = reached or evals[-1]
    return {
        "learner": ln.name,
        "opponent": opponent,
        "reached": reached is not None,
        "stop_reason": "reached" if reached else ln.stop_reason,
        "train_wall_min": at["train_wall_s"] / 60,
        "train_cpu_min": at["train_cpu_s"] / 60,
        "steps": at["steps"],
        "evaluations": len(evals),
        "best": best,
        "at": at,
        "eval_wall_min": ln.eval_wall / 60,
        "eval_cpu_min": ln.eval_cpu / 60,
        "setup_s": ln.setup_wall,
        "steps_per_train_s": ln.steps / max(ln.train_wall, 1e-9),
        "ppo": ln.ppo,
        "history": evals,
    }


# --- the report -----------------------------------------------------------------------------------


def table_lines(rows: list[dict[str, Any]], threshold: float) -> list[str]:
    """The Markdown table: one row per learner and opponent."""
    out = [
        f"| learner | opponent | reached >= {threshold:.0%}? | training wall min | training CPU min | env steps "
        "| evaluations | win rate there [95% CI] | best win rate [95% CI] (at min) | evaluation wall min "
        "| env steps/s (training wall) |",
        "|---|---|---|---:|---:|---:|---:|---|---|---:|---:|",
    ]
    for r in rows:
        at, b = r["at"], r["best"]
        verdict = "yes" if r["reached"] else f"**not reached** ({r['stop_reason']})"
        out.append(
            f"| {r['learner']} | {r['opponent']} | {verdict} | {r['train_wall_min']:.2f} | {r['train_cpu_min']:.2f} | "
            f"{r['steps']:,} | {r['evaluations']} | {at['win_rate']:.1%} [{at['ci95'][0]:.1%}, "
            f"{at['ci95'][1]:.1%}] | {b['win_rate']:.1%} [{b['ci95'][0]:.1%}, {b['ci95'][1]:.1%}] "
            f"({b['train_wall_s'] / 60:.2f}) | {r['eval_wall_min']:.2f} | {r['steps_per_train_s']:,.0f} |"
        )
    return out


def notes(report: dict[str, Any]) -> list[str]:
    """The method in a few bullets (what the table's columns mean)."""
    a = report["args"]
    ppo = {r["learner"]: r["ppo"] for r in report["rows"]}
    warm = report["train_defaults"].get("bc_positions", 0)
    return [
        "Minutes are training only (model.learn: rollouts and PPO updates"
        + (", and ours' warm start: labelling and cloning" if warm else "")
        + "), by wall clock and by this process's "
        f"CPU time, up to the first evaluation at or above {a['threshold']:.0%} against that opponent (else up to the last one); "
        f"evaluations are excluded and reported on their own. Each learner is evaluated every "
        f"{a['eval_every_minutes']:g} training wall-minutes (resolution: one interval plus at most one rollout), "
        f"capped at {a['budget_minutes']:g} training wall-minutes.",
        f"Evaluation, the same code for both: training.opponents.eval_rows (arena.play), the policy "
        f"(PPOAgent, deterministic) against each of {a['opponents']} (until reached) over {a['eval_games']:,} games, seats rotated, the same "
        "deals at every evaluation, 95% Wilson intervals. 'Reached' uses the point estimate; repeated looks make "
        "an early crossing by chance likelier, hence the interval beside it.",
        "The learners take turns (one evaluation interval each) in one process on the same machine, the rollouts on "
        "one torch thread; the machine is shared, so wall minutes depend on the load (listed above; per evaluation in the "
        "JSON) and CPU minutes are the steadier figure.",
        "Same network for both (train.py's: agents.ppo.UnoFeatures trunk "
        f"{tuple(report['train_defaults']['hidden'])} {report['train_defaults']['activation']}, linear heads, "
        "UnoMaskablePolicy). PPO settings: "
        + "; ".join(f"{k}: " + ", ".join(f"{n}={v}" for n, v in p.items()) for k, p in ppo.items())
        + ".",
        "Env steps are model decisions (SB3 timesteps): ours counts the learner's seat only (its opponents, "
        f"{report['train_defaults']['opponent_mix']}, move inside the env); the tutorial's model decides for "
        "both seats (self-play, as in the tutorial, whose wrapper shows the loser no reward).",
    ]


def render_markdown(report: dict[str, Any]) -> str:
    """The result file: machine lines, the table, the notes."""
    a = report["args"]
    out = [
        "## Time to skill: training minutes until a learner holds "
        f">= {a['threshold']:.0%} vs each of {a['opponents']} ({a['eval_games']:,} games)",
        "",
        *machine_lines(report["machine"], report["load_average_at_end"]),
        f"- command: `{report['command']}`" + ("; QUICK MODE: numbers not meaningful" if a["quick"] else ""),
        "",
        *table_lines(report["rows"], a["threshold"]),
        "",
        "Notes:",
        "",
    ]
    out += [f"- {n}" for n in notes(report)]
    return "\n".join(out) + "\n"


def run(args: Args, log: Callable[[str], None], command: str) -> dict[str, Any]:
    """Measure, then write time_to_skill.md and .json to ``args.results_dir``; returns the report."""
    results_dir = Path(args.results_dir)
    if not results_dir.is_absolute():
        results_dir = REPO / results_dir
    results_dir.mkdir(parents=True, exist_ok=True)
    machine = machine_info()
    t0 = time.perf_counter()
    report = {"args": dataclasses.asdict(args), "machine": machine, "command": command, **measure(args, log)}
    report["load_average_at_end"] = loadavg()
    report["total_seconds"] = time.perf_counter() - t0
    report["markdown"] = render_markdown(report)
    (results_dir / "time_to_skill.md").write_text(report["markdown"])
    (results_dir / "time_to_skill.json").write_text(json.dumps(report, indent=2, default=str) + "\n")
    log(f"wrote {results_dir / 'time_to_skill.md'}, time_to_skill.json")
    return report


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    command = "python -m benchmarks.time_to_skill " + " ".join(argv if argv is not None else sys.argv[1:])
    report = run(args, lambda m: print(m, file=sys.stderr, flush=True), command.strip())
    print(report["markdown"], end="", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
