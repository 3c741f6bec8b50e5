"""Load test of ``uno-web`` on loopback: N concurrent games played to the end by a client script.

Prints the move/advance latency (p50, p95, p99), the throughput, the server's memory, and the
latency of ``GET /api/config`` asked meanwhile (what a slow agent makes everyone else wait).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import socket
import subprocess
import sys
import time
from dataclasses import dataclass

import httpx
import tyro

from uno_env.checks import check_int
from uno_env.rules import check_num_players


@dataclass
class Args:
    """Options of the load test."""

    games: int = 200
    """games played at once"""
    num_players: int = 2
    """players per game (one of them the scripted human)"""
    agent: str = "heuristic"
    """agent at every other seat"""
    seed: int = 0
    """seed of the games and of the scripted human"""
    requests_per_game: int | None = None
    """stop each game after this many move/advance requests (None: play it to the end)"""
    json_out: str | None = None
    """also write the figures to this JSON file"""


def _rss_mb(pid: int) -> float:
    """Resident memory of process ``pid`` in MiB (Linux /proc)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds used so far by process ``pid`` (Linux /proc)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _play(client: httpx.AsyncClient, args: Args, k: int, latencies: list[float]) -> int:
    rng = random.Random(args.seed * 100_003 + k)
    r = await client.post(
        "/api/games",
        json={"players": args.num_players, "seat": 0, "agents": [args.agent], "seed": args.seed * 100_003 + k},
    )
    r.raise_for_status()
    view = r.json()
    gid, since, requests = view["game_id"], view["event_count"], 0
    while not view["over"] and (args.requests_per_game is None or requests < args.requests_per_game):
        t = time.perf_counter()
        if view["your_turn"]:
            r = await client.post(
                f"/api/games/{gid}/move?since={since}", json={"action": rng.choice(view["legal"])["id"]}
            )
        else:
            r = await client.post(f"/api/games/{gid}/advance?since={since}")
        latencies.append(time.perf_counter() - t)
        r.raise_for_status()
        view = r.json()
        since = view["event_count"]
        requests += 1
    (await client.delete(f"/api/games/{gid}")).raise_for_status()
    return requests


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def _run(args: Args, url: str, pid: int) -> dict:
    latencies: list[float] = []
    peak = [0.0]
    done = asyncio.Event()

    probes: list[float] = []

    async def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], _rss_mb(pid))
            await asyncio.sleep(0.2)

    async def probe(client: httpx.AsyncClient) -> None:
        while not done.is_set():
            t = time.perf_counter()
            (await client.get("/api/config")).raise_for_status()
            probes.append(time.perf_counter() - t)
            await asyncio.sleep(0.5)

    limits = httpx.Limits(max_connections=args.games, max_keepalive_connections=args.games)
    # As the page does: every POST and DELETE is JSON (the server refuses others).
    headers = {"Content-Type": "application/json"}
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=300, headers=headers) as client:
        sampler = asyncio.create_task(sample())
        prober = asyncio.create_task(probe(client))
        t0, cpu0, own0 = time.perf_counter(), _cpu_s(pid), time.process_time()
        counts = await asyncio.gather(*(_play(client, args, k, latencies) for k in range(args.games)))
        wall = time.perf_counter() - t0
        cpu = _cpu_s(pid) - cpu0
        own = time.process_time() - own0
        done.set()
        await sampler
        await prober
    return {
        "games": args.games,
        "players": args.num_players,
        "agent": args.agent,
        "requests": sum(counts),
        "wall_s": round(wall, 1),
        "requests_per_s": round(sum(counts) / wall),
        "p50_ms": round(_percentile(latencies, 0.50) * 1e3, 1),
        "p95_ms": round(_percentile(latencies, 0.95) * 1e3, 1),
        "p99_ms": round(_percentile(latencies, 0.99) * 1e3, 1),
        # Server CPU per request does not depend on what else the machine runs; latency does.
        "server_cpu_ms_per_request": round(cpu / sum(counts) * 1e3, 2),
        "server_cpu_share_of_one_core": round(cpu / wall, 2),
        # The client script shares the machine: its CPU shows how much of the time was its own.
        "client_cpu_share_of_one_core": round(own / wall, 2),
        "config_probes": len(probes),
        "config_p50_ms": round(_percentile(probes, 0.50) * 1e3, 1) if probes else None,
        "config_max_ms": round(max(probes) * 1e3, 1) if probes else None,
        "server_rss_peak_mb": round(peak[0]),
        "server_rss_after_mb": round(_rss_mb(pid)),
    }


def main(argv: list[str] | None = None) -> int:
    """Start a server, play the games, print the figures; 2 on bad options."""
    args = tyro.cli(Args, args=argv, prog="python -m tools.loadtest", description=__doc__.splitlines()[0])
    try:
        check_num_players(args.num_players, "--num-players")
        check_int("--games", args.games, 1)
        check_int("--requests-per-game", args.requests_per_game or 1, 1)
    except ValueError as error:
        sys.stderr.write(f"loadtest: error: {error}\n")
        return 2
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    server = subprocess.Popen(
        [sys.executable, "-m", "uno_web.server", "--port", str(port), "--max-games", str(max(500, args.games))],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        server.stdout.readline()  # "serving ..." once the app is built
        url = f"http://127.0.0.1:{port}"
        for _ in range(200):
            try:
                httpx.get(url + "/api/config", timeout=1).raise_for_status()
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        idle = _rss_mb(server.pid)
        figures = asyncio.run(_run(args, url, server.pid))
        figures["server_rss_idle_mb"] = round(idle)
        figures["cpus"] = os.cpu_count()
        figures["load_average_1min"] = os.getloadavg()[0]
    finally:
        server.terminate()
        server.wait(10)
    print(json.dumps(figures, indent=1))
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump(figures, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
