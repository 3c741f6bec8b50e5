"""``ChatAgent``: a language model at the table, through any OpenAI-compatible chat endpoint.

A local vLLM, llama.cpp or Ollama server, or a hosted one: each decision POSTs the seat's
prompt (``uno_env.text.build_prompt``) to ``<base_url>/chat/completions`` and parses the reply
(``uno_env.text.parse_reply``). The registry builds it from ``chat:MODEL``
(``agents.registry``), so ``evaluate.py`` and the ladder rate a model like any agent.

| setting | default | meaning |
|---|---|---|
| ``model`` | (required) | the ``model`` field of the request |
| ``base_url`` | ``$UNO_CHAT_BASE_URL`` | the endpoint's base, with or without its ``/v1`` (``http://127.0.0.1:8000/v1``); the only address ever called (proxies from the environment are ignored) |
| ``api_key`` | ``$UNO_CHAT_API_KEY`` or none | sent as ``Authorization: Bearer KEY`` |
| ``max_attempts`` | 3 | requests per decision: a bad reply (no legal move named) is sent back to the model with the parser's message, a failed request (timeout, HTTP error, malformed JSON) is tried again; after the last, a counted fallback |
| ``fallback`` | ``"random"`` | the move after ``max_attempts`` failures: ``"random"`` (a legal move drawn with the table's seeded generator) or ``"first"`` (the first legal move) |
| ``timeout`` | 60.0 | seconds per request |
| ``temperature``, ``max_tokens`` | none | sent when given |
| ``history`` | 40 | events of the round shown when the table gives engine access (``act_in``) |
| ``transcript_dir`` | none | also append each decision to ``<dir>/game-<n>.jsonl`` as it is made |

Through ``act`` (observations only) the prompt holds the seat's view without the round's
events. Tables give it the engine (``act_in``: ``fair_engine_access``, read by
``uno_env.table.Table``), where it reads the observation, the mask and the round's events as its
seat saw them (``Engine.history_events``), and nothing hidden; its transcripts are then per game.

``stats()`` gives the decisions, requests, bad replies, failed requests, fallbacks, tokens
and seconds, in total and per decision; ``transcripts`` each game's decisions (prompt, the
model's replies, the parser's messages, the move).
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from typing import Any

import numpy as np

from uno_env import Engine
from uno_env.policy import sample_legal
from uno_env.rules import parse_rules
from uno_env.text import BadReply, Move, build_prompt, legal_moves, parse_reply, refusal, round_events

__all__ = ["BASE_URL_VARIABLE", "API_KEY_VARIABLE", "ChatAgent", "ChatError"]

BASE_URL_VARIABLE = "UNO_CHAT_BASE_URL"
API_KEY_VARIABLE = "UNO_CHAT_API_KEY"
FALLBACKS = ("random", "first")

SYSTEM_PROMPT = (
    "You are playing a game of UNO. Each message shows your seat's view of the table and numbers your legal "
    "moves. Answer with one move: its number or its name, nothing else."
)


class ChatError(Exception):
    """A request that gave no reply text: the endpoint failed, timed out or answered malformed JSON."""


def chat_url(base_url: str) -> str:
    """The chat completions address of an OpenAI-compatible base URL, with or without its ``/v1``."""
    base = base_url.rstrip("/")
    if not base.startswith(("http://", "https://")):
        raise ValueError(f"the chat base URL must start with http:// or https://, got {base_url!r}")
    return base + ("/chat/completions" if base.endswith("/v1") else "/v1/chat/completions")


class ChatAgent:
    """A language model behind an OpenAI-compatible chat endpoint (module table)."""

    fair_engine_access = True  # act_in reads only the seat's observation, mask and redacted events

    def __init__(
        self,
        model: str,
        rules: Any = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        max_attempts: int = 3,
        fallback: str = "random",
        timeout: float = 60.0,
        temperature: float | None = None,
        max_tokens: int | None = None,
        history: int = 40,
        transcript_dir: str | None = None,
        name: str | None = None,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ValueError(f"model must name the endpoint's model (chat:MODEL), got {model!r}")
        base_url = base_url if base_url is not None else os.environ.get(BASE_URL_VARIABLE)
        if not base_url:
            raise ValueError(
                f"a chat agent needs the endpoint's base URL: pass base_url or set {BASE_URL_VARIABLE} "
                "(e.g. http://127.0.0.1:8000/v1)"
            )
        if not isinstance(max_attempts, int) or max_attempts < 1:
            raise ValueError(f"max_attempts must be an integer >= 1, got {max_attempts!r}")
        if fallback not in FALLBACKS:
            raise ValueError(f"fallback must be one of {FALLBACKS}, got {fallback!r}")
        if not timeout > 0:
            raise ValueError(f"timeout must be > 0 seconds, got {timeout!r}")
        if not isinstance(history, int) or history < 0:
            raise ValueError(f"history must be an integer >= 0 (events shown), got {history!r}")
        self.model = model.strip()
        self.rules = parse_rules(rules)
        self.url = chat_url(base_url)
        self.api_key = api_key if api_key is not None else os.environ.get(API_KEY_VARIABLE) or None
        self.max_attempts, self.fallback, self.timeout = max_attempts, fallback, float(timeout)
        self.temperature, self.max_tokens = temperature, max_tokens
        self.history = history
        self.transcript_dir = transcript_dir
        self.name = name or f"chat:{self.model}"
        # No proxy from the environment: the one address called is the one given.
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        self.transcripts: list[list[dict[str, Any]]] = []
        self._games: dict[tuple[int, int], tuple[int, tuple[int, int]]] = {}  # (engine, row) -> (game, clock)
        self._per_decision: list[tuple[int, float]] = []  # (tokens, seconds)
        self._counts = dict.fromkeys(
            (
                "decisions",
                "requests",
                "bad_replies",
                "failed_requests",
                "fallbacks",
                "prompt_tokens",
                "completion_tokens",
            ),
            0,
        )
        self._seconds = 0.0

    # --- the Agent protocol -----------------------------------------------------------------

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One move per row, asked row by row from the observation alone (no round events)."""
        out = np.empty(len(action_mask), np.int64)
        for r in range(len(action_mask)):
            prompt = build_prompt(observation[r], action_mask[r], rules=self.rules)
            out[r] = self._decide(prompt, legal_moves(action_mask[r]), action_mask[r], rng, None)
        return out

    def act_in(self, engine: Engine, i: int, rng: np.random.Generator) -> int:
        """The move of the player to act in game ``i``, with the round's events as its seat saw them."""
        seat = int(engine.current_player[i])
        n = engine.num_players
        mask = engine.legal_mask[i]
        prompt = build_prompt(
            engine.observe(seat, games=[i])[i],
            mask,
            rules=engine.rules,
            seat=seat,
            num_players=n,
            events=round_events(engine, i, seat, self.history) if self.history else None,
        )
        return self._decide(prompt, legal_moves(mask, seat, n), mask, rng, self._game_of(engine, i))

    def _game_of(self, engine: Engine, i: int) -> int:
        """The transcript of the game in row ``i``: a new one when the row's round restarted."""
        state = engine.game_state(i)  # only its public counters: rounds finished, actions this round
        clock = (int(state["round"]), int(state["turn"]))
        key = (id(engine), int(i))
        known = self._games.get(key)
        if known is not None and known[1] <= clock:
            self._games[key] = (known[0], clock)
            return known[0]
        self.transcripts.append([])
        game = len(self.transcripts) - 1
        self._games[key] = (game, clock)
        return game

    # --- one decision -------------------------------------------------------------------------

    def _decide(
        self, prompt: str, moves: list[Move], mask: np.ndarray, rng: np.random.Generator, game: int | None
    ) -> int:
        start = time.perf_counter()
        messages: list[dict[str, str]] = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": prompt},
        ]
        tokens = 0
        record: dict[str, Any] = {"prompt": prompt, "attempts": []}
        action: int | None = None
        for _ in range(self.max_attempts):
            self._counts["requests"] += 1
            try:
                reply, used = self._ask(messages)
            except ChatError as exc:
                self._counts["failed_requests"] += 1
                record["attempts"].append({"error": str(exc)})
                continue
            tokens += used
            try:
                action = parse_reply(reply, moves)
            except BadReply as exc:
                self._counts["bad_replies"] += 1
                record["attempts"].append({"reply": reply, "refused": str(exc)})
                messages += [
                    {"role": "assistant", "content": reply},
                    {"role": "user", "content": refusal(exc)},
                ]
                continue
            record["attempts"].append({"reply": reply})
            break
        if action is None:
            self._counts["fallbacks"] += 1
            action = moves[0].action if self.fallback == "first" else int(sample_legal(mask[None], rng)[0])
            record["fallback"] = True
        seconds = time.perf_counter() - start
        self._counts["decisions"] += 1
        self._seconds += seconds
        self._per_decision.append((tokens, seconds))
        record.update(action=action, tokens=tokens, seconds=seconds)
        if game is None:
            if not self.transcripts:
                self.transcripts.append([])  # asked without the engine: one transcript for every decision
            game = len(self.transcripts) - 1
        self.transcripts[game].append(record)
        if self.transcript_dir:
            os.makedirs(self.transcript_dir, exist_ok=True)
            with open(os.path.join(self.transcript_dir, f"game-{game}.jsonl"), "a") as f:
                f.write(json.dumps(record) + "\n")
        return action

    def _ask(self, messages: list[dict[str, str]]) -> tuple[str, int]:
        """The model's reply to ``messages`` and the tokens the request used."""
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(self.url, json.dumps(body).encode(), headers, method="POST")
        try:
            with self._opener.open(request, timeout=self.timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            raise ChatError(f"HTTP {exc.code} from {self.url}: {exc.read()[:200]!r}") from exc
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            raise ChatError(f"no answer from {self.url}: {exc}") from exc
        try:
            data = json.loads(raw)
            reply = data["choices"][0]["message"]["content"]
            if not isinstance(reply, str):
                raise TypeError(f"content is {type(reply).__name__}")
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise ChatError(f"malformed answer from {self.url} ({exc}): {raw[:200]!r}") from exc
        usage = data.get("usage") or {}
        prompt_tokens = int(usage.get("prompt_tokens") or 0)
        completion_tokens = int(usage.get("completion_tokens") or 0)
        self._counts["prompt_tokens"] += prompt_tokens
        self._counts["completion_tokens"] += completion_tokens
        return reply, prompt_tokens + completion_tokens

    # --- results ------------------------------------------------------------------------------

    def stats(self) -> dict[str, Any]:
        """Counts and totals so far, and tokens and seconds per decision (mean and the list)."""
        n = max(self._counts["decisions"], 1)
        tokens = self._counts["prompt_tokens"] + self._counts["completion_tokens"]
        return {
            **self._counts,
            "tokens": tokens,
            "seconds": self._seconds,
            "tokens_per_decision": tokens / n,
            "seconds_per_decision": self._seconds / n,
            "per_decision": [{"tokens": t, "seconds": s} for t, s in self._per_decision],
        }
