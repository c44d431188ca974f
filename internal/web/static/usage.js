// The monthly usage view: reads api/usage?month=YYYY-MM and draws it. Plain
// DOM, text only (textContent, never innerHTML).
"use strict";

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

// hours is TRES-seconds as hours with one decimal.
function hours(s) { return (s / 3600).toFixed(1); }

function pct(part, whole) { return whole > 0 ? (100 * part / whole).toFixed(1) + "%" : "–"; }

function row(account, user, f, total, cls) {
  return el("tr", cls ? { class: cls } : null, el("td", null, account), el("td", null, user),
    el("td", { class: "num" }, hours(f.gpu_seconds)), el("td", { class: "num" }, pct(f.gpu_seconds, total.gpu_seconds)),
    el("td", { class: "num" }, hours(f.cpu_seconds)), el("td", { class: "num" }, hours(f.billing_seconds)));
}

function draw(u) {
  document.getElementById("title").textContent = "GPU-hours by month: " + u.cluster + ", " + u.month;
  const capacity = u.gpus * Math.max(0, u.rolled_up - u.start);
  document.getElementById("summary").textContent = hours(u.total.gpu_seconds) + " GPU-hours used of " +
    hours(capacity) + " available so far (" + pct(u.total.gpu_seconds, capacity) + ")" +
    (u.private ? "; per-user figures are private here (PrivateData=usage)" : "");
  const body = document.querySelector("#usage tbody");
  body.replaceChildren();
  for (const a of u.accounts) {
    body.append(row(a.account, "", a, u.total, "acct"));
    for (const us of a.users || []) body.append(row("", us.user, us, u.total));
  }
  body.append(row("all", "", u.total, u.total, "acct"));
  document.getElementById("sreport").textContent = u.sreport;
  document.getElementById("json").setAttribute("href", "api/usage?month=" + u.month);
}

async function load(month) {
  const status = document.getElementById("status");
  try {
    const r = await fetch("api/usage" + (month ? "?month=" + encodeURIComponent(month) : ""), { cache: "no-store" });
    if (!r.ok) throw new Error(await r.text());
    const u = await r.json();
    document.getElementById("month").value = u.month;
    status.textContent = "";
    draw(u);
  } catch (e) {
    status.textContent = "Could not read the usage: " + e.message;
  }
}

document.getElementById("pick").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const m = document.getElementById("month").value;
  history.replaceState(null, "", "?month=" + m);
  load(m);
});
load(new URLSearchParams(location.search).get("month"));
