// The dashboard: polls /api/dashboard and draws it. Plain DOM, text only
// (textContent, never innerHTML): what jobs are named cannot become markup.
"use strict";

const POLL_MS = 2000;

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v; else e.setAttribute(k, v);
  }
  for (const k of kids) {
    if (k === null || k === undefined) continue;
    e.append(typeof k === "string" || typeof k === "number" ? String(k) : k);
  }
  return e;
}

// dur is a duration in seconds as people read it: 45s, 3m 20s, 1h 05m, 2d 4h.
function dur(s) {
  s = Math.max(0, Math.round(s));
  const d = Math.floor(s / 86400), h = Math.floor(s % 86400 / 3600), m = Math.floor(s % 3600 / 60), sec = s % 60;
  if (d > 0) return d + "d " + h + "h";
  if (h > 0) return h + "h " + String(m).padStart(2, "0") + "m";
  if (m > 0) return m + "m " + String(sec).padStart(2, "0") + "s";
  return sec + "s";
}

// count is n and a noun, plural unless n is 1: "1 yield", "3 yields".
function count(n, noun) { return n + " " + noun + (n === 1 ? "" : "s"); }

function gib(b) { return (b / 1073741824).toFixed(1) + " GiB"; }

function clock(t) {
  const d = new Date(t * 1000), p = (n) => String(n).padStart(2, "0");
  return d.getFullYear() + "-" + p(d.getMonth() + 1) + "-" + p(d.getDate()) + " " + p(d.getHours()) + ":" + p(d.getMinutes()) + ":" + p(d.getSeconds());
}

function gpuCard(g, now) {
  const card = el("article", { class: "card", "data-gpu": g.index });
  const title = g.model || g.type;
  card.append(el("h3", {}, el("span", {}, "GPU " + g.index), el("span", { class: "state-" + g.state }, g.state === "UP" ? (g.in_use ? "in use" : "idle") : g.state.toLowerCase())));
  const bar = el("div", { class: "bar", title: "used / reserved of total memory" });
  const pct = (x) => (g.mem_total > 0 ? Math.min(100, 100 * x / g.mem_total) : 0) + "%";
  // Widths through the CSSOM: the page's CSP allows no inline styles.
  const resv = el("span", { class: "resv" }), usedBar = el("span", { class: "used" });
  resv.style.width = pct(g.mem_reserved);
  usedBar.style.width = pct(g.mem_used);
  bar.append(resv, usedBar);
  card.append(bar);
  const kv = el("dl", { class: "kv" });
  const row = (k, v, cls) => kv.append(el("dt", {}, k), el("dd", { class: cls || "" }, v));
  row("model", title);
  row("memory used", gib(g.mem_used) + " of " + gib(g.mem_total), "mem-used");
  row("reserved", gib(g.mem_reserved), "mem-reserved");
  row("utilization", g.util >= 0 ? g.util + "%" : "n/a", "util");
  if (g.reason) row("why", g.reason);
  card.append(kv);
  if (g.in_use && !g.jobs.length) card.append(el("p", { class: "muted small job-private" }, "Its jobs are private here (PrivateData)."));
  for (const j of g.jobs) {
    const jk = el("dl", { class: "kv job", "data-job": j.id });
    const r = (k, v, cls) => jk.append(el("dt", {}, k), el("dd", { class: cls || "" }, v));
    r("job", j.id + (j.name ? " (" + j.name + ")" : ""), "job-id");
    r("user", (j.user || "hidden") + " · " + j.account, "job-user");
    r("running", dur(now - j.start), "job-running");
    r("time left", j.end ? dur(j.end - now) : "no limit", "job-left");
    if (j.mem) r("reserved", gib(j.mem));
    card.append(jk);
  }
  return card;
}

function asks(j) {
  const parts = [];
  if (j.gpus) parts.push(j.gpus + " GPU" + (j.gpus > 1 ? "s" : "") + (j.gpu_mem ? " × " + gib(j.gpu_mem) : ""));
  parts.push(j.cpus + " CPU" + (j.cpus > 1 ? "s" : ""));
  if (j.limit) parts.push(dur(j.limit));
  return parts.join(", ");
}

function queueRow(j, now) {
  let start = "unknown";
  if (j.expected_start) start = j.expected_start <= now ? "now" : "in " + dur(j.expected_start - now);
  return el("tr", { "data-job": j.id },
    el("td", {}, j.id + (j.name ? " " + j.name : "")), el("td", {}, j.user || "hidden"), el("td", {}, j.account),
    el("td", {}, asks(j)), el("td", { class: "num" }, j.priority), el("td", { class: "why" }, j.why),
    el("td", { class: "start" }, start));
}

function draw(st) {
  const now = st.time;
  document.getElementById("title").textContent = st.cluster + " · " + st.node;
  const running = st.states.RUNNING || 0, pending = st.states.PENDING || 0;
  const used = st.gpus.filter((g) => g.in_use).length;
  document.getElementById("summary").textContent = st.node_state + " · " + used + " of " + st.gpus.length +
    " GPUs in use · " + st.cpus_alloc + " of " + st.cpus + " CPUs · " + running + " running, " + pending + " pending";
  document.getElementById("gpus").replaceChildren(...st.gpus.map((g) => gpuCard(g, now)));

  const queue = st.jobs.filter((j) => j.state === "PENDING");
  const hidden = st.queue_hidden || 0;
  document.getElementById("queue-count").textContent = "(" + (st.private ? pending : queue.length + hidden) + ")";
  const qb = document.querySelector("#queue tbody");
  const none = st.private ? "Jobs are private here (PrivateData): squeue shows each user their own." : "Nothing waiting.";
  const rows = queue.length ? queue.map((j) => queueRow(j, now)) : [el("tr", {}, el("td", { colspan: 7, class: "muted" }, none))];
  if (hidden) rows.push(el("tr", { class: "more" }, el("td", { colspan: 7, class: "muted" }, "… and " + hidden + " more (squeue lists them all)")));
  qb.replaceChildren(...rows);

  // As sshare lists them: each row names its account, indented by its
  // depth, so that root's own user and a user root of another account
  // read apart. The tree's top (the cluster's root) is left out: it is
  // everyone's usage and has no shares.
  const gh = st.gpu_seconds || {};
  const budgets = {};
  for (const b of st.budgets || []) budgets[b.account] = b;
  const budgetCell = (s) => {
    const b = !s.user && budgets[s.account];
    if (!b) return el("td", { class: "num budget" }, "");
    const left = Math.max(0, b.gpu_minutes_limit - Math.floor(b.gpu_minutes_used));
    return el("td", { class: "num budget", title: left + " left" + (b.resets ? "; usage resets " + clock(b.resets) : "") },
      Math.floor(b.gpu_minutes_used) + " of " + b.gpu_minutes_limit);
  };
  const sb = document.querySelector("#shares tbody");
  sb.replaceChildren(...st.shares.filter((s) => s.depth > 0).map((s) => {
    const acct = el("td", { class: "acct" }, s.account);
    acct.style.paddingLeft = (0.5 + (s.depth - 1)) + "em";
    const fs = s.user ? el("td", { class: "num fs" }, s.fairshare.toFixed(3)) :
      el("td", { class: "num fs muted", title: "Fair Tree gives an account no fair share of its own: its Level FS ranks it among its siblings" }, "none");
    return el("tr", { "data-account": s.account, "data-user": s.user || "" },
      acct, el("td", {}, s.user || ""), el("td", { class: "num" }, s.raw_shares),
      el("td", { class: "num" }, (s.raw_usage / 3600).toFixed(2)),
      el("td", { class: "num levelfs" }, s.level_fs === null ? "inf" : s.level_fs.toFixed(3)), fs,
      el("td", { class: "num" }, s.user ? "" : ((gh[s.account] || 0) / 3600).toFixed(2)), budgetCell(s));
  }));

  const rs = st.reservations || [];
  const rb = document.querySelector("#reservations tbody");
  rb.replaceChildren(...(rs.length ? rs.map((r) => el("tr", { "data-reservation": r.name },
    el("td", {}, r.name), el("td", {}, r.active ? "ACTIVE" : "INACTIVE"),
    el("td", {}, new Date(r.start * 1000).toLocaleString()), el("td", {}, new Date(r.end * 1000).toLocaleString()),
    el("td", { class: "num" }, r.gpus), el("td", {}, r.flags || ""))) :
    [el("tr", {}, el("td", { colspan: 6, class: "muted" }, "No reservations."))]));

  const ev = document.getElementById("events");
  const evs = st.events.slice().reverse();
  ev.replaceChildren(...(evs.length ? evs.map((e) => el("li", { "data-action": e.action },
    el("time", {}, clock(e.time)), (e.who || "someone") + " " + e.action + (e.id ? " job " + e.id : "") + (e.gpu ? " GPU " + e.gpu : "") +
    (e.detail ? ": " + e.detail : ""))) : [el("li", { class: "muted" }, "No yields, preemptions, drains or cancels by others yet.")]));
  document.getElementById("status").textContent = "Updated " + clock(now) + " · " + count(st.preemptions, "preemption") + ", " + count(st.yields, "yield") + " since the daemon started";
  document.getElementById("status").className = "muted";
}

async function poll() {
  try {
    const r = await fetch("api/dashboard", { cache: "no-store" });
    if (!r.ok) throw new Error(await r.text());
    draw(await r.json());
    document.body.dataset.loaded = "1";
  } catch (e) {
    const s = document.getElementById("status");
    s.textContent = "Not updating: " + e.message;
    s.className = "stale";
  }
  setTimeout(poll, POLL_MS);
}

poll();
