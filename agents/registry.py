"""Agents by name: the one place a spec (a command-line word) becomes an agent, and the one grammar
of specs, lists and weighted mixes (the forms: docs/agents.md, "Agent specs")."""

from __future__ import annotations

import difflib
import hashlib
import importlib
import importlib.util
import inspect
import math
import os
import re
import sys
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

import numpy as np

from uno_env.policy import Agent
from uno_env.rules import UnoRules, parse_rules

from .baselines import BASELINES
from .beliefs import BELIEFS
from .flatmc import FlatMCAgent
from .ismcts import ISMCTSAgent
from .llm import DEFAULT_SETTINGS, ENDPOINT_NAME, ChatAgent, ChatSettings
from .model_card import read_card
from .pretrained import BELIEF_POLICIES, PRETRAINED, pretrained_agent

__all__ = [
    "AGENT_SPECS",
    "BASELINES",
    "MIX_FORM",
    "Spec",
    "agent_names",
    "check_spec",
    "make_agent",
    "build_agent",
    "parse_list",
    "parse_mix",
    "parse_spec",
    "parse_table",
    "REMOTE_LIMITS",
    "remote_agent",
]

AGENT_SPECS = (
    "random, rlcard_rule, greedy, heuristic, search[:N | :Tms][@BELIEF] (N rollouts or T milliseconds per "
    "decision), ismcts[:N | :Tms], flatmc[:N | :Tms], pretrained, pretrained-4p, belief_policy (shipped "
    "models: 2 and 4 players, classic), MODULE:NAME or FILE.py:NAME (your own agent class, or a function of one decision), PATH.zip (a MaskablePPO saved by "
    "train.py), DIR (an RLlib checkpoint), chat:MODEL[@ENDPOINT] (a language model at the OpenAI-compatible "
    "endpoint $UNO_CHAT_BASE_URL, or at one named with --chat.endpoints ENDPOINT URL), LABEL=SPEC"
)
"""The spec forms in one line, for help texts and error messages."""

MIX_FORM = "WEIGHT*SPEC,... (0.5*heuristic,0.5*search:64; a spec without WEIGHT* weighs 1)"
"""The mix form in one line, for help texts and error messages."""

LIST, TABLE, WEIGHT, LABEL, BUDGET, AT = ",", "+", "*", "=", ":", "@"
"""The separators: list items, the seats of a mixed table, a weight, a label, a budget, a belief."""

SEARCHES: dict[str, type[FlatMCAgent] | type[ISMCTSAgent]] = {"ismcts": ISMCTSAgent, "flatmc": FlatMCAgent}
"""The search agents by spec name."""
# ``search`` names the stronger at equal time per decision (lab/results/search.md).
SEARCH = "flatmc"
SEARCH_BLUEPRINT = "belief"
"""``search``'s blueprint (``DeterminizedSearch``): the shipped policy trained for the table."""
SEARCH_NAMES = ("search", *SEARCHES)

CHAT = "chat"  # chat:MODEL[@ENDPOINT], a language model at an OpenAI-compatible endpoint (agents.llm)
KINDS = ("baseline", "search", "pretrained", "class", "chat", "path")
"""What a spec names (``Spec.kind``)."""

MAX_REMOTE_ROLLOUTS = 20_000
MAX_REMOTE_MS = 5_000.0
MAX_REMOTE_SPEC_CHARS = 80
"""the longest spec a remote caller may send (a label and a budgeted search fit well within it)"""
REMOTE_LIMITS: dict[str, Any] = {
    "kinds": ("baseline", "search", "pretrained"),
    "max_iterations": MAX_REMOTE_ROLLOUTS,
    "max_ms": MAX_REMOTE_MS,
    "peek": False,
}
"""What a remote caller may name (``check_spec``'s limits): no file, module or saved model, no ``@peek``."""

_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_MODULE = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")


@dataclass(frozen=True)
class Spec:
    """One agent spec as read (``parse_spec``); nothing is built or imported."""

    text: str
    """the spec with the whitespace rule applied: the form every list, mix and name uses"""
    kind: str
    """one of ``KINDS``"""
    body: str
    """the spec without its label"""
    label: str | None = None
    target: str = ""
    """the baseline, search or shipped model's name; the module or ``.py`` file; the path"""
    attr: str = ""
    """your own agent: the class or function in ``target``"""
    iterations: int | None = None
    """a search's budget ``N`` (None: its default or a time budget)"""
    time_ms: float | None = None
    """a search's budget ``Tms``"""
    belief: str = ""
    """a search's ``@BELIEF`` (``peek`` included; empty: its default)"""
    endpoint: str = ""
    """a chat agent's ``@ENDPOINT`` (empty: the default endpoint)"""


def agent_names(models: bool = True) -> list[str]:
    """Every spec that is one word: baselines, searches and (unless ``models=False``) shipped models."""
    return [*BASELINES, "search", *SEARCHES, *((*PRETRAINED, *BELIEF_POLICIES) if models else ())]


def parse_spec(text: Any) -> Spec:
    """``text`` read as one agent spec, syntax only (nothing looked up or imported); ``ValueError`` if bad."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"an agent spec is one of: {AGENT_SPECS}; got {text!r}")
    raw = text.strip()
    label: str | None = None
    body = raw
    if LABEL in raw:
        label, body = (part.strip() for part in raw.split(LABEL, 1))
        if not label or not body:
            raise ValueError(f"{raw!r}: a labelled agent is LABEL=SPEC with both parts, e.g. fast=search:64")
    for sep in (LIST, WEIGHT, TABLE):
        if sep in body and not os.path.exists(body):
            raise ValueError(_separator_message(raw, sep))
    named = f"{label}{LABEL}" if label is not None else ""
    head = body.split(BUDGET, 1)[0].split(AT, 1)[0].strip()
    if head in SEARCH_NAMES:
        return _search_spec(raw, named, label, body)
    if head == CHAT:
        return _chat_spec(raw, named, label, body)
    if BUDGET in body:
        left, _, attr = body.rpartition(BUDGET)
        left, attr = left.strip(), attr.strip()
        if _IDENTIFIER.fullmatch(attr) and (left.endswith(".py") or _MODULE.fullmatch(left)):
            norm = f"{left}{BUDGET}{attr}"
            return Spec(f"{named}{norm}", "class", norm, label, target=left, attr=attr)
        if left in BASELINES or left in PRETRAINED or left in BELIEF_POLICIES:
            raise ValueError(
                f"{raw!r}: {left} takes no ':' (a budget follows {', '.join(SEARCH_NAMES)} only, and "
                f"MODULE:NAME or FILE.py:NAME names your own agent class); in an opponent mix a weight is "
                f"written before its spec: {attr}{WEIGHT}{left}"
            )
    if body in BASELINES:
        return Spec(f"{named}{body}", "baseline", body, label, target=body)
    if body in PRETRAINED or body in BELIEF_POLICIES:
        return Spec(f"{named}{body}", "pretrained", body, label, target=body)
    return Spec(f"{named}{body}", "path", body, label, target=body)


def _chat_spec(raw: str, named: str, label: str | None, body: str) -> Spec:
    rest = body.split(BUDGET, 1)[1].strip() if BUDGET in body else ""
    model, at, endpoint = (part.strip() for part in rest.rpartition(AT)) if AT in rest else (rest, "", "")
    if not model:
        raise ValueError(
            f"{raw!r}: a chat agent is chat:MODEL or chat:MODEL@ENDPOINT with the endpoint's model name, e.g. "
            "chat:qwen2.5-7b-instruct"
        )
    if at and not ENDPOINT_NAME.fullmatch(endpoint):
        raise ValueError(
            f"{raw!r}: after '@' comes an endpoint's name (letters, digits, '_', '-'), declared with "
            f"--chat.endpoints NAME URL; got {endpoint!r}"
        )
    norm = f"{CHAT}{BUDGET}{model}" + (f"{AT}{endpoint}" if at else "")
    return Spec(f"{named}{norm}", "chat", norm, label, target=model, endpoint=endpoint)


def _separator_message(raw: str, sep: str) -> str:
    where = {
        LIST: "separates the items of a list (evaluate.py --agents a,b)",
        WEIGHT: f"writes a weight, in an opponent mix only ({MIX_FORM})",
        TABLE: "joins the seats of a mixed table, where a list takes one (train.py --eval-opponents a+b+c)",
    }[sep]
    return f"{raw!r} is not one agent spec: {sep!r} {where}; one spec is one of: {AGENT_SPECS}"


def _search_spec(raw: str, named: str, label: str | None, body: str) -> Spec:
    budgeted, at, belief = (part.strip() for part in body.partition(AT))
    kind, colon, budget = (part.strip() for part in budgeted.partition(BUDGET))
    if at and belief not in (*BELIEFS, "peek"):
        raise ValueError(
            f"{raw!r}: unknown belief {belief!r}; a search deals its determinizations from one of "
            f"{sorted(BELIEFS)} ({kind}@uniform), or sees every hand with @peek"
        )
    iterations = time_ms = None
    try:
        if not colon:
            pass
        elif budget.endswith("ms"):
            time_ms = float(budget[:-2])
        else:
            iterations = int(budget)
    except ValueError:
        iterations = time_ms = -1  # refused just below, with the forms
    if (iterations is not None and iterations <= 0) or (time_ms is not None and not 0 < time_ms < math.inf):
        raise ValueError(
            f"bad search budget in {raw!r}: use {kind}:N for N rollouts per decision ({kind}:256) "
            f"or {kind}:Tms for T milliseconds per decision ({kind}:20ms), N and T > 0; in an opponent mix a "
            f"weight is written before its spec ({MIX_FORM})"
        )
    norm = kind + (f"{BUDGET}{budget}" if colon else "") + (f"{AT}{belief}" if at else "")
    return Spec(f"{named}{norm}", "search", norm, label, kind, iterations=iterations, time_ms=time_ms, belief=belief)


def check_spec(
    text: Any,
    *,
    kinds: Collection[str] = KINDS,
    max_iterations: int | None = None,
    max_ms: float | None = None,
    peek: bool = True,
    exists: bool = True,
) -> Spec:
    """``text`` read as one agent spec (``parse_spec``) and checked against what the caller offers.

    ``kinds``: the ``KINDS`` taken; ``max_iterations``, ``max_ms``: the largest search budgets (None:
    any); ``exists``: whether a path or ``.py`` file must exist. ``ValueError`` says what is allowed."""
    spec = parse_spec(text)
    offered = ", ".join(k for k in KINDS if k in kinds)
    if spec.kind not in kinds:
        what = {
            "baseline": "a baseline",
            "search": "a search",
            "pretrained": "a shipped model",
            "class": "an agent class of yours",
            "chat": "a language model at a chat endpoint",
            "path": "a path (a saved model or checkpoint)",
        }[spec.kind]
        raise ValueError(f"agent {spec.text!r} is not offered here: it is {what}; offered kinds: {offered}")
    if (
        spec.kind == "path"
        and exists
        and not (os.path.isfile(spec.body) or os.path.isfile(spec.body + ".zip") or os.path.isdir(spec.body))
    ):
        if spec.body.endswith(".zip"):
            raise ValueError(
                f"no saved model at {spec.body!r} (train.py writes <output-dir>/<exp-name>/model.zip, "
                "runs/uno_ppo/model.zip by default)"
            )
        raise ValueError(
            f"unknown agent {spec.body!r}{_did_you_mean(spec.body)} (no file or directory of that name either): "
            f"an agent spec is one of: {AGENT_SPECS}"
        )
    if spec.kind == "class" and exists and spec.target.endswith(".py") and not os.path.isfile(spec.target):
        raise ValueError(f"{spec.text!r}: no file {spec.target!r} to load the agent {spec.attr!r} from")
    if spec.kind == "search":
        if max_iterations is not None and spec.iterations is not None and spec.iterations > max_iterations:
            raise ValueError(
                f"agent {spec.text!r} is not offered here: a search budget is 1..{max_iterations} rollouts "
                f"({spec.target}:N)"
            )
        if max_ms is not None and spec.time_ms is not None and spec.time_ms > max_ms:
            raise ValueError(
                f"agent {spec.text!r} is not offered here: a search budget is at most {max_ms:g} ms ({spec.target}:Tms)"
            )
        if spec.belief == "peek" and not peek:
            raise ValueError(f"agent {spec.text!r} is not offered here: @peek sees every hand")
    return spec


def _did_you_mean(name: str) -> str:
    close = difflib.get_close_matches(name, agent_names(), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def parse_table(entry: str, **limits: Any) -> list[str]:
    """The checked specs (``Spec.text``) of one list entry: a mixed table ``a+b+c`` or one spec."""
    seats = entry.split(TABLE)
    if len(seats) > 1 and any(not s.strip() for s in seats):
        raise ValueError(f"{entry.strip()!r}: a mixed table is SPEC+SPEC+..., one spec per seat, none empty")
    return [check_spec(s, **limits).text for s in seats]


def parse_list(
    text: Any, *, tables: bool = False, extra: Collection[str] = (), empty: bool = False, **limits: Any
) -> list[str]:
    """The comma-separated specs of ``text``, each checked and in its ``Spec.text`` form.

    ``tables``: entries may be mixed tables ``a+b+c``; ``extra``: words taken beside specs
    (``self``); ``empty``: whether an empty list is taken; ``limits``: ``check_spec``'s."""
    if not isinstance(text, str):
        raise ValueError(f"a list of agent specs is text, SPEC,SPEC,...; got {text!r}")
    items = []
    for part in text.split(LIST):
        part = part.strip()
        if not part:
            continue
        if part in extra:
            items.append(part)
        elif tables:
            items.append(TABLE.join(parse_table(part, **limits)))
        else:
            items.append(check_spec(part, **limits).text)
    if not items and not empty:
        raise ValueError(f"{text!r} names no agent: give SPEC,SPEC,... with each spec one of: {AGENT_SPECS}")
    return items


def parse_mix(text: Any, *, extra: Collection[str] = ()) -> dict[str, float]:
    """``"0.75*a,0.25*b+c"`` -> ``{"a": 0.75, "b+c": 0.25}``: weights normalised, zero weights dropped.

    An entry is a spec, a mixed table or one of ``extra``; ``ValueError`` names a bad weight or entry."""
    if not isinstance(text, str):
        raise ValueError(f"an opponent mix is text, {MIX_FORM}; got {text!r}")
    mix: dict[str, float] = {}
    for part in text.split(LIST):
        part = part.strip()
        if not part:
            continue
        weight_text, star, entry = (p.strip() for p in part.rpartition(WEIGHT)) if WEIGHT in part else ("", "", part)
        if star and WEIGHT in weight_text:
            raise ValueError(f"opponent mix {text!r}: {part!r} has two weights; the form is {MIX_FORM}")
        if star and not entry:
            raise ValueError(f"opponent mix {text!r}: {part!r} weighs nothing; the form is {MIX_FORM}")
        weight = _weight(weight_text, entry) if star else 1.0
        name = entry if entry in extra else _mix_entry(entry, weighted=bool(star))
        if name in mix:
            raise ValueError(f"opponent mix {text!r}: {name!r} is given twice")
        mix[name] = weight
    if sum(mix.values()) <= 0:
        raise ValueError(f"opponent mix {text!r} needs at least one entry with a positive weight: {MIX_FORM}")
    total = sum(mix.values())
    return {k: v / total for k, v in mix.items() if v > 0}


def _weight(text: str, entry: str) -> float:
    try:
        weight = float(text)
    except ValueError:
        weight = math.nan
    if not 0 <= weight < math.inf:
        if _is_number(entry):
            raise ValueError(
                f"bad weight {text!r} for {entry}: the weight comes first, {entry}{WEIGHT}{text} ({MIX_FORM})"
            )
        raise ValueError(
            f"bad weight {text!r} for {entry}: a weight is a finite number >= 0 written before its entry ({MIX_FORM})"
        )
    return weight


def _mix_entry(entry: str, weighted: bool) -> str:
    try:
        return TABLE.join(parse_table(entry))
    except ValueError:
        left, colon, weight = entry.rpartition(BUDGET)
        # search:0.5 stays a bad budget (its message names the mix form too).
        if not weighted and colon and left.strip() not in ("", *SEARCH_NAMES) and _is_number(weight):
            # What SPEC:WEIGHT used to mean: refused rather than guessed, as search:64 shows.
            raise ValueError(
                f"{entry!r} reads as SPEC:WEIGHT, a form no longer taken (':' is a search budget: search:64 is "
                f"64 rollouts); write the weight first: {weight.strip()}{WEIGHT}{left.strip()}"
            ) from None
        raise


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def make_agent(
    spec: str,
    rules: UnoRules | str | dict[str, Any] | None = None,
    *,
    deterministic: bool = True,
    num_players: int | None = None,
    allow_other_table: bool = False,
    chat: ChatSettings | None = None,
) -> Agent:
    """The agent of ``spec`` for ``rules`` (anything ``uno_env.parse_rules`` reads; None: classic); ``ValueError``
    lists the forms.

    ``deterministic``: trained policies take their most likely legal action (else sample with the
    rng). A model refuses rules or a ``num_players`` its card was not trained for, unless
    ``allow_other_table``. ``chat``: the ``agents.llm.ChatSettings`` of ``chat:`` specs.
    """
    return build_agent(
        spec,
        parse_rules(rules),
        deterministic=deterministic,
        num_players=num_players,
        allow_other_table=allow_other_table,
        chat=chat,
    )


def build_agent(
    spec: str,
    rules: UnoRules,
    *,
    deterministic: bool = True,
    num_players: int | None = None,
    allow_other_table: bool = False,
    chat: ChatSettings | None = None,
) -> Agent:
    """``make_agent`` for a caller whose rules are already an ``UnoRules`` (read once, at its own entry)."""
    s = check_spec(spec)
    how = _How(rules, deterministic, num_players, allow_other_table, chat)
    agent = _BUILDERS[s.kind](s, how)
    if s.label is not None:
        agent.name = s.label
    return agent


def _shown(text: str, limit: int = 80) -> str:
    """``text`` quoted, cut to its first ``limit`` characters."""
    return repr(text[:limit]) + ("…" if len(text) > limit else "")


def _remote_refusal(spec: Any) -> str | None:
    """Why ``spec`` cannot be a remote caller's, from its text alone (no file looked at), or None."""
    if not isinstance(spec, str):
        return f"an agent spec is text, got {type(spec).__name__} {_shown(repr(spec))}"
    for sep in (LIST, WEIGHT, TABLE):
        if sep in spec:
            return f"agent {_shown(spec)} is not offered here: {sep!r} is no part of one registry name"
    if len(spec) > MAX_REMOTE_SPEC_CHARS:
        return (
            f"agent {_shown(spec)} is not offered here: a remote spec is at most {MAX_REMOTE_SPEC_CHARS} "
            f"characters, got {len(spec):,}"
        )
    return None


def remote_agent(spec: Any, rules: UnoRules, num_players: int | None = None) -> Agent:
    """The agent an untrusted caller names (``REMOTE_LIMITS``), checked before anything is imported or
    opened; a separator or an over-long spec is refused before any file is looked at."""
    why = _remote_refusal(spec)
    checked = None
    if why is None:
        try:
            checked = check_spec(spec, **REMOTE_LIMITS)
        except ValueError as exc:
            word = spec.strip()
            # A bare word is a misspelled name here, never a path.
            why = f"unknown agent {word!r}{_did_you_mean(word)}" if re.fullmatch(r"[\w-]+", word) else str(exc)
    if checked is None:
        raise ValueError(
            f"{why}. A remote caller may name {', '.join(agent_names())}, or a search with a budget: search:N "
            f"(N rollouts, 1..{MAX_REMOTE_ROLLOUTS}) or search:Tms (T in (0, {MAX_REMOTE_MS:g}]), also ismcts and "
            "flatmc, each with an optional @BELIEF and LABEL="
        )
    return make_agent(checked.text, rules, num_players=num_players)


@dataclass(frozen=True)
class _How:
    """What ``make_agent`` was asked beside the spec."""

    rules: UnoRules
    deterministic: bool
    num_players: int | None
    allow_other_table: bool
    chat: ChatSettings | None


def _baseline_agent(s: Spec, how: _How) -> Agent:
    return BASELINES[s.body](how.rules)


def _pretrained(s: Spec, how: _How) -> Agent:
    if s.body not in BELIEF_POLICIES:
        return pretrained_agent(s.body, how.rules, how.num_players, how.deterministic, s.label, how.allow_other_table)
    if how.allow_other_table:
        raise ValueError(f"{s.body} reads a fixed table size: it plays only the table it was trained for")
    from .belief_policy import belief_policy_agent  # numpy only, but it reads the belief network's file

    return belief_policy_agent(s.body, how.rules, how.num_players, s.label)


def _search_agent(s: Spec, how: _How) -> FlatMCAgent | ISMCTSAgent:
    cls = SEARCHES[SEARCH if s.target == "search" else s.target]
    settings = cls.budget(s.iterations, s.time_ms)
    if s.target == "search":
        settings["blueprint"] = SEARCH_BLUEPRINT
    if s.belief == "peek":
        settings["peek"] = True
    elif s.belief:
        settings["belief"] = s.belief
    agent = cls(how.rules, **settings)
    agent.name = s.body
    return agent


def _class_agent(s: Spec, how: _How) -> Agent:
    if s.target.endswith(".py"):
        path = os.path.abspath(s.target)
        # One module per file, named after its path, so that loading it twice gives the same class.
        module_name = f"_uno_agent_{os.path.basename(path)[:-3]}_{hashlib.sha1(path.encode()).hexdigest()[:10]}"
        module = sys.modules.get(module_name)
        if module is None:
            loader_spec = importlib.util.spec_from_file_location(module_name, path)
            if loader_spec is None or loader_spec.loader is None:
                raise ValueError(f"{s.text!r}: {s.target!r} cannot be loaded as a Python file")
            module = importlib.util.module_from_spec(loader_spec)
            sys.modules[module_name] = module
            try:
                loader_spec.loader.exec_module(module)
            except Exception:
                del sys.modules[module_name]
                raise
    else:
        try:
            module = importlib.import_module(s.target)
        except ImportError as exc:
            raise ValueError(
                f"{s.text!r}: cannot import the module {s.target!r} ({exc}); a file is named by its path, "
                f"FILE.py:{s.attr}"
            ) from exc
    factory = getattr(module, s.attr, None)
    if not callable(factory):
        raise ValueError(f"{s.text!r}: {s.target} has no class or function {s.attr!r}")
    if _required_positional(factory) >= 2:
        return _DecisionFunction(factory, s.label or s.attr)
    agent = factory(how.rules) if _takes_argument(factory) else factory()
    if not callable(getattr(agent, "act", None)):
        raise ValueError(
            f"{s.text!r} gave {type(agent).__name__}, not an agent: an agent has act(observation, action_mask, rng) "
            "(uno_env.policy.Agent)"
        )
    if not isinstance(getattr(agent, "name", None), str):
        agent.name = s.attr
    return agent


def _required_positional(fn: Any) -> int:
    """How many positional arguments ``fn`` requires (0 when its signature cannot be read)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return 0
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return sum(p.kind in positional and p.default is inspect.Parameter.empty for p in params)


class _DecisionFunction:
    """A function of one decision, ``f(observation, action_mask[, rng]) -> action``, as a batch agent."""

    def __init__(self, fn: Any, name: str) -> None:
        self.fn, self.name = fn, name
        self.with_rng = _required_positional(fn) >= 3

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """``fn`` on each row."""
        out = np.empty(len(action_mask), np.int64)
        for i, (o, m) in enumerate(zip(observation, action_mask, strict=True)):
            out[i] = self.fn(o, m, rng) if self.with_rng else self.fn(o, m)
        return out


def _takes_argument(factory: Any) -> bool:
    """Whether ``factory`` can be called with one positional argument (the rules)."""
    try:
        params = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return True
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return any(p.kind in positional or p.kind is inspect.Parameter.VAR_POSITIONAL for p in params)


def _chat_agent(s: Spec, how: _How) -> Agent:
    return ChatAgent(s.target, how.rules, how.chat or DEFAULT_SETTINGS, endpoint=s.endpoint or None)


def _saved_agent(s: Spec, how: _How) -> Agent:
    if os.path.isfile(s.body) or os.path.isfile(s.body + ".zip"):
        return _ppo_agent(s.body, s.label, how.deterministic, how.rules, how.num_players, how.allow_other_table)
    return _rllib_agent(s.body, s.label, how.deterministic)


def _ppo_agent(
    path: str, label: str | None, deterministic: bool, rules: UnoRules, num_players: int | None, allow_other_table: bool
) -> Agent:
    # Imported here so that torch loads only when a saved model is asked for.
    from .ppo import PPOAgent

    if label is None:
        stem = os.path.splitext(os.path.basename(path))[0]
        # runs/<run>/model.zip is named after its run, not "model".
        parent = os.path.basename(os.path.dirname(os.path.abspath(path)))
        label = parent if stem == "model" and parent else stem
    # train.py --beliefs net: the policy also reads the belief network's reading of the round.
    if (read_card(path) or {}).get("beliefs") == "net":
        if allow_other_table:
            raise ValueError(f"{path} reads a belief network of a fixed table size: it plays only its own table")
        from .belief_policy import BeliefPolicyAgent

        return BeliefPolicyAgent(path if os.path.isfile(path) else path + ".zip", num_players, rules, name=label)
    return PPOAgent(
        path,
        deterministic=deterministic,
        name=label,
        rules=rules,
        num_players=num_players,
        allow_other_table=allow_other_table,
    )


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


# One builder per kind of spec (``KINDS``).
_BUILDERS: dict[str, Callable[[Spec, _How], Agent]] = {
    "baseline": _baseline_agent,
    "search": _search_agent,
    "pretrained": _pretrained,
    "class": _class_agent,
    "chat": _chat_agent,
    "path": _saved_agent,
}
assert tuple(_BUILDERS) == KINDS
