"""UNO on RLlib's new API stack (needs the ``distributed`` extra: ``ray[rllib]``).

| name | where | what |
|---|---|---|
| ``UnoMultiAgentEnv`` | ``env.py`` | one game as a ``MultiAgentEnv``, every seat an agent, obs ``{"observations", "action_mask"}`` |
| ``UnoVectorMultiAgentEnv`` | ``env.py`` | all of an env runner's games in one batched ``Engine`` |
| ``UnoEnvRunner`` | ``env.py`` | the env runner that uses it (``config.env_runners(env_runner_cls=UnoEnvRunner)``) |
| ``MaskedPPOTorchRLModule`` | ``module.py`` | PPO's default network with illegal logits masked |
"""

from .env import UnoEnvRunner, UnoMultiAgentEnv, UnoVectorMultiAgentEnv, agent_id, spaces
from .module import MaskedPPOTorchRLModule

__all__ = ["UnoEnvRunner", "UnoMultiAgentEnv", "UnoVectorMultiAgentEnv", "MaskedPPOTorchRLModule", "agent_id", "spaces"]
