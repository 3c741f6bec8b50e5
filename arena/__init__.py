"""The competition harness: agents play batched games against each other; win rates, tables, ratings.

``arena.remote`` (needs ``ray``) and ``arena.ladder`` (builds agents with ``agents.registry``) are not imported here.
"""

from .match import PlayResult, play, unique_names
from .ratings import bradley_terry, wilson_interval
from .tournament import Chunk, TournamentResult, chunk_plan, derive_seed, tournament

__all__ = [
    "play",
    "PlayResult",
    "unique_names",
    "wilson_interval",
    "bradley_terry",
    "tournament",
    "TournamentResult",
    "Chunk",
    "chunk_plan",
    "derive_seed",
]
