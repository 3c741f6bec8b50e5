"""uno-web in a real browser: headless Debian chromium, driven by Playwright, plays a whole
2-player game by clicking (a wild's colour dialog and a Wild Draw Four challenge included) and
steps through its replay.

Needs ``/usr/bin/chromium`` (``bash .ci/install`` installs Debian's package) and the ``web`` extra; the
Playwright driver comes with the pip package and no browser is ever downloaded. Screenshots go
to a temporary folder, or to ``$UNO_WEB_SCREENSHOTS`` (docs/img/ holds the ones in the docs).
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
if not os.path.exists(CHROMIUM):
    pytest.fail(f"{CHROMIUM} is absent: install the test dependencies with `bash .ci/install` (README)", pytrace=False)
# A missing web extra is an error too, not a quiet skip.
try:
    import playwright.sync_api as playwright_api
    import uvicorn
except ImportError as exc:
    raise ImportError(f"{exc}: the browser test needs the web extra; install it with `bash .ci/install`") from exc

from uno_web.server import Settings, create_app  # noqa: E402

LAUNCH_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
# A seed (found by trying) under which the clicking policy below meets both a wild of its own
# and a Wild Draw Four from greedy; the test checks that both dialogs really appeared.
SEED = 21


@pytest.fixture(scope="module")
def server_url():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(Settings(allowed_hosts=["127.0.0.1"])), host="127.0.0.1", port=port, log_level="warning"
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "uno-web did not start in 20 s"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)


@pytest.fixture(scope="module")
def page():
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        # The page's CSP forbids eval, which wait_for_function needs; the test checks request URLs instead.
        context = browser.new_context(viewport={"width": 1280, "height": 860}, bypass_csp=True)
        pg = context.new_page()
        yield pg
        browser.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    target = os.environ.get("UNO_WEB_SCREENSHOTS")
    path = Path(target) if target else tmp_path_factory.mktemp("shots")
    path.mkdir(parents=True, exist_ok=True)
    return path


def _settled(page) -> str:
    """Wait until the page waits for the person or the game is over; return which."""
    page.wait_for_function("['your-turn', 'over'].includes(document.body.dataset.state)", timeout=30_000)
    return page.evaluate("document.body.dataset.state")


def test_play_a_whole_game_by_clicking_then_step_its_replay(page, server_url, shots):
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(server_url)
    page.wait_for_function("document.body.dataset.state === 'setup'")
    page.fill("#players", "2")
    page.select_option("#agent-0", "greedy")
    page.fill("#seed", str(SEED))
    page.click("#start")
    page.select_option("#speed", "0")
    seen = {"color": 0, "challenge": 0, "moves": 0}
    shot = False
    while _settled(page) == "your-turn":
        assert seen["moves"] < 400, "the game did not end in 400 clicks"
        if page.is_visible("#dialog"):
            buttons = page.locator("#dialog-buttons button")
            kinds = [buttons.nth(i).get_attribute("data-kind") for i in range(buttons.count())]
            if "challenge" in kinds:
                seen["challenge"] += 1
                target = buttons.nth(kinds.index("challenge"))
            elif "color" in kinds:
                seen["color"] += 1
                target = buttons.nth(kinds.index("color"))
            else:
                target = buttons.first
        else:
            wild = page.locator("#hand button.card.legal.wild")
            legal = page.locator("#hand button.card.legal")
            target = (
                wild.first if wild.count() else legal.first if legal.count() else page.locator("#actions button").first
            )
        if (
            not shot
            and seen["moves"] >= 4
            and not page.is_visible("#dialog")
            and page.locator("#hand button.card.legal").count() >= 2
        ):
            page.screenshot(path=str(shots / "web-table.png"))  # a turn with choices, for the docs
            shot = True
        target.click()
        seen["moves"] += 1
        page.wait_for_function("document.body.dataset.state !== 'busy'")
    assert page.is_visible("#result"), "the game ended but no result is shown"
    assert "Winner" in page.inner_text("#result") or "Turn limit" in page.inner_text("#result")
    assert seen["color"] >= 1, f"no colour dialog met in this game ({seen})"
    assert seen["challenge"] >= 1, f"no challenge dialog met in this game ({seen})"
    assert not errors, errors
    assert all(u.startswith(server_url) for u in requests), [u for u in requests if not u.startswith(server_url)]

    page.click("#watch-replay")
    page.wait_for_function("document.body.dataset.frame === '0'")
    for k in range(1, 6):
        page.click("#rp-fwd")
        page.wait_for_function(f"document.body.dataset.frame === '{k}'")
    page.click("#rp-back")
    page.wait_for_function("document.body.dataset.frame === '4'")
    assert "action 4 /" in page.inner_text("#rp-frame")
    # Omniscient view: both hands shown in the seat boxes.
    assert page.locator("#rp-seats .minihand").count() == 2
    page.click("#rp-fwd")
    page.wait_for_function("document.body.dataset.frame === '5'")
    page.screenshot(path=str(shots / "web-replay.png"))
    page.select_option("#rp-viewer", "1")
    page.wait_for_function("document.querySelectorAll('#rp-seats .minihand').length === 0")
    assert page.locator("#rp-hand .card").count() >= 1
    page.click("#rp-last")
    page.wait_for_function("document.body.dataset.frame !== '5'")
    assert not errors, errors
    assert shutil.disk_usage(shots)  # the screenshots were written
    assert (shots / "web-table.png").stat().st_size > 10_000 and (shots / "web-replay.png").stat().st_size > 10_000
