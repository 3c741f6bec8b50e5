"""``PPOAgent``: a trained sb3-contrib ``MaskablePPO`` policy as a batch agent, and the networks it uses.

Loading needs ``torch`` and ``sb3_contrib`` (the ``train`` extra)."""

from __future__ import annotations

import copy
import os
import warnings
from collections.abc import Sequence
from typing import Any, Literal, get_args

import numpy as np
import torch
from gymnasium import spaces
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn

from uno_env.observation import OBS_PRESENT
from uno_env.rules import MAX_PLAYERS, UnoRules, check_num_players
from uno_env.spaces import HISTORY_OFFSETS

from .model_card import OVERRIDE, card_path_of, check_fits, read_card

__all__ = [
    "ACTIVATIONS",
    "POLICY_EXTRACTORS",
    "Activation",
    "POLICY_HISTORY_FORMS",
    "PPOAgent",
    "PolicyKind",
    "UnoFeatures",
    "UnoMaskablePolicy",
    "UnoPrivilegedPolicy",
    "UnoSequenceFeatures",
    "load_model",
    "policy_kind",
]

# The entries of a history=K env's Dict observation, in the order UnoFeatures joins them.
HISTORY_KEYS = ("observation", "history", "history_counts")

Activation = Literal["relu", "tanh", "silu"]
"""The networks' activations (``train.py --activation``)."""
ACTIVATIONS: dict[str, type[nn.Module]] = dict(zip(get_args(Activation), (nn.ReLU, nn.Tanh, nn.SiLU), strict=True))


def _checked_trunk(activation: str, hidden: Any, scale_cap: float) -> list[int]:
    """The trunk's widths as ints, after refusing a bad activation, width or scale cap."""
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, got {activation!r}")
    widths = [int(h) for h in hidden]
    if any(h < 1 for h in widths):
        raise ValueError(f"hidden layer widths must be positive integers, got {widths!r}")
    if not scale_cap >= 1.0:
        raise ValueError(f"scale_cap must be a number >= 1, got {scale_cap!r}")
    return widths


class UnoFeatures(BaseFeaturesExtractor):
    """Observation scaled to about [0, 1] per index, then an MLP trunk (shared by actor and critic).

    Index i is divided by ``clip(high[i], 1, scale_cap)`` (unbounded entries by ``scale_cap``); the
    scale is a buffer saved with the weights. ``hidden=()`` passes the scaled observation through;
    ``inputs`` reads only the first columns (0: all). Over a ``history=K`` Dict space, the
    ``HISTORY_KEYS`` entries are flattened and joined first.
    """

    def __init__(
        self,
        observation_space: spaces.Box | spaces.Dict,
        hidden: Sequence[int] = (256, 256),
        activation: str = "relu",
        scale_cap: float = 10.0,
        inputs: int = 0,
    ) -> None:
        hidden = _checked_trunk(activation, hidden, scale_cap)
        self.keys: tuple[str, ...] = ()
        if isinstance(observation_space, spaces.Dict):
            if set(observation_space.spaces) != set(HISTORY_KEYS) or inputs:
                raise ValueError(
                    f"a Dict observation space must hold exactly {HISTORY_KEYS} (an env's history=K), with inputs=0; "
                    f"got keys {sorted(observation_space.spaces)} and inputs={inputs!r}"
                )
            boxes: list[Any] = [observation_space[k] for k in HISTORY_KEYS]
            parts = [np.asarray(box.high, np.float64).reshape(-1) for box in boxes]
            # The history's unbounded entries are counts that grow with the round: divided by the cap.
            parts[1:] = [np.where(np.isfinite(p), p, scale_cap) for p in parts[1:]]
            full_high = np.concatenate(parts)
        else:
            full_high = np.asarray(observation_space.high, np.float64).reshape(-1)
        size = full_high.size
        if not isinstance(inputs, int) or not 0 <= inputs <= size:
            raise ValueError(f"inputs must be an integer in 0..{size} (0: every column), got {inputs!r}")
        size = inputs or size
        super().__init__(observation_space, hidden[-1] if hidden else size)
        if isinstance(observation_space, spaces.Dict):
            self.keys = HISTORY_KEYS
        self.inputs = size
        self.register_buffer("scale", _inverse_bounds(full_high[:size], scale_cap))
        self.trunk = _trunk(size, hidden, activation)

    scale: torch.Tensor  # a registered buffer

    def forward(self, observations: torch.Tensor | dict[str, torch.Tensor]) -> torch.Tensor:
        """Scaled observation through the trunk."""
        if isinstance(observations, dict):
            flat = torch.cat([observations[k].flatten(1) for k in self.keys], dim=1)
            return self.trunk(flat * self.scale)
        return self.trunk(observations.flatten(1)[:, : self.inputs] * self.scale)


def _inverse_bounds(high: np.ndarray, scale_cap: float) -> torch.Tensor:
    """Per index ``1 / clip(high, 1, scale_cap)`` (1 where ``high`` is not finite), float32."""
    return torch.as_tensor(np.where(np.isfinite(high), 1.0 / np.clip(high, 1.0, scale_cap), 1.0), dtype=torch.float32)


def _trunk(width: int, hidden: Sequence[int], activation: str) -> nn.Sequential:
    """Linear layers of widths ``hidden``, each followed by ``activation``."""
    layers: list[nn.Module] = []
    for h in hidden:
        layers += [nn.Linear(width, h), ACTIVATIONS[activation]()]
        width = h
    return nn.Sequential(*layers)


class _RowEvents(nn.Module):
    """The float history rows (``Engine.history``) as vectors; a row whose ``present`` is 0 is padding."""

    def __init__(self, box: spaces.Box, width: int, scale_cap: float) -> None:
        super().__init__()
        high = np.asarray(box.high, np.float64)[0]
        # The unbounded column (an event's ``number``) is divided by the cap, as UnoFeatures does.
        self.register_buffer("scale", _inverse_bounds(np.where(np.isfinite(high), high, scale_cap), scale_cap))
        self.project = nn.Linear(high.size, width)

    scale: torch.Tensor

    def forward(self, rows: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(vectors [B, K, width], padding [B, K] bool)``."""
        return self.project(rows * self.scale), rows[..., HISTORY_OFFSETS["present"]] < 0.5


class _TokenEvents(nn.Module):
    """The history's tokens (``Engine.history_tokens``) as vectors, one embedding per field, summed.

    A row whose ``kind`` is 0 is padding."""

    # One table for every field, one summed lookup (embedding_bag): its backward costs the CPU
    # less than one lookup per field.

    def __init__(self, box: spaces.Box, width: int, scale_cap: float) -> None:
        super().__init__()
        vocab = np.asarray(box.high, np.int64)[0] + 1  # every field's values are 0..high
        self.register_buffer("offsets", torch.as_tensor(np.cumsum(vocab) - vocab, dtype=torch.long))
        self.table = nn.Embedding(int(vocab.sum()), width)

    offsets: torch.Tensor

    def forward(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(vectors [B, K, width], padding [B, K] bool)``."""
        t = tokens.long()  # a rollout buffer keeps them as floats
        flat = (t + self.offsets).reshape(-1, t.shape[-1])
        vectors = nn.functional.embedding_bag(flat, self.table.weight, mode="sum")
        return vectors.reshape(*t.shape[:-1], -1), t[..., 0] == 0


# The Dict entry holding the events, and how each form of it is embedded: the one place that
# knows the history's encodings (``uno_env.spaces.history_spaces``' forms: rows, tokens).
EVENT_ENCODERS: dict[str, type[nn.Module]] = {"history": _RowEvents, "history_tokens": _TokenEvents}
TOKEN_KEYS = ("observation", "history_tokens")


class UnoSequenceFeatures(BaseFeaturesExtractor):
    """The observation's MLP beside a transformer encoder over the last K public events (``--policy seq``).

    ``hidden``, ``activation``, ``scale_cap`` are ``UnoFeatures``'; ``width`` (a multiple of
    ``heads``), ``layers``, ``heads`` the encoder's. The features are ``hidden[-1] + width`` values.
    """

    # No dropout, so a rollout's and the update's log-probabilities agree; the summary token is
    # never masked, so a round with no event yet needs no special case.

    def __init__(
        self,
        observation_space: spaces.Dict,
        hidden: Sequence[int] = (256, 256),
        activation: str = "relu",
        scale_cap: float = 10.0,
        width: int = 64,
        layers: int = 1,
        heads: int = 4,
    ) -> None:
        keys = sorted(observation_space.spaces) if isinstance(observation_space, spaces.Dict) else []
        events = [k for k in EVENT_ENCODERS if k in keys]
        if not events or "observation" not in keys:
            raise ValueError(
                "the sequence policy reads the public history: its observation space must be an env's history=K "
                f"Dict (train.py --history K) with 'observation' and one of {sorted(EVENT_ENCODERS)}, got "
                f"{f'the keys {keys}' if keys else type(observation_space).__name__}"
            )
        hidden = _checked_trunk(activation, hidden, scale_cap)
        if not (width >= 1 and heads >= 1 and layers >= 1 and width % heads == 0):
            raise ValueError(
                f"width, layers and heads must be positive with width a multiple of heads, got "
                f"width={width!r}, layers={layers!r}, heads={heads!r}"
            )
        self.events_key = events[0]
        self.flat_keys = tuple(k for k in ("observation", "history_counts") if k in keys)
        highs = [np.asarray(observation_space[k].high, np.float64).reshape(-1) for k in self.flat_keys]  # type: ignore[attr-defined]
        highs[1:] = [np.where(np.isfinite(h), h, scale_cap) for h in highs[1:]]  # counts grow with the round
        flat_high = np.concatenate(highs)
        box = observation_space[self.events_key]
        history_length = int(box.shape[0])  # type: ignore[index]
        super().__init__(observation_space, (hidden[-1] if hidden else flat_high.size) + int(width))
        self.register_buffer("scale", _inverse_bounds(flat_high, scale_cap))
        self.trunk = _trunk(flat_high.size, hidden, activation)
        self.embed = EVENT_ENCODERS[self.events_key](box, width, scale_cap)
        self.position = nn.Parameter(torch.zeros(1, history_length, width))
        self.summary = nn.Parameter(torch.zeros(1, 1, width))
        nn.init.normal_(self.position, std=0.02)
        nn.init.normal_(self.summary, std=0.02)
        layer = nn.TransformerEncoderLayer(
            width, heads, dim_feedforward=2 * width, dropout=0.0, batch_first=True, norm_first=True
        )
        self.encoder = nn.TransformerEncoder(layer, layers, norm=nn.LayerNorm(width), enable_nested_tensor=False)

    scale: torch.Tensor

    def forward(self, observations: dict[str, torch.Tensor]) -> torch.Tensor:
        """The trunk's output joined to the encoder's summary token."""
        flat = torch.cat([observations[k].flatten(1) for k in self.flat_keys], dim=1)
        vectors, padding = self.embed(observations[self.events_key])
        batch = vectors.shape[0]
        tokens = torch.cat([self.summary.expand(batch, -1, -1), vectors + self.position], dim=1)
        padding = torch.cat([padding.new_zeros(batch, 1), padding], dim=1)
        read = self.encoder(tokens, src_key_padding_mask=padding)[:, 0]
        return torch.cat([self.trunk(flat * self.scale), read], dim=1)


class UnoMaskablePolicy(MaskableActorCriticPolicy):
    """``MaskableActorCriticPolicy`` whose ``evaluate_actions`` skips the distribution objects, same numbers."""

    def heads(self, obs: Any) -> tuple[torch.Tensor, torch.Tensor]:
        """The unmasked action logits [B, A] and the values [B, 1]: one forward pass of actor and critic."""
        features = self.extract_features(obs)
        if self.share_features_extractor:
            latent_pi, latent_vf = self.mlp_extractor(features)
        else:
            latent_pi = self.mlp_extractor.forward_actor(features[0])
            latent_vf = self.mlp_extractor.forward_critic(features[1])
        return self.action_net(latent_pi), self.value_net(latent_vf)

    def evaluate_actions(
        self, obs: torch.Tensor, actions: torch.Tensor, action_masks: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Values, log-probabilities of ``actions`` and entropies under the masked policy."""
        logits, values = self.heads(obs)
        if action_masks is not None:
            legal = torch.as_tensor(action_masks, dtype=torch.bool, device=logits.device).reshape(logits.shape)
            logits = logits.masked_fill(~legal, -1e8)
        else:
            legal = None
        log_p = torch.log_softmax(logits, dim=-1)
        log_prob = log_p.gather(1, actions.long().reshape(-1, 1)).reshape(-1)
        p_log_p = log_p.exp() * log_p
        if legal is not None:
            p_log_p = p_log_p.masked_fill(~legal, 0.0)
        return values, log_prob, -p_log_p.sum(-1)


class UnoPrivilegedPolicy(UnoMaskablePolicy):
    """A privileged critic (``UnoSB3VecEnv(privileged=True)``): the actor reads the first ``actor_inputs`` columns."""

    # Separate trunks: a shared one would carry hidden cards into the policy.

    def __init__(self, *args: Any, actor_inputs: int, **kwargs: Any) -> None:
        # Set before the base class builds the extractors (make_features_extractor reads it).
        self.actor_inputs = int(actor_inputs)
        self._extractors_made = 0
        kwargs["share_features_extractor"] = False
        super().__init__(*args, **kwargs)

    def make_features_extractor(self) -> BaseFeaturesExtractor:
        """The actor's extractor first (``ActorCriticPolicy`` builds it first), then the critic's."""
        kwargs = dict(self.features_extractor_kwargs)
        if self._extractors_made == 0:
            kwargs["inputs"] = self.actor_inputs
        self._extractors_made += 1
        return self.features_extractor_class(self.observation_space, **kwargs)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data.update(actor_inputs=self.actor_inputs)
        data.pop("share_features_extractor", None)
        return data


PolicyKind = Literal["mlp", "seq"]
"""The networks ``train.py --policy`` builds: ``mlp`` (``UnoFeatures``) or ``seq`` (``UnoSequenceFeatures``)."""
POLICY_EXTRACTORS: dict[str, type[BaseFeaturesExtractor]] = {"mlp": UnoFeatures, "seq": UnoSequenceFeatures}
# The history form each network reads (an env's ``history_form``): the transformer embeds the
# tokens; the MLP reads float rows (small integers joined as numbers would mean nothing to it).
POLICY_HISTORY_FORMS: dict[str, str] = {"mlp": "rows", "seq": "tokens"}


def policy_kind(policy: Any) -> str:
    """The ``PolicyKind`` of a policy, read from its actor's features extractor."""
    extractor = getattr(policy, "pi_features_extractor", None)
    return "seq" if isinstance(extractor, UnoSequenceFeatures) else "mlp"


def model_file(path: str | os.PathLike) -> str:
    """The saved model's file: ``path``, or ``path.zip`` as ``MaskablePPO.load`` completes it; ValueError
    when there is neither."""
    p = os.fspath(path)
    if not os.path.isfile(p) and os.path.isfile(p + ".zip"):
        p += ".zip"
    if not os.path.isfile(p):
        raise ValueError(f"no saved model at {os.fspath(path)!r} (expected a MaskablePPO .zip written by train.py)")
    return p


def load_model(path: str | os.PathLike, device: str = "cpu") -> Any:
    """A saved ``MaskablePPO`` (``.zip``), else a ValueError saying what was wrong."""
    from sb3_contrib import MaskablePPO

    p = model_file(path)
    try:
        return MaskablePPO.load(p, device=device)
    except Exception as exc:  # a zip of something else, a truncated file, a foreign pickle
        raise ValueError(f"{p!r} is not a loadable MaskablePPO model: {type(exc).__name__}: {exc}") from exc


class PPOAgent:
    """A ``MaskablePPO`` policy as an agent: ``act(observation [B, D], action_mask [B, 116], rng) -> int64 [B]``.

    ``model``: a ``.zip`` path, a ``MaskablePPO`` or its policy (used live). ``deterministic``: the
    most likely legal action, else sampled with ``rng``. ``rules`` and ``num_players`` are checked
    against the model's card (``ValueError``), unless ``allow_other_table``; with ``num_players``
    set, ``act`` refuses a table of another size. A row with no legal action gets ``-1``.
    """

    def __init__(
        self,
        model: Any,
        deterministic: bool = False,
        name: str | None = None,
        device: str = "cpu",
        num_players: int | None = None,
        rules: UnoRules | None = None,
        allow_other_table: bool = False,
    ) -> None:
        if num_players is not None:
            check_num_players(num_players)
        card = None
        if isinstance(model, (str, os.PathLike)):
            default_name = os.path.splitext(os.path.basename(os.fspath(model)))[0] or "ppo"
            path = model_file(model)
            card = read_card(path)
            if card is not None and card.get("name") != name:  # messages name the file, or the shipped model
                card = {**card, "name": path}
            if card is None and not allow_other_table:
                warnings.warn(
                    f"{path} has no card ({card_path_of(path)}, which train.py writes beside every model it "
                    f"saves): the rules and table size it was trained for cannot be checked",
                    UserWarning,
                    stacklevel=2,
                )
            elif card is not None and not allow_other_table:
                # before the load: a refusal costs no torch work
                check_fits(card, rules, num_players)
            model = load_model(path, device=device)
        else:
            default_name = "ppo"
        policy = getattr(model, "policy", model)
        if not (hasattr(policy, "action_net") and hasattr(policy, "mlp_extractor")):
            raise ValueError(
                f"model must be a path to a saved MaskablePPO, a MaskablePPO or its policy; got {type(model).__name__}"
            )
        self.policy = policy
        self.deterministic = bool(deterministic)
        self.name = name or default_name
        space = policy.observation_space
        # The history's length and form come from the saved space, so a model loads without being told them.
        self.history_length = 0
        self.history_form = "rows"
        self._history_shapes: dict[str, tuple[int, ...]] = {}
        if isinstance(space, spaces.Dict):
            events = [k for k in EVENT_ENCODERS if k in space.spaces]
            if not events or "observation" not in space.spaces:
                raise ValueError(
                    f"{self.name}: a Dict observation space must be an env's history=K space {HISTORY_KEYS} "
                    f"(or its token form, {TOKEN_KEYS}), got keys {sorted(space.spaces)}"
                )
            self.history_length = int(space[events[0]].shape[0])  # type: ignore[index]
            self.history_form = "tokens" if events[0] == "history_tokens" else "rows"
            self._history_shapes = {k: tuple(v.shape or ()) for k, v in space.spaces.items() if k != "observation"}
            space = space["observation"]
        # A privileged policy's space also holds the critic's hidden state: the actor reads less.
        self.obs_size = int(getattr(policy, "actor_inputs", 0) or np.prod(space.shape))
        self.card = card
        self.policy_kind = policy_kind(policy)  # "seq": a transformer reads the history (train.py --policy seq)
        if card is not None and card["observation_size"] != self.obs_size:
            raise ValueError(
                f"{self.name}: the model reads {self.obs_size} values, its card says {card['observation_size']}: "
                f"the card ({card_path_of(path)}) does not belong to this model"
            )
        if card is not None and num_players is None and not allow_other_table:
            num_players = int(card["num_players"])  # act refuses another table size
        self.num_players = None if allow_other_table else num_players

    def check_table(self, rules: UnoRules, num_players: int) -> None:
        """``ValueError`` unless the model's card says it was trained for ``rules`` and ``num_players``
        (``agents.model_card.check_fits``); a model without a card passes."""
        if self.card is not None:
            check_fits(self.card, rules, num_players)

    @classmethod
    def frozen(cls, policy: Any, deterministic: bool = False, name: str = "ppo_snapshot") -> PPOAgent:
        """An agent over a deep copy of ``policy`` (training the original leaves it unchanged)."""
        snapshot = copy.deepcopy(policy)
        snapshot.set_training_mode(False)
        for p in snapshot.parameters():
            p.requires_grad_(False)
        return cls(snapshot, deterministic=deterministic, name=name)

    def load_state(self, state_dict: dict[str, torch.Tensor]) -> None:
        """Replace the weights (a ``policy.state_dict()`` of the same architecture)."""
        self.policy.load_state_dict(state_dict)

    def logits(self, observation: Any) -> np.ndarray:
        """The policy's unmasked action logits, float32 [B, 116]."""
        obs = self._checked(self._observation(observation))
        policy = self.policy
        with torch.no_grad():
            t: Any = torch.as_tensor(obs, device=policy.device)
            if self.history_length:
                t = {"observation": t}
                for key, shape in self._history_shapes.items():
                    part = np.asarray(observation[key], dtype=np.float32)
                    if part.shape != (obs.shape[0], *shape):
                        raise ValueError(
                            f"{self.name}: observation[{key!r}] must be [B, {', '.join(map(str, shape))}] "
                            f"(this policy reads history={self.history_length}), got shape {part.shape}"
                        )
                    t[key] = torch.as_tensor(part, device=policy.device)
            features = policy.pi_features_extractor(t)  # never the critic's (it may read hidden state)
            latent = policy.mlp_extractor.forward_actor(features)
            return policy.action_net(latent).cpu().numpy()

    def _checked(self, observation: np.ndarray) -> np.ndarray:
        obs = np.asarray(observation, dtype=np.float32)
        if obs.ndim != 2 or obs.shape[1] != self.obs_size:
            raise ValueError(
                f"{self.name}: observation must be [B, {self.obs_size}] (the size this policy was trained on), "
                f"got shape {obs.shape}"
            )
        return obs

    def act(
        self, observation: np.ndarray | dict[str, np.ndarray], action_mask: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        """One legal action per row (int64 [B])."""
        mask = np.asarray(action_mask).astype(bool, copy=False)
        flat = self._observation(observation)
        if mask.ndim != 2 or mask.shape[0] != np.shape(flat)[0]:
            raise ValueError(
                f"{self.name}: action_mask must be [B, A] with the observation's B, got {mask.shape} "
                f"for observation {np.shape(flat)}"
            )
        if mask.shape[0] == 0:
            return np.zeros(0, np.int64)
        self._check_table_size(self._checked(flat))
        scores = self.logits(observation).astype(np.float64)
        if scores.shape[1] != mask.shape[1]:
            raise ValueError(f"{self.name}: action_mask has {mask.shape[1]} actions, the policy {scores.shape[1]}")
        if not self.deterministic:
            # Gumbel-max: argmax(logits + Gumbel noise) is a sample of softmax(logits); the
            # noise comes from the caller's rng, so the agent is reproducible like the others.
            scores += rng.gumbel(size=scores.shape)
        scores[~mask] = -np.inf
        out = scores.argmax(axis=1).astype(np.int64)
        out[~mask.any(axis=1)] = -1
        return out

    def _observation(self, observation: Any) -> Any:
        """The observation array: a history policy's is the dict's ``"observation"``, checked to be one."""
        if not self.history_length:
            return observation
        wanted = {"observation", *self._history_shapes}
        if not isinstance(observation, dict) or not wanted <= set(observation):
            raise ValueError(
                f"{self.name}: this policy reads history={self.history_length}; its observation must be the dict "
                f"{sorted(wanted)} of an env's history={self.history_length} (the arena and the envs' opponents "
                f"build it from the engine), got "
                f"{f'the keys {sorted(observation)}' if isinstance(observation, dict) else type(observation).__name__}"
            )
        return observation["observation"]

    def _check_table_size(self, observation: np.ndarray) -> None:
        if self.num_players is None:
            return
        seats = np.asarray(observation)[:, OBS_PRESENT : OBS_PRESENT + MAX_PLAYERS] > 0.5
        sizes = np.unique(seats.sum(axis=1))
        if sizes.size and (sizes != self.num_players).any():
            raise ValueError(
                f"{self.name}: trained for {self.num_players} players, asked to play at a table of "
                f"{int(sizes[sizes != self.num_players][0])} (the observation's seat_present field); "
                f"use a model trained for that table size, or {OVERRIDE}"
            )

    def __repr__(self) -> str:
        history = (
            f", history_length={self.history_length}, history_form={self.history_form!r}" if self.history_length else ""
        )
        return f"PPOAgent(name={self.name!r}, deterministic={self.deterministic}{history})"
