// uno-web front end: plain JS, no framework, no network but this server's /api/.
"use strict";

const $ = (id) => document.getElementById(id);
const LETTER = { red: "R", yellow: "Y", green: "G", blue: "B", wild: "W" };
const DIALOG_PHASES = ["choose_color", "choose_swap_target", "respond_draw_two", "respond_draw_four", "post_draw"];
let config = null;
let game = null;      // {id, names, me, since, view, rules, roundsShown, paused}
let replay = null;    // {id, length, k, viewer, names}
let looping = false;

function setState(state) { document.body.dataset.state = state; }

async function api(method, path, body) {
  // Every POST and DELETE goes as JSON: the server refuses other kinds (another site's page
  // could send those without the browser asking first).
  const init = { method, headers: method === "GET" ? {} : { "Content-Type": "application/json" } };
  if (body !== undefined) init.body = typeof body === "string" ? body : JSON.stringify(body);
  const res = await fetch(path, init);
  const data = await res.json().catch(() => ({ error: `HTTP ${res.status}` }));
  if (!res.ok) throw new Error(data.error || `HTTP ${res.status}`);
  return data;
}

function showError(err) {
  const box = $("error");
  if (!err) { box.hidden = true; box.textContent = ""; return; }
  box.textContent = String(err.message || err);
  box.hidden = false;
}

function show(section) {
  for (const id of ["setup", "table", "replay"]) $(id).hidden = id !== section;
}

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

// --- cards ---------------------------------------------------------------------------------

// What a card shows in its oval: a big symbol and, for action cards, a word under it.
function cardFace(card) {
  const rank = card.name.replace(/^(red|yellow|green|blue) /, "");
  const faces = {
    skip: ["⊘", "skip"], reverse: ["⇄", "reverse"], "draw two": ["+2", "draw two"],
    wild: ["W", "wild"], "wild draw four": ["+4", "wild"], "wild shuffle hands": ["⤨", "shuffle"],
    "wild swap hands": ["⇆", "swap"], "wild customizable": ["★", "custom"],
  };
  return faces[rank] || [rank, ""];
}

function cardNode(card, tag = "div", small = false) {
  const node = el(tag, `card ${card.color}${small ? " small" : ""}`);
  const [symbol, word] = cardFace(card);
  const oval = el("span", symbol === "6" || symbol === "9" ? "rank under" : "rank", symbol);
  if (word) oval.append(el("small", "", word));
  node.append(el("span", "corner tl", LETTER[card.color]), oval, el("span", "corner br", LETTER[card.color]));
  node.title = card.name;
  node.setAttribute("aria-label", card.name);
  node.dataset.card = card.id;
  return node;
}

function colourName(c) { return c ? `${c} (${LETTER[c]})` : "to choose"; }

// --- setup ---------------------------------------------------------------------------------

function fillSetup() {
  const preset = $("preset");
  for (const name of Object.keys(config.presets)) preset.append(new Option(name, name));
  $("players").addEventListener("input", seatsChanged);
  $("seat").addEventListener("change", seatsChanged);
  seatsChanged();
}

function seatsChanged() {
  const n = Math.max(2, Math.min(10, Number($("players").value) || 2));
  const seat = $("seat");
  const keep = Math.min(Number(seat.value) || 0, n - 1);
  seat.replaceChildren(...Array.from({ length: n }, (_, s) => new Option(`seat ${s}`, s)));
  seat.value = keep;
  const box = $("agents");
  const old = Array.from(box.querySelectorAll("select")).map((s) => s.value);
  box.replaceChildren(el("legend", "", "Opponents (clockwise from your left)"));
  let k = 0;
  for (let s = 0; s < n; s++) {
    if (s === keep) continue;
    const label = el("label", "", `seat ${s} `);
    const select = el("select");
    select.id = `agent-${k}`;
    for (const name of config.agents) select.append(new Option(name, name));
    select.value = old[k] || (config.agents.includes("heuristic") ? "heuristic" : config.agents[0]);
    label.append(select);
    box.append(label);
    k++;
  }
}

async function startGame(event) {
  event.preventDefault();
  showError(null);
  let options = {};
  const text = $("options").value.trim();
  if (text) {
    try { options = JSON.parse(text); } catch (e) { showError(`rule options are not valid JSON: ${e.message}`); return; }
  }
  if ($("match").checked) {
    options.episode = "match";
    if ($("target").value !== "" && options.target_points === undefined) options.target_points = Number($("target").value);
  }
  const body = {
    players: Number($("players").value),
    seat: Number($("seat").value),
    preset: $("preset").value,
    options,
    agents: Array.from($("agents").querySelectorAll("select")).map((s) => s.value),
  };
  if ($("seed").value !== "") body.seed = Number($("seed").value);
  try {
    const v = await api("POST", "/api/games", body);
    game = { id: v.game_id, names: v.names, me: body.seat, since: 0, view: null, rules: v.rules, roundsShown: 0, paused: false };
    $("log").replaceChildren();
    $("result").hidden = true;
    closeSummary();
    show("table");
    applyView(v);
    run();
  } catch (e) { showError(e); }
}

// --- the table -----------------------------------------------------------------------------

// Seats go round the oval in seating order, clockwise as seen from above, with `bottom` (you,
// or the replay's viewer) nearest; arrows between neighbours point the way play goes.
function renderSeats(box, table, current, hands, bottom) {
  box.replaceChildren();
  const n = table.seats.length;
  const angle = (seat) => Math.PI / 2 + (2 * Math.PI * (((seat - bottom) % n) + n)) / n;
  for (const s of table.seats) {
    const node = el("div", "seat");
    node.id = `${box.id}-${s.seat}`;
    node.dataset.seat = s.seat;
    const a = angle(s.seat);
    node.style.left = `${50 + 50 * Math.cos(a)}%`;
    node.style.top = `${50 + 50 * Math.sin(a)}%`;
    if (s.seat === current) node.classList.add("current");
    if (s.seat === table.seat) node.classList.add("me");
    if (s.eliminated) node.classList.add("out");
    const name = el("span", "name");
    name.append(el("span", "order", String(s.seat)), s.name.replace(/ \(seat \d+\)$/, ""));
    name.title = s.name;
    node.append(name);
    if (hands) {
      const mini = el("div", "minihand");
      for (const c of hands[s.seat]) mini.append(cardNode(c, "div", true));
      node.append(mini);
    } else {
      const backs = el("div", "backs");
      for (let k = 0; k < Math.min(s.hand_size, 12); k++) backs.append(el("span"));
      node.append(backs);
    }
    const line = el("div", "", `${s.hand_size} card${s.hand_size === 1 ? "" : "s"} · ${s.score} pts`);
    if (s.uno && s.hand_size === 1) line.append(el("span", "uno", "UNO"));
    node.append(line);
    if (s.catchable) node.append(el("div", "catch", "forgot to call UNO!"));
    if (s.eliminated) node.append(el("div", "", "eliminated"));
    box.append(node);
  }
  for (let k = 0; k < n; k++) {
    const a = Math.PI / 2 + (2 * Math.PI * (k + 0.5)) / n;
    const arrow = el("div", "flow", "➜");
    arrow.style.left = `${50 + 38 * Math.cos(a)}%`;
    arrow.style.top = `${50 + 38 * Math.sin(a)}%`;
    const turn = a + (table.direction > 0 ? Math.PI / 2 : -Math.PI / 2);
    arrow.style.transform = `translate(-50%, -50%) rotate(${turn}rad)`;
    box.append(arrow);
  }
}

function renderCentre(prefix, table) {
  $(`${prefix}draw-pile`).textContent = `${table.draw_pile_size} in the pile`;
  $(`${prefix}top-card`).replaceChildren(table.top_card ? cardNode(table.top_card) : el("div", "", "-"));
  const colour = $(`${prefix}colour`);
  colour.className = `swatch ${table.current_color || ""}`;
  colour.textContent = `colour: ${colourName(table.current_color)}`;
  const dir = $(`${prefix}direction`);
  dir.replaceChildren(el("span", "arrow", table.direction > 0 ? "↻" : "↺"),
    table.direction > 0 ? "clockwise" : "counter-clockwise");
}

function appendLog(list, events, me) {
  for (const ev of events) {
    const li = el("li", ev.player === me ? "mine" : "", ev.text);
    list.append(li);
  }
  while (list.children.length > 400) list.firstChild.remove();
  list.parentElement.scrollTop = list.parentElement.scrollHeight;
}

function renderBanner(v) {
  const box = $("banner");
  const m = v.last_move;
  if (!m) { box.replaceChildren(el("strong", "", "New deal:"), "the cards are dealt."); return; }
  box.replaceChildren(el("strong", "", "Last move:"), m.text.join("; ") || m.action.name);
}

function applyView(v, fresh = true) {
  game.view = v;
  if (fresh) appendLog($("log"), v.events, game.me);
  game.since = v.event_count;
  const t = v.table;
  renderBanner(v);
  renderSeats($("seats"), t, v.current_player, null, game.me);
  const before = game.topId;
  renderCentre("", t);
  game.topId = t.top_card ? t.top_card.id : null;
  if (before !== undefined && before !== game.topId) $("top-card").firstChild.classList.add("flash");
  if (v.mover) { const seat = $(`seats-${v.mover.seat}`); if (seat) seat.classList.add("flash"); }
  $("pending").textContent = t.pending_draw ? `next draws ${t.pending_draw}` : "";
  const match = game.rules.episode === "match";
  const round = v.over ? Math.max(1, v.rounds_finished) : v.rounds_finished + 1;
  $("round").textContent = (match ? `Match to ${game.rules.target_points} points · round ${round} · ` : "")
    + `move ${v.moves} of at most ${v.max_moves}`;
  const legal = v.legal || [];
  const hand = $("hand");
  hand.replaceChildren();
  for (const card of t.hand) {
    const moves = legal.filter((a) => (a.kind === "play" || a.kind === "double") && a.card === card.id);
    const btn = cardNode(card, "button");
    btn.type = "button";
    btn.disabled = moves.length === 0 || DIALOG_PHASES.includes(t.phase);
    btn.dataset.moves = moves.map((a) => a.kind).join(" ");
    if (!btn.disabled) {
      btn.classList.add("legal");
      btn.addEventListener("click", () => playCard(card, moves));
    }
    hand.append(btn);
  }
  const bar = $("actions");
  bar.replaceChildren();
  const dialogPhase = v.your_turn && DIALOG_PHASES.includes(t.phase);
  if (v.your_turn && !dialogPhase) {
    for (const a of legal.filter((x) => x.kind !== "play" && x.kind !== "double")) bar.append(actionButton(a, v));
  }
  if (v.over) {
    $("turn").textContent = "Game over";
    finish(v);
  } else if (v.your_turn) {
    $("turn").textContent = t.phase === "play" ? "Your turn: play a raised card or draw" : "Your decision";
  } else {
    $("turn").textContent = `${game.names[v.current_player]} is thinking…`;
  }
  if (v.rounds_finished > game.roundsShown) {
    game.roundsShown = v.rounds_finished;
    openSummary(v);
  }
  const summaryOpen = $("summary").open;
  if (dialogPhase && !summaryOpen) openDecision(v); else closeDialog();
  setState(summaryOpen && !v.over ? "round-over" : v.over ? "over" : v.your_turn ? "your-turn" : "agents");
}

function seatName(seat) { return seat === game.me ? "you" : game.names[seat]; }

function actionButton(a, v) {
  const btn = el("button", "", a.name);
  btn.type = "button";
  btn.id = `act-${a.id}`;
  btn.dataset.kind = a.kind;
  if (a.kind === "color") {
    btn.className = `choice ${a.color}`;
    btn.textContent = `${a.color} (${LETTER[a.color]})`;
  }
  if (a.kind === "swap") {
    const seat = (game.me + a.offset) % game.names.length;
    const size = v.table.seats[seat].hand_size;
    btn.textContent = `swap with ${game.names[seat]} (${size} card${size === 1 ? "" : "s"})`;
  }
  if (a.kind === "draw") btn.textContent = v.table.phase === "play" ? "Draw a card" : `Draw ${v.table.pending_draw}`;
  if (a.kind === "pass") btn.textContent = "Pass";
  if (a.kind === "call_uno") { btn.className = "big call"; btn.textContent = "UNO!"; }
  if (a.kind === "catch_uno") {
    const caught = v.table.seats.filter((s) => s.catchable).map((s) => s.name);
    btn.className = "big catch";
    btn.textContent = `Catch ${caught.join(", ") || "them"}: no UNO called!`;
  }
  btn.addEventListener("click", () => { closeDialog(); move(a.id); });
  return btn;
}

function openDialog(title, text, nodes, kind) {
  $("dialog-title").textContent = title;
  $("dialog-text").replaceChildren(...(Array.isArray(text) ? text : [text]));
  $("dialog-buttons").replaceChildren(...nodes);
  const d = $("dialog");
  d.dataset.kind = kind;
  if (!d.open) d.showModal();
}

function closeDialog() { const d = $("dialog"); if (d.open) d.close(); }

function openDecision(v) {
  const t = v.table;
  const r = game.rules;
  const by = v.last_play ? seatName(v.last_play.player) : "someone";
  const buttons = v.legal.map((a) => {
    const b = actionButton(a, v);
    if (a.kind === "pass" && t.phase === "post_draw") b.textContent = "Keep it";
    if (a.kind === "play" && t.phase === "post_draw") b.textContent = "Play it";
    if (a.kind === "play" && t.phase.startsWith("respond")) b.textContent = `Stack ${a.name.replace("play ", "")}`;
    if (a.kind === "accept") b.textContent = `Accept: draw ${t.pending_draw}`;
    if (a.kind === "challenge") b.textContent = "Challenge";
    return b;
  });
  let title = "";
  let text = "";
  if (t.phase === "choose_color") {
    title = "Choose the colour to play on";
    text = "The next player must match this colour (or play a wild).";
  } else if (t.phase === "choose_swap_target") {
    title = "Swap hands with whom?";
    text = "You give your whole hand and take theirs.";
  } else if (t.phase === "post_draw") {
    title = "You drew a playable card";
    text = [t.drawn_card ? cardNode(t.drawn_card) : "", " Play it now, or keep it and end your turn."];
  } else if (t.phase === "respond_draw_two") {
    title = `A Draw Two from ${by}`;
    text = r.stack_draw_two
      ? `Stack a Draw Two of your own to pass ${t.pending_draw + 2} on to the next player, or draw ${t.pending_draw} and lose your turn.`
      : `Draw ${t.pending_draw} and lose your turn.`;
  } else if (t.phase === "respond_draw_four") {
    title = `A Wild Draw Four from ${by}`;
    const prev = t.wd4_prev_color;
    const parts = [`The colour before it was ${colourName(prev)}.`, `Accept: you draw ${t.pending_draw} and lose your turn.`];
    if (v.legal.some((a) => a.kind === "challenge")) {
      parts.push(`Challenge: if ${by} held a card of that colour (a bluff), ${by} draws ${r.challenge_guilty_draw} and you play on;`
        + ` if not, you draw ${r.challenge_innocent_draw} and lose your turn.`);
    }
    text = parts.join(" ");
  }
  openDialog(title, text, buttons, t.phase);
}

function playCard(card, moves) {
  if (moves.length === 1) { move(moves[0].id); return; }
  // A number card that may also go down as a pair (allow_doubles): ask which, or take it back.
  const buttons = moves.map((a) => {
    const b = actionButton(a, game.view);
    b.textContent = a.kind === "double" ? "Play both copies" : "Play one";
    return b;
  });
  const cancel = el("button", "cancel", "Cancel");
  cancel.type = "button";
  cancel.id = "dialog-cancel";
  cancel.dataset.kind = "cancel";
  cancel.addEventListener("click", closeDialog);
  buttons.push(cancel);
  openDialog(`Play ${card.name}`, [cardNode(card), " One card, or both copies together?"], buttons, "double");
}

async function move(action) {
  showError(null);
  setState("busy");
  try {
    applyView(await api("POST", `/api/games/${game.id}/move?since=${game.since}`, { action }));
    run();
  } catch (e) { showError(e); setState(game.view.your_turn ? "your-turn" : "agents"); }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Agents' moves, one request each, paced by the speed control so they can be followed; a
// round's summary holds them until "Next round".
async function run() {
  if (looping) return;
  looping = true;
  try {
    while (game && game.view && !game.view.over && !game.view.your_turn && !$("summary").open) {
      setState("agents");
      await sleep(Number($("speed").value));
      const id = game.id;
      const v = await api("POST", `/api/games/${id}/advance?since=${game.since}`);
      if (!game || game.id !== id) break;
      applyView(v);
    }
  } catch (e) { showError(e); } finally { looping = false; }
}

// --- the end of a round, and of the game -----------------------------------------------------

function openSummary(v) {
  const s = v.last_round;
  const match = game.rules.episode === "match";
  const winners = s.winners.map(seatName);
  let title = `Round ${s.round} over: ${winners.join(", ")} ${winners.length === 1 && winners[0] !== "you" ? "wins" : "win"}`;
  if (v.over && match) title = `Match over after ${s.round} round${s.round === 1 ? "" : "s"}: ${v.winners.map(seatName).join(", ")}`;
  $("summary-title").textContent = title;
  $("summary-text").textContent = match
    ? `Every hand is laid down and counted. The match ends when someone reaches ${game.rules.target_points} points.`
    : "Every hand is laid down and counted.";
  const rows = $("summary-rows");
  rows.replaceChildren();
  for (const h of s.hands) {
    const seat = v.table.seats[h.seat];
    const tr = el("tr", s.winners.includes(h.seat) ? "winner" : "");
    tr.dataset.seat = h.seat;
    const cards = el("td", "");
    for (const c of h.cards) cards.append(cardNode(c, "div", true));
    if (!h.cards.length) cards.textContent = "none";
    const total = match ? `${seat.score} / ${game.rules.target_points}` : String(seat.score);
    tr.append(el("td", "", game.names[h.seat]), cards, el("td", "num", String(h.points)),
      el("td", "num", String(s.scored[h.seat])), el("td", "num", total));
    rows.append(tr);
  }
  const buttons = [];
  const button = (id, text, fn) => { const b = el("button", "", text); b.type = "button"; b.id = id; b.addEventListener("click", fn); buttons.push(b); };
  if (!v.over) {
    button("next-round", "Next round", () => { closeSummary(); applyView(game.view, false); run(); });
  } else {
    button("summary-replay", "Watch the replay", watchReplay);
    button("summary-new", "New game", () => { closeSummary(); show("setup"); });
    button("summary-close", "Close", closeSummary);
  }
  $("summary-buttons").replaceChildren(...buttons);
  closeDialog();
  const d = $("summary");
  if (!d.open) d.showModal();
}

function closeSummary() { const d = $("summary"); if (d.open) d.close(); }

async function watchReplay() {
  closeSummary();
  try { openReplay(await api("POST", `/api/games/${game.id}/replay`)); } catch (e) { showError(e); }
}

function finish(v) {
  const box = $("result");
  const names = (v.winners || []).map((s) => game.names[s]);
  let head = `Winner: ${names.join(", ")}`;
  if (v.eliminated) head = "You were eliminated from the match: the game is over for you.";
  else if (v.at_action_limit) head = `The game stopped at the table's limit of ${v.max_moves} moves: no winner.`;
  else if (v.truncated) head = "Turn limit reached: no winner.";
  box.replaceChildren(el("strong", "", head));
  const scores = el("ul");
  for (const s of v.table.seats) scores.append(el("li", "", `${s.name}: ${s.score} points`));
  const again = el("button", "", "New game");
  again.type = "button";
  again.addEventListener("click", () => show("setup"));
  const watch = el("button", "", "Watch the replay");
  watch.type = "button";
  watch.id = "watch-replay";
  watch.addEventListener("click", watchReplay);
  box.append(scores, again, " ", watch);
  box.hidden = false;
}

// --- replay viewer -------------------------------------------------------------------------

async function openRecordText(text) {
  showError(null);
  const index = Number($("record-index").value) || 0;
  try { openReplay(await api("POST", `/api/replays?index=${index}`, text)); } catch (e) { showError(e); }
}

function openReplay(info) {
  replay = { id: info.replay_id, length: info.length, k: 0, viewer: "", names: info.names };
  const sel = $("rp-viewer");
  sel.replaceChildren(new Option("omniscient (every hand)", ""));
  info.names.forEach((name, s) => sel.append(new Option(name === "you" ? "your view" : `${name}'s view`, s)));
  show("replay");
  $("replay-open").hidden = true;
  $("replay-view").hidden = false;
  frame(0);
}

async function frame(k) {
  if (!replay) return;
  k = Math.max(0, Math.min(replay.length, k));
  const q = replay.viewer === "" ? "" : `?seat=${replay.viewer}`;
  try {
    const f = await api("GET", `/api/replays/${replay.id}/frames/${k}${q}`);
    replay.k = f.frame;
    const t = f.table;
    const bottom = replay.viewer === "" ? 0 : Number(replay.viewer);
    renderSeats($("rp-seats"), t, f.over ? null : f.current_player, t.hands || null, bottom);
    renderCentre("rp-", t);
    $("rp-phase").textContent = `phase: ${t.phase.replace(/_/g, " ")}`;
    $("rp-hand").replaceChildren(...(t.hand || []).map((c) => cardNode(c)));
    $("rp-frame").textContent = `action ${f.frame} / ${f.length}`;
    $("rp-action").textContent = f.last_action ? `last action: ${f.last_action.name}` : "the deal";
    const log = $("rp-log");
    log.replaceChildren();
    appendLog(log, f.events, replay.viewer === "" ? -1 : Number(replay.viewer));
    document.body.dataset.frame = f.frame;
  } catch (e) { showError(e); }
}

// --- wiring --------------------------------------------------------------------------------

async function init() {
  $("setup-form").addEventListener("submit", startGame);
  $("nav-play").addEventListener("click", () => { show("setup"); });
  $("nav-replay").addEventListener("click", () => {
    show("replay"); $("replay-open").hidden = false; $("replay-view").hidden = true;
  });
  $("record-open").addEventListener("click", () => openRecordText($("record-text").value));
  $("record-file").addEventListener("change", async (e) => {
    const file = e.target.files[0];
    if (file) openRecordText(await file.text());
  });
  $("rp-first").addEventListener("click", () => frame(0));
  $("rp-back").addEventListener("click", () => frame(replay.k - 1));
  $("rp-fwd").addEventListener("click", () => frame(replay.k + 1));
  $("rp-last").addEventListener("click", () => frame(replay.length));
  $("rp-viewer").addEventListener("change", (e) => { replay.viewer = e.target.value; frame(replay.k); });
  // A decision must be made, but "one card or two" may be taken back (Escape cancels it).
  $("dialog").addEventListener("cancel", (e) => { if ($("dialog").dataset.kind !== "double") e.preventDefault(); });
  $("summary").addEventListener("cancel", (e) => e.preventDefault());
  try {
    config = await api("GET", "/api/config");
    fillSetup();
    setState("setup");
  } catch (e) { showError(e); }
}

init();
