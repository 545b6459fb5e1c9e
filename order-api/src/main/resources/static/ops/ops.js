// The ops console: reads the admin JSON endpoints with the admin token the operator pasted (kept in
// sessionStorage, so it dies with the tab). Everything from the server is written with textContent,
// never as HTML: a mode-change reason is free text.
"use strict";

const TOKEN_KEY = "flashsale.ops.token";
const WATCH_KEY = "flashsale.ops.watched";
const TICK_MS = 1500;
const HISTORY_MS = 10 * 60 * 1000;

let timer = null;
let ticks = 0;
const sellThrough = new Map(); // sale id -> [{t, sold}]

const $ = (id) => document.getElementById(id);

class Refused extends Error {
  constructor(status, code) {
    super(code);
    this.status = status;
    this.code = code;
  }
}

async function call(path, options = {}) {
  const token = sessionStorage.getItem(TOKEN_KEY);
  const response = await fetch(path, {
    ...options,
    headers: { ...(options.headers || {}), Authorization: "Bearer " + token, Accept: "application/json" },
  });
  if (response.status === 401 || response.status === 403) {
    let code = response.status === 401 ? "UNAUTHORIZED" : "FORBIDDEN";
    try { code = (await response.json()).code || code; } catch (ignored) { /* no body */ }
    throw new Refused(response.status, code);
  }
  if (!response.ok) {
    let detail = response.status + "";
    try { const problem = await response.json(); detail = problem.code + ": " + (problem.detail || ""); } catch (ignored) { /* no body */ }
    throw new Error(detail);
  }
  return response.json();
}

function refusedMessage(error) {
  return error.status === 403
    ? "Refused (403 " + error.code + "): this is not an admin token. The console needs a token with scope admin (scripts/token.py --admin)."
    : "Refused (401 " + error.code + "): the token is not valid (expired, malformed or signed with another secret).";
}

function say(message, kind) {
  const status = $("auth-status");
  status.textContent = message;
  status.className = kind || "";
}

function stop(message) {
  if (timer) clearInterval(timer);
  timer = null;
  sessionStorage.removeItem(TOKEN_KEY);
  $("console").hidden = true;
  say(message, "error");
}

async function start(token) {
  sessionStorage.setItem(TOKEN_KEY, token);
  try {
    await call("/api/v1/admin/mode");
  } catch (error) {
    stop(error instanceof Refused ? refusedMessage(error) : "The API could not be reached: " + error.message);
    return;
  }
  say("Admin token accepted. Refreshing every " + TICK_MS / 1000 + " s.", "ok");
  $("console").hidden = false;
  if (timer) clearInterval(timer);
  ticks = 0;
  await tick();
  timer = setInterval(tick, TICK_MS);
}

async function tick() {
  const slow = ticks++ % 4 === 0;
  const jobs = [refreshMode(), refreshLive(), refreshWatched()];
  if (slow) jobs.push(refreshChanges(), refreshRecent());
  const results = await Promise.allSettled(jobs);
  const refused = results.find((r) => r.status === "rejected" && r.reason instanceof Refused);
  if (refused) stop(refusedMessage(refused.reason));
}

function text(id, value) {
  $(id).textContent = value === null || value === undefined ? "–" : value;
}

function fmt(number, digits = 1) {
  return number === null || number === undefined ? "–" : Number(number).toFixed(digits);
}

function when(instant) {
  return instant ? new Date(instant).toLocaleString() : "–";
}

async function refreshMode() {
  const mode = await call("/api/v1/admin/mode");
  text("mode-setting", mode.mode);
  text("mode-effective", mode.effective);
  text("mode-changed", when(mode.changedAt) + " by " + mode.changedBy + (mode.reason ? " — " + mode.reason : ""));
  const last = mode.lastSwitch;
  text("auto-last-switch", last ? when(last.at) + " to " + last.to + ": " + last.reason : "none since AUTO was engaged");
}

async function refreshLive() {
  const live = await call("/api/v1/admin/live");
  text("live-at", "at " + new Date(live.at).toLocaleTimeString());
  text("auto-pressure", live.setting === "AUTO" ? fmt(live.autoPressure, 2) : "– (AUTO not engaged)");
  text("live-accept-sync", fmt(live.acceptedPerSecond.SYNC));
  text("live-accept-async", fmt(live.acceptedPerSecond.ASYNC));
  text("live-p99-sync", live.acceptP99Millis.SYNC == null ? "– (none lately)" : fmt(live.acceptP99Millis.SYNC) + " ms");
  text("live-p99-async", live.acceptP99Millis.ASYNC == null ? "– (none lately)" : fmt(live.acceptP99Millis.ASYNC) + " ms");
  const orders = live.orders;
  if (orders.error) {
    text("live-queue-depth", orders.error);
    text("live-drain-rate", "–");
    text("live-consumers", "–");
  } else {
    text("live-queue-depth", orders.depth + " (" + orders.ready + " ready, " + orders.unacknowledged + " being written)");
    text("live-drain-rate", fmt(orders.ackRate) + " (published " + fmt(orders.publishRate) + "/s)");
    text("live-consumers", orders.consumers);
  }
  text("live-retry-depth", live.retries.error ? live.retries.error : live.retries.depth);
  text("live-dead-letters", live.deadLetters.error ? live.deadLetters.error : live.deadLetters.depth);
  text("live-breakers", Object.entries(live.breakers).map(([name, state]) => name + " " + state).join(", "));
  text("live-bulkhead", live.syncBulkhead.available + " of " + live.syncBulkhead.max);
  const refusals = [];
  for (const [mode, outcomes] of Object.entries(live.purchasesPerSecond)) {
    for (const [outcome, rate] of Object.entries(outcomes)) {
      if (rate > 0 && outcome !== "CONFIRMED" && outcome !== "ACCEPTED") refusals.push(mode + " " + outcome + " " + fmt(rate));
    }
  }
  text("live-refusals", refusals.length ? refusals.join(", ") : "none");
}

async function refreshChanges() {
  const changes = await call("/api/v1/admin/mode/changes?limit=10");
  const body = $("mode-changes").tBodies[0];
  body.replaceChildren(...changes.map((change) => row([when(change.changedAt), change.changedBy, change.from, change.to, change.reason || ""])));
}

function row(cells, classes = []) {
  const tr = document.createElement("tr");
  cells.forEach((cell, i) => {
    const td = document.createElement("td");
    if (cell instanceof Node) td.append(cell); else td.textContent = cell;
    if (classes[i]) td.className = classes[i];
    tr.append(td);
  });
  return tr;
}

function watched() {
  try { return JSON.parse(sessionStorage.getItem(WATCH_KEY) || "[]"); } catch (ignored) { return []; }
}

function watch(id) {
  const ids = watched().filter((x) => x !== id);
  ids.unshift(id);
  sessionStorage.setItem(WATCH_KEY, JSON.stringify(ids.slice(0, 8)));
}

// Rebuilds a sale's Redis stock from Postgres (the reconciler's job, on demand): its purchases are refused
// with 503 SALE_REBUILDING meanwhile, so the operator confirms first.
async function rebuild(id) {
  if (!window.confirm("Rebuild sale " + id + "'s Redis stock from Postgres? Its purchases are refused meanwhile.")) return;
  const status = $("rebuild-status");
  try {
    const view = await call("/api/v1/admin/sales/" + id + "/rebuild", { method: "POST" });
    status.textContent = "Sale " + id + " rebuilt from Postgres: " + view.redisRemaining + " left in Redis, "
      + (view.balanced ? "balanced." : "NOT BALANCED.");
    status.className = view.balanced ? "ok" : "error";
  } catch (error) {
    if (error instanceof Refused) { stop(refusedMessage(error)); return; }
    status.textContent = "Sale " + id + " was not rebuilt: " + error.message;
    status.className = "error";
  }
  refreshWatched();
}

function actions(id) {
  const span = document.createElement("span");
  span.append(button("rebuild", () => rebuild(id)), " ", button("unwatch", () => unwatch(id)));
  return span;
}

function unwatch(id) {
  sessionStorage.setItem(WATCH_KEY, JSON.stringify(watched().filter((x) => x !== id)));
  sellThrough.delete(id);
  refreshWatched();
}

function button(label, onClick) {
  const b = document.createElement("button");
  b.type = "button";
  b.textContent = label;
  b.addEventListener("click", onClick);
  return b;
}

async function refreshRecent() {
  const sales = await call("/api/v1/admin/sales?limit=10");
  const body = $("recent-sales").tBodies[0];
  body.replaceChildren(...sales.map((sale) => row(
    [sale.id + "", sale.sku, sale.stock + "", sale.redisRemaining + "", sale.state, sale.why,
      button("watch", () => { watch(sale.id); refreshWatched(); })],
    ["", "", "", "", "state-" + sale.state, "", ""])));
}

function sparkline(points) {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("class", "spark");
  svg.setAttribute("viewBox", "0 0 160 28");
  if (points.length > 1) {
    const t0 = points[0].t;
    const span = Math.max(1, points[points.length - 1].t - t0);
    const line = document.createElementNS(ns, "polyline");
    line.setAttribute("points", points.map((p) => ((p.t - t0) / span * 158 + 1).toFixed(1) + "," + (27 - p.sold * 26).toFixed(1)).join(" "));
    svg.append(line);
  }
  return svg;
}

// A sale's line (first come, first served): places handed out, the place served up to, the places not
// served yet, and the units places ahead gave up to the next ones.
function lineText(line) {
  if (!line) return "no line";
  return line.handedOut + " handed out, serving " + line.serving + ", " + line.waiting + " waiting, "
    + line.givenUp + " given up";
}

async function refreshWatched() {
  const ids = watched();
  const body = $("watched-sales").tBodies[0];
  const rows = await Promise.all(ids.map(async (id) => {
    let stock;
    let summary;
    try {
      [stock, summary] = await Promise.all([
        call("/api/v1/admin/sales/" + id + "/stock"),
        call("/api/v1/admin/sales/" + id + "/state"),
      ]);
    } catch (error) {
      if (error instanceof Refused) throw error;
      const tr = row([id + "", error.message, "", "", "", "", "", "", "", "", "", "", button("unwatch", () => unwatch(id))]);
      tr.id = "sale-" + id;
      return tr;
    }
    const now = Date.now();
    const history = (sellThrough.get(id) || []).filter((p) => now - p.t < HISTORY_MS);
    const sold = stock.initialStock ? (stock.confirmed + stock.queued) / stock.initialStock : 0;
    history.push({ t: now, sold });
    sellThrough.set(id, history);
    const through = document.createElement("span");
    through.append(sparkline(history), " " + Math.round(sold * 100) + " %");
    const state = summary.state + (summary.selling ? "" : ": " + summary.why);
    const tr = row(
      [id + "", state, stock.initialStock + "", stock.redisRemaining + "", stock.dbRemaining + "", stock.confirmed + "",
        stock.queued + "", stock.rejected + "", stock.failed + "", stock.balanced ? "balanced" : "NOT BALANCED",
        through, lineText(summary.line), actions(id)],
      ["id", "state state-" + summary.state, "initial", "redis", "db", "confirmed", "queued", "rejected", "failed",
        "verdict " + (stock.balanced ? "ok" : "broken"), "through", "line", ""]);
    tr.id = "sale-" + id;
    return tr;
  }));
  body.replaceChildren(...rows);
}

$("token-form").addEventListener("submit", (event) => {
  event.preventDefault();
  start($("token").value.trim());
  $("token").value = "";
});

$("token-forget").addEventListener("click", () => stop("Token forgotten. Paste an admin token to start again."));

$("mode-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const status = $("mode-status");
  const reason = $("mode-reason").value.trim();
  if (!reason) {
    status.textContent = "A reason is required.";
    status.className = "error";
    return;
  }
  try {
    const mode = await call("/api/v1/admin/mode", {
      method: "PUT",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ mode: $("mode-select").value, reason }),
    });
    status.textContent = "Mode set to " + mode.mode + ".";
    status.className = "ok";
    $("mode-reason").value = "";
    await Promise.all([refreshMode(), refreshChanges()]);
  } catch (error) {
    status.textContent = error instanceof Refused ? refusedMessage(error) : "Not changed: " + error.message;
    status.className = "error";
  }
});

$("watch-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const id = Number($("watch-id").value);
  if (id > 0) {
    watch(id);
    $("watch-id").value = "";
    refreshWatched();
  }
});

if (sessionStorage.getItem(TOKEN_KEY)) start(sessionStorage.getItem(TOKEN_KEY));
