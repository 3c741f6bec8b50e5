"""The benchmark suite: uno_env side by side with RLCard and the PettingZoo + MaskablePPO tutorial setup.

    python -m benchmarks                 # the whole suite (minutes), results in benchmarks/results/
    python -m benchmarks --quick         # CI smoke: tiny sizes, seconds, numbers not meaningful
    python -m benchmarks --sections core,env --runs 7

Sections, method and figures: docs/benchmarks.md.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import tyro

import uno_env
from benchmarks import pipeline as pipe
from benchmarks import scaling
from benchmarks._timing import add_ratio, fmt_rate, interleave, loadavg, profile_text, ratio_cells, summarize
from benchmarks.engine_speed import (
    OursBench,
    RLCardBench,
    _sources_digest,
    machine_info,
    machine_lines,
)
from benchmarks.env_loop import AECBench, RLCardEnvBench
from uno_env import Engine, UnoRules, sample_legal

REPO = Path(__file__).resolve().parents[1]

# Our options closest to RLCard's UNO (docs/rules.md R4, R6): draw only when nothing is playable, no
# Wild Draw Four challenge (so no bluffing), and a held wild blocks a Wild Draw Four (RLCard allows
# it only when nothing else is playable).
RLCARD_LIKE = dict(allow_voluntary_draw=False, challenge=False, wd4_wilds_count_as_match=True)

RULE_NOTE = (
    "Rules differ. RLCard 1.2's UNO: no Wild Draw Four challenge, a Wild Draw Four only when nothing else "
    "is playable, no UNO call, no scoring, drawing only when nothing is playable, a drawn card auto-played "
    "if it matches the colour (ours: the player may play it or pass), a drawn wild gets a random colour and "
    "a drawn Wild Draw Four adds no cards, with 2 players Reverse does not skip, the reshuffle includes the "
    "top card, and its UnoGame's payoffs assume 2 players. Ours (classic preset): docs/rules.md R1-R10 with "
    "challenge, voluntary draw, play-or-pass after a draw. The 'RLCard-like rules' rows set "
    + ", ".join(f"{k}={v}" for k, v in RLCARD_LIKE.items())
    + " (the remaining differences are in the game flow, not options). Observations differ too: RLCard's "
    "UnoGame builds a state dict per step, ours a float32 vector and a 116-action mask for every game "
    "('uno_env core' rows skip the observation)."
)

SECTIONS = ("core", "env", "pipeline", "scaling", "skill")
TARGETS = {"core": {1: 5.0, 4096: 25.0}, "env": {"env()": 1.5, "raw_env": 3.0}, "pipeline": 3.0}


@dataclasses.dataclass
class Args:
    """Options of the suite (``python -m benchmarks --help``)."""

    quick: bool = False
    """CI smoke: tiny sizes and 1 run (numbers not meaningful); explicit options still apply"""
    sections: str = "core,env,pipeline,scaling"
    """comma-separated sections to run (core, env, pipeline, scaling, skill: the time to skill, ~45 min,
    run only when named)"""
    runs: int = 5
    """interleaved runs per row; the median is reported (1 with --quick)"""
    seconds: float = 1.0
    """length of each timed run in the core, env and scaling sections (0.02 with --quick)"""
    core_batches: str = "1,4096"
    """batch sizes of the game-core rows (1,64 with --quick)"""
    core_players: str = "2,4"
    """player counts of the game-core rows"""
    scaling_batches: str = "1,4,16,64,256,1024,4096,16384"
    """batch sizes of the scaling sweep, 2 players (1,16 with --quick)"""
    scaling_players: str = "2,3,4,5,6,8,10"
    """player counts of the scaling sweep (2,10 with --quick)"""
    scaling_batch: int = 4096
    """batch size of the player-count sweep and of the traced memory peak (64 with --quick)"""
    pipeline_runs: int = 3
    """interleaved runs of each training-pipeline row (1 with --quick)"""
    pipeline_rollouts: int = 2
    """rollouts (each followed by its PPO update) per timed learn (1 with --quick)"""
    rlcard: bool = True
    """measure RLCard (--no-rlcard skips it and the ratios)"""
    results_dir: str = "benchmarks/results"
    """where benchmarks.md, benchmarks.json and scaling.png are written"""
    seed: int = 0
    """seed of every game and model"""
    skill_minutes: float = 20.0
    """training wall-minutes each learner gets in the skill section (0.05 with --quick)"""
    profile: bool = False
    """cProfile our side of every row that misses its target; written to profiles.txt in the results dir"""


QUICK = dict(
    runs=1,
    seconds=0.02,
    core_batches="1,64",
    scaling_batches="1,16",
    scaling_players="2,10",
    scaling_batch=64,
    pipeline_runs=1,
    pipeline_rollouts=1,
    skill_minutes=0.05,
)
QUICK_PIPELINE = {"tiny": dict(rollout=128, batch_size=64, n_epochs=1, learning_rate=3e-4, num_envs=16)}


def parse_args(argv: list[str] | None = None) -> Args:
    args = tyro.cli(Args, args=argv, description=__doc__)
    if args.quick:  # quick sizes, unless given explicitly
        given = {a.split("=")[0][2:].replace("-", "_") for a in (argv if argv is not None else sys.argv[1:])}
        args = dataclasses.replace(args, **{k: v for k, v in QUICK.items() if k not in given})
    unknown = set(_list(args.sections, str)) - set(SECTIONS)
    if unknown:
        raise SystemExit(f"--sections: unknown {sorted(unknown)}; allowed: {', '.join(SECTIONS)}")
    if not args.skill_minutes > 0:
        raise SystemExit(f"--skill-minutes must be > 0, got {args.skill_minutes}")
    if min(args.runs, args.pipeline_runs, args.pipeline_rollouts, args.scaling_batch) < 1 or args.seconds <= 0:
        raise SystemExit("--runs, --pipeline-runs, --pipeline-rollouts, --scaling-batch and --seconds must be positive")
    return args


def _list(text: str, conv: Callable[[str], Any] = int) -> list[Any]:
    return [conv(x.strip()) for x in text.split(",") if x.strip()]


def _row(bench: Any, ms: list) -> dict[str, Any]:
    rules = (
        "RLCard 1.2" if bench.impl.startswith("rlcard") else "RLCard-like" if "RLCard-like" in bench.impl else "classic"
    )
    return {"impl": bench.impl, "players": bench.players, "batch": bench.batch, "rules": rules, **summarize(ms)}


# --- sections -----------------------------------------------------------------------------------


def game_length(players: int, overrides: dict[str, Any], quick: bool = False) -> float:
    """Mean game steps per round of random legal play (untimed): 1024 games, after a burn-in."""
    batch, calls = (64, 50) if quick else (1024, 600)
    e = Engine(batch, players, UnoRules.preset("classic", **overrides), seed=1, autoreset=True, observations=False)
    rng = np.random.default_rng(1)
    ends = 0
    for k in range(2 * calls):
        r = e.step(sample_legal(e.legal_mask, rng))
        if k >= calls:  # the first half spreads the games over their rounds
            ends += int(r.terminated.sum() + r.truncated.sum())
    return batch * calls / max(ends, 1)


def section_core(args: Args, log: Callable[[str], None]) -> dict[str, Any]:
    """RLCard UnoGame vs our Engine at the core batch sizes (classic, core, RLCard-like rules)."""
    benches: list[Any] = []
    for p in _list(args.core_players):
        if args.rlcard:
            benches.append(RLCardBench(p, args.seed + p))
        for b in _list(args.core_batches):
            s = args.seed + 1000 * p + b
            benches.append(OursBench(b, p, s))
            benches.append(OursBench(b, p, s, observations=False))
            benches.append(OursBench(b, p, s, overrides=RLCARD_LIKE, label="RLCard-like rules"))
            if b >= 1024:
                benches.append(OursBench(b, p, s, parallel=True))
    measured = interleave(benches, args.runs, args.seconds, log=log)
    rows = [_row(b, m) for b, m in zip(benches, measured, strict=True)]
    lengths: dict[tuple[int, str], float] = {}
    for b, r in zip(benches, rows, strict=True):
        if r["impl"] == "rlcard":
            r["steps_per_game"] = sum(r["runs_steps"]) / max(b.games, 1)  # its counter covers the timed runs
        else:
            key = (r["players"], r["rules"])
            if key not in lengths:
                lengths[key] = game_length(r["players"], RLCARD_LIKE if r["rules"] == "RLCard-like" else {}, args.quick)
            r["steps_per_game"] = lengths[key]
    peers = {r["players"]: r for r in rows if r["impl"] == "rlcard"}
    for r in rows:
        if r["impl"] != "rlcard" and r["players"] in peers:
            target = TARGETS["core"].get(r["batch"]) if r["impl"] == "uno_env" else None
            add_ratio(r, peers[r["players"]], target)
    notes = [
        "Every row is one thread except 'parallel' (Engine(parallel=True): numba prange over the "
        "games on all of numba's threads; opt-in, worth it only on free cores)."
    ]
    return {"rows": rows, "notes": notes, "_benches": benches}


def section_env(args: Args, log: Callable[[str], None]) -> dict[str, Any]:
    """RLCard's env.step loop vs our AEC loops (2 players), in decisions per second."""
    chunk = 200 if args.quick else 1000
    benches: list[Any] = [RLCardEnvBench(args.seed, chunk)] if args.rlcard else []
    benches += [
        AECBench(uno_env.raw_env(num_players=2), args.seed, chunk, True, "raw_env"),
        AECBench(uno_env.env(num_players=2), args.seed, chunk, True, "env()"),
        AECBench(
            uno_env.raw_env(num_players=2, rules=UnoRules.preset("classic", **RLCARD_LIKE)),
            args.seed,
            chunk,
            True,
            "raw_env RLCard-like rules",
        ),
    ]
    for b in benches:
        b.chunk()  # warm-up
    measured = interleave(benches, args.runs, args.seconds, log=log)
    rows = [_row(b, m) for b, m in zip(benches, measured, strict=True)]
    for b, r in zip(benches, rows, strict=True):
        r["steps_per_game"] = b.decisions / max(b.games, 1)  # over the warm-up and the timed runs
    if args.rlcard:
        for r in rows[1:]:
            add_ratio(r, rows[0], TARGETS["env"].get(r["impl"]))
    return {
        "rows": rows,
        "_benches": benches,
        "notes": [
            "Steps are decisions (env.step calls with an action); the AEC loop's None steps of finished agents "
            "are run but not counted. Ours: agent_iter, last, a random legal action from the mask, step."
        ],
    }


def section_pipeline(args: Args, log: Callable[[str], None]) -> dict[str, Any]:
    """The tutorial pipeline vs ours, under each PPO setting."""
    import torch

    torch.set_num_threads(1)
    settings = QUICK_PIPELINE if args.quick else pipe.SETTINGS
    benches = pipe.make_benches(settings, args.seed)
    rows = pipe.measure_pipeline(benches, args.pipeline_runs, args.pipeline_rollouts, log)
    for tut, ours in zip(rows[::2], rows[1::2], strict=True):
        add_ratio(ours, tut, TARGETS["pipeline"])
        ours["rollout_ratio"] = ours["rollout_steps_per_s"] / tut["rollout_steps_per_s"]
    return {
        "rows": rows,
        "_benches": benches,
        "notes": [
            "An env step is one model decision in one game (SB3's timestep). The tutorial's model plays both seats "
            "(self-play, as in the tutorial); ours plays seat 0 against RandomAgent opponents run inside the env. "
            "torch uses one thread. Network: MaskableActorCriticPolicy's default (64-64 tanh MLP, separate pi/vf)."
        ],
    }


def section_scaling(args: Args, log: Callable[[str], None], results_dir: Path) -> dict[str, Any]:
    """Steps/s vs batch size and player count, memory per game, and the PNG plot."""
    batch_benches: list[Any] = [OursBench(b, 2, args.seed + b) for b in _list(args.scaling_batches)]
    player_benches: list[Any] = [OursBench(args.scaling_batch, p, args.seed + p) for p in _list(args.scaling_players)]
    if args.rlcard:
        player_benches += [RLCardBench(p, args.seed + p) for p in _list(args.scaling_players)]
    benches = batch_benches + player_benches
    measured = interleave(benches, args.runs, args.seconds, log=log)
    rows = [_row(b, m) for b, m in zip(benches, measured, strict=True)]
    batch_rows = rows[: len(batch_benches)]
    player_rows = rows[len(batch_benches) :]
    if args.rlcard:
        batch_rows = batch_rows + [r for r in player_rows if r["impl"] == "rlcard" and r["players"] == 2]
    log("    memory ...")
    memory = scaling.memory_rows(_list(args.scaling_players), args.scaling_batch, args.rlcard)
    png = results_dir / "scaling.png"
    scaling.plot(batch_rows, player_rows, str(png), title=f"uno_env scaling, one thread; {time.strftime('%Y-%m-%d')}")
    return {"batch_rows": batch_rows, "player_rows": player_rows, "memory": memory, "plot": str(png), "notes": []}


def section_skill(args: Args, log: Callable[[str], None], results_dir: Path) -> dict[str, Any]:
    """Time to skill (``benchmarks.time_to_skill``), which also writes its own result files."""
    from benchmarks import time_to_skill as tts

    quick = {k: v for k, v in tts.QUICK.items() if k != "budget_minutes"} if args.quick else {}
    targs = tts.Args(
        quick=args.quick, seed=args.seed, results_dir=str(results_dir), budget_minutes=args.skill_minutes, **quick
    )
    tts.check_args(targs)
    report = tts.run(targs, log, "python -m benchmarks --sections skill" + (" --quick" if args.quick else ""))
    return {
        "rows": report["rows"],
        "threshold": targs.threshold,
        "opponents": targs.opponents,
        "eval_games": targs.eval_games,
        "notes": tts.notes(report),
    }


def profile_misses(sections: dict[str, Any], benches: dict[str, list[Any]], args: Args) -> str:
    """cProfile text of our side of every row that missed its target (about one timed run each)."""

    def loop(chunk: Callable[[], int]) -> None:
        t = time.perf_counter()
        while time.perf_counter() - t < max(args.seconds, 0.2):
            chunk()

    parts = []
    for name, sec in sections.items():
        for bench, row in zip(benches.get(name, []), sec.get("rows", []), strict=False):
            if "target" not in row or (row["target_met"] and row["cpu_target_met"]):
                continue
            if name == "pipeline":
                text = profile_text(bench.chunk, 25)
            else:
                text = profile_text(lambda bench=bench: loop(bench.chunk), 15)
            parts.append(
                f"## {name}: {row['impl']} ({row['players'] if 'players' in row else 2} players, "
                f"batch {row.get('batch', row.get('num_envs'))}): {row['ratio']:.2f}x, target {row['target']:g}x\n\n{text}"
            )
    return "\n".join(parts)


# --- report ---------------------------------------------------------------------------------------


def _rate_table(rows: list[dict[str, Any]]) -> list[str]:
    length = any("steps_per_game" in r for r in rows)
    lines = [
        "| impl | players | batch | rules"
        + (" | steps/game" if length else "")
        + " | steps/s (median) | runs | CPU steps/s | x peer | x peer (CPU) | target met (wall / CPU) |",
        "|---|---:|---:|---" + ("|---:" if length else "") + "|---:|---|---:|---:|---:|---|",
    ]
    for r in rows:
        runs = " ".join(fmt_rate(x) for x in r["runs_steps_per_s"])
        cell = (f" | {r['steps_per_game']:.0f}" if "steps_per_game" in r else " | ") if length else ""
        lines.append(
            f"| {r['impl']} | {r['players']} | {r['batch']} | {r['rules']}{cell} | {fmt_rate(r['steps_per_s'])} | "
            f"{runs} | {fmt_rate(r['cpu_steps_per_s'])}" + ratio_cells(r) + " |"
        )
    return lines


def render_markdown(report: dict[str, Any]) -> str:
    m, a = report["machine"], report["args"]
    out = [
        "## uno_env benchmark suite",
        "",
        *machine_lines(m, report["load_average_at_end"]),
        "- one thread (numba, BLAS, torch); the machine is shared: CPU-time (`time.process_time`) rates are the "
        "steadier figures",
        f"- {a['runs']} interleaved runs of {a['seconds']:g} s per row (pipeline: {a['pipeline_runs']} runs of "
        f"{a['pipeline_rollouts']} rollouts); medians; ratios are of the wall-clock medians (x peer) and of the "
        "CPU-time medians (x peer (CPU)), peer measured in the same runs"
        + ("; QUICK MODE: numbers not meaningful" if a["quick"] else ""),
        "",
        f"> {RULE_NOTE}",
    ]
    s = report["sections"]
    if "core" in s:
        out += ["", "### 1. Game core: RLCard UnoGame vs the uno_env Engine (game steps/s, random legal moves)", ""]
        out += _rate_table(s["core"]["rows"])
    if "env" in s:
        out += ["", "### 2. Env loop: RLCard env.step vs PettingZoo AEC loops (decisions/s, 2 players)", ""]
        out += _rate_table(s["env"]["rows"])
    if "pipeline" in s:
        out += [
            "",
            "### 3. Training pipeline: PettingZoo SB3 tutorial setup vs UnoSB3VecEnv (MaskablePPO env steps/s)",
            "",
            "| pipeline | PPO setting | rollout | minibatch | epochs | env steps/s (median) | runs | CPU steps/s "
            "| rollout-phase steps/s | update share | x tutorial | x tutorial (CPU) | target met (wall / CPU) |",
            "|---|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---|",
        ]
        for r in s["pipeline"]["rows"]:
            runs = " ".join(fmt_rate(x) for x in r["runs_steps_per_s"])
            out.append(
                f"| {r['impl']} | {r['setting']} | {r['rollout_size']} | {r['ppo']['batch_size']} | "
                f"{r['ppo']['n_epochs']} | {fmt_rate(r['steps_per_s'])} | {runs} | {fmt_rate(r['cpu_steps_per_s'])} | "
                f"{fmt_rate(r['rollout_steps_per_s'])} | {r['update_share']:.0%}" + ratio_cells(r) + " |"
            )
        rows = s["pipeline"]["rows"]
        pairs = list(zip(rows[::2], rows[1::2], strict=True))
        if pairs:
            out += [
                "",
                "Both pipelines of a setting do the same PPO update work per env step (same rollout size, "
                "minibatch, epochs and network); its share of our time ("
                + ", ".join(f"{o['setting']}: {o['update_share']:.0%}" for _, o in pairs)
                + ") is what bounds the pipeline ratio, not the env. The rollout phase alone (env + policy "
                "forward, no update), ours / tutorial: "
                + "; ".join(f"{o['setting']}: {o['rollout_ratio']:.1f}x" for _, o in pairs)
                + ".",
            ]
    if "scaling" in s:
        sc = s["scaling"]
        out += ["", "### 4. Scaling (game steps/s; plot: scaling.png)", "", "Batch size (2 players):", ""]
        out += _rate_table(sc["batch_rows"])
        out += ["", f"Player count (uno_env at batch {a['scaling_batch']}; RLCard UnoGame at batch 1):", ""]
        out += _rate_table(sc["player_rows"])
        out += [
            "",
            "Memory per game (bytes):",
            "",
            "| players | engine state arrays | output buffers (obs, final obs, mask, ...) | traced peak, uno_env "
            f"(batch {a['scaling_batch']}) | traced peak, RLCard UnoGame (one game played out) |",
            "|---:|---:|---:|---:|---:|",
        ]
        for r in sc["memory"]:
            rl = r.get("rlcard_traced_peak_bytes_per_game")
            out.append(
                f"| {r['players']} | {r['state_bytes_per_game']:,.0f} | {r['output_bytes_per_game']:,.0f} | "
                f"{r['traced_peak_bytes_per_game']:,.0f} | {'' if rl is None else f'{rl:,.0f}'} |"
            )
    if "skill" in s:
        from benchmarks.time_to_skill import table_lines

        sk = s["skill"]
        out += [
            "",
            f"### 5. Time to skill: training minutes until >= {sk['threshold']:.0%} vs each of {sk['opponents']} "
            f"({sk['eval_games']:,} games; time_to_skill.md)",
            "",
        ]
        out += table_lines(sk["rows"], sk["threshold"])
    notes = [n for sec in s.values() for n in sec.get("notes", [])] + report["notes"]
    if notes:
        out += ["", "Notes:", ""] + [f"- {n}" for n in notes]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    results_dir = Path(args.results_dir)
    if not results_dir.is_absolute():
        results_dir = REPO / results_dir
    results_dir.mkdir(parents=True, exist_ok=True)
    machine = machine_info()
    t0 = time.perf_counter()
    sections: dict[str, Any] = {}
    notes: list[str] = []
    wanted = _list(args.sections, str)
    if args.rlcard:
        try:
            import rlcard  # noqa: F401
        except ImportError as exc:
            notes.append(f"RLCard not measured ({exc}); install the bench extra.")
            args = dataclasses.replace(args, rlcard=False)
    for name in SECTIONS:
        if name not in wanted:
            continue
        log(f"{name} ...")
        t = time.perf_counter()
        try:
            if name in ("scaling", "skill"):
                sections[name] = {"scaling": section_scaling, "skill": section_skill}[name](args, log, results_dir)
            else:
                sections[name] = {"core": section_core, "env": section_env, "pipeline": section_pipeline}[name](
                    args, log
                )
        except ImportError as exc:  # the pipeline needs the train extra (torch, SB3), the plot matplotlib
            notes.append(f"section {name} not run ({exc}); install the train and bench extras.")
            continue
        sections[name]["seconds"] = time.perf_counter() - t
    benches = {name: sec.pop("_benches", []) for name, sec in sections.items()}
    if _sources_digest() != machine["sources_digest"]:
        notes.append("uno_env/agents sources changed while the suite ran; numbers may mix versions.")
    report = {
        "args": dataclasses.asdict(args),
        "machine": machine,
        "sections": sections,
        "notes": notes,
        "rule_note": RULE_NOTE,
        "load_average_at_end": loadavg(),
        "total_seconds": time.perf_counter() - t0,
    }
    md = render_markdown(report)
    print(md, end="", flush=True)
    (results_dir / "benchmarks.md").write_text(md)
    (results_dir / "benchmarks.json").write_text(json.dumps(report, indent=2) + "\n")
    log(f"wrote {results_dir / 'benchmarks.md'}, benchmarks.json" + (", scaling.png" if "scaling" in sections else ""))
    if args.profile:
        log("profiles of the missed targets ...")
        (results_dir / "profiles.txt").write_text(profile_misses(sections, benches, args) or "no target missed\n")
        log(f"wrote {results_dir / 'profiles.txt'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
