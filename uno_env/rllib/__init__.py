"""UNO on RLlib's new API stack (needs the ``distributed`` extra: ``ray[rllib]``; docs/sb3-rllib.md)."""

from .env import UnoEnvRunner, UnoMultiAgentEnv, UnoVectorMultiAgentEnv, agent_id, spaces
from .module import MaskedPPOTorchRLModule

__all__ = ["UnoEnvRunner", "UnoMultiAgentEnv", "UnoVectorMultiAgentEnv", "MaskedPPOTorchRLModule", "agent_id", "spaces"]
