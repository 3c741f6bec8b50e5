"""A hand-written agent in a plain PettingZoo AEC loop on ``uno_env.env()``: no framework at all.

    pip install -e .
    python examples/aec_hand_written_agent.py --rounds 20 --num-players 3

``player_0`` follows three lines of strategy, the other seats play uniformly random legal
moves. The loop is PettingZoo's standard one (``agent_iter`` / ``last`` / ``step``; ``None``
for an agent that is done). The agent reads only its observation dict: ``action_mask`` for the
legal moves and the ``uno_env.observation`` helpers for its hand; action ids are docs/rules.md
R2 (``uno_env.actions``).

PettingZoo's own helpers, as checked here with pettingzoo 1.27 (``api_test``, ``seed_test``
and ``render_test`` pass: ``tests/envs/test_pettingzoo_env.py`` runs them):

* ``pettingzoo.test.bombardment_test`` fails in its own ``test_observation``: it compares the
  ``None`` that ``env.step`` returns with the first observation, so any env whose observation
  is a dict (PettingZoo's masked classic envs too) raises ``AttributeError``. Not ours.
* ``pettingzoo.utils.average_total_reward`` calls ``env.last(observe=False)``, gets no
  observation and so no mask, and samples unmasked actions: an illegal move ends the round
  (``env()`` warns). Not ours; its docstring also says it is unsuited to zero-sum games.
* ``pettingzoo.test.state_test`` is for envs with a global state (``state()`` and
  ``state_space``, an optional part of PettingZoo's API); ``uno_v0`` provides none
  (``state()`` raises ``NotImplementedError``), so it does not apply.
"""

from __future__ import annotations

import argparse

import numpy as np

import uno_env
from uno_env.actions import CHOOSE_RED, DRAW
from uno_env.cards import CARD_COLOR, NUM_CARD_TYPES, WILD
from uno_env.observation import held


def careful_agent(observation: np.ndarray, mask: np.ndarray) -> int:
    """Keep wilds for last, shed coloured cards first, name the colour held most."""
    legal = np.flatnonzero(mask)
    coloured = [a for a in legal if a < WILD]
    if coloured:  # the coloured card of the colour held most: keeps the hand flexible
        return int(
            max(
                coloured, key=lambda a: sum(held(observation, t) for t in range(WILD) if CARD_COLOR[t] == CARD_COLOR[a])
            )
        )
    choose = [a for a in legal if CHOOSE_RED <= a < CHOOSE_RED + 4]
    if choose:  # after a wild: the colour with most cards in hand
        counts = [sum(held(observation, t) for t in range(WILD) if CARD_COLOR[t] == c) for c in range(4)]
        return int(CHOOSE_RED + int(np.argmax(counts)))
    wilds = [a for a in legal if WILD <= a < NUM_CARD_TYPES]
    if wilds:
        return int(wilds[0])
    # Left: draw, pass, a double, or a Wild Draw Four answer; drawing first keeps a chance to play.
    return DRAW if DRAW in legal else int(legal[0])


def main() -> None:
    """Play ``--rounds`` rounds and print the careful agent's record."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=20, help="rounds to play (>= 1)")
    p.add_argument("--num-players", type=int, default=3, help="players at the table, 2-10")
    p.add_argument("--rules", default="classic", help="a preset or JSON options (uno_env.parse_rules)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    if args.rounds < 1:
        p.error(f"--rounds must be at least 1, got {args.rounds}")
    env = uno_env.env(num_players=args.num_players, rules=args.rules)
    rng = np.random.default_rng(args.seed)
    wins = 0
    for r in range(args.rounds):
        env.reset(seed=args.seed + r)
        total = {agent: 0.0 for agent in env.agents}
        for agent in env.agent_iter():
            observation, reward, terminated, truncated, info = env.last()
            total[agent] += reward
            if terminated or truncated:
                action = None
            elif agent == "player_0":
                action = careful_agent(observation["observation"], observation["action_mask"])
            else:
                action = int(rng.choice(np.flatnonzero(observation["action_mask"])))
            env.step(action)
        wins += total["player_0"] > 0
    print(f"player_0 (careful) won {wins} of {args.rounds} rounds against {args.num_players - 1} random players")


if __name__ == "__main__":
    main()
