"""``ChatAgent``: a language model at the table, through any OpenAI-compatible chat endpoint (docs/llm.md)."""

from __future__ import annotations

import email.utils
import http.client
import json
import math
import os
import re
import socket
import threading
import time
import urllib.parse
import weakref
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from uno_env import Engine
from uno_env.actions import action_name
from uno_env.checks import is_int
from uno_env.policy import sample_legal
from uno_env.rules import UnoRules
from uno_env.text import (
    MAX_REPLY_CHARS,
    BadReply,
    Move,
    build_prompt,
    legal_moves,
    parse_reply,
    refusal,
    round_window,
    split_reasoning,
)

__all__ = ["BASE_URL_VARIABLE", "API_KEY_VARIABLE", "ChatAgent", "ChatError", "ChatFailure", "ChatSettings"]

BASE_URL_VARIABLE = "UNO_CHAT_BASE_URL"
API_KEY_VARIABLE = "UNO_CHAT_API_KEY"
FALLBACKS = ("random", "first")
RETRY_STATUSES = (429, 500, 502, 503, 504)
MAX_ANSWER_BYTES = 1 << 20
"""the default largest answer read from the endpoint (``max_answer_bytes``): a longer one is cut and refused"""
TRANSCRIPT_CHARS = 20_000
"""the characters of each reply and reasoning a transcript keeps (the rest counted, not kept)"""
_READ = 1 << 16  # bytes asked of the socket at a time, so that the deadline is checked between reads
_sleep = time.sleep  # the wait before a retry (tests read the waits asked for)

SYSTEM_PROMPT = (
    "You are playing a game of UNO. Each message states the rules, shows your seat's view of the table and "
    "says how to name your move. Answer with one move; if you reason first, end with the move alone on the last line."
)

COUNTS = (
    "decisions",
    "requests",
    "bad_replies",
    "failed_requests",
    "fallbacks",
    "prompt_tokens",
    "completion_tokens",
)


class ChatError(Exception):
    """A request that gave no reply text: the endpoint failed, timed out or answered malformed JSON."""

    def __init__(self, message: str, wait: float | None = None) -> None:
        super().__init__(message)
        self.wait = wait  # the answer's Retry-After in seconds, when it gave one


class ChatFailure(RuntimeError):
    """The endpoint or the model failed past a stated threshold: the run stops instead of rating fallbacks."""


def chat_url(base_url: str) -> str:
    """The chat completions address of an OpenAI-compatible base URL, with or without its ``/v1``."""
    base = base_url.rstrip("/")
    if not base.startswith(("http://", "https://")):
        raise ValueError(f"the chat base URL must start with http:// or https://, got {base_url!r}")
    return base + ("/chat/completions" if base.endswith("/v1") else "/v1/chat/completions")


def retry_after(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (seconds or an HTTP date); None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


ENDPOINT_NAME = re.compile(r"[A-Za-z_][\w-]*")
"""an endpoint's name, as ``chat:MODEL@NAME`` writes it"""


def _count(value: Any, least: int) -> bool:
    return is_int(value) and value >= least


def _seconds(value: Any, least: float = 0.0, open_low: bool = False) -> bool:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not value < math.inf:
        return False
    return value > least if open_low else value >= least


def _check_cap(name: str, value: Any) -> None:
    if value is not None and not _count(value, 1):
        raise ValueError(f"{name} must be an integer >= 1 or None (no cap), got {value!r}")


def _check_pairs(name: str, pairs: Any, form: str) -> dict[str, str]:
    """``pairs`` (a tuple of ``(NAME, VALUE)`` pairs) as a dict; ``ValueError`` on a bad pair or a name given twice."""
    if not isinstance(pairs, tuple):
        raise ValueError(f"{name} must be a tuple of {form} pairs, got {type(pairs).__name__} {pairs!r}")
    out: dict[str, str] = {}
    for pair in pairs:
        if not (isinstance(pair, tuple) and len(pair) == 2 and all(isinstance(p, str) for p in pair)):
            raise ValueError(f"{name} takes {form} pairs (--chat.{name.replace('_', '-')} {form}), got {pair!r}")
        key = pair[0]
        if not ENDPOINT_NAME.fullmatch(key):
            raise ValueError(f"{name}: an endpoint's name is letters, digits, '_' and '-', got {key!r}")
        if key in out:
            raise ValueError(f"{name}: {key!r} is given twice")
        out[key] = pair[1]
    return out


@dataclass(frozen=True)
class ChatSettings:
    """The chat settings of a run, checked once here: every ``chat:`` spec of the run is built with them.

    On the command line they are ``--chat.FIELD`` (``evaluate.py``, ``uno-yardstick``; docs/llm.md)."""

    base_url: str | None = None
    """chat:MODEL's endpoint, e.g. http://127.0.0.1:8080/v1 (None: $UNO_CHAT_BASE_URL)"""
    api_key_env: str = API_KEY_VARIABLE
    """the environment variable holding chat:MODEL's key"""
    endpoints: tuple[tuple[str, str], ...] = ()
    """NAME URL: the endpoint of chat:MODEL@NAME"""
    endpoint_keys: tuple[tuple[str, str], ...] = ()
    """NAME VAR: the environment variable holding endpoint NAME's key (default UNO_CHAT_API_KEY_<NAME>)"""
    max_attempts: int = 3
    """requests per decision before the counted fallback"""
    fallback: str = "random"
    """the counted fallback move: random or first"""
    timeout: float = 60.0
    """seconds one chat request may take in all (connecting, waiting and reading the answer)"""
    temperature: float | None = None
    """sampling temperature (None: the server's default)"""
    max_tokens: int | None = None
    """max_tokens per request (None: the server's default)"""
    history: int = 40
    """events of the round shown in the prompt (0: none)"""
    list_moves: bool = True
    """list and number the legal moves in the prompt"""
    parallel: int = 8
    """chat requests in flight at once"""
    max_failures: int = 6
    """consecutive failed requests that stop the run"""
    max_fallback_share: float = 0.05
    """largest share of decisions that may fall back; more stops the run, with no rating"""
    fallback_grace: int = 20
    """decisions before the fallback share is first checked"""
    max_requests_per_game: int | None = None
    """requests one game may use (None: no cap); more stops the run"""
    max_tokens_per_game: int | None = None
    """tokens one game may use (None: no cap); more stops the run"""
    backoff: float = 1.0
    """seconds before retrying a failed request, doubled at each retry"""
    max_retry_wait: float = 60.0
    """longest wait before a retry, Retry-After included"""
    max_answer_bytes: int = MAX_ANSWER_BYTES
    """largest answer read from the endpoint, in bytes; a longer one is a failed request"""

    def __post_init__(self) -> None:
        if self.base_url is not None:
            chat_url(self.base_url)  # a ValueError naming the schemes allowed
        if not isinstance(self.api_key_env, str) or not self.api_key_env.strip():
            raise ValueError(f"api_key_env must name an environment variable, got {self.api_key_env!r}")
        named = _check_pairs("endpoints", self.endpoints, "NAME URL")
        for url in named.values():
            chat_url(url)
        for name in _check_pairs("endpoint_keys", self.endpoint_keys, "NAME VAR"):
            if name not in named:
                raise ValueError(f"endpoint_keys: no endpoint {name!r}; declare it with --chat.endpoints {name} URL")
        if not _count(self.max_attempts, 1):
            raise ValueError(f"max_attempts must be an integer >= 1, got {self.max_attempts!r}")
        if self.fallback not in FALLBACKS:
            raise ValueError(f"fallback must be one of {FALLBACKS}, got {self.fallback!r}")
        if not _seconds(self.timeout, open_low=True):
            raise ValueError(f"timeout must be > 0 seconds, got {self.timeout!r}")
        if not _count(self.history, 0):
            raise ValueError(f"history must be an integer >= 0 (events shown), got {self.history!r}")
        if not isinstance(self.list_moves, bool):
            raise ValueError(f"list_moves must be True or False, got {self.list_moves!r}")
        if not _count(self.parallel, 1):
            raise ValueError(f"parallel must be an integer >= 1 (requests in flight), got {self.parallel!r}")
        if not _count(self.max_failures, 1):
            raise ValueError(
                f"max_failures must be an integer >= 1 (consecutive failed requests), got {self.max_failures!r}"
            )
        if not (_seconds(self.max_fallback_share) and self.max_fallback_share <= 1):
            raise ValueError(f"max_fallback_share must be in [0, 1], got {self.max_fallback_share!r}")
        if not _count(self.fallback_grace, 0):
            raise ValueError(f"fallback_grace must be an integer >= 0 (decisions), got {self.fallback_grace!r}")
        _check_cap("max_requests_per_game", self.max_requests_per_game)
        _check_cap("max_tokens_per_game", self.max_tokens_per_game)
        _check_cap("max_tokens", self.max_tokens)
        if not _count(self.max_answer_bytes, 1024):
            raise ValueError(
                f"max_answer_bytes must be an integer >= 1024 (bytes of one answer), got {self.max_answer_bytes!r}"
            )
        for label in ("backoff", "max_retry_wait"):
            if not _seconds(getattr(self, label)):
                raise ValueError(f"{label} must be a number of seconds >= 0, got {getattr(self, label)!r}")
        if self.temperature is not None and not _seconds(self.temperature):
            raise ValueError(
                f"temperature must be a number >= 0 or None (the server's default), got {self.temperature!r}"
            )

    def address(self, endpoint: str | None = None) -> tuple[str | None, str]:
        """The base URL of ``endpoint`` (a name of ``endpoints``; None: the default) and the variable of its key."""
        if endpoint is None:
            base_url = self.base_url if self.base_url is not None else os.environ.get(BASE_URL_VARIABLE)
            return base_url, self.api_key_env
        named = dict(self.endpoints)
        if endpoint not in named:
            given = ", ".join(sorted(named)) or "none"
            raise ValueError(
                f"chat endpoint {endpoint!r} is not declared: name it with --chat.endpoints {endpoint} URL "
                f"(declared: {given})"
            )
        default_key = f"{API_KEY_VARIABLE}_{endpoint.upper().replace('-', '_')}"
        return named[endpoint], dict(self.endpoint_keys).get(endpoint, default_key)


def _shut(connection: http.client.HTTPConnection) -> None:
    """Shut ``connection``'s socket (the deadline passed): a read blocked on it returns at once."""
    sock = connection.sock
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def _usage(usage: Any) -> tuple[int, int]:
    """(prompt, completion) tokens of an answer's ``usage``: absent is (0, 0); anything but an
    object of counts >= 0 is a malformed answer (``ValueError``)."""
    if usage is None:
        return 0, 0
    if not isinstance(usage, dict):
        raise ValueError(f"usage must be an object of token counts, got {type(usage).__name__}")
    counts = []
    for key in ("prompt_tokens", "completion_tokens"):
        value = usage.get(key)
        if value is None:
            value = 0
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ValueError(f"usage.{key} must be a count >= 0, got {_short(repr(value))}")
        counts.append(value)
    return counts[0], counts[1]


def _short(text: Any, limit: int = 120) -> str:
    text = str(text)
    return text[:limit] + ("…" if len(text) > limit else "")


def _keep(entry: dict[str, Any], key: str, text: str) -> None:
    """``entry[key] = text``, cut to ``TRANSCRIPT_CHARS`` with the full length beside it when longer."""
    entry[key] = text[:TRANSCRIPT_CHARS]
    if len(text) > TRANSCRIPT_CHARS:
        entry[f"{key}_chars"] = len(text)


DEFAULT_SETTINGS = ChatSettings()
"""the settings of a chat agent given none (the defaults of ``ChatSettings``)"""


class ChatAgent:
    """A language model behind an OpenAI-compatible chat endpoint, with the run's ``ChatSettings``.

    ``endpoint``: a name of ``settings.endpoints`` (None: ``settings.base_url``); ``api_key``
    defaults to the endpoint's key variable (``settings.api_key_env``: ``$UNO_CHAT_API_KEY``)."""

    fair_engine_access = True  # act_in reads only the seat's observation, mask and redacted events

    def __init__(
        self,
        model: str,
        rules: UnoRules | None = None,
        settings: ChatSettings = DEFAULT_SETTINGS,
        *,
        endpoint: str | None = None,
        api_key: str | None = None,
        name: str | None = None,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ValueError(f"model must name the endpoint's model (chat:MODEL), got {model!r}")
        base_url, key_env = settings.address(endpoint)
        if not base_url:
            where = f"--chat.endpoints {endpoint} URL" if endpoint else f"--chat.base-url or {BASE_URL_VARIABLE}"
            raise ValueError(
                f"a chat agent needs the endpoint's base URL: give {where} (e.g. http://127.0.0.1:8000/v1)"
            )
        self.url = chat_url(base_url)
        self.model = model.strip()
        self.rules = rules if rules is not None else UnoRules()
        self.settings = settings
        self.history = settings.history  # the Agent protocol's events asked of the engine
        self.endpoint = endpoint
        self.api_key = api_key if api_key is not None else os.environ.get(key_env) or None
        self.name = name or f"chat:{self.model}" + (f"@{endpoint}" if endpoint else "")
        self._fresh()

    def _fresh(self) -> None:
        """The counters, transcripts and the machinery that a copy does not carry."""
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self._stop: str | None = None  # set once the run must stop: every request still queued refuses
        self._consecutive_failures = 0
        self.transcripts: list[dict[str, Any]] = []
        # (id(engine), row, seat) -> (game, its clock, the engine): the engine checked, as an id is reused
        self._games: dict[tuple[int, int, int], tuple[int, tuple[int, int], weakref.ref]] = {}
        self._usage: dict[int, list[int]] = {}  # game -> [requests, tokens]
        self._per_decision: list[tuple[int, float]] = []  # (tokens, seconds)
        self._counts = dict.fromkeys(COUNTS, 0)
        self._seconds = 0.0

    def __getstate__(self) -> dict[str, Any]:
        # A copy (a Ray worker's) starts with no counts: report() brings its own back to absorb().
        skip = {"_lock", "_pool", "_stop", "_consecutive_failures", "transcripts", "_games", "_usage"}
        skip |= {"_per_decision", "_counts", "_seconds"}
        return {k: v for k, v in self.__dict__.items() if k not in skip}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._fresh()

    # --- the Agent protocol -----------------------------------------------------------------

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One move per row, asked in parallel from the observation alone (no round events)."""
        asks = []
        for r in range(len(action_mask)):
            prompt = build_prompt(observation[r], action_mask[r], rules=self.rules, list_moves=self.settings.list_moves)
            asks.append((prompt, legal_moves(action_mask[r]), action_mask[r], self._loose_game()))
        return np.asarray(self._decide_all(asks, [rng] * len(asks)), np.int64)

    def act_in(self, engine: Engine, i: int, rng: np.random.Generator) -> int:
        """The move of the player to act in game ``i``, with the round's events as its seat saw them."""
        return self.act_in_rows(engine, [i], [rng])[0]

    def act_in_rows(self, engine: Engine, rows: Sequence[int], rngs: Sequence[np.random.Generator]) -> list[int]:
        """``act_in`` for the games ``rows`` at once (row k's fallback drawn from ``rngs[k]``): their
        requests run in parallel, up to ``parallel`` at a time."""
        asks = []
        n = engine.num_players
        for i in rows:
            seat = int(engine.current_player[i])
            mask = engine.legal_mask[i]
            events, cut = round_window(engine, i, seat, self.history) if self.history else (None, 0)
            prompt = build_prompt(
                engine.observe(seat, games=[i])[i],
                mask,
                rules=engine.rules,
                seat=seat,
                num_players=n,
                events=events,
                events_cut=cut,
                list_moves=self.settings.list_moves,
            )
            asks.append((prompt, legal_moves(mask, seat, n), mask, self._game_of(engine, int(i), seat)))
        return self._decide_all(asks, rngs)

    def game_over(self, engine: Engine, row: int, seat: int, won: bool, players: Sequence[str]) -> None:
        """Game ``row`` ended with this agent at ``seat``: its transcript gets the outcome."""
        known = self._games.pop((id(engine), int(row), int(seat)), None)
        if known is None or known[2]() is not engine:
            return  # the game ended before this agent was asked anything
        self.transcripts[known[0]]["outcome"] = {
            "won": bool(won),
            "reward": float(engine.rewards[row, seat]),
            "points": float(engine.scores[row, seat]),
            "truncated": bool(engine.truncated[row]),
        }
        self.transcripts[known[0]]["players"] = list(players)

    def _new_game(self, seat: int | None) -> int:
        self.transcripts.append({"game": len(self.transcripts), "seat": seat, "decisions": [], "outcome": None})
        return len(self.transcripts) - 1

    def _loose_game(self) -> int:
        """Asked without the engine: one transcript holds every decision."""
        if not self.transcripts or self.transcripts[-1].get("loose") is not True:
            self._new_game(None)
            self.transcripts[-1]["loose"] = True
        return len(self.transcripts) - 1

    def _game_of(self, engine: Engine, i: int, seat: int) -> int:
        """The transcript of the game in row ``i``: a new one when the row's round restarted."""
        state = engine.game_state(i)  # only its public counters: rounds finished, actions this round
        clock = (int(state["round"]), int(state["turn"]))
        key = (id(engine), i, seat)
        known = self._games.get(key)
        if known is not None and known[2]() is engine and known[1] <= clock:
            self._games[key] = (known[0], clock, known[2])
            return known[0]
        game = self._new_game(seat)
        self._games[key] = (game, clock, weakref.ref(engine))
        return game

    # --- decisions --------------------------------------------------------------------------

    def _decide_all(self, asks: list[tuple[str, list[Move], np.ndarray, int]], rngs: Sequence[Any]) -> list[int]:
        """Ask every prompt (in parallel), then settle each in order: the parsed move or a counted fallback."""
        if len(asks) == 1 or self.settings.parallel == 1:
            answers = [self._ask_model(prompt, moves, game) for prompt, moves, _, game in asks]
        else:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.settings.parallel, thread_name_prefix="chat")
            futures = [self._pool.submit(self._ask_model, prompt, moves, game) for prompt, moves, _, game in asks]
            answers = [f.result() for f in futures]  # a ChatFailure in any stops the run here
        out = []
        for (_, moves, mask, game), rng, (action, record) in zip(asks, rngs, answers, strict=True):
            if action is None:
                self._counts["fallbacks"] += 1
                action = moves[0].action if self.settings.fallback == "first" else int(sample_legal(mask[None], rng)[0])
                record["fallback"] = True
            self._counts["decisions"] += 1
            self._seconds += record["seconds"]
            self._per_decision.append((record["tokens"], record["seconds"]))
            record.update(action=int(action), move=action_name(int(action)))
            self.transcripts[game]["decisions"].append(record)
            out.append(int(action))
        if self._counts["decisions"] >= max(self.settings.fallback_grace, 1):
            self.check()
        return out

    def check(self) -> None:
        """Raise ``ChatFailure`` when more than ``max_fallback_share`` of the decisions fell back."""
        decisions, fallbacks = self._counts["decisions"], self._counts["fallbacks"]
        if decisions and fallbacks > self.settings.max_fallback_share * decisions:
            raise ChatFailure(
                f"{self.name}: {fallbacks} of {decisions} decisions fell back to a {self.settings.fallback} move "
                f"({self._counts['failed_requests']} failed requests, {self._counts['bad_replies']} bad replies), more "
                f"than the {self.settings.max_fallback_share:.0%} allowed (--chat.max-fallback-share); no rating is given. "
                f"The transcript shows each reply and error."
            )

    def _stop_run(self, message: str) -> ChatFailure:
        with self._lock:
            self._stop = self._stop or message
        return ChatFailure(message)

    def _ask_model(self, prompt: str, moves: list[Move], game: int) -> tuple[int | None, dict[str, Any]]:
        """One decision's requests (thread-safe): the move parsed, or None after ``max_attempts``."""
        start = time.perf_counter()
        messages: list[dict[str, str]] = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": prompt},
        ]
        record: dict[str, Any] = {
            "prompt": prompt,
            "attempts": [],
            "fallback": False,
            "prompt_tokens": 0,
            "completion_tokens": 0,
        }
        action: int | None = None
        for attempt in range(self.settings.max_attempts):
            self._charge(game)
            asked = time.perf_counter()
            try:
                reply, reasoning, usage = self._ask(messages)
            except ChatError as exc:
                record["attempts"].append({"error": str(exc), "seconds": time.perf_counter() - asked})
                self._failed(str(exc))
                if attempt + 1 < self.settings.max_attempts:
                    wait = exc.wait if exc.wait is not None else self.settings.backoff * 2**attempt
                    _sleep(min(wait, self.settings.max_retry_wait))
                continue
            with self._lock:
                self._consecutive_failures = 0
                self._counts["prompt_tokens"] += usage[0]
                self._counts["completion_tokens"] += usage[1]
                self._usage[game][1] += sum(usage)
            record["prompt_tokens"] += usage[0]
            record["completion_tokens"] += usage[1]
            thought = split_reasoning(reply)[0] if len(reply) <= MAX_REPLY_CHARS else ""
            entry: dict[str, Any] = {"seconds": time.perf_counter() - asked, "tokens": sum(usage)}
            _keep(entry, "reply", reply)
            if reasoning or thought:
                _keep(entry, "reasoning", "\n\n".join(r for r in (reasoning, thought) if r))
            record["attempts"].append(entry)
            try:
                action = parse_reply(reply, moves, numbered=self.settings.list_moves)
            except BadReply as exc:
                with self._lock:
                    self._counts["bad_replies"] += 1
                entry["refused"] = str(exc)
                messages += [
                    # A refused reply is echoed cut: the refusal says what was wrong, and a
                    # hostile reply does not grow every later request of the decision.
                    {"role": "assistant", "content": reply[:TRANSCRIPT_CHARS]},
                    {"role": "user", "content": refusal(exc)},
                ]
                continue
            break
        record["tokens"] = record["prompt_tokens"] + record["completion_tokens"]
        record["seconds"] = time.perf_counter() - start
        return action, record

    def _charge(self, game: int) -> None:
        """Count one request of ``game``, refusing it once the run stopped or the game's caps are spent."""
        with self._lock:
            if self._stop is not None:
                raise ChatFailure(self._stop)
            usage = self._usage.setdefault(game, [0, 0])
            cap = None
            if self.settings.max_requests_per_game is not None and usage[0] >= self.settings.max_requests_per_game:
                cap = f"its {self.settings.max_requests_per_game} requests (--chat.max-requests-per-game)"
            elif self.settings.max_tokens_per_game is not None and usage[1] >= self.settings.max_tokens_per_game:
                cap = f"{usage[1]} tokens, over its cap of {self.settings.max_tokens_per_game} (--chat.max-tokens-per-game)"
            if cap is None:
                usage[0] += 1
                self._counts["requests"] += 1
        if cap is not None:
            raise self._stop_run(f"{self.name}: game {game} used {cap}; the run stops rather than play on without it")

    def _failed(self, error: str) -> None:
        with self._lock:
            self._counts["failed_requests"] += 1
            self._consecutive_failures += 1
            failures = self._consecutive_failures
        if failures >= self.settings.max_failures:
            raise self._stop_run(
                f"{self.name}: {failures} requests in a row to {self.url} failed (--chat.max-failures "
                f"{self.settings.max_failures}); the last: {error}. Is the server running, and is the model name right?"
            )

    def _ask(self, messages: list[dict[str, str]]) -> tuple[str, str, tuple[int, int]]:
        """The model's reply to ``messages``, its ``reasoning_content`` and the (prompt, completion) tokens."""
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        if self.settings.temperature is not None:
            body["temperature"] = self.settings.temperature
        if self.settings.max_tokens is not None:
            body["max_tokens"] = self.settings.max_tokens
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        raw = self._post(json.dumps(body).encode(), headers)
        try:
            data = json.loads(raw)
            message = data["choices"][0]["message"]
            reply = message.get("content") or ""
            reasoning = message.get("reasoning_content") or message.get("reasoning") or ""
            if not isinstance(reply, str) or not isinstance(reasoning, str):
                raise TypeError("content is not text")
            usage = _usage(data.get("usage"))
        except (ValueError, KeyError, IndexError, TypeError, AttributeError, RecursionError) as exc:
            raise ChatError(f"malformed answer from {self.url} ({_short(exc)}): {raw[:200]!r}") from exc
        return reply, reasoning, usage

    def _post(self, body: bytes, headers: dict[str, str]) -> bytes:
        """The answer's body to one POST of ``body``, within ``timeout`` seconds in all and at most
        ``max_answer_bytes``; ``ChatError`` otherwise. A plain connection: no proxy from the
        environment and no redirect, so the one address called is the one given."""
        deadline = time.monotonic() + self.settings.timeout
        parts = urllib.parse.urlsplit(self.url)
        kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        try:
            connection = kind(parts.hostname or "", parts.port, timeout=self.settings.timeout)
        except (ValueError, http.client.HTTPException) as exc:
            raise ChatError(f"no answer from {self.url}: {exc}") from exc
        # A server that trickles its status line or headers is cut too: the watchdog shuts the
        # socket at the deadline, waking the read that waits on it.
        watchdog = threading.Timer(self.settings.timeout, _shut, (connection,))
        watchdog.daemon = True
        watchdog.start()
        try:
            connection.request("POST", path or "/", body, headers)
            response = connection.getresponse()
            if not 200 <= response.status < 300:
                wait = retry_after(response.getheader("Retry-After")) if response.status in RETRY_STATUSES else None
                start = self._read(connection, response, deadline, limit=200)
                raise ChatError(f"HTTP {response.status} from {self.url}: {start[:200]!r}", wait)
            length = response.getheader("Content-Length")
            if length and length.strip().isdigit() and int(length) > self.settings.max_answer_bytes:
                raise ChatError(self._too_long(f"announces {int(length):,} bytes"))
            return self._read(connection, response, deadline)
        except ChatError:
            raise
        except (http.client.HTTPException, OSError, ValueError) as exc:
            late = time.monotonic() >= deadline
            why = f"not answered within the {self.settings.timeout:g} s deadline (--chat.timeout)" if late else str(exc)
            raise ChatError(f"no answer from {self.url}: {why}") from exc
        finally:
            watchdog.cancel()
            connection.close()

    def _read(
        self, connection: http.client.HTTPConnection, response: Any, deadline: float, limit: int | None = None
    ) -> bytes:
        """The response's body read in chunks against the deadline, refused past ``max_answer_bytes``
        (or cut at ``limit`` bytes)."""
        chunks: list[bytes] = []
        size = 0
        cap = self.settings.max_answer_bytes if limit is None else limit
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ChatError(
                    f"no answer from {self.url}: not answered within the {self.settings.timeout:g} s deadline "
                    f"(--chat.timeout), {size:,} bytes read"
                )
            if connection.sock is not None:
                connection.sock.settimeout(left)
            chunk = response.read1(min(_READ, cap + 1 - size))
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            size += len(chunk)
            if size > cap:
                if limit is not None:
                    return b"".join(chunks)[:limit]
                raise ChatError(self._too_long(f"sent more than {cap:,} bytes"))

    def _too_long(self, what: str) -> str:
        return (
            f"answer too long from {self.url}: it {what}, more than the {self.settings.max_answer_bytes:,} read "
            "(--chat.max-answer-bytes); lower --chat.max-tokens or raise the cap"
        )

    # --- results ------------------------------------------------------------------------------

    def stats(self) -> dict[str, Any]:
        """Counts and totals so far, and tokens and seconds per decision (mean and the list)."""
        n = max(self._counts["decisions"], 1)
        tokens = self._counts["prompt_tokens"] + self._counts["completion_tokens"]
        return {
            **self._counts,
            "tokens": tokens,
            "seconds": self._seconds,
            "fallback_share": self._counts["fallbacks"] / n,
            "tokens_per_decision": tokens / n,
            "seconds_per_decision": self._seconds / n,
            "per_decision": [{"tokens": t, "seconds": s} for t, s in self._per_decision],
        }

    def report(self) -> dict[str, Any]:
        """What this copy measured (counts, per-decision costs, transcripts), for ``absorb``."""
        return {
            "counts": dict(self._counts),
            "seconds": self._seconds,
            "per_decision": list(self._per_decision),
            "transcripts": self.transcripts,
        }

    def absorb(self, report: dict[str, Any]) -> None:
        """Add a copy's ``report()`` to this agent's counts and transcripts (its games renumbered)."""
        for k in COUNTS:
            self._counts[k] += int(report["counts"][k])
        self._seconds += float(report["seconds"])
        self._per_decision += [(int(t), float(s)) for t, s in report["per_decision"]]
        for t in report["transcripts"]:
            self.transcripts.append({**t, "game": len(self.transcripts)})
