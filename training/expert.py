"""Expert iteration's warm start: a teacher labels positions from its games, the policy is cloned on
them (guide: docs/training.md, "The league and expert iteration")."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch

from agents.ppo import PPOAgent
from arena import play
from uno_env import Agent, Engine, UnoRules
from uno_env.gym_env import UnoVectorEnv
from uno_env.policy import agent_label, history_form_of, history_length_of, uses_engine
from uno_env.table import ask_one, history_observation

__all__ = ["POSITION_DTYPES", "Positions", "label_positions", "clone", "save_positions", "load_positions"]

# The one schema of labelled positions: each field's dtype (every entry's, for a history's dict).
POSITION_DTYPES = {"obs": np.float32, "mask": np.bool_, "action": np.int64, "outcome": np.float32}


@dataclasses.dataclass
class Positions:
    """Labelled positions (module table), each field cast to its ``POSITION_DTYPES`` dtype."""

    obs: np.ndarray | dict[str, np.ndarray]
    mask: np.ndarray
    action: np.ndarray
    outcome: np.ndarray

    def __post_init__(self) -> None:
        for name, dtype in POSITION_DTYPES.items():
            value = getattr(self, name)
            if isinstance(value, dict):
                setattr(self, name, {k: np.asarray(v, dtype) for k, v in value.items()})
            else:
                setattr(self, name, np.asarray(value, dtype))

    def __len__(self) -> int:
        return int(self.action.shape[0])

    def rows(self, index: np.ndarray) -> np.ndarray | dict[str, np.ndarray]:
        """The observations of rows ``index`` (each entry's, for a history's dict)."""
        if isinstance(self.obs, dict):
            return {k: v[index] for k, v in self.obs.items()}
        return self.obs[index]


class _Labeller:
    """The teacher, writing down each of its non-forced decisions until its game's result is known."""

    def __init__(self, teacher: Any, history: int = 0, history_form: str = "rows") -> None:
        self.teacher = teacher
        self.name = agent_label(teacher)
        self.history = history
        self.history_form = history_form
        # The table's engine keeps what the teacher and the noted positions read.
        self.history_length = max(history, history_length_of(teacher))
        self.pending: dict[int, list[tuple[Any, np.ndarray, int]]] = {}
        self.done: list[tuple[Any, np.ndarray, int, float]] = []

    def act_in(self, engine: Engine, i: int, rng: np.random.Generator) -> int:
        """The teacher's action in game ``i``, noted (with the seat's last ``history`` events) when there was a choice."""
        o, m = engine.observation[i], engine.legal_mask[i]
        if m.sum() > 1 and self.history:
            given = history_observation(engine, o[None], np.array([i]), self.history, self.history_form)
            seen: Any = {k: np.array(v[0]) for k, v in given.items()}  # copies: the engine's arrays move on
        else:
            seen = o.copy()
        a = ask_one(self.teacher, engine, i, rng)
        if m.sum() > 1:
            self.pending.setdefault(i, []).append((seen, m.copy(), a))
        return a

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Not used: ``play`` asks this agent through ``act_in``."""
        raise ValueError("the labeller needs engine access (arena.play(..., engine_access=True))")

    def finish(self, engine: Engine, rows: np.ndarray, won: np.ndarray, seats: np.ndarray, games: np.ndarray) -> None:
        """``play``'s ``on_finish``: the finished games' positions get their outcome."""
        for r, seat in zip(rows, seats[:, 0], strict=True):
            reward = float(engine.rewards[r, seat])
            self.done.extend((o, m, a, reward) for o, m, a in self.pending.pop(int(r), []))


def label_positions(
    teacher: Agent,
    opponents: Mapping[str, Sequence[Agent]],
    rules: UnoRules,
    num_players: int,
    num_positions: int,
    seed: int,
    chunk: int = 64,
    history: int = 0,
    history_form: str = "rows",
) -> Positions:
    """``num_positions`` positions where ``teacher`` had a real choice, from its games against each opponent in
    turn: the seats ``training.opponents.opponent_tables`` built.

    With ``history=K`` the positions' observations are a ``history=K`` env's dicts (the seat's
    last K public events, in ``history_form``), for a policy that reads the history."""
    if num_positions < 1 or chunk < 1:
        raise ValueError(f"num_positions and chunk must be >= 1, got {num_positions} and {chunk}")
    if not opponents:
        raise ValueError("label_positions needs at least one opponent table")
    # A teacher reading another history than the positions' (length or form) is asked through a table.
    k = history_length_of(teacher)
    if not uses_engine(teacher) and (k == 0 or (k == history and history_form_of(teacher) == history_form)):
        return _label_batched(teacher, opponents, rules, num_players, num_positions, seed, chunk, history, history_form)
    labeller = _Labeller(teacher, history, history_form)
    seats = list(opponents.values())
    k = 0
    while len(labeller.done) < num_positions:
        table = [labeller, *seats[k % len(seats)]]
        play(table, chunk, rules, seed + k, batch_size=chunk, engine_access=True, on_finish=labeller.finish)
        k += 1
    rows = labeller.done[:num_positions]
    observations: Any = (
        {key: np.stack([r[0][key] for r in rows]) for key in rows[0][0]} if history else np.stack([r[0] for r in rows])
    )
    return Positions(
        obs=observations,
        mask=np.stack([r[1] for r in rows]),
        action=np.array([r[2] for r in rows]),
        outcome=np.array([r[3] for r in rows]),
    )


def _label_batched(
    teacher: Any,
    tables: Mapping[str, Sequence[Agent]],
    rules: UnoRules,
    num_players: int,
    num_positions: int,
    seed: int,
    chunk: int,
    history: int,
    history_form: str = "rows",
) -> Positions:
    """``label_positions`` for a teacher that acts on observations: in the learner's seat of a vector env."""
    groups = [(list(seats), chunk) for seats in tables.values()]
    env = UnoVectorEnv(
        chunk * len(groups),
        num_players,
        rules,
        learner_seat="random",
        opponents=groups,
        autoreset_mode="same_step",
        history=history,
        history_form=history_form,
    )
    rng = np.random.default_rng(seed)
    obs: Any
    obs, info = env.reset(seed=seed)
    # A teacher that reads no history is handed the dict's observation.
    reads_history = history_length_of(teacher) > 0
    n = env.num_envs
    episode = np.zeros(n, np.int64)  # each game's round counter: a position's outcome is its round's
    kept: list[tuple[Any, np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
    results: dict[tuple[int, int], float] = {}
    finished = 0  # positions of rounds whose result is known
    open_rows = np.zeros(n, np.int64)  # positions of each game's current round
    while finished < num_positions:
        mask = info["action_mask"].astype(bool)
        seen = obs["observation"] if history and not reads_history else obs
        action = np.asarray(teacher.act(seen, mask, rng), np.int64)
        choice = np.flatnonzero(mask.sum(axis=1) > 1)
        picked = {k: v[choice] for k, v in obs.items()} if history else obs[choice]
        kept.append((picked, mask[choice], action[choice], choice, episode[choice]))
        open_rows[choice] += 1
        obs, reward, terminated, truncated, info = env.step(action)
        for i in np.flatnonzero(terminated | truncated):
            results[(int(i), int(episode[i]))] = float(reward[i])
            finished += int(open_rows[i])
            open_rows[i] = 0
            episode[i] += 1
    games = np.concatenate([k[3] for k in kept])
    episodes = np.concatenate([k[4] for k in kept])
    outcome = np.array([results.get((int(g), int(e)), np.nan) for g, e in zip(games, episodes, strict=True)])
    rows = np.flatnonzero(~np.isnan(outcome))[:num_positions]

    def stacked(parts: list[np.ndarray]) -> np.ndarray:
        return np.concatenate(parts)[rows]

    observations: Any = (
        {key: stacked([k[0][key] for k in kept]) for key in kept[0][0]} if history else stacked([k[0] for k in kept])
    )
    return Positions(
        obs=observations,
        mask=stacked([k[1] for k in kept]),
        action=stacked([k[2] for k in kept]),
        outcome=outcome[rows],
    )


def clone(
    policy: Any,
    data: Positions,
    epochs: int = 4,
    batch_size: int = 1024,
    learning_rate: float = 1e-3,
    value_coef: float = 0.5,
    max_grad_norm: float = 0.5,
    holdout: float = 0.1,
    seed: int = 0,
) -> dict[str, float]:
    """Fit ``policy`` (an SB3 maskable policy) to the teacher's actions and outcomes (docs/training.md).

    A fresh Adam (PPO's optimizer state is left alone); the last ``holdout`` share of a seeded
    shuffle is held out. A privileged-critic policy (``agents.ppo.UnoPrivilegedPolicy``) gets its
    actor cloned and its critic left as it is: the positions hold no hidden state. Returns the held-out agreement with the teacher before and after, and
    the final training losses."""
    if epochs < 1 or batch_size < 1 or not 0 <= holdout < 1:
        raise ValueError(
            f"clone needs epochs >= 1, batch_size >= 1 and holdout in [0, 1), got {epochs}, {batch_size}, {holdout}"
        )
    order = np.random.default_rng(seed).permutation(len(data))
    n_val = int(len(data) * holdout)
    train, val = order[: len(data) - n_val], order[len(data) - n_val :]
    t: dict[str, Any] = {name: torch.as_tensor(getattr(data, name)) for name in POSITION_DTYPES if name != "obs"}
    hidden = _check_shapes(policy, data)
    t["obs"] = (
        {k: torch.as_tensor(v) for k, v in data.obs.items()}
        if isinstance(data.obs, dict)
        else torch.as_tensor(data.obs)
    )
    if hidden:
        # A privileged critic's hidden columns are not in the positions: the actor (which never reads them)
        # is cloned, the critic left alone (zeros in its columns, no value loss).
        t["obs"] = torch.nn.functional.pad(t["obs"], (0, hidden))
        value_coef = 0.0
    before = _agreement(policy, data, val)
    optimizer = torch.optim.Adam(policy.parameters(), lr=learning_rate)
    gen = torch.Generator().manual_seed(seed)
    idx_train = torch.as_tensor(train)
    policy.set_training_mode(True)
    losses = {"policy_loss": 0.0, "value_loss": 0.0}
    for _ in range(epochs):
        for batch in idx_train[torch.randperm(idx_train.numel(), generator=gen)].split(batch_size):
            obs = {k: v[batch] for k, v in t["obs"].items()} if isinstance(t["obs"], dict) else t["obs"][batch]
            values, log_prob, _ = policy.evaluate_actions(obs, t["action"][batch], t["mask"][batch])
            policy_loss = -log_prob.mean()
            value_loss = torch.nn.functional.mse_loss(values.reshape(-1), t["outcome"][batch])
            optimizer.zero_grad()
            (policy_loss + value_coef * value_loss).backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), max_grad_norm)
            optimizer.step()
            losses = {"policy_loss": policy_loss.item(), "value_loss": value_loss.item()}
    policy.set_training_mode(False)
    return {
        "positions": len(data),
        "held_out": int(n_val),
        "agreement_before": before,
        "agreement_after": _agreement(policy, data, val),
        **losses,
    }


def _check_shapes(policy: Any, data: Positions) -> int:
    """The columns a privileged critic reads beyond the positions' observations (0 for any other
    policy); ValueError when the positions do not fit the policy's observation space."""
    space = policy.observation_space
    if isinstance(data.obs, dict) or hasattr(space, "spaces"):
        wanted = {k: tuple(s.shape) for k, s in getattr(space, "spaces", {}).items()}
        held = (
            {k: tuple(v.shape[1:]) for k, v in data.obs.items()}
            if isinstance(data.obs, dict)
            else {"observation": tuple(data.obs.shape[1:])}
        )
        if wanted != held:
            raise ValueError(
                f"the positions hold observations {held}; the policy reads {wanted or space.shape} "
                "(another history length, rule set or player count?)"
            )
        return 0
    columns = data.obs.shape[1]
    hidden = int(np.prod(space.shape)) - columns
    if hidden < 0 or (hidden and not getattr(policy, "actor_inputs", 0) == columns):
        raise ValueError(
            f"the positions hold observations of {columns} columns; the policy reads "
            f"{int(np.prod(space.shape))} (another rule set or player count?)"
        )
    return hidden


def _agreement(policy: Any, data: Positions, rows: np.ndarray) -> float:
    """Share of ``rows`` where the policy's most likely legal action is the teacher's (nan without rows)."""
    if rows.size == 0:
        return float("nan")
    chosen = PPOAgent(policy, deterministic=True).act(data.rows(rows), data.mask[rows], np.random.default_rng(0))
    return float((chosen == data.action[rows]).mean())


def save_positions(file: Any, data: Positions, meta: dict[str, Any]) -> None:
    """Write ``data`` and ``meta`` (what produced them) as an ``.npz`` to ``file`` (a path or a binary file)."""
    arrays = dataclasses.asdict(data)
    if isinstance(data.obs, dict):  # a history's dict: one array per entry, as obs.<entry>
        arrays.update({f"obs.{k}": v for k, v in arrays.pop("obs").items()})
    np.savez_compressed(file, meta=json.dumps(meta, sort_keys=True), **arrays)


def load_positions(path: str, meta: dict[str, Any]) -> Positions:
    """The positions of ``save_positions``; ValueError when they were produced with other settings than ``meta``."""
    with np.load(path) as f:
        saved = json.loads(str(f["meta"]))
        if saved != json.loads(json.dumps(meta, sort_keys=True)):
            raise ValueError(
                f"{path} holds positions labelled with {saved}, not {meta}: remove it or give another --bc-data path"
            )
        entries = {name[4:]: f[name] for name in f.files if name.startswith("obs.")}
        return Positions(
            obs=entries or f["obs"],
            **{name: f[name] for name in POSITION_DTYPES if name != "obs"},
        )
