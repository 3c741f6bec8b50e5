"""``evaluate.py`` and ``uno-evaluate``: a tournament of UNO agents, or one agent's rating on the ladder."""

from __future__ import annotations

import dataclasses
import json
import os
import secrets
import sys
import time
from dataclasses import dataclass
from typing import Annotated, Any

import numpy as np
import tyro

from agents.llm import DEFAULT_SETTINGS, ChatFailure, ChatSettings
from agents.registry import AGENT_SPECS, make_agent, parse_list
from arena import PlayResult, TournamentResult, play, tournament, unique_names
from arena.ladder import LADDER, LADDERS, LadderResult, rate_on_ladder
from arena.ratings import Z95
from uno_env import UnoRules, parse_rules
from uno_env.compile_notice import announce_compiling
from uno_env.rules import PRESETS_HELP

HELP = """A tournament of UNO agents: win rates with 95% intervals, ratings, a JSON file and plots.

    python evaluate.py                                              # the four baselines, 2 players
    python evaluate.py --agents heuristic,runs/uno_ppo/model.zip,my_agent.py:MyAgent --duplicate
    python evaluate.py --ladder runs/uno_ppo/model.zip              # a rating on the reference ladder

Language models: --agents chat:MODEL with --chat.base-url (docs/llm.md). Every option: docs/evaluation.md."""


# UseAppendAction: --chat.endpoints NAME URL and --chat.endpoint-keys NAME VAR repeat, one pair each.
ChatOptions = Annotated[ChatSettings, tyro.conf.UseAppendAction]
"""``ChatSettings`` as the ``--chat.*`` options of a command (``evaluate.py``, ``uno-yardstick``)"""


@dataclass
class Args:
    """Options of ``evaluate.py`` / ``uno-evaluate`` (their depth: docs/evaluation.md)."""

    agents: Annotated[str, tyro.conf.arg(help=f"comma-separated agent specs: {AGENT_SPECS}")] = (
        "random,rlcard_rule,greedy,heuristic"
    )
    num_players: int = 2
    """players per table (2-10); with n > 2 every table of n distinct entries plays"""
    rules: Annotated[str, tyro.conf.arg(help=PRESETS_HELP)] = "classic"
    games: int = 10_000
    """games per pairing (2 players) or per table"""
    seed: int = 0
    """seed of the games and the agents' random choices"""
    batch_size: int = 1024
    """games played at once per table (results depend on it, as on the seed)"""
    deterministic: bool = True
    """saved models play their most likely legal action (False: sample from the policy)"""
    anchor: str = "random"
    """agent whose rating is fixed at --anchor-rating (empty: the mean)"""
    anchor_rating: float = 1000.0
    """rating of the anchor agent"""
    output_dir: str = "runs/eval"
    """where tournament.json, the transcripts and the PNG plots go"""
    plots: bool = True
    """draw win_rates.png and ratings.png"""
    save_games: int = 0
    """also write this many recorded rounds of the first table to <output_dir>/games.jsonl"""
    torch_threads: int = 1
    """torch CPU threads for saved models (0: torch's default)"""
    chunk_games: int = 10_000
    """games per unit of work; results depend on it, never on --ray"""
    ray: bool = False
    """play the chunks as Ray tasks (the distributed extra)"""
    address: str = ""
    """with --ray: a running Ray cluster ('auto': this machine's); empty: a local Ray"""
    num_cpus: int = 2
    """with --ray and no --address: CPUs of the local Ray"""
    duplicate: bool = False
    """duplicate deals, intervals paired over deals (--games a multiple of --num-players)"""
    ladder: str = ""
    """rate this one agent on the reference ladder (2 or 4 players; the ladder fixes the rest)"""
    ladder_version: str = LADDER.version
    """the ladder version --ladder rates on (arena.ladder.LADDERS)"""
    allow_other_table: bool = False
    """let saved models play rules or a table size their card says they were not trained for"""
    chat: ChatOptions = DEFAULT_SETTINGS
    """the settings of chat:MODEL agents (agents.llm.ChatSettings)"""


# What the ladder fixes itself (arena.ladder.LadderSpec): giving any of these with --ladder is an error.
LADDER_FIXES = (
    "agents",
    "rules",
    "games",
    "seed",
    "batch_size",
    "chunk_games",
    "anchor",
    "anchor_rating",
    "duplicate",
)


def plot_results(result: TournamentResult, output_dir: str) -> list[str]:
    """The win-rate heat map and the rating bars as PNG files; returns their paths."""
    # Imported here: matplotlib is heavy and only needed for the plots (--no-plots skips it).
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = result.names
    n = len(names)
    beat, met = result.pairwise()
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(met > 0, beat / np.maximum(met, 1), np.nan)
    paths = []
    size = max(4.0, 0.9 * n + 2.0)
    fig, ax = plt.subplots(figsize=(size + 1.0, size))
    im = ax.imshow(rate, cmap="RdBu", vmin=0.0, vmax=1.0)
    ax.set_xticks(range(n), names, rotation=45, ha="right")
    ax.set_yticks(range(n), names)
    for i in range(n):
        for j in range(n):
            if not np.isnan(rate[i, j]):
                ax.text(
                    j,
                    i,
                    f"{rate[i, j]:.0%}",
                    ha="center",
                    va="center",
                    color="white" if abs(rate[i, j] - 0.5) > 0.3 else "black",
                    fontsize=9,
                )
    ax.set_xlabel("opponent")
    ax.set_ylabel("agent")
    what = "games won against the opponent" if result.num_players == 2 else "games won with the opponent at the table"
    per = "pairing" if result.num_players == 2 else "table"
    ax.set_title(f"Win rate: {what}\n{result.num_players} players, {result.config['num_games']:,} games per {per}")
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    fig.tight_layout()
    paths.append(os.path.join(output_dir, "win_rates.png"))
    fig.savefig(paths[-1], dpi=120)
    plt.close(fig)

    order = np.argsort(-result.ratings)
    fig, ax = plt.subplots(figsize=(max(5.0, 0.8 * n + 2.0), 4.0))
    ax.bar(range(n), result.ratings[order], yerr=Z95 * result.rating_se[order], capsize=4, color="tab:blue")
    ax.set_xticks(range(n), [names[i] for i in order], rotation=30, ha="right")
    ax.set_ylabel("rating (Elo scale)")
    anchor = f"{result.anchor} = {result.config['anchor_rating']:g}" if result.anchor else "mean = 1000"
    ax.set_title(f"Bradley–Terry ratings, 95% intervals ({anchor})")
    lo = float(np.min(result.ratings - 2 * result.rating_se))
    ax.set_ylim(bottom=min(0.0, lo - 50.0))
    fig.tight_layout()
    paths.append(os.path.join(output_dir, "ratings.png"))
    fig.savefig(paths[-1], dpi=120)
    plt.close(fig)
    return paths


def ladder_main(args: Args) -> LadderResult:
    """``--ladder``: rate one agent on ``--ladder-version``; print the ladder table; write ladder.json."""
    fixed = [
        f"--{f.name.replace('_', '-')}"
        for f in dataclasses.fields(Args)
        if f.name in LADDER_FIXES and getattr(args, f.name) != f.default
    ]
    if fixed:
        raise ValueError(
            f"--ladder plays the ladder's own games, seed and rules: drop {', '.join(fixed)} (with "
            f"--ladder only --ladder-version, --num-players 2 or 4, --deterministic, --torch-threads, --output-dir, "
            f"--ray/--address/--num-cpus and the --chat.* options apply)"
        )
    if args.ladder_version not in LADDERS:
        raise ValueError(f"--ladder-version must be one of {sorted(LADDERS)}, got {args.ladder_version!r}")
    spec = LADDERS[args.ladder_version]
    spec.games_per_table(args.num_players)  # a ValueError naming the player counts the ladder defines
    agent = make_agent(
        args.ladder,
        spec.uno_rules,
        deterministic=args.deterministic,
        num_players=args.num_players,
        allow_other_table=args.allow_other_table,
        chat=args.chat,
    )
    play_chunks, progress = prepare_play(args)
    t0 = time.time()
    with transcript_writer([agent], args):
        result = rate_on_ladder(
            agent,
            args.num_players,
            spec,
            play_chunks=play_chunks,
            progress=progress,
            allow_other_table=args.allow_other_table,
        )
        check_agents([agent])
    print(result.markdown())
    os.makedirs(args.output_dir, exist_ok=True)
    path = os.path.join(args.output_dir, "ladder.json")
    with open(path, "w") as f:
        json.dump({"spec": args.ladder, **result.to_dict(), "agent_stats": agent_stats([agent])}, f, indent=2)
    # Timing on stderr only: ladder.json and stdout stay identical run to run.
    print(f"wrote {path} ({(time.time() - t0) / 60:.1f} min)", file=sys.stderr)
    return result


def check_agents(agents: list) -> None:
    """The end-of-run check of agents that can fail (``check()``: a chat agent's fallback share):
    ``ChatFailure`` before any rating is shown."""
    for agent in agents:
        if callable(getattr(agent, "check", None)):
            agent.check()


class transcript_writer:
    """Around a run: afterwards (finished or stopped), every chat agent's games go to
    ``<output_dir>/transcript-<run id>.jsonl``, a new file each run (docs/llm.md: the format)."""

    def __init__(self, agents: list, args: Args) -> None:
        self.agents = [a for a in agents if isinstance(getattr(a, "transcripts", None), list)]
        self.args = args
        self.run_id = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + "-" + secrets.token_hex(3)
        self.path: str | None = None

    def __enter__(self) -> transcript_writer:
        return self

    def __exit__(self, *exc: Any) -> None:
        if not self.agents:
            return
        os.makedirs(self.args.output_dir, exist_ok=True)
        self.path = os.path.join(self.args.output_dir, f"transcript-{self.run_id}.jsonl")
        with open(self.path, "x") as f:  # "x": a run never appends to, or replaces, another's file
            for agent in self.agents:
                for game in agent.transcripts:
                    f.write(json.dumps(transcript_line(self.run_id, agent, game)) + "\n")
        print(f"wrote {self.path}", file=sys.stderr)


def transcript_line(run_id: str, agent: Any, game: dict[str, Any]) -> dict[str, Any]:
    """One game of one chat agent as a transcript line (docs/llm.md: the transcript format)."""
    seat, players = game.get("seat"), game.get("players")
    return {
        "run_id": run_id,
        "agent": agent.name,
        "model": agent.model,
        "endpoint": agent.endpoint,
        "game": game["game"],
        "seat": seat,
        "players": players,
        "opponents": [p for s, p in enumerate(players) if s != seat] if players else None,
        "outcome": game.get("outcome"),
        "decisions": game["decisions"],
    }


def agent_stats(agents: list) -> dict[str, Any]:
    """What agents that measure themselves report (``stats()``: a chat agent's requests, bad
    replies, fallbacks, tokens and seconds per decision), by name; printed on stderr."""
    out = {}
    for agent in agents:
        if callable(getattr(agent, "stats", None)):
            stats = agent.stats()
            out[agent.name] = stats
            print(
                f"{agent.name}: {stats['decisions']} decisions, {stats['fallbacks']} fallbacks, "
                f"{stats['bad_replies']} bad replies, {stats['failed_requests']} failed requests, "
                f"{stats['tokens_per_decision']:.0f} tokens and {stats['seconds_per_decision']:.2f} s per decision",
                file=sys.stderr,
            )
    return out


def save_games(agents: list, args: Args, rules: UnoRules) -> str:
    """Play ``--save-games`` recorded rounds of the first table and write them as JSON Lines; the path."""
    table = [agents[k % len(agents)] for k in range(args.num_players)]  # seat k: the k-th agent given
    played = play(table, args.save_games, rules, args.seed, batch_size=args.batch_size, rotate_seats=False, record=True)
    path = os.path.join(args.output_dir, "games.jsonl")
    with open(path, "w") as f:
        f.writelines(json.dumps(record) + "\n" for record in played.records or [])
    return path


def prepare_play(args: Args) -> tuple[Any, Any]:
    """What both modes share: torch's threads, the Ray chunk runner (or None), the progress line."""
    # torch is loaded only when a saved model was; importing it just to set its threads costs seconds.
    if args.torch_threads and "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(args.torch_threads)
    play_chunks = None
    if args.ray:
        # Imported here: ray is a heavy optional dependency (the distributed extra).
        from arena.remote import ray_chunks

        play_chunks = ray_chunks(args.address, args.num_cpus)

    def progress(r: PlayResult) -> None:
        print(f"  {' vs '.join(r.names)}: {r.games:,} games in {r.seconds:.1f} s", file=sys.stderr, flush=True)

    return play_chunks, progress


def main(args: Args) -> TournamentResult | LadderResult:
    """Run the tournament (or the ladder); print the Markdown tables; write the JSON and the plots."""
    for name in ("games", "chunk_games", "batch_size", "num_cpus"):
        if getattr(args, name) < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    if args.save_games < 0:
        raise ValueError(f"--save-games must be >= 0, got {args.save_games}")
    if args.ladder:
        return ladder_main(args)
    if args.ladder_version != LADDER.version:
        raise ValueError("--ladder-version applies to --ladder AGENT only")
    rules = parse_rules(args.rules)
    specs = parse_list(args.agents)
    agents = [
        make_agent(
            s,
            rules,
            deterministic=args.deterministic,
            num_players=args.num_players,
            allow_other_table=args.allow_other_table,
            chat=args.chat,
        )
        for s in specs
    ]
    names = unique_names(agents)
    if args.anchor and args.anchor not in names and args.anchor != Args.anchor:
        raise ValueError(
            f"--anchor {args.anchor!r} is not one of the agents: give one of {', '.join(names)}, or --anchor '' "
            f"for the mean (the default, {Args.anchor}, falls back to the mean when it does not play)"
        )
    play_chunks, progress = prepare_play(args)
    t0 = time.time()

    with transcript_writer(agents, args):
        result = tournament(
            agents,
            args.games,
            num_players=args.num_players,
            rules=rules,
            seed=args.seed,
            batch_size=args.batch_size,
            anchor=args.anchor,
            anchor_rating=args.anchor_rating,
            progress=progress,
            chunk_games=args.chunk_games,
            play_chunks=play_chunks,
            duplicate=args.duplicate,
        )
        check_agents(agents)
    result.config.update(
        {
            "agents": specs,
            "rules_arg": args.rules,
            "deterministic": args.deterministic,
            "ray": args.ray,
            "seconds": time.time() - t0,
            "agent_stats": agent_stats(agents),
        }
    )
    print(
        f"\n{args.num_players} players, rules {args.rules}, {args.games:,} games per "
        f"{'pairing' if args.num_players == 2 else 'table'}, seats rotated, seed {args.seed}\n"
    )
    print(result.markdown())
    os.makedirs(args.output_dir, exist_ok=True)
    path = os.path.join(args.output_dir, "tournament.json")
    with open(path, "w") as f:
        json.dump({"args": dataclasses.asdict(args), **result.to_dict()}, f, indent=2)
    written = [path]
    if args.plots:
        written += plot_results(result, args.output_dir)
    if args.save_games:
        written.append(save_games(agents, args, rules))
    print("\nwrote " + ", ".join(written))
    return result


def cli(argv: list[str] | None = None, script: str = "uno-evaluate") -> None:
    """The command line: ``uno-evaluate`` (the wheel's command) and ``python evaluate.py`` (``script``)."""
    args = tyro.cli(Args, args=argv, prog=script, description=HELP)
    announce_compiling(script)
    try:
        main(args)
    except (ValueError, ChatFailure) as exc:  # a bad setting or a failing model: one line, not a traceback
        cause = getattr(exc, "cause", None)  # raised in a Ray task: the worker's own error, without Ray's traceback
        sys.exit(f"error: {cause if isinstance(cause, Exception) else exc}")


if __name__ == "__main__":
    cli(script="evaluate.py")
