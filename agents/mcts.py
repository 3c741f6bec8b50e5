"""Deprecated: ``agents.ismcts`` holds ``ISMCTSAgent`` (also ``agents.ISMCTSAgent``)."""

import warnings

from .ismcts import ISMCTSAgent, SearchTree

__all__ = ["ISMCTSAgent", "SearchTree"]

warnings.warn(
    "agents.mcts is deprecated: import agents.ismcts (or ISMCTSAgent from agents)", DeprecationWarning, stacklevel=2
)
