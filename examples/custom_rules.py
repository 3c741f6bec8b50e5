"""A custom rule set: one ``UnoRules`` used by the engine, the PettingZoo env, the Gymnasium env and the agents.

    pip install -e .
    python examples/custom_rules.py --matches 3

Every option is a field of the frozen dataclass ``UnoRules`` (docs/rules.md lists each one with
its values, default and the rule text it follows). ``UnoRules.preset(name, **overrides)``
starts from a preset; ``uno_env.parse_rules`` reads the same rule set from a preset name, a dict
or JSON text, which is what every entry point takes (``env(rules=...)``,
``gym.make(..., rules=...)``, ``train.py --rules``, ``uno-play --rules``). A bad option is a
``ValueError`` naming it and what is allowed.
"""

from __future__ import annotations

import argparse
import json

import gymnasium as gym
import numpy as np

import uno_env
from agents.registry import make_agent
from uno_env import Engine, UnoRules, parse_rules

# Stacking Draw Twos and Wild Draw Fours, draw until playable, UNO called by the player
# (a caught player draws uno_penalty = 2 cards), 5 cards a hand, an episode is a match to 200 points.
HOUSE_PLUS = UnoRules.preset(
    "house", uno_call="explicit", uno_penalty=2, hand_size=5, episode="match", target_points=200
)


def main() -> None:
    """Show the rule set's forms, play ``--matches`` engine matches and reset both envs under it."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--matches", type=int, default=3, help="matches (to 200 points) for the heuristic agents (>= 1)")
    p.add_argument("--num-players", type=int, default=4, help="players at the table, 2-10")
    args = p.parse_args()
    if args.matches < 1:
        p.error(f"--matches must be at least 1, got {args.matches}")

    # The same rule set three ways: a UnoRules, a dict, JSON text (e.g. for --rules on a command line).
    options = HOUSE_PLUS.to_dict()
    assert parse_rules(options) == HOUSE_PLUS == parse_rules(json.dumps(options))
    changed = {k: v for k, v in options.items() if v != UnoRules().to_dict()[k]}
    print("rule set (options that differ from classic):", json.dumps(changed, sort_keys=True))
    try:
        UnoRules.preset("house", stack_draw_two="yes")
    except ValueError as err:  # what a typo looks like
        print("a bad option is refused:", err)

    # The engine: heuristic agents (agents.registry) play whole matches under the rule set.
    engine = Engine(1, args.num_players, HOUSE_PLUS, seed=0)
    agent = make_agent("heuristic", HOUSE_PLUS)
    rng = np.random.default_rng(0)
    for r in range(args.matches):
        if r:
            engine.reset()
        while not (engine.terminated[0] or engine.truncated[0]):
            engine.step(agent.act(engine.observation, engine.legal_mask, rng))
        state = engine.game_state(0)
        print(f"match {r + 1}: winner seat {state['winner']} after {state['round']} rounds, scores {state['scores']}")

    # The PettingZoo and Gymnasium envs take the very same argument.
    aec = uno_env.env(num_players=args.num_players, rules=options)
    aec.reset(seed=1)
    single = gym.make("uno_env/Uno-v0", num_players=args.num_players, rules=json.dumps(options))
    obs, info = single.reset(seed=1)
    assert aec.unwrapped.rules == single.unwrapped.rules == HOUSE_PLUS
    print(
        f"envs ready: PettingZoo {aec.num_agents} agents, Gymnasium observation {obs.shape}, "
        f"{int(info['action_mask'].sum())} legal actions"
    )


if __name__ == "__main__":
    main()
