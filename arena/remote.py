"""Ray for the harness and the trainers: joining or starting Ray, and tournament chunks as Ray tasks.

Needs the ``distributed`` extra (``ray``); import this module only where Ray is wanted.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import ray

from uno_env import Agent, UnoRules

from .match import PlayResult
from .tournament import Chunk, PlayChunks, play_chunk

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


def _play_and_report(
    seated: Sequence[Agent], chunk: Chunk, names: Sequence[str], rules: UnoRules, batch_size: int
) -> tuple[PlayResult, list[Any]]:
    """A chunk played in a worker, with what its agents measured there (``report()``, e.g. a chat
    agent's requests and transcripts), which the worker's copies would otherwise take with them."""
    result = play_chunk(chunk, seated, names, rules, batch_size)
    reports = [getattr(a, "report", None) for a in seated]
    return result, [report() if callable(report) else None for report in reports]


def ray_chunks(address: str = "", num_cpus: int = 2) -> PlayChunks:
    """A ``play_chunks`` for ``arena.tournament`` that plays every chunk as a Ray task (``init_ray``
    first); an agent's ``report()`` from each task is handed to its ``absorb()`` here, in chunk order."""

    def play_chunks(
        chunks: Sequence[Chunk], agents: Sequence[Agent], names: Sequence[str], rules: UnoRules, batch_size: int
    ) -> Iterable[PlayResult]:
        init_ray(address, num_cpus)
        # Each table's agents go to the object store once; its chunks get a reference, not a copy each.
        seated: dict[tuple[int, ...], Any] = {c.seats: ray.put([agents[i] for i in c.seats]) for c in chunks}
        remote = ray.remote(num_cpus=1)(_play_and_report)
        futures = [remote.remote(seated[c.seats], c, [names[i] for i in c.seats], rules, batch_size) for c in chunks]
        results = []
        for c, (result, reports) in zip(chunks, ray.get(futures), strict=True):
            for i, report in zip(c.seats, reports, strict=True):
                if report is not None:
                    agents[i].absorb(report)  # type: ignore[attr-defined]
            results.append(result)
        return results

    return play_chunks
