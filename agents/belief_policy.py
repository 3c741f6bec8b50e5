"""``BeliefPolicyAgent``: a policy that reads the round through the belief network.

A memoryless policy sees what is on the table now; what the other seats played, drew and
passed on is gone. This agent gives its policy the belief network's reading of the whole
round besides the observation (``agents.beliefs.net.policy_inputs``: per other seat the chance
of each colour void and the expected copies of each type, ``POLICY_INPUTS`` numbers). Its
models are trained by ``train.py --beliefs net`` (``training.beliefs``), from scratch or from a
trained policy widened with the new inputs at zero weight (``--init``; ``python -m
training.fit_belief_policy`` is that recipe from ``pretrained``). The actor runs in numpy
(``agents.policy_net``), as do the features; given a live torch policy (a run's evaluations) it
plays that policy through ``agents.ppo.PPOAgent``.

A saved model's card (``agents.model_card``) says ``"beliefs": "net"``: the registry loads such a
``.zip`` by path as this agent (``runs/x/model.zip``), and the card gives its table size and activation.

The shipped one (2 players, ``agents/pretrained/belief_policy.zip``) is the searches'
``"belief"`` blueprint and plays as the registry's ``belief_policy`` (``belief_policy_agent``).

It reads the seat's public history (``history_length = EVIDENCE_ROWS``): a table asks it with
the dict observation ``{"observation", "history", "history_counts"}`` (``uno_env.table``).
Like the belief network, it plays only the rules and table sizes the network learned
(classic rules, 2 or 4 players). Measured figures: ``benchmarks/results/training.md``.

Version history:

- unreleased: added (issue 39); loads ``train.py --beliefs net`` models by path and plays a live policy (issue 51).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from uno_env.observation import num_seats, observation_size
from uno_env.rules import UnoRules

from .beliefs.net import EVIDENCE_ROWS, MODEL_PATHS, POLICY_INPUTS, BeliefNet, policy_inputs, reads_rules
from .model_card import read_card, trained_for
from .policy_net import PolicyNet
from .pretrained import BELIEF_POLICIES, load_card, model_path


def input_size(rules: UnoRules, num_players: int) -> int:
    """The width a belief policy reads at this table: the observation, then ``POLICY_INPUTS`` per other seat."""
    return observation_size(rules.open_hands) + POLICY_INPUTS * (num_players - 1)


class BeliefPolicyAgent:
    """A saved policy over the observation and the belief network's reading (module docs).

    | argument | meaning |
    |---|---|
    | ``model`` | the ``.zip`` of ``train.py --beliefs net``, or a live torch policy of such a run |
    | ``num_players`` | its table size: 2 or 4 (a shipped belief network's; None: the card's, else 2) |
    | ``rules`` | the rules it plays: the network's (classic) |
    | ``activation`` | the activation it was trained with (None: the card's, else relu) |
    | ``name`` | its name in tables (default: the file's stem) |
    | ``deterministic`` | a live policy only: False samples with ``act``'s rng (a saved one plays its most likely move) |
    """

    history_length = EVIDENCE_ROWS
    """history rows it reads: those the belief network's evidence reads"""

    def __init__(
        self,
        model: Any,
        num_players: int | None = None,
        rules: UnoRules | None = None,
        activation: str | None = None,
        name: str | None = None,
        deterministic: bool = True,
    ) -> None:
        rules = UnoRules() if rules is None else rules
        saved = isinstance(model, (str, Path))
        card = read_card(model) if saved else None
        if num_players is None:
            num_players = int(card["num_players"]) if card is not None else 2
        if num_players not in MODEL_PATHS:
            raise ValueError(
                f"num_players must be one of {sorted(MODEL_PATHS)} (a belief network's), got {num_players!r}"
            )
        if not reads_rules(rules):
            raise ValueError("a belief policy plays the rules the belief network learned (classic), not these")
        if card is not None and card["num_players"] != num_players:
            raise ValueError(
                f"{model}: {trained_for(card)}; asked for {num_players} players "
                f"(train.py --beliefs net --num-players {num_players} trains one)"
            )
        self.num_players = num_players
        self.policy: Any
        if saved:
            activation = activation or (card or {}).get("activation", "relu")
            self.policy = PolicyNet(model, activation)
        else:
            from .ppo import PPOAgent  # torch: only for a live policy

            self.policy = PPOAgent(model, deterministic=deterministic)
        want = input_size(rules, num_players)
        if self.policy.obs_size != want:
            raise ValueError(
                f"{model if saved else 'the policy'}: the policy reads {self.policy.obs_size} inputs, but a belief "
                f"policy at {num_players} players reads {want} (the observation and {POLICY_INPUTS} per other "
                "seat): train it with train.py --beliefs net"
            )
        self.net = BeliefNet(MODEL_PATHS[num_players], num_players)
        self.name = name or (Path(model).stem if saved else "belief_policy")

    def inputs(self, observation: Any) -> np.ndarray:
        """The policy's inputs [N, input_size] for a table's dict observation (one seat's or a batch)."""
        if not isinstance(observation, dict) or not {"observation", "history", "history_counts"} <= set(observation):
            raise ValueError(
                f"{self.name} reads the round's history: give it the dict observation "
                "{'observation', 'history', 'history_counts'} of a table whose engine keeps "
                f"history >= {EVIDENCE_ROWS} events (Engine(..., history=K))"
            )
        obs, rows, counts = (
            np.asarray(observation[k], np.float32) for k in ("observation", "history", "history_counts")
        )
        if obs.ndim == 1:
            obs, rows, counts = obs[None], rows[None], counts[None]
        seats = {int(num_seats(o)) for o in obs}
        if seats != {self.num_players}:
            raise ValueError(f"{self.name} plays {self.num_players} players; the observations are of {sorted(seats)}")
        return np.concatenate([obs, policy_inputs(obs, rows, counts, self.net, self.num_players)], axis=1)

    def act(self, observation: Any, action_mask: np.ndarray, rng: np.random.Generator | None = None) -> np.ndarray:
        """The policy's most likely legal action per row (a live policy with ``deterministic=False``: sampled with ``rng``)."""
        x = self.inputs(observation)
        mask = np.asarray(action_mask, bool).reshape(x.shape[0], -1)
        if isinstance(self.policy, PolicyNet):
            return self.policy.act(x, mask)
        return self.policy.act(x, mask, np.random.default_rng() if rng is None else rng)


@cache
def shipped_belief_policy(rules: UnoRules, num_players: int) -> BeliefPolicyAgent | None:
    """The shipped belief policy (``agents.pretrained.BELIEF_POLICIES``) trained for these rules and
    this table size; None when none was. Read once per table."""
    if not reads_rules(rules):
        return None
    for name in BELIEF_POLICIES:
        card = load_card(name)
        if card["num_players"] == num_players:
            return BeliefPolicyAgent(model_path(name), num_players, rules, card["activation"], name=name)
    return None


def belief_policy_agent(
    name: str, rules: UnoRules | None = None, num_players: int | None = None, label: str | None = None
) -> BeliefPolicyAgent:
    """The shipped belief policy ``name`` (``agents.pretrained.BELIEF_POLICIES``; the registry's spec
    ``belief_policy``): a ``ValueError`` at a table size (None: not said) or rules it was not trained for."""
    if name not in BELIEF_POLICIES:
        raise ValueError(f"unknown belief policy {name!r}; the package ships {', '.join(BELIEF_POLICIES)}")
    card = load_card(name)
    if num_players is not None and num_players != card["num_players"]:
        others = [n for n in BELIEF_POLICIES if load_card(n)["num_players"] == num_players]
        hint = f"{others[0]} plays that table" if others else "no shipped belief policy plays that table"
        raise ValueError(
            f"{name} was trained for {card['num_players']} players; asked for {num_players} ({hint}; "
            f"train.py --beliefs net --num-players {num_players} trains one)"
        )
    return BeliefPolicyAgent(model_path(name), card["num_players"], rules, card["activation"], name=label or name)
