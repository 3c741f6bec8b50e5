"""The competition harness: agents play batched games against each other; win rates, tables, ratings.

| module | what it holds |
|---|---|
| ``arena.match`` | ``play_games`` (the one batched game loop), ``play_match``, ``play_recorded``, ``MatchResult`` |
| ``arena.tournament`` | ``play_table``, ``tournament`` (every table, in seeded chunks), ``TournamentResult`` |
| ``arena.ratings`` | ``wilson_interval``, ``paired_interval``, ``bradley_terry``, ``paired_standard_errors`` |
| ``arena.remote`` | Ray: ``init_ray``, ``ray_chunks`` (not imported here: it needs ``ray``) |
| ``arena.ladder`` | the versioned reference ladder (``LADDER_V1``, ``LADDER_V2``, ``rate_on_ladder``; not imported here: it builds agents with ``agents.registry``) |

Layer: the harness imports ``uno_env``'s public names (and callers pass agents in); nothing in
``uno_env`` or ``agents`` imports it.
"""

from .match import MatchResult, WinRates, agent_name, play_games, play_match, play_recorded
from .ratings import bradley_terry, wilson_interval
from .tournament import (
    Chunk,
    TableResult,
    TournamentResult,
    chunk_plan,
    derive_seed,
    play_table,
    tournament,
    unique_names,
)

__all__ = [
    "play_match",
    "play_games",
    "play_recorded",
    "MatchResult",
    "WinRates",
    "agent_name",
    "wilson_interval",
    "bradley_terry",
    "play_table",
    "tournament",
    "TableResult",
    "TournamentResult",
    "Chunk",
    "chunk_plan",
    "derive_seed",
    "unique_names",
]
