"""Agents by name: the one place where a spec (a command-line word) becomes an agent.

``make_agent("heuristic", "classic")``, ``make_agent("search:20ms", rules)``,
``make_agent("ppo_v2=runs/x/model.zip")``. Scripts (``evaluate.py``, ``train.py``'s opponent
mix, ``uno-play``) all build their agents here.

| spec | agent |
|---|---|
| ``random`` | ``RandomAgent``: uniform over the legal actions |
| ``rlcard_rule`` | ``RLCardRuleAgent``: RLCard's ``uno-rule-v1`` under our rules |
| ``greedy`` | ``GreedyAgent``: never draws when it can play; the highest-point legal card |
| ``heuristic`` | ``HeuristicAgent``: the strongest rule-based player |
| ``search`` | the stronger search at equal time (``SEARCH``, below) with its default budget |
| ``search:N`` / ``search:Tms`` | that search with N iterations (rollouts) or about T milliseconds per decision |
| ``ismcts``, ``ismcts:N``, ``ismcts:Tms`` | ``ISMCTSAgent``: information-set MCTS, N iterations (default 2048) or T ms per decision |
| ``flatmc``, ``flatmc:N``, ``flatmc:Tms`` | ``SearchAgent``: determinized flat Monte Carlo, N rollouts (default 2900) or T ms per decision |
| any search spec ``@BELIEF`` | that search dealing its determinizations from ``agents.beliefs.BELIEFS[BELIEF]`` (``search@uniform``; default ``public``) |
| any search spec ``@peek`` | that search seeing every hand (``peek=True``: only the draw pile is shuffled): reads hidden state, a measurement of the perfect-information ceiling, never a fair opponent; plays with engine access only |
| ``pretrained`` | ``PPOAgent`` over the shipped 2-player model (``agents.pretrained``: checks rules and players; imports torch) |
| ``pretrained-4p`` | ``PPOAgent`` over the shipped 4-player model |
| a path to a ``.zip`` | ``PPOAgent`` over a ``MaskablePPO`` saved by ``train.py`` (imports torch) |
| a directory | ``RLlibAgent`` over a checkpoint of ``train.py --backend rllib`` (imports ray) |
| ``chat:MODEL`` | ``ChatAgent``: a language model behind an OpenAI-compatible chat endpoint (``agents.llm``), the base URL from ``$UNO_CHAT_BASE_URL`` and the key from ``$UNO_CHAT_API_KEY`` |
| ``label=spec`` | any of the above, named ``label`` in tables (``fast=search:64``) |
"""

from __future__ import annotations

import math
import os
from typing import Any

from uno_env.policy import Agent
from uno_env.rules import UnoRules, parse_rules

from .baselines import BASELINES
from .mcts import ISMCTSAgent
from .pretrained import PRETRAINED, pretrained_agent
from .search import SearchAgent

__all__ = ["AGENT_SPECS", "BASELINES", "agent_names", "make_agent"]

AGENT_SPECS = (
    "random, rlcard_rule, greedy, heuristic, search[:N | :Tms] (N rollouts or T milliseconds per "
    "decision), ismcts[:N | :Tms], flatmc[:N | :Tms], pretrained, pretrained-4p (shipped models: 2 and 4 "
    "players, classic), PATH.zip (a MaskablePPO saved by train.py), DIR (an RLlib checkpoint), chat:MODEL (a language model at the "
    "OpenAI-compatible endpoint $UNO_CHAT_BASE_URL), LABEL=SPEC"
)
"""The spec forms in one line, for help texts and error messages."""

# A time budget repeats rounds of play-outs until the time is spent; small rounds let the
# search stop close to the budget (1024 play-outs take about 10 ms of CPU on the development machine).
TIMED_ROUND_ROLLOUTS = 128

SEARCHES = {"ismcts": ISMCTSAgent, "flatmc": SearchAgent}
"""The search agents by spec name."""
# ``search`` names the stronger at equal time per decision (benchmarks/results/search.md: 2 players,
# classic, vs heuristic, 2,000 games each, ~30 ms CPU per searched decision: flatmc:2900 58.4%,
# ismcts:2048 53.8%).
SEARCH = "flatmc"


def agent_names() -> list[str]:
    """The specs that name an agent without a path or torch: the baselines and ``search`` (the shipped
    models, which need torch, are ``agents.pretrained.PRETRAINED``)."""
    return [*BASELINES, "search"]


def make_agent(spec: str, rules: Any = None, *, deterministic: bool = True, num_players: int | None = None) -> Agent:
    """The agent of ``spec`` (module table) for ``rules`` (anything ``uno_env.parse_rules`` takes).

    ``deterministic`` applies to trained policies only (True: the most likely legal action;
    False: sampled with the caller's rng). ``num_players`` (None: not said) lets a pretrained
    model refuse a table size it was not trained for now rather than when it first plays. A
    spec of no known form raises ``ValueError`` listing the forms.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"an agent spec is one of: {AGENT_SPECS}; got {spec!r}")
    spec = spec.strip()
    label, body = (part.strip() for part in spec.split("=", 1)) if "=" in spec else (None, spec)
    if label == "" or body == "":
        raise ValueError(f"{spec!r}: a labelled agent is LABEL=SPEC with both parts, e.g. fast=search:64")
    rules = parse_rules(rules)
    if body in BASELINES:
        agent = BASELINES[body](rules)
    elif body.split(":", 1)[0].split("@", 1)[0] in ("search", *SEARCHES):
        agent = _search_agent(body, rules)
    elif body.startswith("chat:"):
        agent = _chat_agent(body[len("chat:") :], rules)
    elif body in PRETRAINED:
        return pretrained_agent(body, rules, num_players, deterministic, label)
    elif os.path.isfile(body) or os.path.isfile(body + ".zip"):
        return _ppo_agent(body, label, deterministic)
    elif os.path.isdir(body):
        return _rllib_agent(body, label, deterministic)
    else:
        raise ValueError(
            f"unknown agent {body!r} (no file or directory of that name): an agent spec is one of: {AGENT_SPECS}"
        )
    if label is not None:
        agent.name = label
    return agent


def _search_agent(body: str, rules: UnoRules) -> SearchAgent:
    budgeted, at, belief = body.partition("@")
    kind, colon, text = budgeted.partition(":")
    cls = SEARCHES[SEARCH if kind == "search" else kind]
    budget = _search_budget(text.strip(), cls) if colon else {}
    if budget is None:
        raise ValueError(
            f"bad search budget in {body!r}: use {kind}:N for N rollouts per decision ({kind}:256) "
            f"or {kind}:Tms for T milliseconds per decision ({kind}:20ms), N and T > 0"
        )
    if belief == "peek":
        agent = cls(rules, **budget, peek=True)
    else:
        agent = cls(rules, **budget, **({"belief": belief} if at else {}))
    agent.name = body
    return agent


def _search_budget(text: str, cls: type) -> dict[str, Any] | None:
    """Settings of ``cls`` (a ``SEARCHES`` class) for a budget ``N`` or ``Tms``, None when it is neither."""
    try:
        if text.endswith("ms"):
            time_ms = float(text[:-2])
            if not 0 < time_ms < math.inf:
                return None
            # Flat MC repeats small rounds of play-outs until the time is spent, ISMCTS its waves.
            return (
                {"rollouts": TIMED_ROUND_ROLLOUTS, "time_ms": time_ms} if cls is SearchAgent else {"time_ms": time_ms}
            )
        n = int(text)
        return {"iterations" if cls is ISMCTSAgent else "rollouts": n} if n > 0 else None
    except ValueError:
        return None


def _chat_agent(model: str, rules: UnoRules) -> Agent:
    # Imported here: only a chat spec needs it.
    from .llm import ChatAgent

    if not model.strip():
        raise ValueError("a chat agent is chat:MODEL with the endpoint's model name, e.g. chat:qwen2.5-7b-instruct")
    return ChatAgent(model, rules)


def _ppo_agent(path: str, label: str | None, deterministic: bool) -> Agent:
    # Imported here so that torch loads only when a saved model is asked for.
    from .ppo import PPOAgent

    if label is None:
        stem = os.path.splitext(os.path.basename(path))[0]
        # runs/<run>/model.zip is named after its run, not "model".
        parent = os.path.basename(os.path.dirname(os.path.abspath(path)))
        label = parent if stem == "model" and parent else stem
    return PPOAgent(path, deterministic=deterministic, name=label)


def _rllib_agent(path: str, label: str | None, deterministic: bool) -> Agent:
    # Imported here so that ray loads only when a checkpoint is asked for.
    try:
        from .rllib_agent import RLlibAgent
    except ImportError as exc:
        raise ValueError(
            f"{path!r} is a directory, read as an RLlib checkpoint, which needs ray[rllib] and torch "
            f"(the distributed extra): {exc}"
        ) from exc
    return RLlibAgent(path, deterministic=deterministic, name=label)
