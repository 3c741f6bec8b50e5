// uno-web front end: plain JS, no framework, no network but this server's /api/.
"use strict";

const $ = (id) => document.getElementById(id);
const DIALOG_PHASES = {
  choose_color: "Choose a colour",
  choose_swap_target: "Swap hands with whom?",
  respond_draw_two: "A Draw Two is on you",
  respond_draw_four: "A Wild Draw Four is on you: challenge or accept?",
  post_draw: "You drew a card: play it or keep it?",
};
let config = null;
let game = null;      // {id, names, me, since, view}
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

function shortName(card) {
  return card.name.replace("wild draw four", "+4 wild").replace("draw two", "+2")
    .replace(/^(red|yellow|green|blue) /, "");
}

function cardNode(card, tag = "div", small = false) {
  const node = el(tag, `card ${card.color}${small ? " small" : ""}`, shortName(card));
  node.title = card.name;
  node.dataset.card = card.id;
  return node;
}

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
  box.replaceChildren(el("legend", "", "Opponents"));
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
  if ($("match").checked) options.episode = "match";
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
    game = { id: v.game_id, names: v.names, me: body.seat, since: 0, view: null };
    $("log").replaceChildren();
    $("result").hidden = true;
    show("table");
    applyView(v);
    run();
  } catch (e) { showError(e); }
}

// --- the table -----------------------------------------------------------------------------

function renderSeats(box, table, current, hands) {
  box.replaceChildren();
  for (const s of table.seats) {
    const node = el("div", "seat");
    node.id = `${box.id}-${s.seat}`;
    if (s.seat === current) node.classList.add("current");
    if (s.seat === table.seat) node.classList.add("me");
    if (s.eliminated) node.classList.add("out");
    const name = el("span", "name", s.name);
    node.append(name);
    if (s.uno) node.append(el("span", "uno", "UNO"));
    node.append(el("div", "", `${s.hand_size} card${s.hand_size === 1 ? "" : "s"} · ${s.score} pts`));
    if (s.catchable) node.append(el("div", "", "forgot to call UNO!"));
    if (hands) {
      const mini = el("span", "minihand");
      for (const c of hands[s.seat]) mini.append(cardNode(c, "div", true));
      node.append(mini);
    }
    box.append(node);
  }
}

function renderCentre(prefix, table) {
  $(`${prefix}draw-pile`).textContent = `${table.draw_pile_size} in the pile`;
  $(`${prefix}top-card`).replaceChildren(table.top_card ? cardNode(table.top_card) : el("div", "", "-"));
  const colour = $(`${prefix}colour`);
  colour.className = `swatch ${table.current_color || ""}`;
  colour.textContent = table.current_color || "to choose";
  $(`${prefix}direction`).textContent = table.direction > 0 ? "clockwise ↻" : "counter-clockwise ↺";
}

function appendLog(list, events, me) {
  for (const ev of events) {
    const li = el("li", ev.player === me ? "mine" : "", ev.text);
    list.append(li);
  }
  while (list.children.length > 400) list.firstChild.remove();
  list.parentElement.scrollTop = list.parentElement.scrollHeight;
}

function applyView(v) {
  game.view = v;
  appendLog($("log"), v.events, game.me);
  game.since = v.event_count;
  const t = v.table;
  renderSeats($("seats"), t, v.current_player, null);
  const before = game.topId;
  renderCentre("", t);
  game.topId = t.top_card ? t.top_card.id : null;
  if (before !== undefined && before !== game.topId) $("top-card").firstChild.classList.add("flash");
  if (v.mover) { const seat = $(`seats-${v.mover.seat}`); if (seat) seat.classList.add("flash"); }
  $("pending").textContent = t.pending_draw ? `Pending draw: ${t.pending_draw}` : "";
  $("round").textContent = config && v.moves !== undefined ? `Round ${t.round + 1} · move ${v.moves}` : "";
  const legal = v.legal || [];
  const hand = $("hand");
  hand.replaceChildren();
  for (const card of t.hand) {
    const moves = legal.filter((a) => (a.kind === "play" || a.kind === "double") && a.card === card.id);
    const btn = cardNode(card, "button");
    btn.type = "button";
    btn.disabled = moves.length === 0;
    if (moves.length) {
      btn.classList.add("legal");
      btn.addEventListener("click", () => playCard(card, moves));
    }
    hand.append(btn);
  }
  const bar = $("actions");
  bar.replaceChildren();
  const dialogPhase = v.your_turn && DIALOG_PHASES[t.phase];
  if (v.your_turn && !dialogPhase) {
    for (const a of legal.filter((x) => x.kind !== "play" && x.kind !== "double")) bar.append(actionButton(a));
  }
  if (v.over) {
    $("turn").textContent = "Game over";
    finish(v);
  } else if (v.your_turn) {
    $("turn").textContent = t.phase === "play" ? "Your turn: play a highlighted card or draw" : "Your decision";
  } else {
    $("turn").textContent = `${game.names[v.current_player]} is thinking…`;
  }
  if (dialogPhase) openDecision(v); else closeDialog();
  setState(v.over ? "over" : v.your_turn ? "your-turn" : "agents");
}

function actionButton(a, cls = "") {
  const btn = el("button", cls, a.name);
  btn.type = "button";
  btn.id = `act-${a.id}`;
  btn.dataset.kind = a.kind;
  if (a.kind === "color") btn.className = `choice ${a.color}`;
  if (a.kind === "swap") btn.textContent = `swap with ${game.names[(game.me + a.offset) % game.names.length]}`;
  btn.addEventListener("click", () => { closeDialog(); move(a.id); });
  return btn;
}

function openDialog(title, text, buttons) {
  $("dialog-title").textContent = title;
  $("dialog-text").textContent = text;
  $("dialog-buttons").replaceChildren(...buttons);
  const d = $("dialog");
  if (!d.open) d.showModal();
}

function closeDialog() { const d = $("dialog"); if (d.open) d.close(); }

function openDecision(v) {
  const t = v.table;
  let text = "";
  if (t.phase === "post_draw" && t.drawn_card) text = `You drew ${t.drawn_card.name}.`;
  if (t.phase.startsWith("respond")) text = `Accepting means drawing ${t.pending_draw} cards.`;
  const buttons = v.legal.map((a) => {
    const b = actionButton(a);
    if (a.kind === "pass" && t.phase === "post_draw") b.textContent = "keep it";
    return b;
  });
  openDialog(DIALOG_PHASES[t.phase], text, buttons);
}

function playCard(card, moves) {
  if (moves.length === 1) { move(moves[0].id); return; }
  // A number card that may also go down as a pair (allow_doubles): ask which.
  const buttons = moves.map((a) => {
    const b = actionButton(a);
    b.textContent = a.kind === "double" ? "play two" : "play one";
    return b;
  });
  openDialog(`Play ${card.name}`, "One card or both copies?", buttons);
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

// Agents' moves, one request each, paced by the speed control so they can be followed.
async function run() {
  if (looping) return;
  looping = true;
  try {
    while (game && game.view && !game.view.over && !game.view.your_turn) {
      setState("agents");
      await sleep(Number($("speed").value));
      const id = game.id;
      const v = await api("POST", `/api/games/${id}/advance?since=${game.since}`);
      if (!game || game.id !== id) break;
      applyView(v);
    }
  } catch (e) { showError(e); } finally { looping = false; }
}

function finish(v) {
  const box = $("result");
  const names = (v.winners || []).map((s) => game.names[s]);
  box.replaceChildren(el("strong", "", v.truncated ? "Turn limit reached: no winner." : `Winner: ${names.join(", ")}`));
  const scores = el("ul");
  for (const s of v.table.seats) scores.append(el("li", "", `${s.name}: ${s.score} points`));
  const again = el("button", "", "New game");
  again.type = "button";
  again.addEventListener("click", () => show("setup"));
  const watch = el("button", "", "Watch the replay");
  watch.type = "button";
  watch.id = "watch-replay";
  watch.addEventListener("click", async () => {
    try { openReplay(await api("POST", `/api/games/${game.id}/replay`)); } catch (e) { showError(e); }
  });
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
  info.names.forEach((name, s) => sel.append(new Option(`${name}'s view`, s)));
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
    renderSeats($("rp-seats"), t, f.over ? null : f.current_player, t.hands || null);
    renderCentre("rp-", t);
    $("rp-phase").textContent = `phase: ${t.phase}`;
    $("rp-hand").replaceChildren(...(t.hand || []).map((c) => cardNode(c)));
    $("rp-frame").textContent = `action ${f.frame} / ${f.length}`;
    $("rp-action").textContent = f.last_action ? `last: ${f.last_action.name}` : "deal";
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
  $("dialog").addEventListener("cancel", (e) => e.preventDefault()); // a decision must be made
  try {
    config = await api("GET", "/api/config");
    fillSetup();
    setState("setup");
  } catch (e) { showError(e); }
}

init();
