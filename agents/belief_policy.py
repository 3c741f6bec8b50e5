"""``BeliefPolicyAgent``: a policy that reads the round through the belief network (docs/training.md).

The actor and its features run in numpy; it plays only classic rules at 2 or 4 players.
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
    """A saved policy over the observation and the belief network's reading of every other seat.

    ``model``: a ``train.py --beliefs net`` ``.zip``, or a live torch policy of such a run (played
    through ``PPOAgent``; ``deterministic`` applies to it only). ``num_players`` and ``activation``
    default to the card's. Tables hand it the dict observation of ``history=EVIDENCE_ROWS``.
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
