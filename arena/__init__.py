"""The competition harness: agents play batched games against each other; win rates, tables, ratings.

| module | what it holds |
|---|---|
| ``arena.match`` | ``play`` (agents against each other: seats, seeds, duplicate deals, engine access) and ``PlayResult`` |
| ``arena.tournament`` | ``tournament`` (every table, in seeded chunks, through ``play``), ``TournamentResult`` |
| ``arena.ratings`` | ``wilson_interval``, ``paired_interval``, ``bradley_terry``, ``paired_standard_errors`` |
| ``arena.remote`` | Ray: ``init_ray``, ``ray_chunks`` (not imported here: it needs ``ray``) |
| ``arena.ladder`` | the versioned reference ladder (``LADDER_V2``, ``rate_on_ladder``; not imported here: it builds agents with ``agents.registry``) |

Layer: the harness imports ``uno_env``'s public names (and callers pass agents in); nothing in
``uno_env`` or ``agents`` imports it.
"""

from .match import PlayResult, agent_name, play, unique_names
from .ratings import bradley_terry, wilson_interval
from .tournament import Chunk, TournamentResult, chunk_plan, derive_seed, tournament

__all__ = [
    "play",
    "PlayResult",
    "agent_name",
    "unique_names",
    "wilson_interval",
    "bradley_terry",
    "tournament",
    "TournamentResult",
    "Chunk",
    "chunk_plan",
    "derive_seed",
]
