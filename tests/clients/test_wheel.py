"""The built wheel, installed as a user installs it: ``pip wheel --no-deps .`` from the tracked
files, then ``pip install`` (not editable) into a fresh virtualenv that sees no site-packages of
this one. In that venv, run from an empty directory so that this checkout is not on the path:
``import uno_env`` from the venv, every registry agent built (the shipped ``pretrained`` models
loaded from the installed package data), the ladder data loaded, every command starts
(``--help``), the first command run says numba is compiling and the second does not,
``uno-train`` trains a tiny model with its card and ``uno-evaluate`` plays it (and refuses it
on other rules), and the quickstart page's snippets run. It also checks that
no other distribution installs our top-level package names (docs/install.md says why).

About two minutes, most of it installing torch and the ``train``/``web`` extras into the venv
and numba's first compile there; the venv is built once per session (a module fixture).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
from helpers import ROOT, snippets

TOP_LEVEL = ("uno_env", "agents", "arena", "training", "uno_web")  # [tool.setuptools.packages.find]
TORCH = "torch==2.13.0"  # first, as in the README: an unpinned torch would pull CUDA
EXTRAS = "train,web"  # the pretrained models need sb3-contrib; uno-web needs fastapi

# Run inside the venv: everything the test checks, printed as one JSON line.
PROBE = """
import importlib.resources, json, sys
from importlib.metadata import packages_distributions, version
import uno_env, agents, arena
from uno_env import UnoRules
from agents.pretrained import PRETRAINED
from agents.registry import agent_names, make_agent
from arena.ladder import load_reference

built = {}
for name in [*agent_names(), *PRETRAINED]:
    agent = make_agent(name, UnoRules.preset("classic"), num_players=4 if name.endswith("-4p") else 2)
    built[name] = type(agent).__name__
ladder = load_reference()
print(json.dumps({
    "prefix": sys.prefix,
    "files": {m.__name__: m.__file__ for m in (uno_env, agents, arena)},
    "version": uno_env.__version__,
    "metadata_version": version("uno_env"),
    "py_typed": importlib.resources.files("uno_env").joinpath("py.typed").is_file(),
    "built": built,
    "ladder_keys": sorted(ladder),
    "owners": {name: packages_distributions().get(name, []) for name in sys.argv[1:]},
}))
"""


def _env() -> dict[str, str]:
    """This process's environment without what would put the checkout or this venv on the path."""
    drop = {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP"}
    return {k: v for k, v in os.environ.items() if k not in drop and k != "NUMBA_DISABLE_JIT"}


def _run(args: list[str], cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess:
    done = subprocess.run(args, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{' '.join(args)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def _tracked_tree(dest: Path) -> Path:
    """A copy of the files git knows (tracked, or new and not ignored): what a fresh clone builds
    from, without a stale ``build/`` directory or untracked artefacts."""
    files = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, files):
        src = ROOT / os.fsdecode(name)
        if src.is_file():  # a deleted file is still in the index until committed
            out = dest / os.fsdecode(name)
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(src.read_bytes())
    return dest


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> dict[str, Path]:
    """A fresh venv holding torch, the wheel's dependencies with the train and web extras, and the wheel."""
    tmp = tmp_path_factory.mktemp("wheel")
    source = _tracked_tree(tmp / "src")
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(tmp / "dist"), "."], cwd=source)
    (wheel,) = (tmp / "dist").glob("uno_env-*.whl")
    root = tmp / "venv"
    _run([sys.executable, "-m", "venv", str(root)], cwd=tmp)
    pip = [str(root / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    _run([*pip, TORCH], cwd=tmp)
    # Every dependency first, to see that none of them brings one of our top-level names.
    _run([*pip, f"{wheel}[{EXTRAS}]", TORCH], cwd=tmp)
    empty = tmp / "empty"
    empty.mkdir()
    return {"root": root, "bin": root / "bin", "python": root / "bin" / "python", "cwd": empty, "wheel": wheel}


def test_the_wheel_holds_the_packages_and_their_data(venv):
    import zipfile

    names = zipfile.ZipFile(venv["wheel"]).namelist()
    assert {n.split("/")[0] for n in names if not n.startswith("uno_env-")} == set(TOP_LEVEL)
    for data in (
        "uno_env/py.typed",
        "arena/ladder_v2.json",
        "arena/ladder_v3.json",
        "agents/pretrained/pretrained.zip",
        "agents/pretrained/belief_policy.zip",
    ):
        assert data in names, f"{data} is not in the wheel (package-data in pyproject.toml)"
    assert not [n for n in names if "__pycache__" in n or n.startswith(("tests/", "benchmarks/", "lab/", "tools/"))]


def test_a_first_run_says_it_compiles_and_a_second_is_silent(venv):
    """The venv's numba cache is cold until a command runs: the first says so, once; the next is silent.
    Before the other tests of this module, which fill the cache."""
    demo = [str(venv["bin"] / "uno-demo"), "--seconds", "0.2", "--num-envs", "4"]
    first = _run(demo, cwd=venv["cwd"], timeout=600)
    assert first.stderr.count("uno-demo: compiling the game's numba kernels") == 1, first.stderr
    assert "once per install" in first.stderr
    second = _run(demo, cwd=venv["cwd"], timeout=600)
    assert "compiling" not in second.stderr, second.stderr


def test_the_installed_package_imports_builds_every_agent_and_loads_the_ladder(venv):
    out = json.loads(
        _run([str(venv["python"]), "-c", PROBE, *TOP_LEVEL], cwd=venv["cwd"]).stdout.strip().splitlines()[-1]
    )
    site = str(venv["root"])
    assert all(path.startswith(site) for path in out["files"].values()), out["files"]  # not this checkout
    assert out["version"] == out["metadata_version"] != "0+unknown"
    assert out["py_typed"]
    assert {"random", "heuristic", "search", "pretrained", "pretrained-4p"} <= set(out["built"])
    assert out["ladder_keys"], "the ladder's reference data did not load"
    # Our top-level names belong to uno_env alone in a venv holding every dependency.
    assert all(owners == ["uno_env"] for owners in out["owners"].values()), out["owners"]


@pytest.mark.parametrize("command", ["uno-web", "uno-play", "uno-replay", "uno-train", "uno-evaluate"])
def test_the_installed_commands_start(venv, command):
    done = _run([str(venv["bin"] / command), "--help"], cwd=venv["cwd"], timeout=300)
    assert "usage" in done.stdout.lower()


def test_the_installed_commands_train_a_model_with_its_card_and_evaluate_it(venv, tmp_path):
    """The main job from the wheel alone: a tiny uno-train run, then uno-evaluate with its model."""
    tiny = ["--total-timesteps", "512", "--num-envs", "8", "--n-steps", "32", "--batch-size", "128"]
    tiny += ["--n-epochs", "1", "--hidden", "16", "--bc-positions", "64", "--bc-epochs", "1", "--eval-every", "0"]
    tiny += ["--checkpoint-every", "0", "--final-eval-games", "10", "--eval-opponents", "random", "--no-progress"]
    _run([str(venv["bin"] / "uno-train"), *tiny, "--output-dir", str(tmp_path)], cwd=venv["cwd"], timeout=900)
    model = tmp_path / "uno_ppo" / "model.zip"
    card = json.loads(model.with_suffix(".json").read_text())
    assert card["command"].startswith("uno-train ") and card["num_players"] == 2
    assert card["observation"] == {"open_hands": False, "history": 0}
    evaluate = [str(venv["bin"] / "uno-evaluate"), "--agents", f"random,{model}", "--games", "10", "--no-plots"]
    done = _run([*evaluate, "--output-dir", str(tmp_path / "eval")], cwd=venv["cwd"], timeout=600)
    assert "uno_ppo" in done.stdout and (tmp_path / "eval" / "tournament.json").is_file()
    refused = subprocess.run(
        [*evaluate, "--rules", "house", "--output-dir", str(tmp_path / "house")],
        cwd=venv["cwd"],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert refused.returncode != 0 and "was trained for 2 players, rules classic" in refused.stderr


def test_the_quickstart_runs_against_the_installed_package(venv):
    code = "\n\n".join(snippets("quickstart.md"))
    _run([str(venv["python"]), "-c", code], cwd=venv["cwd"])


def test_no_other_installed_distribution_owns_our_top_level_names():
    """In this (development) environment, with every extra installed: docs/install.md."""
    owners = packages_distributions()
    clashes = {name: owners[name] for name in TOP_LEVEL if set(owners.get(name, [])) - {"uno_env"}}
    assert not clashes, f"other distributions install our top-level names: {clashes}"
