"""Ray for the harness and the trainers: joining or starting Ray, and tournament chunks as Ray tasks.

Needs the ``distributed`` extra (``ray``); import this module only where Ray is wanted.
``tournament(..., play_chunks=ray_chunks(address, num_cpus))`` plays every chunk as one Ray
task (``ray.remote(arena.play)``, 1 CPU); the chunks' seeds do not depend on where they run,
so the result equals the one played here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import ray

from uno_env import Agent, UnoRules

from .match import PlayResult, play
from .tournament import Chunk, PlayChunks

__all__ = ["init_ray", "ray_chunks"]


def init_ray(address: str = "", num_cpus: int = 2) -> None:
    """Join the Ray cluster at ``address`` (``auto``: the one started on this machine with
    ``ray start``), or with no address start a local Ray limited to ``num_cpus`` CPUs. A Ray
    already initialised in this process is reused as it is."""
    if ray.is_initialized():
        return
    if address:
        ray.init(address=address)
    else:
        # address="local": always a fresh local Ray, even when a `ray start` cluster (or its
        # stale /tmp/ray/ray_current_cluster file) is on this machine; joining one is --address.
        ray.init(address="local", num_cpus=num_cpus, include_dashboard=False, log_to_driver=False)


def ray_chunks(address: str = "", num_cpus: int = 2) -> PlayChunks:
    """A ``play_chunks`` for ``arena.tournament`` that plays every chunk as a Ray task (``init_ray`` first)."""

    def play_chunks(
        chunks: Sequence[Chunk], agents: Sequence[Agent], names: Sequence[str], rules: UnoRules, batch_size: int
    ) -> Iterable[PlayResult]:
        init_ray(address, num_cpus)
        # Each table's agents go to the object store once; its chunks get a reference, not a copy each.
        seated = {c.seats: ray.put([agents[i] for i in c.seats]) for c in chunks}
        remote = ray.remote(num_cpus=1)(play)
        futures = [
            remote.remote(
                seated[c.seats],
                c.games,
                rules,
                c.seed,
                batch_size=batch_size,
                names=[names[i] for i in c.seats],
                duplicate=c.duplicate,
            )
            for c in chunks
        ]
        return ray.get(futures)

    return play_chunks
