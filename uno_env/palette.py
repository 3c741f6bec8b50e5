"""The terminal palette: one ANSI colour per card colour and one for the wilds, for every text
view that paints (``uno_env.render``'s ``human`` mode, ``uno-play``'s table and narration).

Colours are named as ``uno_env.seat_view`` names them: ``COLOR_NAMES`` (R1 order) and
``"wild"``. With ``ansi=False`` every function returns its text unpainted.
"""

from __future__ import annotations

from .cards import COLOR_NAMES, card_name
from .seat_view import card_color

__all__ = ["ANSI", "BOLD", "RESET", "bold", "card_text", "paint"]

# ANSI SGR codes: bold red, yellow, green, blue; bold magenta for wilds.
ANSI: dict[str, str] = dict(
    zip((*COLOR_NAMES, "wild"), ("\x1b[1;31m", "\x1b[1;33m", "\x1b[1;32m", "\x1b[1;34m", "\x1b[1;35m"), strict=True)
)
BOLD = "\x1b[1m"
RESET = "\x1b[0m"


def paint(text: str, color: str, *, ansi: bool = True) -> str:
    """``text`` in the terminal colour ``color`` (a name of ``COLOR_NAMES`` or ``"wild"``)."""
    return f"{ANSI[color]}{text}{RESET}" if ansi else text


def bold(text: str, *, ansi: bool = True) -> str:
    """``text`` in bold."""
    return f"{BOLD}{text}{RESET}" if ansi else text


def card_text(card: int, *, ansi: bool = True) -> str:
    """A card type's name, painted in its colour."""
    return paint(card_name(card), card_color(card), ansi=ansi)
