"""Pictures of a game for people: text (``ansi`` / ``human``) and an RGB image (``rgb_array``, needs Pillow).

Everything here reads one ``Engine.game_state`` dict and draws only what the player to act may see
(R11): its hand, never the other seats'; none once the round is over."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from .cards import COLOR_NAMES, NUM_RANKS
from .palette import bold, paint
from .seat_view import state_view

try:  # gymnasium is a hard dependency, but keep this module importable on its own.
    from gymnasium.error import DependencyNotInstalled as _DependencyNotInstalled
except ImportError:  # pragma: no cover
    _DependencyNotInstalled = Exception  # type: ignore[misc,assignment]

__all__ = ["RenderDependencyMissing", "render_text", "table_text", "render_rgb", "require_pillow", "IMAGE_SIZE"]

IMAGE_SIZE = (560, 800)  # (height, width) of render_rgb's image

PILLOW_HINT = "rendering to rgb_array needs Pillow: pip install uno_env[render]"


class RenderDependencyMissing(_DependencyNotInstalled, ImportError):
    """Pillow is missing; both an ``ImportError`` and Gymnasium's ``DependencyNotInstalled``
    so either ``except`` clause catches it."""


def require_pillow() -> Any:
    """Import Pillow's drawing modules, or raise ``RenderDependencyMissing`` naming the extra."""
    try:
        from PIL import Image, ImageDraw, ImageFont
    except ImportError as err:
        raise RenderDependencyMissing(PILLOW_HINT) from err
    return Image, ImageDraw, ImageFont


def _seat_names(state: dict[str, Any], names: Sequence[str] | None) -> list[str]:
    n = state["num_players"]
    if names is None:
        return [f"player_{p}" for p in range(n)]
    if len(names) != n:
        raise ValueError(f"names must give one name per seat ({n}), got {len(names)}")
    return [str(x) for x in names]


def _acting_seat(state: dict[str, Any]) -> int | None:
    # At round_over nobody acts; showing the "current" seat's hand then would reveal a hand
    # that the rules keep hidden.
    return None if state["phase"] == "round_over" else int(state["current_player"])


def _winners(state: dict[str, Any]) -> list[int]:
    w = state.get("winner")
    if w is None:
        return []
    return [int(x) for x in w] if isinstance(w, list) else [int(w)]


# --- text ------------------------------------------------------------------------------------


def table_text(
    view: dict[str, Any],
    *,
    turn: int | None = None,
    acting: int | None = None,
    viewer: int | None = None,
    winners: Sequence[int] = (),
    ansi_colors: bool = False,
) -> str:
    """A seat view (``seat_view`` or ``state_view``) as text, the one table every terminal view prints."""
    phase, top, c = view["phase"], view["top_card"], view["current_color"]
    direction = "clockwise" if view["direction"] > 0 else "counter-clockwise"
    head = f"UNO - turn {turn} - " if turn is not None else "UNO - "
    colour = paint(c, c, ansi=ansi_colors) if c is not None else "none (a wild awaits its colour)"
    lines = [
        bold(f"{head}phase {phase} - {direction}", ansi=ansi_colors),
        f"Top card: {paint(top['name'], top['color'], ansi=ansi_colors) if top else 'none'} | colour: {colour}"
        f" | draw pile: {view['draw_pile_size']}"
        + (f" | pending draw: {view['pending_draw']}" if view["pending_draw"] else ""),
    ]
    seats = view["seats"]
    hands = view["hands"] if "hands" in view else [view["hand"] if s["seat"] == viewer else None for s in seats]
    width = max(len(s["name"]) for s in seats)
    for s in seats:
        p, count = s["seat"], s["hand_size"]
        marks = [m for m, on in (("to act", p == acting), ("UNO", s["uno"]), ("out", s["eliminated"])) if on]
        marks += ["WINNER"] * (p in winners)
        extra = f" [{', '.join(marks)}]" if marks else ""
        you = " (you)" if p == viewer and s["name"] != "you" else ""
        pointer = ">" if p == acting else " "
        lines.append(
            f" {pointer} {s['name']:<{width}}  {count:>3} card{'s' if count != 1 else ' '}  score {s['score']}{extra}{you}"
        )
    for s, hand in zip(seats, hands, strict=True):
        if hand is not None:
            cards = ", ".join(paint(x["name"], x["color"], ansi=ansi_colors) for x in hand) or "(empty)"
            lines.append(f"{'Your' if s['seat'] == viewer else s['name'] + chr(39) + 's'} hand: {cards}")
    if view["drawn_card"] is not None:
        d = view["drawn_card"]
        lines.append(f"You drew: {paint(d['name'], d['color'], ansi=ansi_colors)}")
    if phase == "round_over":
        names = {s["seat"]: s["name"] for s in seats}
        won = ", ".join(names[p] for p in winners)
        lines.append(f"Round over: {won} won." if won else "Round over: no winner (turn limit).")
    return "\n".join(lines)


def render_text(state: dict[str, Any], names: Sequence[str] | None = None, *, ansi_colors: bool = False) -> str:
    """The table as text (``table_text``) as the acting player may see it; ``ansi_colors`` adds terminal colours."""
    acting = _acting_seat(state)
    view = state_view(state, acting, _seat_names(state, names))
    if acting is None:  # nobody acts once the round is over, and no hand is shown
        view["hands"] = [None] * len(view["hands"])
    return table_text(view, turn=state["turn"], acting=acting, winners=_winners(state), ansi_colors=ansi_colors)


# --- image -----------------------------------------------------------------------------------

_RGB = ((214, 40, 40), (240, 200, 20), (40, 160, 70), (30, 90, 200))
_RGB_WILD = (30, 30, 30)
_FELT = (24, 96, 64)
_CARD_BACK = (150, 20, 20)
_WHITE = (255, 255, 255)
_HIGHLIGHT = (255, 220, 60)
_SHORT_RANK = tuple(str(r) for r in range(10)) + ("skip", "rev", "+2")
_SHORT_WILD = ("W", "W+4", "W shuf", "W swap", "W cust")


def _short(card: int) -> str:
    return _SHORT_RANK[card % NUM_RANKS] if card < 4 * NUM_RANKS else _SHORT_WILD[card - 4 * NUM_RANKS]


def _font(ImageFont: Any, size: int) -> Any:
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1: one fixed-size bitmap font
        return ImageFont.load_default()


def _draw_card(draw: Any, box: tuple[int, int, int, int], card: int | None, font: Any) -> None:
    """A card face (``card`` a type id) or, for ``None``, a card back."""
    x0, y0, x1, y1 = box
    radius = max(3, (x1 - x0) // 8)
    if card is None:
        draw.rounded_rectangle(box, radius, fill=_CARD_BACK, outline=_WHITE, width=2)
        draw.text(((x0 + x1) / 2, (y0 + y1) / 2), "UNO", fill=_HIGHLIGHT, font=font, anchor="mm")
        return
    color = card // NUM_RANKS if card < 4 * NUM_RANKS else -1
    fill = _RGB[color] if color >= 0 else _RGB_WILD
    draw.rounded_rectangle(box, radius, fill=fill, outline=_WHITE, width=2)
    ink = (20, 20, 20) if color == 1 else _WHITE  # white on yellow is unreadable
    draw.text(((x0 + x1) / 2, (y0 + y1) / 2), _short(card), fill=ink, font=font, anchor="mm")


class _Fonts(NamedTuple):
    small: Any
    medium: Any
    large: Any


# Where the centre of the table sits and how big its cards are; the seats ring round it.
_CENTRE = (IMAGE_SIZE[1] // 2, 215)
_CENTRE_CARD = (70, 100)


def render_rgb(state: dict[str, Any], names: Sequence[str] | None = None) -> np.ndarray:
    """The table as a ``uint8`` image of shape ``IMAGE_SIZE + (3,)``, the acting seat outlined (needs Pillow)."""
    Image, ImageDraw, ImageFont = require_pillow()
    names = _seat_names(state, names)
    height, width = IMAGE_SIZE
    img = Image.new("RGB", (width, height), _FELT)
    draw = ImageDraw.Draw(img)
    fonts = _Fonts(_font(ImageFont, 12), _font(ImageFont, 15), _font(ImageFont, 20))
    acting = _acting_seat(state)
    winners = _winners(state)
    _draw_header(draw, state, fonts)
    _draw_centre(draw, state, fonts)
    _draw_seats(draw, state, names, acting, winners, fonts)
    _draw_hand_strip(draw, state, names, acting, winners, fonts)
    return np.asarray(img, dtype=np.uint8)


def _draw_header(draw: Any, state: dict[str, Any], fonts: _Fonts) -> None:
    """What the acting player needs besides the cards."""
    direction = "clockwise" if state["direction"] == 1 else "counter-clockwise"
    header = f"turn {state['turn']}   phase: {state['phase']}   direction: {direction}"
    if state["pending_draw"]:
        header += f"   pending draw: {state['pending_draw']}"
    draw.text((12, 10), header, fill=_WHITE, font=fonts.medium)


def _draw_centre(draw: Any, state: dict[str, Any], fonts: _Fonts) -> None:
    """The draw pile (a back with its size), the top card, and the current colour's swatch."""
    cx, cy = _CENTRE
    cw, ch = _CENTRE_CARD
    _draw_card(draw, (cx - cw - 20, cy - ch // 2, cx - 20, cy + ch // 2), None, fonts.medium)
    draw.text(
        (cx - cw // 2 - 20, cy + ch // 2 + 12),
        f"{state['draw_pile_size']} left",
        fill=_WHITE,
        font=fonts.small,
        anchor="mm",
    )
    _draw_card(draw, (cx + 20, cy - ch // 2, cx + 20 + cw, cy + ch // 2), state["top_card"], fonts.large)
    color = state["current_color"]
    swatch = _RGB[color] if color is not None else _RGB_WILD
    draw.ellipse((cx + cw + 35, cy - 15, cx + cw + 65, cy + 15), fill=swatch, outline=_WHITE, width=2)
    label = COLOR_NAMES[color] if color is not None else "no colour yet"
    draw.text((cx + cw + 50, cy + 28), label, fill=_WHITE, font=fonts.small, anchor="mm")


def _draw_seats(
    draw: Any, state: dict[str, Any], names: list[str], acting: int | None, winners: list[int], fonts: _Fonts
) -> None:
    """Every seat's box on an oval: name, card count, score, UNO and winner tags."""
    cx, cy = _CENTRE
    n = state["num_players"]
    # Seat 0 at the bottom. On screen (y down) clockwise runs bottom -> left -> top -> right,
    # i.e. increasing angle from straight down.
    rx, ry = 320, 150
    bw, bh = 126, 46
    for p in range(n):
        angle = 2 * math.pi * p / n
        x = cx - rx * math.sin(angle)
        y = cy + ry * math.cos(angle)
        box = (int(x - bw / 2), int(y - bh / 2), int(x + bw / 2), int(y + bh / 2))
        outline = _HIGHLIGHT if p == acting else _WHITE
        draw.rounded_rectangle(box, 8, fill=(10, 60, 40), outline=outline, width=4 if p == acting else 1)
        tags = []
        if state["uno_called"][p]:
            tags.append("UNO")
        if p in winners:
            tags.append("WINNER")
        draw.text((x, y - 11), names[p], fill=outline, font=fonts.medium, anchor="mm")
        count = len(state["hands"][p])
        line = f"{count} card{'s' if count != 1 else ''}  score {state['scores'][p]}"
        if tags:
            line += "  " + " ".join(tags)
        draw.text((x, y + 10), line, fill=_WHITE, font=fonts.small, anchor="mm")


def _draw_hand_strip(
    draw: Any, state: dict[str, Any], names: list[str], acting: int | None, winners: list[int], fonts: _Fonts
) -> None:
    """The bottom strip: the acting player's hand (the only hand ever drawn), or who won."""
    height, width = IMAGE_SIZE
    top = 420
    draw.line((0, top - 8, width, top - 8), fill=_WHITE, width=1)
    if acting is None:
        text = "Round over: " + (", ".join(names[p] for p in winners) + " won" if winners else "no winner (turn limit)")
        draw.text((width // 2, top + 60), text, fill=_HIGHLIGHT, font=fonts.large, anchor="mm")
        return
    hand = state["hands"][acting]
    draw.text((12, top), f"{names[acting]} to act - hand of {len(hand)}:", fill=_HIGHLIGHT, font=fonts.medium)
    per_row = 16
    hw, hh, gap = 44, 44, 4
    for k, card in enumerate(hand[: per_row * 2]):
        row, col = divmod(k, per_row)
        x0 = 12 + col * (hw + gap)
        y0 = top + 22 + row * (hh + gap)
        _draw_card(draw, (x0, y0, x0 + hw, y0 + hh), card, fonts.small)
    if len(hand) > per_row * 2:
        draw.text(
            (width - 12, height - 12), f"+{len(hand) - per_row * 2} more", fill=_WHITE, font=fonts.small, anchor="rd"
        )
