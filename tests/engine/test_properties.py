"""Property-based tests (hypothesis): random valid rule sets, 2-10 players, random legal play
mixed with bad input. After every step:

* the engine's own invariants hold (``check_invariants() == []``);
* the legal mask is exactly the set docs/rules.md allows (an independent reading in
  ``rules_reference.py``: R4 legality in phase ``play`` for every deck, every other phase, UNO
  calls and catches R7/R12.15-16), and a draw opens ``post_draw`` exactly when R4 says;
* each hand equals the hand rebuilt from the record's events (deal and draw add, play removes);
* at each round end the score events follow the points table (R8), the winners are the ones
  the rules name, the rewards follow, and the scores in ``game_state`` are the sum of the score
  events;
* every field of the acting seat's observation, and of another seat's, says what the state
  says (R11);
* a game stepped with ``-1`` is untouched;
* every bad input (out-of-range or illegal id, a finished game, a wrong dtype or shape) raises
  ``ValueError`` and changes nothing -- or, under ``illegal_action="penalty"``, an illegal PLAY in
  phases ``play``/``post_draw`` is penalised as R10 and R12.20 say.

Per CI run: ``PLAY_EXAMPLES`` hypothesis examples (a rule set, 1-4 games, ``STEPS`` steps),
``OPTION_EXAMPLES`` raw option sets, the ``CORNERS`` rule sets (6 games, 400 steps) and each
preset at 2-10 players (2 games, ``STEPS`` steps). A failing example is printed by hypothesis.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

import numpy as np
import pytest
from helpers import mixed
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from rules_reference import (
    DRAW,
    HandModel,
    PublicFacts,
    Transition,
    can_draw,
    cards_drawn,
    drawn_cards,
    expected_deal,
    expected_observation,
    hand_points,
    legal_actions,
    next_seat,
    partners,
    playable,
    played_card,
    plays_itself,
)

from uno_env import ACTION_NAMES, NUM_ACTIONS, Engine, UnoRules, sample_legal
from uno_env import rules as rules_module
from uno_env.cards import deck_counts
from uno_env.observation import OBS_OFFSETS
from uno_env.rules import OPTION_NAMES, PRESETS

PLAY_EXAMPLES = 60
OPTION_EXAMPLES = 100
STEPS = 120


# --- strategies ----------------------------------------------------------------------------


def option_values(name: str) -> st.SearchStrategy:
    """Every allowed value of one option (rules.py's own tables of choices and ranges)."""
    if name in rules_module._CHOICES:
        return st.sampled_from(rules_module._CHOICES[name])
    if name == "card_points":
        return st.one_of(st.none(), st.lists(st.integers(0, 1000), min_size=57, max_size=57).map(tuple))
    if name == "card_counts":
        # The deck's own table, or a small deck of up to two copies per type (R1).
        return st.one_of(
            st.none(), st.lists(st.integers(0, 2), min_size=57, max_size=57).filter(lambda c: sum(c) >= 12).map(tuple)
        )
    default = UnoRules.__dataclass_fields__[name].default
    if isinstance(default, bool):
        return st.booleans()
    lo, hi = rules_module._INT_RANGES[name]
    if name == "max_turns":
        # Small limits make truncation (and fewest_cards_wins) happen within a short example.
        return st.one_of(st.none(), st.integers(1, 300), st.integers(1, 2**62))
    if name == "target_points":
        return st.one_of(st.integers(1, 300), st.integers(1, 2**62))
    return st.integers(lo, hi)


def _tidy(options: dict) -> dict:
    """Turn the contradictions rules.py names back to defaults, so most draws are valid (the
    contradictions themselves are exercised by ``test_any_option_set_is_valid_or_named``)."""
    o = dict(options)
    if o["deck"] == "classic":
        o["custom_wild_rule"], o["custom_wild_count"] = "blank", 3
    elif o["custom_wild_count"] == 0:
        o["custom_wild_rule"] = "blank"
    if o["uno_call"] == "auto":
        o["uno_penalty"] = 2
    if not o["challenge"]:
        o["challenge_guilty_draw"], o["challenge_innocent_draw"] = 4, 6
    if o["episode"] == "round" and o["scoring"] == "winner_takes":
        o["target_points"] = 500
    if o["teams"] and o["scoring"] == "elimination":
        o["teams"] = False
    if o["max_turns"] is None:
        o["turn_limit_rule"] = "truncate"
    if not (o["stack_draw_two"] or o["stack_draw_four"]):
        o["always_respond"] = False
    if o["wd4_bluffing"] and o["challenge"]:
        o["wd4_only_when_stuck"] = False
    if o["draw_until_playable"]:
        o["drawn_card"] = "choose"
    return o


@st.composite
def rule_sets(draw) -> tuple[UnoRules, int]:
    """A preset with each option kept or redrawn, a player count that fits, and a hand size."""
    preset = UnoRules.preset(draw(st.sampled_from(sorted(PRESETS))))
    options = {}
    for name in OPTION_NAMES:
        if name != "hand_size":
            options[name] = draw(st.one_of(st.just(getattr(preset, name)), option_values(name)))
    options = _tidy(options)
    if options["teams"]:
        num_players = draw(st.sampled_from([4, 6, 8, 10]))
    else:
        num_players = draw(st.integers(2, 10))
    counts = (
        np.array(options["card_counts"], np.int64)
        if options["card_counts"] is not None
        else deck_counts(options["deck"], options["custom_wild_count"])
    )
    # Leave a card that R9 lets be turned: the engine refuses (ValueError) a deal whose leftover
    # cards could all go back into the pile (test_robustness.test_a_deal_with_no_card_to_turn_...).
    if options["first_card_rule"] == "redraw_special":
        returned = counts.sum() - sum(counts[c * 13 + r] for c in range(4) for r in range(10))
    else:
        returned = counts[52:].sum() if options["wild_first_card"] == "redraw" else counts[53]
    most = min(50, (int(counts.sum()) - 1 - int(returned)) // num_players)
    if most < 1:  # a small deck (card_counts) that cannot seat these players
        from hypothesis import reject

        reject()
    # Small hands end rounds within an example, so round ends, matches and eliminations happen.
    options["hand_size"] = draw(st.one_of(st.just(min(7, most)), st.integers(1, min(3, most)), st.integers(1, most)))
    try:
        rules = UnoRules(**options)
    except ValueError as err:  # a contradiction _tidy does not know: filter it out
        note(f"rejected: {err}")
        from hypothesis import reject

        reject()
    return rules, num_players


# --- the harness ---------------------------------------------------------------------------


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def snapshot(engine: Engine) -> dict:
    """Everything a step could change: every game's state, draw pile and record, the output
    buffers, and the games' hidden generators (a change would alter every later deal)."""
    B = engine.num_envs
    return {
        "state": [engine.game_state(b) for b in range(B)],
        "draw_pile": [engine.draw_pile(b) for b in range(B)],
        "record": [engine.record(b) for b in range(B)],
        "last_record": [engine.last_record(b) for b in range(B)],
        "outputs": [
            x.copy()
            for x in (
                engine.observation,
                engine.legal_mask,
                engine.current_player,
                engine.rewards,
                engine.terminated,
                engine.truncated,
                engine.final_observation,
            )
        ],
        "rng": engine._rng.copy(),
    }


def assert_unchanged(before: dict, after: dict, what: str) -> None:
    for key in before:
        assert _same(before[key], after[key]), f"{what}: {key} changed"


def _new_events(seen: list[dict], now: list[dict]) -> list[dict]:
    """The events of ``now`` not in ``seen`` (the record merges consecutive draws of one player
    for one reason, and a seat's deal, so the last seen event may have grown)."""
    k = len(seen)
    if k == 0:
        return list(now)
    assert now[: k - 1] == seen[: k - 1], "the record rewrote past events"
    last, cur = seen[k - 1], now[k - 1]
    out = []
    if cur != last:
        grown = {key: v for key, v in cur.items() if key != "cards"} == {
            key: v for key, v in last.items() if key != "cards"
        }
        assert grown and cur["cards"][: len(last["cards"])] == last["cards"], f"event changed: {last} -> {cur}"
        out.append({**cur, "cards": cur["cards"][len(last["cards"]) :]})
    return out + list(now[k:])


class Harness:
    """Plays an engine and checks every step against the reference reading of the rules."""

    def __init__(self, engine: Engine) -> None:
        self.e = engine
        self.rules = engine.rules
        self.n = engine.num_players
        self.unchecked_round_ends = 0
        self.round_ends = 0
        self.penalties = 0
        self.rejected = 0
        for b in range(engine.num_envs):
            self.start_episode(b)
        self.check_all()

    def start_episode(self, b: int) -> None:
        """Follow game b from its deal (after the engine's reset)."""
        self._new_episode(b)
        events = self.e.record(b)["events"]
        state = self.e.game_state(b)
        self._consume(b, events, state)
        self._check_deal(state, events)
        self.seen[b] = events

    def _new_episode(self, b: int) -> None:
        if not hasattr(self, "facts"):
            B = self.e.num_envs
            self.facts = [None] * B
            self.model = [None] * B
            self.seen = [None] * B
            self.score_sum = [None] * B
            self.round_state = [None] * B
        self.facts[b] = PublicFacts(self.n)
        self.model[b] = HandModel(self.n)
        self.seen[b] = []
        self.score_sum[b] = [0] * self.n

    # --- events --------------------------------------------------------------------------

    def _consume(self, b: int, events: list[dict], state_before: dict) -> None:
        eliminated = state_before["eliminated"]
        turn_before = state_before["turn"]

        def on_round_end(model: HandModel, winners: list[int], scores: list[tuple[int, int]]) -> None:
            self.round_ends += 1
            for p, pts in scores:
                self.score_sum[b][p] += pts
            if model.stale:
                self.unchecked_round_ends += 1
                return
            self._check_round_end(model, set(winners), scores, eliminated, turn_before, events)

        self.model[b].apply(events, on_round_end)

    def _check_round_end(self, model, winners, scores, eliminated, turn_before, events) -> None:
        r, n = self.rules, self.n
        in_play = [p for p in range(n) if not eliminated[p]]
        plays = [e for e in events if e["type"] == "play"]
        out = plays[-1]["player"] if plays and not model.hands[plays[-1]["player"]].total() else None
        if out is not None:  # R8: the player who played their last card wins (with a partner)
            allowed = [partners({out}, n, r)]
        else:  # R4 end_on_empty_deck (fewest points, R12.19) or R8 fewest_cards_wins
            allowed = []
            if r.end_on_empty_deck:
                pts = {p: hand_points(model.hands[p], r) for p in in_play}
                allowed.append(partners({p for p in in_play if pts[p] == min(pts.values())}, n, r))
            if r.turn_limit_rule == "fewest_cards_wins" and r.max_turns and turn_before + 1 >= r.max_turns:
                cards = {p: model.hands[p].total() for p in in_play}
                allowed.append(partners({p for p in in_play if cards[p] == min(cards.values())}, n, r))
        assert winners in allowed, f"round winners {winners}, rules allow {allowed}; hands {model.sorted_hands()}"
        # R8 scoring from the points table.
        if r.scoring == "elimination":
            want = {p: hand_points(model.hands[p], r) for p in in_play}
        else:
            left = sum(hand_points(model.hands[p], r) for p in in_play if p not in winners)
            want = {p: left for p in winners}
        assert dict(scores) == want, f"score events {scores}, points table gives {want}"

    # --- checks --------------------------------------------------------------------------

    def check_game(self, b: int) -> None:
        e, state = self.e, self.e.game_state(b)
        model, facts = self.model[b], self.facts[b]
        if model.stale:
            model.resync(state["hands"])
        else:
            assert model.sorted_hands() == state["hands"], f"game {b}: hands differ from the record's events"
        assert state["scores"] == self.score_sum[b], (
            f"game {b}: scores {state['scores']} != score events {self.score_sum[b]}"
        )
        if self.rules.uno_call == "explicit":
            assert facts.called == state["uno_called"], f"game {b}: UNO calls {state['uno_called']} != {facts.called}"
        want = legal_actions(state, self.rules, drawn=facts.drawn, called=facts.called, catchable=facts.catchable)
        got = set(np.flatnonzero(e.legal_mask[b]).tolist())
        assert got == want, (
            f"game {b}: mask {sorted(got)} != rules {sorted(want)} (extra {sorted(got - want)}, "
            f"missing {sorted(want - got)}); phase {state['phase']}, player {state['current_player']}, "
            f"hand {state['hands'][state['current_player']]}, top {state['top_card']}, colour {state['current_color']}"
        )
        if state["phase"] != "round_over":
            assert got, f"game {b}: empty mask while the round is on"
        # The step's observation is the acting seat's view; another seat's view is checked too.
        self.check_observation(b, state, state["current_player"], e.observation[b])
        other = (state["current_player"] + 1 + b) % self.n
        self.check_observation(b, state, other, e.observe(other)[b])

    def check_observation(self, b: int, state: dict, seat: int, obs: np.ndarray) -> None:
        """R11: each field of the observation says what the state says, from ``seat``."""
        want = expected_observation(state, seat, self.facts[b], self.rules)
        for name, value in want.items():
            at = OBS_OFFSETS.get(name, OBS_OFFSETS["_end"])  # open_hands follows the named fields
            got = obs[at : at + value.size]
            assert np.array_equal(got, value), f"game {b}, seat {seat}: observation field {name} {got} != {value}"
        assert obs.size == sum(v.size for v in want.values())

    def check_all(self) -> None:
        assert self.e.check_invariants() == []
        for b in range(self.e.num_envs):
            self.check_game(b)

    # --- stepping ------------------------------------------------------------------------

    def finished(self) -> np.ndarray:
        return self.e.terminated | self.e.truncated

    def step(self, actions: np.ndarray, penalised: np.ndarray | None = None, as_type=None) -> None:
        e, B = self.e, self.e.num_envs
        penalised = np.zeros(B, bool) if penalised is None else penalised
        befores = [e.game_state(b) for b in range(B)]
        untouched = {b: (befores[b], e.draw_pile(b), e.record(b)) for b in range(B) if actions[b] == -1}
        e.step(actions if as_type is None else as_type(actions))
        assert e.check_invariants() == []
        for b in range(B):
            if actions[b] == -1:
                assert e.game_state(b) == untouched[b][0] and e.draw_pile(b) == untouched[b][1]
                assert e.record(b) == untouched[b][2] and not e.rewards[b].any()
                self.check_game(b)
                continue
            self._after_step(b, befores[b], int(actions[b]), bool(penalised[b]))
            self.check_game(b)

    def _after_step(self, b: int, before: dict, action: int, penalised: bool) -> None:
        e, r = self.e, self.rules
        ended = bool(e.terminated[b] or e.truncated[b])
        if e.autoreset and ended:
            tail = _new_events(self.seen[b], e.last_record(b)["events"])
            self._consume(b, tail, before)
            self._check_rewards(b, tail, before)
            self._new_episode(b)
            step_events = e.record(b)["events"]
            self._consume(b, step_events, before)
            self.seen[b] = step_events
            new_round = True
        else:
            now = e.record(b)["events"]
            step_events = _new_events(self.seen[b], now)
            self._consume(b, step_events, before)
            self.seen[b] = now
            if ended:
                self._check_rewards(b, step_events, before)
            new_round = any(ev["type"] == "deal" for ev in step_events)
        after = e.game_state(b)
        if not penalised and not ended and not any(ev["type"] == "round_end" for ev in step_events):
            self._check_transition(Transition(before, action, r, self.facts[b]), after, step_events)
        self.facts[b].after_step(before, action, penalised, after, step_events, r)
        if new_round:
            self.facts[b].new_round()
            self._check_deal(after, step_events)
        elif penalised:
            self._check_penalty(b, before, after, action, step_events)
        elif action == DRAW and before["phase"] == "play" and not ended:
            self._check_draw(before, after, step_events, self.facts[b])
        if not ended:
            assert not e.rewards[b].any(), f"game {b}: rewards {e.rewards[b]} before the episode ended"

    def _check_transition(self, t: Transition, after: dict, events: list[dict]) -> None:
        """R5-R7: turn order, phase, direction, colour, pending draws and who drew how many."""
        if t.skip:
            return
        b = t.before
        for key, value in t.want.items():
            assert after[key] == value, (
                f"after {ACTION_NAMES[t.action]} by player {b['current_player']} in phase {b['phase']}: "
                f"{key} is {after[key]!r}, rules say {value!r} (direction {b['direction']}, "
                f"eliminated {b['eliminated']}, hand sizes {[len(h) for h in b['hands']]})"
            )
        drawn = cards_drawn(events)
        if t.until_color is not None:  # R5, R12.12: draws until a card of the colour (a wild is not)
            seat, color = t.until_color
            cards = [c for ev in events if ev["type"] == "draw" for c in ev["cards"] if ev["player"] == seat]
            assert all(c >= 52 or c // 13 != color for c in cards[:-1])
            assert not cards or (cards[-1] < 52 and cards[-1] // 13 == color) or after["draw_pile_size"] == 0
            drawn.pop(seat, None)
        enough = sum(t.draws.values()) <= b["draw_pile_size"]
        for q in range(self.n):
            want = t.draws.get(q, 0)
            assert drawn[q] == want if enough else drawn[q] <= want, (
                f"after {ACTION_NAMES[t.action]}: player {q} drew {drawn[q]}, rules say {want}"
            )
        for q, hand in t.hands.items():
            assert after["hands"][q] == sorted(hand), f"after {ACTION_NAMES[t.action]}: hand of {q}"
        if t.check_sizes is not None:
            assert {q: len(h) for q, h in enumerate(after["hands"]) if len(h) or q in t.check_sizes} == t.check_sizes
        if t.verdict is not None:
            assert [ev["verdict"] for ev in events if ev["type"] == "challenge"] == [t.verdict]

    def _check_deal(self, state: dict, events: list[dict]) -> None:
        """R3, R9: the deal of a new round (the events since the last round end)."""
        ends = [k for k, ev in enumerate(events) if ev["type"] in ("round_end", "score", "eliminated", "match_end")]
        round_events = events[ends[-1] + 1 :] if ends else events
        want = expected_deal(state, round_events, self.rules)
        assert want.pop("dealt_counts") == want.pop("dealt")
        draws = want.pop("draws")
        assert dict(cards_drawn(round_events)) == draws, (cards_drawn(round_events), draws)
        for key, value in want.items():
            assert state[key] == value, f"after the deal: {key} is {state[key]!r}, R9 says {value!r}"

    def _check_rewards(self, b: int, events: list[dict], before: dict) -> None:
        """R8: +1 for each winner and -1 for the others at the end; 0 on a truncated round."""
        rew = self.e.rewards[b]
        if self.e.truncated[b]:
            assert not rew.any(), f"game {b}: rewards {rew} on a truncated round"
            return
        assert set(rew.tolist()) <= {1.0, -1.0} and (rew == 1).any(), f"game {b}: rewards {rew}"
        ends = [ev for ev in events if ev["type"] == "round_end"]
        if self.rules.episode == "round" and ends:
            winners = set(ends[-1]["winners"])
            assert set(np.flatnonzero(rew == 1).tolist()) == winners

    def _check_penalty(self, b: int, before: dict, after: dict, action: int, events: list[dict]) -> None:
        """R10 penalty: the card stays in the hand, the player draws 1 and the turn ends."""
        self.penalties += 1
        p = before["current_player"]
        assert [ev for ev in events if ev["type"] == "penalty"] == [{"type": "penalty", "player": p, "action": action}]
        drawable = can_draw(before, self.rules)
        assert len(drawn_cards(events, p, "penalty")) == int(drawable)
        assert len(after["hands"][p]) == len(before["hands"][p]) + int(drawable)
        if after["phase"] != "round_over":
            assert after["phase"] == "play" and after["current_player"] == next_seat(before, p)

    def _check_draw(self, before: dict, after: dict, events: list[dict], facts: PublicFacts) -> None:
        """R4, R12.18: a drawn playable card opens post_draw for the same player; with
        draw_until_playable the player draws until one comes or nothing is left."""
        p = before["current_player"]
        cards = drawn_cards(events, p)
        hand = Counter(before["hands"][p])
        fits = []
        for c in cards:
            hand[c] += 1
            fits.append(playable(c, hand, before["top_card"], before["current_color"], self.rules))
        if self.rules.draw_until_playable:
            assert not any(fits[:-1]), f"kept drawing after a playable card: {cards}"
        else:
            assert len(cards) <= 1
        if after["phase"] == "round_over":
            return  # end_on_empty_deck or the turn limit
        if self.rules.drawn_card == "play_color_or_wild":
            self._check_drawn_card(before, after, cards, events, facts)
            return
        opened = bool(fits and fits[-1])
        assert (after["phase"] == "post_draw" and after["current_player"] == p) == opened, (
            f"drew {cards} (playable: {fits}); now phase {after['phase']} for player {after['current_player']}"
        )

    def _check_drawn_card(
        self, before: dict, after: dict, cards: list[int], events: list[dict], facts: PublicFacts
    ) -> None:
        """R4 drawn_card='play_color_or_wild': a wild or a card of the colour plays itself (a
        wild with a colour drawn at random and no effect, a coloured card as if played), any
        other card is kept and the turn ends; post_draw never opens."""
        p = before["current_player"]
        assert after["phase"] != "post_draw"
        kept = not cards or not plays_itself(cards[0], before["current_color"], self.rules)
        plays = [ev for ev in events if ev["type"] == "play"]
        if kept:
            assert not plays and after["current_player"] == next_seat(before, p) and after["phase"] == "play"
            assert len(after["hands"][p]) == len(before["hands"][p]) + len(cards)
            return
        card = cards[0]
        assert plays == [{"type": "play", "player": p, "card": card, "count": 1}], plays
        assert after["top_card"] == card and sorted(after["hands"][p]) == sorted(before["hands"][p])
        if card >= 52:
            colors = [ev["color"] for ev in events if ev["type"] == "color"]
            assert [ev.get("random") for ev in events if ev["type"] == "color"] == [True]
            want = {"current_player": next_seat(before, p), "phase": "play", "current_color": colors[0]}
            for key, value in want.items():
                assert after[key] == value, f"drawn {card}: {key} {after[key]!r}, rules say {value!r}"
            return
        # A coloured card acts as if played from the hand (the drawer's own draw left out).
        t = Transition(before, card, self.rules, facts)
        drawn = cards_drawn(events)
        drawn[p] -= 1
        for key, value in t.want.items():
            assert after[key] == value, f"drawn {card}: {key} {after[key]!r}, rules say {value!r}"
        enough = sum(t.draws.values()) <= before["draw_pile_size"] - 1
        for q in range(self.n):
            want = t.draws.get(q, 0)
            assert drawn[q] == want if enough else drawn[q] <= want, f"drawn {card}: player {q} drew {drawn[q]}"

    # --- bad input -----------------------------------------------------------------------

    def legal_batch(self, rng: np.random.Generator) -> np.ndarray:
        actions = sample_legal(self.e.legal_mask, rng)
        actions[self.finished()] = -1
        return actions

    def bad_input(self, rng: np.random.Generator) -> None:
        """One bad step: ValueError with nothing changed, or an R10 penalty."""
        e, B = self.e, self.e.num_envs
        actions = self.legal_batch(rng)
        active = np.flatnonzero(~self.finished())
        kinds = ["range", "dtype", "shape"] + (["illegal"] if active.size else [])
        if not e.autoreset and self.finished().any():
            kinds.append("finished")
        kind = kinds[rng.integers(len(kinds))]
        bad: object
        if kind == "range":
            b = rng.integers(B)
            actions[b] = rng.choice([NUM_ACTIONS, NUM_ACTIONS + 1, 255, 1000, 2**31 - 1, 2**40, -2, -3, -117, -(2**40)])
            bad = actions
        elif kind == "illegal":
            b = int(rng.choice(active))
            illegal = np.flatnonzero(~e.legal_mask[b])
            actions[b] = rng.choice(illegal)
            phase = e.game_state(b)["phase"]
            if (
                self.rules.illegal_action == "penalty"
                and phase in ("play", "post_draw")
                and played_card(int(actions[b])) is not None
            ):
                penalised = np.zeros(B, bool)
                penalised[b] = True
                self.step(actions, penalised)  # R10, R12.20: applied, not rejected
                return
            bad = actions
        elif kind == "finished":
            b = int(rng.choice(np.flatnonzero(self.finished())))
            actions[b] = rng.integers(NUM_ACTIONS)
            bad = actions
        elif kind == "dtype":
            bad = [
                actions.astype(np.float64),
                actions.astype(np.float32),
                actions.astype(bool),
                actions.astype(complex),
                actions.astype(str),
                None,
                [float(a) for a in actions],
                "draw",
            ][rng.integers(8)]
        else:
            bad = [
                np.append(actions, 0),
                actions.reshape(B, 1),
                actions.reshape(1, B),
                actions[:-1],
                np.zeros((0,), np.int64),
                np.zeros((B, 2), np.int64),
            ][rng.integers(6)]
        before = snapshot(e)
        with pytest.raises(ValueError) as err:
            e.step(bad)
        assert str(err.value), "empty error message"
        self.rejected += 1
        assert_unchanged(before, snapshot(e), f"rejected {kind} input {bad!r}")


VALID_CASTS = (
    None,
    list,
    tuple,
    lambda a: a.astype(np.int32),
    lambda a: a.astype(np.int16),
    lambda a: a.astype(np.int8),
)


def play_and_check(
    rules: UnoRules, num_players: int, B: int, autoreset: bool, seed: int, bad_rate: float, steps: int = STEPS
) -> Harness:
    engine = Engine(B, num_players, rules, seed=seed, autoreset=autoreset, record=True)
    h = Harness(engine)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        if rng.random() < bad_rate:
            h.bad_input(rng)
        actions = h.legal_batch(rng)
        actions[rng.random(B) < 0.05] = -1
        if not autoreset and h.finished().any() and rng.random() < 0.3:
            games = np.flatnonzero(h.finished())
            engine.reset(games=games)
            for b in games:
                h.start_episode(b)
            h.check_all()
            continue
        if (actions == -1).all():
            continue
        h.step(actions, as_type=VALID_CASTS[rng.integers(len(VALID_CASTS))])
    return h


# Rule sets whose rare corners a short random example seldom reaches (teams and elimination
# wins, swaps with eliminated seats, UNO calls with a double), played longer on every run.
CORNERS = [
    (mixed("teams_match", hand_size=2, target_points=60), 6),
    (mixed("swap_elimination_discard", hand_size=2), 5),
    (mixed("explicit_uno_doubles", hand_size=5), 2),
    (mixed("shuffle_until_color_stacking", hand_size=9), 10),
    (mixed("strict_wd4_fewest_cards", hand_size=2), 4),
]


@settings(max_examples=PLAY_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    game=rule_sets(),
    B=st.integers(1, 4),
    autoreset=st.booleans(),
    seed=st.integers(0, 2**64 - 1),
    bad_rate=st.sampled_from([0.0, 0.1, 0.3]),
)
def test_random_rules_play_by_the_book(game, B, autoreset, seed, bad_rate):
    rules, num_players = game
    note(f"rules={rules!r}\nnum_players={num_players}")
    h = play_and_check(rules, num_players, B, autoreset, seed, bad_rate)
    note(f"round ends {h.round_ends}, rejected {h.rejected}, penalties {h.penalties}")
    assert h.unchecked_round_ends == 0  # the record names every card moved, so every round end is checked


@settings(max_examples=OPTION_EXAMPLES, deadline=None)
@given(
    st.fixed_dictionaries({name: option_values(name) for name in OPTION_NAMES if name != "hand_size"}),
    st.integers(-3, 60),
)
def test_any_option_set_is_valid_or_named(options, hand_size):
    """Any combination of allowed values either makes rules, or a ValueError names an option."""
    try:
        rules = UnoRules(**options, hand_size=hand_size)
    except ValueError as err:
        assert any(name in str(err) for name in OPTION_NAMES), str(err)
        return
    assert dataclasses.asdict(rules) == {**options, "hand_size": hand_size}
    assert UnoRules.from_dict(rules.to_dict()) == rules


def test_every_option_has_a_strategy():
    """A new option in rules.py is drawn by the property tests, or this fails: every option is
    a choice, an integer range, a flag or the points or counts table."""
    for name in OPTION_NAMES:
        default = UnoRules.__dataclass_fields__[name].default
        kinds = [
            name in rules_module._CHOICES,
            name in rules_module._INT_RANGES,
            isinstance(default, bool),
            name in ("card_points", "card_counts"),
        ]
        assert sum(kinds) == 1, name
        assert isinstance(option_values(name), st.SearchStrategy)


@pytest.mark.parametrize("rules, num_players", CORNERS, ids=[f"corner{k}" for k in range(len(CORNERS))])
def test_rare_corners_play_by_the_book(rules, num_players):
    play_and_check(rules, num_players, 6, autoreset=num_players % 2 == 0, seed=num_players, bad_rate=0.1, steps=400)


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_presets_at_every_player_count_play_by_the_book(preset):
    """Each preset at 2-10 players, with bad input mixed in (deterministic complement of the
    random search above)."""
    for n in range(2, 11):
        play_and_check(UnoRules.preset(preset), n, 2, autoreset=n % 2 == 0, seed=n, bad_rate=0.1)
