"""Our PPO pieces against TorchRL's on one CPU: the clipped-PPO minibatch step and GAE (issue 57).

    python -m lab.ppo_library                 # 5 interleaved runs, minibatch 4096 and 8192, GAE 1024 x 32
    python -m lab.ppo_library --compile       # and TorchRL's loss under torch.compile
    python -m lab.ppo_library --quick         # smoke: tiny minibatches and runs, numbers not meaningful

The same network (``train.py``'s default: MLP 398->256->256, a 116-way policy head and a value head,
built as ``benchmarks.learner_throughput.LearnerBench`` builds it), fp32, one torch thread, the same
synthetic data (observations of 0/1 features, a handful of legal actions per row, actions drawn among
them, old log-probabilities from the untrained policy, advantages and returns), in interleaved runs:

- the minibatch step: ``BatchedPPO.step_minibatch`` (ours) against TorchRL's ``ClipPPOLoss`` over a
  ``ProbabilisticActor`` with ``MaskedCategorical`` and a ``ValueOperator`` on copies of the same layers
  (same clip, entropy and value coefficients, advantages normalized per minibatch, squared-error value
  loss), followed by the same backward, gradient clipping and Adam step. Two critics: ``twice``, the
  critic runs the shared trunk itself (``ActorValueOperator``'s policy and value operators: the loss
  calls actor and critic apart, so the trunk runs twice), and ``once``, the critic reads the trunk's
  output that the actor's pass left in the loss's TensorDict (the trunk once, as ours);
- GAE over a rollout of 1024 games x 32 steps: ``BatchedPPO.advantages`` against TorchRL's
  ``generalized_advantage_estimate`` and ``vec_generalized_advantage_estimate``, checked equal.

TorchRL is not a dependency of the project: install it beside torch without touching torch with
``INSTALL`` below. Writes ``ppo_library.md`` and ``.json`` (date, machine, load) to ``--results-dir``.
"""

from __future__ import annotations

import copy
import dataclasses
import sys
import time
import types
from typing import Any

import tyro

from benchmarks._timing import add_ratio, fmt_rate, interleave, loadavg, summarize, write_report
from benchmarks.engine_speed import machine_info, machine_lines

INSTALL = (
    "pip install --no-deps torchrl==0.14.1 tensordict==0.14.3 pyvers hoptorch"
    " (and cloudpickle, packaging, importlib_metadata, orjson if missing)"
)


@dataclasses.dataclass
class Args:
    """Options of the PPO-library comparison (``python -m lab.ppo_library --help``)."""

    minibatches: tuple[int, ...] = (4096, 8192)
    """minibatch sizes of the update rows"""
    games: int = 1024
    """games of the GAE rollout"""
    steps: int = 32
    """steps per game of the GAE rollout"""
    runs: int = 5
    """interleaved runs per row (the table gives medians)"""
    seconds: float = 2.0
    """seconds per timed run of a row"""
    legal: int = 6
    """most legal actions per row (each row draws 1 to this many)"""
    compile: bool = False
    """also time TorchRL's loss under torch.compile (minutes of compiling on a small CPU)"""
    quick: bool = False
    """smoke run: tiny minibatches and rollout, one short run (numbers not meaningful)"""
    seed: int = 0
    """seed of the synthetic data"""
    results_dir: str = "lab/results"
    """where ppo_library.md and ppo_library.json are written"""


def require_torchrl() -> None:
    """Exit with the install command where TorchRL or TensorDict cannot be imported."""
    try:
        import tensordict  # noqa: F401
        import torchrl  # noqa: F401
    except ImportError as e:
        raise SystemExit(f"lab.ppo_library needs TorchRL ({e}); install it beside torch with:\n  {INSTALL}") from e


def make_learner(quick: bool) -> Any:
    """``train.py``'s batched learner in fp32 on the CPU: its policy, optimizer and PPO settings."""
    from benchmarks.learner_throughput import ROWS, LearnerBench, train_args

    learner = LearnerBench("ours", train_args(ROWS["batched"], quick, "cpu", precision="fp32")).learner
    assert learner is not None
    return learner


def minibatch(policy: Any, size: int, legal: int, seed: int) -> dict[str, Any]:
    """Synthetic minibatch: 0/1 observations, 1 to ``legal`` legal actions per row, an action among them,
    its log-probability under ``policy``, advantages and returns."""
    import torch

    from training.batched_ppo import MASKED_LOGIT, heads

    g = torch.Generator().manual_seed(seed)
    obs_size, actions = policy.observation_space.shape[0], policy.action_space.n
    obs = (torch.rand((size, obs_size), generator=g) < 0.1).float()
    count = torch.randint(1, legal + 1, (size, 1), generator=g)
    rank = torch.rand((size, actions), generator=g).argsort(1).argsort(1)
    mask = rank < count  # `count` actions per row, at random places
    action = torch.argmax(torch.rand((size, actions), generator=g) * mask, 1)
    with torch.inference_mode():
        logits = heads(policy, obs)[0].masked_fill(~mask, MASKED_LOGIT)
        old_logp = torch.log_softmax(logits, 1).gather(1, action[:, None]).squeeze(1)
    old_logp = old_logp + 0.1 * torch.randn(size, generator=g)  # the policy has moved since the rollout
    return dict(
        obs=obs,
        mask=mask,
        action=action,
        old_logp=old_logp,
        adv=torch.randn(size, generator=g),
        returns=torch.randn(size, generator=g) * 0.5,
    )


class OursStep:
    """``BatchedPPO.step_minibatch`` on one minibatch; a chunk is one optimizer step."""

    def __init__(self, learner: Any, data: dict[str, Any]) -> None:
        self.learner, self.d = learner, data

    def losses(self) -> dict[str, float]:
        d = self.d
        out = self.learner.step_minibatch(d["obs"], d["mask"], d["action"], d["old_logp"], d["adv"], d["returns"])
        pg, value, entropy, _, _, loss = out.tolist()
        return {"objective": pg, "critic": value, "entropy": entropy, "loss": loss}

    def chunk(self) -> int:
        self.losses()
        return int(self.d["obs"].shape[0])


class TorchRLStep:
    """TorchRL's ``ClipPPOLoss`` on a copy of the learner's policy, its own Adam of the same settings;
    ``critic`` is ``twice`` (the critic runs the trunk itself) or ``once`` (it reads the actor's trunk output)."""

    def __init__(self, learner: Any, data: dict[str, Any], critic: str, compiled: bool = False) -> None:
        import torch
        from tensordict import TensorDict
        from tensordict.nn import TensorDictModule, TensorDictSequential
        from torchrl.modules import ActorValueOperator, MaskedCategorical, ProbabilisticActor, ValueOperator
        from torchrl.objectives import ClipPPOLoss

        s = learner.s
        self.policy = policy = copy.deepcopy(learner.policy)
        trunk = TensorDictModule(
            torch.nn.Sequential(policy.features_extractor, policy.mlp_extractor.policy_net),
            in_keys=["observation"],
            out_keys=["hidden"],
        )
        head = TensorDictModule(policy.action_net, in_keys=["hidden"], out_keys=["logits"])
        value = ValueOperator(policy.value_net, in_keys=["hidden"])

        def masked_actor(module: Any) -> Any:
            return ProbabilisticActor(
                module, in_keys=["logits", "mask"], distribution_class=MaskedCategorical, return_log_prob=True
            )

        if critic == "twice":
            both = ActorValueOperator(trunk, masked_actor(head), value)
            actor_net, critic_net = both.get_policy_operator(), both.get_value_operator()
        else:
            actor_net, critic_net = masked_actor(TensorDictSequential(trunk, head)), value
        self.loss = ClipPPOLoss(
            actor_net,
            critic_net,
            clip_epsilon=s.clip_range,
            entropy_coeff=s.ent_coef,
            critic_coeff=s.vf_coef,
            loss_critic_type="l2",
            normalize_advantage=True,
        )
        self.loss.set_keys(sample_log_prob="action_log_prob", value_target="value_target")
        opt = learner.policy.optimizer
        self.optimizer = type(opt)(policy.parameters(), **opt.defaults)
        self.max_grad_norm = s.max_grad_norm
        self.forward = torch.compile(self.loss) if compiled else self.loss
        d = data
        self.td = TensorDict(
            {
                "observation": d["obs"],
                "mask": d["mask"],
                "action": d["action"],
                "action_log_prob": d["old_logp"],
                "advantage": d["adv"][:, None],
                "value_target": d["returns"][:, None],
            },
            batch_size=[d["obs"].shape[0]],
        )
        self.params = list(policy.parameters())

    def losses(self) -> dict[str, float]:
        import torch

        out = self.forward(self.td)
        loss = out["loss_objective"] + out["loss_entropy"] + out["loss_critic"]
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.params, self.max_grad_norm)
        self.optimizer.step()
        return {
            "objective": float(out["loss_objective"]),
            "critic": float(out["loss_critic"]) / self.loss.critic_coeff.item(),
            "entropy": float(out["loss_entropy"]) / self.loss.entropy_coeff.item(),
            "loss": float(loss),
        }

    def chunk(self) -> int:
        self.losses()
        return int(self.td.batch_size[0])


def rollout(games: int, steps: int, seed: int) -> dict[str, Any]:
    """A synthetic rollout [steps, games]: rewards at the rounds' ends (about one in 15 steps), values."""
    import torch

    g = torch.Generator().manual_seed(seed)
    done = (torch.rand((steps, games), generator=g) < 1 / 15).float()
    reward = done * torch.sign(torch.randn((steps, games), generator=g))
    value = torch.randn((steps, games), generator=g) * 0.5
    return dict(reward=reward, done=done, value=value, next_value=torch.randn(games, generator=g) * 0.5)


class OursGAE:
    """``BatchedPPO.advantages`` itself, on the rollout's buffers (``next_value`` in place of the last forward)."""

    def __init__(self, learner: Any, r: dict[str, Any]) -> None:
        s = dataclasses.replace(learner.s, n_steps=r["reward"].shape[0])
        self.view = types.SimpleNamespace(
            s=s, obs=None, buf_reward=r["reward"], buf_done=r["done"], buf_value=r["value"],
            _values=lambda obs: r["next_value"],
        )  # fmt: skip
        self.size = r["reward"].numel()

    def advantages(self) -> Any:
        from training.batched_ppo import BatchedPPO

        return BatchedPPO.advantages(self.view)[0]  # type: ignore[arg-type]

    def chunk(self) -> int:
        self.advantages()
        return self.size


class TorchRLGAE:
    """TorchRL's functional GAE on the same rollout, laid out [games, steps, 1]; ``vec``: the vectorized one."""

    def __init__(self, learner: Any, r: dict[str, Any], vec: bool) -> None:
        import torch
        from torchrl.objectives.value import functional

        self.fn = functional.vec_generalized_advantage_estimate if vec else functional.generalized_advantage_estimate
        self.gamma, self.lmbda = learner.s.gamma, learner.s.gae_lambda

        def lay(x: Any) -> Any:
            return x.T.contiguous()[..., None]

        next_value = torch.cat([r["value"][1:], r["next_value"][None]])
        done = lay(r["done"].bool())
        self.inputs = (lay(r["value"]), lay(next_value), lay(r["reward"]), done, done)
        self.size = r["reward"].numel()

    def advantages(self) -> Any:
        adv, _ = self.fn(self.gamma, self.lmbda, *self.inputs)
        return adv[..., 0].T

    def chunk(self) -> int:
        self.advantages()
        return self.size


def timed_rows(benches: dict[str, Any], args: Args, base: str) -> dict[str, dict[str, Any]]:
    """Interleaved medians of ``benches`` (a warm-up call each first), ratios against ``base``."""
    for b in benches.values():
        b.chunk()
    runs = 1 if args.quick else args.runs
    seconds = 0.05 if args.quick else args.seconds
    results = interleave(list(benches.values()), runs, seconds, log=lambda s: print(s, flush=True))
    rows = {name: summarize(ms) for name, ms in zip(benches, results, strict=True)}
    for name, row in rows.items():
        if name != base:
            add_ratio(row, rows[base])
    return rows


def measure(args: Args) -> dict[str, Any]:
    """Every row's rates, the first-step losses of each side, the GAE check; the report."""
    import torch

    require_torchrl()
    import tensordict
    import torchrl

    torch.set_num_threads(1)
    torch.distributions.Distribution.set_default_validate_args(False)  # as train.py
    learner = make_learner(args.quick)
    machine = machine_info()  # holds the load average at the start
    machine["versions"].update(torchrl=torchrl.__version__, tensordict=tensordict.__version__)
    config = dataclasses.asdict(args)
    if args.quick:
        config.update(runs=1, seconds=0.05)
    report: dict[str, Any] = {"machine": machine, "config": config, "update": [], "losses": {}}

    compile_seconds, compile_error = None, None
    for mb in (128, 256) if args.quick else args.minibatches:
        data = minibatch(learner.policy, mb, args.legal, args.seed + mb)
        start = copy.deepcopy(learner.policy.state_dict())
        benches: dict[str, Any] = {
            "ours": OursStep(learner, data),
            "torchrl (trunk twice)": TorchRLStep(learner, data, "twice"),
            "torchrl (trunk once)": TorchRLStep(learner, data, "once"),
        }
        if args.compile and compile_error is None:
            t0 = time.perf_counter()
            bench = TorchRLStep(learner, data, "once", compiled=True)
            try:
                bench.chunk()  # the compile
            except Exception as e:  # a failed compile is a finding: reported
                compile_error = f"{type(e).__name__}: " + " ".join(str(e).split("\n")[:2])
                print(f"  torch.compile of the loss failed: {compile_error}", flush=True)
            else:
                benches["torchrl (trunk once), compiled"] = bench
                compile_seconds = time.perf_counter() - t0
                print(f"  torch.compile of the loss: {compile_seconds:.0f} s", flush=True)
        # Each side's first step from the same weights: the losses must agree before any timing moves them.
        report["losses"][mb] = {name: b.losses() for name, b in benches.items()}
        print(f"minibatch {mb}:", flush=True)
        rows = timed_rows(benches, args, "ours")
        report["update"] += [{"minibatch": mb, "learner": name, **row} for name, row in rows.items()]
        learner.policy.load_state_dict(start)
    report["compile_seconds"], report["compile_error"] = compile_seconds, compile_error

    games, steps = (64, 8) if args.quick else (args.games, args.steps)
    r = rollout(games, steps, args.seed)
    gae = {
        "ours": OursGAE(learner, r),
        "torchrl generalized_advantage_estimate": TorchRLGAE(learner, r, vec=False),
        "torchrl vec_generalized_advantage_estimate": TorchRLGAE(learner, r, vec=True),
    }
    ours = gae["ours"].advantages()
    check = {}
    for name, b in list(gae.items())[1:]:
        theirs = b.advantages()
        check[name] = {
            "allclose_rtol_1e-4": bool(torch.allclose(theirs, ours, rtol=1e-4, atol=1e-5)),
            "max_abs_difference": float((theirs - ours).abs().max()),
        }
    print(f"GAE {games} x {steps}:", flush=True)
    rows = timed_rows(gae, args, "ours")
    report["gae"] = {"games": games, "steps": steps, "check": check, "rows": rows}
    report["load_average_at_end"] = loadavg()
    return report


def render(report: dict[str, Any]) -> str:
    """The results page: machine, the update table, the first-step losses, the GAE table and check."""
    cfg = report["config"]
    lines = [
        "## PPO pieces: ours against TorchRL's (issue 57)",
        "",
        *machine_lines(report["machine"], report["load_average_at_end"]),
        f"- settings: {cfg['runs']} interleaved runs of {cfg['seconds']:g} s per row, medians; fp32, one torch"
        " thread; train.py's default network (398->256->256, heads 116 and 1); 1 to"
        f" {cfg['legal']} legal actions per row" + ("; QUICK MODE (smoke test, numbers not meaningful)" if cfg["quick"] else ""),
        "",
        "### The minibatch step (loss, backward, gradient clipping, Adam): samples/s",
        "",
        "| minibatch | learner | samples/s | min-max | ratio to ours (wall / CPU / paired) |",
        "|---:|---|---:|---|---|",
    ]  # fmt: skip
    for row in report["update"]:
        ratio = (
            f"{row['ratio']:.2f}x / {row['cpu_ratio']:.2f}x / {row['median_paired_ratio']:.2f}x"
            if "ratio" in row
            else "1"
        )
        lines.append(
            f"| {row['minibatch']} | {row['learner']} | {fmt_rate(row['steps_per_s'])} | "
            f"{fmt_rate(row['min_steps_per_s'])}-{fmt_rate(row['max_steps_per_s'])} | {ratio} |"
        )
    if report["compile_seconds"] is not None:
        lines += ["", f"torch.compile of TorchRL's loss took {report['compile_seconds']:.0f} s (the last minibatch)."]
    if report.get("compile_error"):
        lines += ["", f"torch.compile of TorchRL's loss failed at its first call: `{report['compile_error']}`"]
    lines += [
        "",
        "First step of each learner from the same weights (the unscaled terms: clipped objective, value"
        " loss, entropy loss; then the total):",
        "",
        "| minibatch | learner | objective | value loss | entropy loss | total |",
        "|---:|---|---:|---:|---:|---:|",
    ]
    for mb, by_name in report["losses"].items():
        for name, x in by_name.items():
            lines.append(
                f"| {mb} | {name} | {x['objective']:.6f} | {x['critic']:.6f} | {x['entropy']:.6f} | {x['loss']:.6f} |"
            )
    g = report["gae"]
    lines += [
        "",
        f"### GAE over a rollout of {g['games']} games x {g['steps']} steps: samples/s",
        "",
        "| implementation | samples/s | ms per rollout | ratio to ours (wall / CPU) | equal to ours |",
        "|---|---:|---:|---|---|",
    ]
    for name, row in g["rows"].items():
        ms = 1e3 * g["games"] * g["steps"] / row["steps_per_s"]
        ratio = f"{row['ratio']:.2f}x / {row['cpu_ratio']:.2f}x" if "ratio" in row else "1"
        c = g["check"].get(name)
        same = ""
        if c is not None:
            verdict = "yes" if c["allclose_rtol_1e-4"] else "**no**"
            same = f"{verdict} (largest difference {c['max_abs_difference']:.1e})"
        lines.append(f"| {name} | {fmt_rate(row['steps_per_s'])} | {ms:.2f} | {ratio} | {same} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = tyro.cli(Args, args=argv)
    report = measure(args)
    text = render(report)
    print("\n" + text)
    write_report(args.results_dir, "ppo_library", [text], report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
