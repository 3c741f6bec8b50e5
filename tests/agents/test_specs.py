"""The one agent-spec grammar (agents.registry): specs, lists, mixes, check_spec's limits, your own
agent class from a file or a module, and every command that reads them."""

from __future__ import annotations

import io
import textwrap

import numpy as np
import pytest

from agents.flatmc import FlatMCAgent
from agents.registry import check_spec, make_agent, parse_list, parse_mix, parse_spec
from uno_env import UnoRules

FIRST_LEGAL = textwrap.dedent(
    """
    import numpy as np

    class FirstLegal:
        name = "first-legal"
        calls = 0

        def __init__(self, rules=None):
            self.rules = rules

        def act(self, observation, action_mask, rng):
            type(self).calls += 1
            return np.argmax(action_mask, axis=1).astype(np.int64)

    class NoArguments(FirstLegal):
        def __init__(self):
            self.rules = "none given"

    def build(rules):
        agent = FirstLegal(rules)
        agent.name = "built"
        return agent

    class NotAnAgent:
        pass
    """
)


@pytest.fixture
def agent_file(tmp_path):
    path = tmp_path / "my_agent.py"
    path.write_text(FIRST_LEGAL)
    return str(path)


# --- one spec ---------------------------------------------------------------------------------

GOOD_SPECS = [
    # text, kind, canonical text, label, target, attr, iterations, time_ms, belief
    ("heuristic", "baseline", "heuristic", None, "heuristic", "", None, None, ""),
    (" random ", "baseline", "random", None, "random", "", None, None, ""),
    ("pretrained-4p", "pretrained", "pretrained-4p", None, "pretrained-4p", "", None, None, ""),
    ("search", "search", "search", None, "search", "", None, None, ""),
    ("search:64", "search", "search:64", None, "search", "", 64, None, ""),
    ("search : 64", "search", "search:64", None, "search", "", 64, None, ""),
    ("ismcts:20ms", "search", "ismcts:20ms", None, "ismcts", "", None, 20.0, ""),
    ("flatmc:64 @ uniform", "search", "flatmc:64@uniform", None, "flatmc", "", 64, None, "uniform"),
    ("search@peek", "search", "search@peek", None, "search", "", None, None, "peek"),
    ("fast = search:8", "search", "fast=search:8", "fast", "search", "", 8, None, ""),
    # the ladder's v1 rung: a label may hold ':'
    (
        "search:64=flatmc:64@uniform",
        "search",
        "search:64=flatmc:64@uniform",
        "search:64",
        "flatmc",
        "",
        64,
        None,
        "uniform",
    ),
    ("my_agent.py:MyAgent", "class", "my_agent.py:MyAgent", None, "my_agent.py", "MyAgent", None, None, ""),
    (
        "dir/my agent.py : MyAgent",
        "class",
        "dir/my agent.py:MyAgent",
        None,
        "dir/my agent.py",
        "MyAgent",
        None,
        None,
        "",
    ),
    ("pkg.mod:make_agent", "class", "pkg.mod:make_agent", None, "pkg.mod", "make_agent", None, None, ""),
    ("mod:Agent", "class", "mod:Agent", None, "mod", "Agent", None, None, ""),
    ("mine=pkg.mod:Agent", "class", "mine=pkg.mod:Agent", "mine", "pkg.mod", "Agent", None, None, ""),
    ("runs/x/model.zip", "path", "runs/x/model.zip", None, "runs/x/model.zip", "", None, None, ""),
    ("runs/a:b/model.zip", "path", "runs/a:b/model.zip", None, "runs/a:b/model.zip", "", None, None, ""),
]


@pytest.mark.parametrize("text, kind, canonical, label, target, attr, iterations, time_ms, belief", GOOD_SPECS)
def test_good_specs_read_as_their_kind(text, kind, canonical, label, target, attr, iterations, time_ms, belief):
    spec = parse_spec(text)
    assert (spec.kind, spec.text, spec.label, spec.target, spec.attr) == (kind, canonical, label, target, attr)
    assert (spec.iterations, spec.time_ms, spec.belief) == (iterations, time_ms, belief)
    assert parse_spec(spec.text) == spec  # the canonical text reads back the same


BAD_SPECS = [
    ("", "an agent spec is one of: random, rlcard_rule"),
    ("   ", "an agent spec is one of"),
    (3, "an agent spec is one of"),
    ("=heuristic", "a labelled agent is LABEL=SPEC with both parts"),
    ("fast=", "a labelled agent is LABEL=SPEC with both parts"),
    ("search:0", "bad search budget in 'search:0'"),
    ("search:-5", "bad search budget"),
    ("search:abc", "bad search budget in 'search:abc': use search:N"),
    ("ismcts:0ms", "bad search budget"),
    ("flatmc:infms", "bad search budget"),
    ("search:", "bad search budget"),
    ("search@nowhere", "unknown belief 'nowhere'; a search deals its determinizations from one of"),
    ("heuristic:0.5", "heuristic takes no ':'"),
    ("heuristic:0.5", "in an opponent mix a weight is written before its spec: 0.5*heuristic"),
    ("pretrained:2", "pretrained takes no ':'"),
    ("0.5*heuristic", "writes a weight, in an opponent mix only"),
    ("heuristic,random", "',' separates the items of a list"),
    ("heuristic+random", "joins the seats of a mixed table"),
]


@pytest.mark.parametrize("text, message", BAD_SPECS)
def test_bad_specs_say_what_is_wrong(text, message):
    with pytest.raises(ValueError) as err:
        parse_spec(text)
    assert message in str(err.value)


def test_check_spec_looks_paths_up_and_enforces_the_callers_limits(agent_file, tmp_path):
    with pytest.raises(ValueError, match="unknown agent 'nobody' \\(no file or directory of that name either\\)"):
        check_spec("nobody")
    assert check_spec("nobody", exists=False).kind == "path"  # a name read back from results
    with pytest.raises(ValueError, match="no file 'missing.py' to load the agent 'X' from"):
        check_spec("missing.py:X")
    assert check_spec(f"{agent_file}:FirstLegal").kind == "class"
    assert check_spec(str(tmp_path)).kind == "path"  # a directory: an RLlib checkpoint
    web = {"kinds": ("baseline", "search"), "max_iterations": 100, "max_ms": 50.0, "peek": False}
    assert check_spec("search:100", **web).iterations == 100
    assert check_spec("ismcts:50ms@uniform", **web).time_ms == 50.0
    for bad, message in [
        ("search:101", "a search budget is 1..100 rollouts"),
        ("ismcts:51ms", "a search budget is at most 50 ms"),
        ("search@peek", "@peek sees every hand"),
        ("pretrained", "it is a shipped model; offered kinds: baseline, search"),
        (f"{agent_file}:FirstLegal", "it is an agent class of yours"),
        ("/etc/passwd", "agent '/etc/passwd' is not offered here: it is a path"),
    ]:
        with pytest.raises(ValueError) as err:
            check_spec(bad, **web)
        assert message in str(err.value), bad


# --- lists ------------------------------------------------------------------------------------


def test_lists_share_one_whitespace_rule():
    assert parse_list(" random , heuristic,,search : 64 ,") == ["random", "heuristic", "search:64"]
    assert parse_list("heuristic + greedy, random", tables=True) == ["heuristic+greedy", "random"]
    assert parse_list("self, random", extra=("self",)) == ["self", "random"]
    assert parse_list("", empty=True) == []
    for text, kwargs, message in [
        ("", {}, "'' names no agent"),
        (" , ", {}, "names no agent"),
        ("random,nobody", {}, "unknown agent 'nobody'"),
        ("heuristic+greedy", {}, "joins the seats of a mixed table"),
        ("heuristic++greedy", {"tables": True}, "a mixed table is SPEC+SPEC+..., one spec per seat, none empty"),
        ("random,search:0", {}, "bad search budget in 'search:0'"),
    ]:
        with pytest.raises(ValueError) as err:
            parse_list(text, **kwargs)
        assert message in str(err.value), text


# --- mixes ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, mix",
    [
        ("heuristic", {"heuristic": 1.0}),
        ("3*random, 1 * greedy", {"random": 0.75, "greedy": 0.25}),
        ("0.5*heuristic,0.5*search:20ms", {"heuristic": 0.5, "search:20ms": 0.5}),
        ("search:64", {"search:64": 1.0}),
        ("1*search:64,1*search:20ms,0*fast=search:8", {"search:64": 0.5, "search:20ms": 0.5}),
        ("0.5*heuristic+rlcard_rule, 0.5*self", {"heuristic+rlcard_rule": 0.5, "self": 0.5}),
        ("2*league,random", {"league": 2 / 3, "random": 1 / 3}),
        ("1e-1*random,0.1*greedy", {"random": 0.5, "greedy": 0.5}),
    ],
)
def test_good_mixes(text, mix):
    assert parse_mix(text, extra=("self", "league")) == pytest.approx(mix)


@pytest.mark.parametrize(
    "text, message",
    [
        ("abc*heuristic", "bad weight 'abc' for heuristic: a weight is a finite number >= 0 written before its entry"),
        ("-1*random", "bad weight '-1' for random"),
        ("inf*random", "bad weight 'inf' for random"),
        ("nan*random", "bad weight 'nan' for random"),
        ("*random", "bad weight '' for random"),
        ("heuristic*0.5", "the weight comes first, 0.5*heuristic"),
        ("1*2*random", "has two weights"),
        ("0.5*", "weighs nothing"),
        # the old SPEC:WEIGHT form, refused with the form to write
        ("heuristic:0.5,search:20ms", "write the weight first: 0.5*heuristic"),
        ("search:64:0.25", "write the weight first: 0.25*search:64"),
        ("heuristic+greedy:0.5", "write the weight first: 0.5*heuristic+greedy"),
        ("self:0.5", "write the weight first: 0.5*self"),
        ("random,2*random", "'random' is given twice"),
        ("0*random", "needs at least one entry with a positive weight"),
        ("", "needs at least one entry with a positive weight"),
        ("2*nobody", "unknown agent 'nobody'"),
        ("0.5*search:0", "bad search budget in 'search:0'"),
        ("search:0.5", "bad search budget in 'search:0.5'"),
        ("search:0.5", "in an opponent mix a weight is written before its spec"),
        ("self+random", "unknown agent 'self'"),
    ],
)
def test_bad_mixes_say_what_is_wrong(text, message):
    with pytest.raises(ValueError) as err:
        parse_mix(text, extra=("self", "league"))
    assert message in str(err.value)


def test_a_budget_in_a_mix_is_the_searchs_budget_not_a_weight():
    """The bug: ``search:64`` was ``search`` at weight 64 (a full-budget search), and
    ``heuristic:0.5,search:20ms`` gave the search two thirds of the games."""
    from training.opponents import opponent_groups
    from training.opponents import parse_mix as training_mix

    (group,) = opponent_groups(training_mix("search:64"), 4, UnoRules(), num_players=2)
    assert isinstance(group.agent, FlatMCAgent) and group.agent.rollouts == 64 and group.agent.time_ms is None
    groups = opponent_groups(training_mix("0.5*heuristic,0.5*search:20ms"), 10, UnoRules(), num_players=2)
    assert [(g.kind, g.games) for g in groups] == [("heuristic", 5), ("search:20ms", 5)]
    assert groups[1].agent.time_ms == 20.0
    with pytest.raises(ValueError, match="write the weight first: 0.5\\*heuristic"):
        training_mix("heuristic:0.5,search:20ms")


def test_opponent_groups_check_a_mixed_tables_seats_as_seat_agents_does():
    from training.opponents import opponent_groups, seat_agents
    from training.opponents import parse_mix as training_mix

    (group,) = opponent_groups(training_mix("heuristic+random+greedy"), 4, UnoRules(), num_players=4)
    assert [a.name for a in group.agent] == ["heuristic", "random", "greedy"]
    for check in (seat_agents, lambda spec, rules, n: opponent_groups(training_mix(spec), 4, rules, num_players=n)):
        with pytest.raises(ValueError, match="names 2 seats; a table of 4 players needs 3"):
            check("heuristic+random", UnoRules(), 4)


# --- your own agent class ---------------------------------------------------------------------


def test_an_agent_class_from_a_file_or_a_module(agent_file, tmp_path, monkeypatch):
    rules = UnoRules.preset("house")
    agent = make_agent(f"{agent_file}:FirstLegal", rules)
    assert agent.name == "first-legal" and agent.rules == rules
    assert make_agent(f"mine={agent_file}:FirstLegal").name == "mine"
    assert make_agent(f" {agent_file} : NoArguments ").rules == "none given"  # called with no argument
    assert make_agent(f"{agent_file}:build").name == "built"  # a function that returns an agent
    # The same file loads once: its class is one class.
    assert type(make_agent(f"{agent_file}:FirstLegal")) is type(agent)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert type(make_agent("my_agent:FirstLegal")).__name__ == "FirstLegal"
    mask = np.zeros((2, 116), bool)
    mask[0, 7] = mask[1, 3] = mask[1, 9] = True
    assert agent.act(np.zeros((2, 1)), mask, np.random.default_rng(0)).tolist() == [7, 3]


@pytest.mark.parametrize(
    "attr, message",
    [
        ("NotAnAgent", "gave NotAnAgent, not an agent: an agent has act(observation, action_mask, rng)"),
        ("Missing", "has no class or function 'Missing'"),
    ],
)
def test_a_class_that_is_no_agent_is_refused(agent_file, attr, message):
    with pytest.raises(ValueError) as err:
        make_agent(f"{agent_file}:{attr}")
    assert message in str(err.value)


def test_a_module_that_does_not_import_is_refused():
    with pytest.raises(ValueError, match="cannot import the module 'no_such_module_xyz'.*FILE.py:Agent"):
        make_agent("no_such_module_xyz:Agent")


def test_evaluate_plays_an_agent_class_from_a_file(agent_file, tmp_path):
    import evaluate

    spec = f"{agent_file}:FirstLegal"
    args = evaluate.Args(agents=f"random, {spec}", games=20, output_dir=str(tmp_path / "eval"), plots=False)
    result = evaluate.main(args)
    assert result.names == ["random", "first-legal"] and result.config["agents"] == ["random", spec]
    assert result.config["num_games"] == 20 and (tmp_path / "eval" / "tournament.json").is_file()


def test_a_mix_and_uno_play_play_an_agent_class_from_a_file(agent_file):
    from training.opponents import opponent_groups
    from training.opponents import parse_mix as training_mix
    from uno_env.sb3_vec_env import UnoSB3VecEnv
    from uno_web.terminal import main as play_main

    module_class = type(make_agent(f"{agent_file}:FirstLegal"))
    groups = opponent_groups(training_mix(f"0.5*random, 0.5*{agent_file}:FirstLegal"), 4, UnoRules(), num_players=2)
    assert [g.games for g in groups] == [2, 2] and type(groups[1].agent) is module_class
    venv = UnoSB3VecEnv(4, 2, learner_seat=0, opponents=[(g.agent, g.games) for g in groups], seed=0)
    venv.reset()
    before = module_class.calls
    for _ in range(20):
        venv.step(np.argmax(venv.action_masks(), axis=1))
    assert module_class.calls > before  # the user's agent took the opponents' turns of its games

    out = io.StringIO()
    rc = play_main(["--opponents", f"{agent_file}:FirstLegal", "--seed", "3", "--no-color"], io.StringIO("q\n"), out)
    assert rc == 0 and "first-legal (seat 1)" in out.getvalue()


def test_a_function_of_one_decision_plays_as_an_agent(tmp_path):
    """The PettingZoo page's hand-written agent, a function, plays when a command names it."""
    from arena import play

    path = tmp_path / "pz_agent.py"
    path.write_text(
        "import numpy as np\n"
        "from uno_env.actions import DRAW\n\n\n"
        "def first_card(observation, action_mask):\n"
        "    legal = np.flatnonzero(action_mask)\n"
        "    cards = legal[legal < DRAW]\n"
        "    return int(cards[0] if cards.size else legal[0])\n"
    )
    agent = make_agent(f"{path}:first_card")
    assert agent.name == "first_card"
    result = play([agent, make_agent("random")], 4, seed=0)
    assert result.games == 4


def test_a_missing_saved_model_is_named_as_one():
    with pytest.raises(ValueError, match="no saved model at 'runs/nope/model.zip'"):
        make_agent("runs/nope/model.zip")
