// drover serve's page. Everything it shows comes from the JSON API and the
// event stream; every text is set with textContent (never as HTML), so a
// CLI's words stay words. It reloads nothing on a timer: the stream's lines
// say when to read the seats, budgets and usage again.
"use strict";

const $ = (selector, root = document) => root.querySelector(selector);
const seatSince = new Map(); // nick -> ns of its last state line
let seatsTimer = null;
let usageTimer = null;
let projects = [];
let projectIndex = 0;
let stream = null;

// An API path for the project shown.
function at(path, extra = "") {
  const sep = path.includes("?") ? "&" : "?";
  return path + sep + "project=" + projectIndex + extra;
}

function el(tag, props = {}, children = []) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key === "text") node.textContent = value;
    else if (key.startsWith("data-")) node.setAttribute(key, value);
    else node[key] = value;
  }
  for (const child of children) node.append(child);
  return node;
}

function usd(value) {
  if (typeof value !== "number") return "-";
  // Cents hide what a cheap turn cost: below a dollar, four places.
  return Math.abs(value) < 1 && value !== 0 ? "$" + value.toFixed(4) : "$" + value.toFixed(2);
}

function ago(ns) {
  if (!ns) return "";
  const secs = Math.max(0, Math.floor(Date.now() / 1000 - ns / 1e9));
  if (secs < 60) return secs + "s";
  if (secs < 3600) return Math.floor(secs / 60) + "m " + (secs % 60) + "s";
  return Math.floor(secs / 3600) + "h " + Math.floor((secs % 3600) / 60) + "m";
}

function notice(text) {
  $("#notice").textContent = text;
}

async function api(path, options = {}) {
  const response = await fetch(path, { credentials: "same-origin", ...options });
  let body = null;
  try { body = await response.json(); } catch (_) { body = null; }
  return { ok: response.ok, status: response.status, body };
}

function stateLabel(seat) {
  if (seat.state === "blocked") {
    return "blocked (" + (seat.prompt_kind || "other") + ")";
  }
  return seat.state || "-";
}

function budgetCell(budgets) {
  if (!budgets || budgets.length === 0) return "-";
  const used = (b) => Math.max(
    b.limit_usd ? b.spent_usd / b.limit_usd : 0,
    b.limit_tokens ? b.spent_tokens / b.limit_tokens : 0);
  const top = budgets.reduce((a, b) => (used(b) > used(a) ? b : a));
  return budgetText(top);
}

function budgetText(b) {
  const parts = [];
  if (b.limit_usd != null) parts.push(usd(b.spent_usd) + " of " + usd(b.limit_usd));
  if (b.limit_tokens != null) parts.push(b.spent_tokens + " of " + b.limit_tokens + " tokens");
  return b.level + " " + parts.join(", ");
}

function renderSeats(seats) {
  const body = $("#seats tbody");
  body.replaceChildren();
  const questions = $("#questions");
  questions.replaceChildren();
  $("#no-seats").hidden = seats.length > 0;
  for (const seat of seats) {
    if (seat.since_ns && !(seatSince.get(seat.nick) > seat.since_ns)) seatSince.set(seat.nick, seat.since_ns);
    const row = el("tr", { "data-seat": seat.nick }, [
      el("td", { text: seat.nick }),
      el("td", { className: "state", "data-state": seat.state || "", text: stateLabel(seat) }),
      el("td", { className: "since", text: ago(seatSince.get(seat.nick)) }),
      el("td", { text: seat.role || "" }),
      el("td", { text: seat.cli || "" }),
      el("td", { text: seat.workspace || "" }),
      el("td", { className: "cost", text: (seat.cost_approximate ? "~" : "") + usd(seat.cost_usd) }),
      el("td", { className: "budget", text: budgetCell(seat.budgets) }),
    ]);
    body.append(row);
    if (seat.question && !seat.human) questions.append(renderQuestion(seat));
    else if (seat.state === "blocked" && seat.evidence) {
      questions.append(el("div", { className: "question", "data-seat": seat.nick }, [
        el("p", { className: "asks", text: seat.nick + " is blocked" }),
        el("p", { className: "detail", text: seat.evidence }),
      ]));
    }
  }
  renderSeatChart(seats);
  renderBudgets(seats, null);
}

function renderQuestion(seat) {
  const q = seat.question;
  const box = el("div", { className: "question", "data-seat": seat.nick, "data-question": q.id }, [
    el("p", { className: "asks", text: seat.nick + " asks: " + (q.title || q.kind) }),
    el("p", { className: "detail", text: q.input || "" }),
  ]);
  for (const option of q.options) {
    const button = el("button", {
      type: "button",
      "data-option": option.id,
      "data-kind": option.kind,
      text: option.label,
    });
    button.addEventListener("click", () => answer(seat.nick, option, box));
    box.append(button);
  }
  return box;
}

async function answer(nick, option, box) {
  for (const b of box.querySelectorAll("button")) b.disabled = true;
  notice("answering " + nick + "…");
  const result = await api(at("/api/seats/" + encodeURIComponent(nick) + "/answer"), {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ option: option.id }),
  });
  if (result.ok) {
    notice(nick + ": answered " + option.label);
    box.setAttribute("data-answered", option.id);
  } else {
    notice(nick + ": not answered: " + ((result.body && result.body.error) || result.status));
    for (const b of box.querySelectorAll("button")) b.disabled = false;
  }
  scheduleSeats();
}

function renderBudgets(seats, project) {
  const list = $("#budgets");
  if (project !== null) list.dataset.project = JSON.stringify(project);
  const projectBudgets = list.dataset.project ? JSON.parse(list.dataset.project) : [];
  list.replaceChildren();
  const seen = new Set();
  const add = (who, b) => {
    const key = b.level + "|" + (b.level.startsWith("seat") ? who : "");
    if (seen.has(key)) return;
    seen.add(key);
    const reached = (b.limit_usd != null && b.spent_usd >= b.limit_usd)
      || (b.limit_tokens != null && b.spent_tokens >= b.limit_tokens);
    list.append(el("li", { "data-level": b.level, "data-reached": String(reached),
      text: (b.level === "seat" ? who + ": " : "") + budgetText(b) + (reached ? " (reached)" : "") }));
  };
  for (const b of projectBudgets) add("", b);
  for (const seat of seats || []) for (const b of seat.budgets || []) add(seat.nick, b);
  if (!list.children.length) list.append(el("li", { text: "No [budget] limits set." }));
}

function chart(name, rows) {
  const body = $('.chart[data-chart="' + name + '"] tbody');
  body.replaceChildren();
  const max = Math.max(0, ...rows.map((r) => r.usd || 0));
  for (const r of rows) {
    const bar = el("span");
    bar.style.width = max > 0 ? Math.round(((r.usd || 0) / max) * 100) + "%" : "0";
    body.append(el("tr", { "data-key": r.key }, [
      el("td", { className: "key", title: r.key, text: r.key }),
      el("td", { className: "bar" }, [bar]),
      el("td", { className: "cost", "data-usd": String(r.usd ?? ""), text: usd(r.usd) }),
      el("td", { className: "tokens", "data-tokens": String(r.tokens ?? ""), text: r.tokens == null ? "" : r.tokens + " tok" }),
    ]));
  }
  if (!rows.length) body.append(el("tr", {}, [el("td", { text: "nothing yet" })]));
}

function tokensOf(g) {
  return (g.input || 0) + (g.output || 0) + (g.cache_read || 0) + (g.cache_write || 0);
}

function renderSeatChart(seats) {
  chart("seat", seats.filter((s) => s.cost_usd != null).map((s) => ({ key: s.nick, usd: s.cost_usd, tokens: null })));
}

async function refreshSeats() {
  const [seats, status] = await Promise.all([api(at("/api/seats")), api(at("/api/status"))]);
  if (seats.ok) renderSeats(seats.body.seats || []);
  if (status.ok) renderBudgets(seats.ok ? seats.body.seats : [], status.body.budgets || []);
}

let usageRunning = false;
let usageAgain = false;

// One usage read at a time (a large history takes seconds); lines that
// come meanwhile ask for one more after it.
async function refreshUsage() {
  if (usageRunning) { usageAgain = true; return; }
  usageRunning = true;
  try { await readUsage(); } finally { usageRunning = false; }
  if (usageAgain) { usageAgain = false; refreshUsage(); }
}

async function readUsage() {
  const [day, model] = await Promise.all([api(at("/api/usage?by=day")), api(at("/api/usage?by=model"))]);
  for (const [name, result] of [["day", day], ["model", model]]) {
    if (!result.ok) continue;
    const key = (g) => (name === "day" ? g.day : g.cli + " " + g.model);
    chart(name, (result.body.groups || []).map((g) => ({ key: key(g), usd: g.cost_usd, tokens: tokensOf(g) })));
  }
  if (day.ok) {
    const t = day.body.totals || {};
    $("#usage-total").textContent = "All of this machine's CLIs (as drover usage counts them): "
      + usd(t.cost_usd) + " over " + (t.requests || 0) + " requests";
    $("#usage-total").setAttribute("data-usd", String(t.cost_usd ?? ""));
  }
  // Per project: the conversations known to have run in each.
  const each = await Promise.all(projects.map((p) => api("/api/usage?by=day&only=true&project=" + p.index)));
  chart("project", projects.map((p, i) => {
    const t = (each[i].ok && each[i].body.totals) || {};
    return { key: p.path, usd: t.cost_usd, tokens: tokensOf(t) };
  }));
}

function scheduleSeats() {
  clearTimeout(seatsTimer);
  seatsTimer = setTimeout(refreshSeats, 150);
}

function scheduleUsage() {
  clearTimeout(usageTimer);
  usageTimer = setTimeout(refreshUsage, 1000);
}

function describe(line) {
  const who = line.seat || line.task;
  if (line.kind === "verdict") return who + ": verdict " + line.state;
  if (line.kind === "answer") return who + ": answered " + line.state + " (" + line.source + ")";
  if (line.kind === "event") return who + ": " + line.state;
  let text = who + ": " + line.state;
  if (line.prompt_kind) text += " (" + line.prompt_kind + ")";
  const evidence = line.detail && line.detail.evidence;
  if (evidence) text += ": " + evidence;
  return text;
}

const seenLines = new Set();

function addEvent(line) {
  const key = line.run + "|" + line.task + "|" + line.ts + "|" + line.kind;
  if (seenLines.has(key)) return false;
  seenLines.add(key);
  const when = new Date(line.ts / 1e6);
  const item = el("li", { "data-kind": line.kind, "data-task": line.task }, [
    el("time", { dateTime: when.toISOString(), text: when.toLocaleTimeString() }),
    document.createTextNode(describe(line)),
  ]);
  const list = $("#events");
  list.prepend(item);
  while (list.children.length > 200) list.lastChild.remove();
  if (line.kind === "state" && line.seat) seatSince.set(line.seat, line.ts);
  return true;
}

function connect() {
  if (stream) stream.close();
  const since = new Date(Date.now() - 24 * 3600 * 1000).toISOString();
  stream = new EventSource(at("/api/stream?since=" + encodeURIComponent(since)));
  stream.onopen = () => { $("#live").dataset.live = "live"; $("#live").textContent = "live"; };
  stream.onerror = () => { $("#live").dataset.live = "down"; $("#live").textContent = "reconnecting…"; };
  stream.onmessage = (message) => {
    let line;
    try { line = JSON.parse(message.data); } catch (_) { return; }
    if (!addEvent(line)) return;
    scheduleSeats();
    if (line.kind === "verdict") scheduleUsage();
  };
}

// The "for" column counts up between lines without asking the server.
setInterval(() => {
  for (const row of document.querySelectorAll("#seats tbody tr")) {
    const cell = row.querySelector(".since");
    if (cell) cell.textContent = ago(seatSince.get(row.dataset.seat));
  }
}, 1000);

function show(index) {
  projectIndex = index;
  const project = projects[index];
  $("#project-path").textContent = project ? project.path : "";
  document.title = "drover" + (project ? " · " + project.path.split("/").pop() : "");
  seenLines.clear();
  seatSince.clear();
  $("#events").replaceChildren();
  refreshSeats();
  refreshUsage();
  connect();
}

async function start() {
  const listed = await api("/api/projects");
  projects = (listed.ok && listed.body.projects) || [];
  const select = $("#project");
  if (projects.length > 1) {
    for (const p of projects) select.append(el("option", { value: String(p.index), text: p.path }));
    select.hidden = false;
    select.addEventListener("change", () => show(Number(select.value)));
  }
  show(0);
}

start();
