// The day1 inspector: plain JavaScript on the REST API and the /events stream.
"use strict";

const token = new URLSearchParams(location.hash.slice(1)).get("token") || "";
const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";

// el builds an element: el("td", {class: "x"}, "text", child...).
function el(tag, attrs, ...kids) {
  const n = tag.startsWith("svg:") ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k.startsWith("on")) n.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null && v !== false) n.setAttribute(k, v);
  }
  for (const k of kids.flat()) if (k !== undefined && k !== null) n.append(k.nodeType ? k : String(k));
  return n;
}

async function api(path, opts = {}) {
  const headers = { ...(opts.body ? { "Content-Type": "application/json" } : {}), ...(token ? { Authorization: "Bearer " + token } : {}) };
  const res = await fetch("/api/v1" + path, { ...opts, headers });
  const data = await res.json().catch(() => null);
  if (!res.ok) {
    const e = new Error((data && data.detail) || res.statusText);
    e.problem = data;
    throw e;
  }
  return data;
}

const q = (params) => "?" + new URLSearchParams(Object.entries(params).filter(([, v]) => v !== "" && v !== undefined)).toString();
const esc = encodeURIComponent;
const fmt = (t) => (t ? t.replace("T", " ").replace(/(\.\d+)?Z$/, "") : "-");
// clip cuts a long text for a list, marking the cut: a 900 KB fact is shown whole
// only in its record.
const clip = (s, n = 300) => (s && s.length > n ? s.slice(0, n) + "…" : s);
const state = { branches: [], merges: [], snapshots: [], selected: "main" };
// pageSize is how many items a long list shows at first, and each "show more" adds.
const pageSize = 200;

// ---- links ----
// Every view has a URL: its parameters live in the fragment, beside the token, so a
// person can share what they see (#view=diff&source=agent-a&target=main).
function link(params) {
  const h = new URLSearchParams();
  if (token) h.set("token", token);
  for (const [k, v] of Object.entries(params)) if (v !== "" && v !== undefined && v !== null) h.set(k, v);
  const next = "#" + h.toString();
  if (location.hash !== next) history.replaceState(null, "", next);
}
let applying = false;
// applyLink shows the view the fragment names, as if the person had asked for it.
async function applyLink() {
  const h = new URLSearchParams(location.hash.slice(1));
  const view = h.get("view");
  if (!view) return false;
  applying = true;
  try {
    switch (view) {
      case "timeline":
        if (h.get("branch")) { $("tl-branch").value = h.get("branch"); state.selected = h.get("branch"); }
        selectTab($("tab-timeline"));
        await loadTimeline();
        if (h.get("record")) { const [kind, ...id] = h.get("record").split("/"); await showRecord(kind, id.join("/"), h.get("branch") || "main"); }
        break;
      case "diff":
        selectTab($("tab-diff"));
        if (h.get("source")) $("diff-source").value = h.get("source");
        if (h.get("target")) { $("diff-target").value = h.get("target"); $("diff-target").dataset.touched = "1"; }
        await showDiff();
        break;
      case "search":
        selectTab($("tab-search"));
        $("search-q").value = h.get("q") || "";
        if (h.get("branch")) $("search-branch").value = h.get("branch");
        if (h.get("mode")) $("search-mode").value = h.get("mode");
        if ($("search-q").value) await runSearch();
        break;
      case "travel":
        if (h.get("branch")) $("travel-branch").value = h.get("branch");
        selectTab($("tab-travel"));
        await loadTravel(h.get("at"));
        break;
      case "tasks":
        selectTab($("tab-tasks"));
        if (h.get("task")) await showTask(h.get("task"));
        break;
      case "entities":
        if (h.get("branch")) $("entity-branch").value = h.get("branch");
        if (h.get("depth")) $("entity-depth").value = h.get("depth");
        $("entity-q").value = h.get("entity") || "";
        selectTab($("tab-entities"));
        await loadEntities();
        break;
    }
  } finally { applying = false; }
  return true;
}
window.addEventListener("hashchange", () => { applyLink(); });

function showError(where, err) {
  where.replaceChildren(el("p", { class: "error", role: "alert" }, err.message));
}

// ---- tabs ----
const tabs = [...document.querySelectorAll("[role=tab]")];
function selectTab(tab) {
  for (const t of tabs) {
    const on = t === tab;
    t.setAttribute("aria-selected", on);
    t.tabIndex = on ? 0 : -1;
    $(t.getAttribute("aria-controls")).hidden = !on;
  }
  tab.focus();
  if (applying) {
    if (tab.id === "tab-tasks") loadTasks();
    return;
  }
  if (tab.id === "tab-tasks") { loadTasks(); link({ view: "tasks" }); }
  if (tab.id === "tab-entities") loadEntities();
  if (tab.id === "tab-travel") loadTravel();
  if (tab.id === "tab-diff") link({ view: "diff", source: $("diff-source").value, target: $("diff-target").value });
  if (tab.id === "tab-search") link({ view: "search", q: $("search-q").value });
  if (tab.id === "tab-timeline") link({ view: "timeline", branch: $("tl-branch").value || "main" });
}
tabs.forEach((t, i) => {
  t.addEventListener("click", () => selectTab(t));
  t.addEventListener("keydown", (e) => {
    const d = { ArrowRight: 1, ArrowLeft: -1 }[e.key];
    if (d) selectTab(tabs[(i + d + tabs.length) % tabs.length]);
    if (e.key === "Home") selectTab(tabs[0]);
    if (e.key === "End") selectTab(tabs[tabs.length - 1]);
  });
});

// ---- the branch tree ----
async function loadTree() {
  const [branches, merges, snapshots] = await Promise.all([api("/branches"), api("/merges"), api("/snapshots")]);
  state.branches = branches;
  state.merges = merges || [];
  state.snapshots = snapshots || [];
  fillBranchSelects();
  drawGraph();
}

function fillBranchSelects() {
  const names = state.branches.map((b) => b.name);
  for (const s of document.querySelectorAll("select.branches")) {
    const cur = s.value || (s.id === "diff-source" ? names.find((n) => n !== "main") : "main");
    s.replaceChildren(...names.map((n) => el("option", { value: n }, n)));
    if (names.includes(cur)) s.value = cur;
  }
  const tgt = $("diff-target");
  if (!tgt.dataset.touched) tgt.value = "main";
}

// Lanes: a branch's children follow it, depth-first, so forks stay close to their parent.
function lanes() {
  const kids = {};
  for (const b of state.branches) (kids[b.parent || ""] ||= []).push(b);
  for (const k of Object.values(kids)) k.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.name.localeCompare(b.name));
  const out = [];
  const walk = (p) => (kids[p] || []).forEach((b) => { out.push(b); walk(b.name); });
  walk("");
  for (const b of state.branches) if (!out.includes(b)) out.push(b); // orphans
  return out;
}

// branchRole tells task branches (task/<name>) and agent branches
// (task/<name>/<agent>) from the others.
function branchRole(name) {
  const m = /^task\/([^/]+)(?:\/([^/]+))?$/.exec(name);
  if (!m) return null;
  return m[2] ? { role: "agent", task: m[1], agent: m[2], text: `agent ${m[2]}'s branch of task ${m[1]}` } : { role: "task", task: m[1], text: `branch of task ${m[1]}` };
}

// timeScale places the instants of the tree's events along [x0, x1]: each event a
// step from the one before, plus the logarithm of the time between them, so that a
// burst of events spreads out and a long idle stretch takes little room. at(t) maps
// any instant; ticks are the events worth a label (the first, the last, and those
// after the longest idle stretches), breaks the middles of the stretches of over ten
// minutes that were squeezed.
function timeScale(times, x0, x1) {
  const ts = [...new Set(times.filter((t) => t > 0))].sort((a, b) => a - b); // no zero or missing times
  if (!ts.length) ts.push(Date.now());
  const pos = [0];
  for (let i = 1; i < ts.length; i++) pos.push(pos[i - 1] + 1 + Math.log1p((ts[i] - ts[i - 1]) / 1000));
  const total = pos[pos.length - 1] || 1;
  const px = (i) => x0 + (pos[i] / total) * (x1 - x0);
  const at = (t) => {
    let lo = 0, hi = ts.length - 1;
    if (t <= ts[lo]) return px(lo);
    if (t >= ts[hi]) return px(hi);
    while (hi - lo > 1) { const m = (lo + hi) >> 1; if (ts[m] <= t) lo = m; else hi = m; }
    return px(lo) + ((t - ts[lo]) / (ts[hi] - ts[lo])) * (px(hi) - px(lo));
  };
  const gaps = ts.map((t, i) => ({ i, d: i ? t - ts[i - 1] : 0 })).filter((g) => g.i > 0).sort((a, b) => b.d - a.d);
  const picked = [0, ts.length - 1, ...gaps.slice(0, 4).map((g) => g.i)];
  const ticks = [];
  for (const i of [...new Set(picked)].sort((a, b) => a - b)) {
    if (ticks.every((k) => Math.abs(px(k) - px(i)) >= 90)) ticks.push(i);
  }
  const breaks = gaps.filter((g) => g.d > 10 * 60 * 1000).map((g) => (px(g.i - 1) + px(g.i)) / 2);
  return { at, ticks: ticks.map((i) => ({ x: px(i), t: ts[i] })), breaks, sameDay: new Date(ts[0]).toDateString() === new Date(ts[ts.length - 1]).toDateString() };
}

function drawGraph() {
  const order = lanes();
  const times = [];
  for (const b of order) times.push(Date.parse(b.forked_at), Date.parse(b.created_at), Date.parse(b.merged_at));
  for (const m of state.merges) times.push(Date.parse(m.created_at));
  for (const s of state.snapshots) times.push(Date.parse(s.at));
  const labelW = Math.max(...order.map((b) => b.name.length)) * 7.2 + 30, rowH = 30, top = 24;
  const W = Math.max($("graph").clientWidth - 2, labelW + 240);
  const H = order.length * rowH + 20 + top;
  const scale = timeScale(times, labelW + 16, W - 20);
  const x = (t) => scale.at(Date.parse(t));
  const y = {};
  order.forEach((b, i) => (y[b.name] = top + 20 + i * rowH));
  const svg = el("svg:svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: "group", "aria-label": "Branch tree" });
  // The time axis: labelled events, and the idle stretches squeezed out of it.
  const label = (t) => { const d = new Date(t).toISOString(); return scale.sameDay ? d.slice(11, 19) : d.slice(5, 10) + " " + d.slice(11, 16); };
  svg.append(el("svg:line", { class: "axis", x1: labelW + 10, y1: top, x2: W - 10, y2: top }));
  for (const k of scale.ticks) {
    svg.append(el("svg:line", { class: "axis", x1: k.x, y1: top - 4, x2: k.x, y2: top + 4 }));
    const anchor = k.x > W - 40 ? "end" : k.x < labelW + 40 ? "start" : "middle"; // labels stay inside
    svg.append(el("svg:text", { class: "tick", x: k.x, y: top - 8, "text-anchor": anchor, "data-at": new Date(k.t).toISOString() }, label(k.t),
      el("svg:title", {}, new Date(k.t).toISOString())));
  }
  for (const bx of scale.breaks) {
    svg.append(el("svg:text", { class: "gap", x: bx, y: top + 4, "text-anchor": "middle" }, "≈", el("svg:title", {}, "an idle stretch, shortened")));
  }
  svg.append(el("svg:defs", {}, el("svg:marker", { id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 6, markerHeight: 6, orient: "auto-start-reverse" },
    el("svg:path", { d: "M0 0L10 5L0 10z", fill: "#116329" }))));
  for (const b of order) {
    const start = b.parent ? x(b.forked_at) : labelW + 10;
    const end = b.status === "merged" && b.merged_at ? x(b.merged_at) : W - 10;
    if (b.parent && y[b.parent] !== undefined) {
      svg.append(el("svg:path", { class: "fork", d: `M${start} ${y[b.parent]} C${start + 8} ${y[b.parent]} ${start} ${y[b.name]} ${start + 10} ${y[b.name]}` }));
    }
    svg.append(el("svg:line", { class: "lane " + b.status, x1: start + (b.parent ? 10 : 0), y1: y[b.name], x2: Math.max(end, start + 12), y2: y[b.name] },
      el("svg:title", {}, `${b.name}: ${b.status}${b.description ? " — " + b.description : ""}`)));
    const role = branchRole(b.name);
    if (role) {
      const by = y[b.name];
      svg.append(role.role === "task"
        ? el("svg:rect", { class: "badge task", x: 4, y: by - 5, width: 10, height: 10 }, el("svg:title", {}, role.text))
        : el("svg:circle", { class: "badge agent", cx: 9, cy: by, r: 5 }, el("svg:title", {}, role.text)));
    }
    const label = el("svg:text", { class: "name" + (role ? " " + role.role : "") + (b.name === state.selected ? " sel" : ""), x: 20, y: y[b.name] + 4, tabindex: 0, role: "button",
      "data-branch": b.name, "data-role": role ? role.role : null, "aria-label": `Branch ${b.name}${role ? " (" + role.text + ")" : ""}, ${b.status}; open its timeline`,
      onclick: () => openBranch(b.name), onkeydown: (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); openBranch(b.name); } } }, b.name);
    svg.append(label);
  }
  for (const m of state.merges) {
    if (y[m.source] === undefined || y[m.target] === undefined) continue;
    const mx = x(m.created_at);
    svg.append(el("svg:path", { class: "merge", "data-merge": m.id, "marker-end": "url(#arrow)", d: `M${mx - 10} ${y[m.source]} C${mx} ${y[m.source]} ${mx - 10} ${y[m.target]} ${mx} ${y[m.target] + (y[m.target] < y[m.source] ? 4 : -4)}` },
      el("svg:title", {}, `merge ${m.source} → ${m.target} (${m.strategy}, ${(m.merged || []).length} records)`)));
  }
  for (const s of state.snapshots) {
    if (y[s.branch] === undefined) continue;
    const sx = x(s.at), sy = y[s.branch];
    svg.append(el("svg:path", { class: "snap", "data-snapshot": s.name, d: `M${sx} ${sy - 6}L${sx + 6} ${sy}L${sx} ${sy + 6}L${sx - 6} ${sy}z` },
      el("svg:title", {}, `snapshot ${s.name} of ${s.branch} at ${fmt(s.at)}`)));
  }
  $("graph").replaceChildren(svg);
}

function openBranch(name) {
  state.selected = name;
  $("record").hidden = true;
  $("tl-branch").value = name;
  $("tl-session").value = "";
  loadSessions(name);
  drawGraph();
  selectTab($("tab-timeline"));
  loadTimeline();
}

// ---- timeline ----
// loadSessions fills the session filter with the sessions of the branch.
async function loadSessions(branch) {
  const sel = $("tl-session"), cur = sel.value;
  try {
    const ss = await api("/sessions" + q({ branch }));
    sel.replaceChildren(el("option", { value: "" }, "any"),
      ...ss.map((x) => el("option", { value: x.id }, `${x.id} — ${x.agent_id || "no agent"}, ${x.status}, ${fmt(x.started_at)}`)));
    if ([...sel.options].some((o) => o.value === cur)) sel.value = cur;
  } catch (err) { sel.replaceChildren(el("option", { value: "" }, "any")); }
}

let lastTimeline = new Set();
// The timeline shows the newest tlShown records, a page more each time the person
// asks for older ones; a live reload (highlight) keeps as many as were shown.
let tlShown = pageSize;
const tlMost = 10000; // the most one answer holds (store.MaxLimit): longer lists take pages
// timelineEvents reads the first n events the filter selects, an answer of at most
// tlMost at a time.
async function timelineEvents(params, n) {
  let evs = [];
  while (evs.length < n) {
    const want = Math.min(n - evs.length, tlMost);
    const page = await api("/timeline" + q({ ...params, offset: evs.length, limit: want }));
    evs = evs.concat(page);
    if (page.length < want) break;
  }
  return evs;
}
async function loadTimeline(highlight, older) {
  const branch = $("tl-branch").value || "main";
  state.selected = branch;
  if (older) tlShown += pageSize;
  else if (!highlight) tlShown = pageSize;
  try {
    let evs = await timelineEvents({ branch, order: "newest", by_update: true, agent: $("tl-agent").value, kind: $("tl-kind").value, session: $("tl-session").value }, tlShown + 1);
    const more = evs.length > tlShown;
    evs = evs.slice(0, tlShown);
    const agents = new Set([...$("tl-agent").options].map((o) => o.value));
    for (const e of evs) if (e.agent && !agents.has(e.agent)) { $("tl-agent").append(el("option", {}, e.agent)); agents.add(e.agent); }
    const seen = new Set();
    $("tl-rows").replaceChildren(...evs.map((e) => {
      const key = e.kind + "/" + e.id + "@" + e.at;
      seen.add(key);
      return el("tr", { class: highlight && !lastTimeline.has(key) ? "fresh" : null },
        el("td", {}, fmt(e.at)), el("td", {}, el("button", { class: "link", type: "button", onclick: () => showRecord(e.kind, e.id, branch) }, e.kind + "/" + e.id)),
        el("td", {}, e.agent || "-"), el("td", {}, clip(e.summary)));
    }));
    if (!evs.length) $("tl-rows").replaceChildren(el("tr", {}, el("td", { colspan: 4, class: "muted" }, "No records on this branch match.")));
    lastTimeline = seen;
    $("tl-caption").textContent = more ? `The newest ${evs.length} records on ${branch}; older ones follow` : `${evs.length} records on ${branch}, newest first`;
    $("tl-more").hidden = !more;
    $("tl-more").textContent = `Show ${pageSize} older`;
    if (!applying && $("tab-timeline").getAttribute("aria-selected") === "true") link({ view: "timeline", branch });
  } catch (err) { showError($("tl-rows"), err); }
}
// A fact written from the page lands on the branch the timeline shows.
$("write-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const out = $("write-out");
  const branch = $("tl-branch").value || "main";
  try {
    const w = await api("/facts", { method: "POST", body: JSON.stringify({ branch, text: $("write-text").value, category: $("write-category").value }) });
    out.textContent = `fact ${w.record.id} ${w.outcome} on ${branch}`;
    $("write-text").value = "";
    loadTimeline(true);
  } catch (err) { showError(out, err); }
});
for (const id of ["tl-agent", "tl-kind", "tl-session"]) $(id).addEventListener("change", () => loadTimeline());
$("tl-more").addEventListener("click", () => loadTimeline(true, true));
$("tl-branch").addEventListener("change", () => { $("record").hidden = true; $("tl-session").value = ""; loadSessions($("tl-branch").value); loadTimeline(); });
$("tl-form").addEventListener("submit", (e) => { e.preventDefault(); loadTimeline(); });

async function showRecord(kind, id, branch) {
  const box = $("record");
  box.hidden = false;
  if (!applying) link({ view: "timeline", branch, record: `${kind}/${id}` });
  try {
    const versions = await api(`/records/${esc(kind)}/${esc(id)}/versions` + q({ branch }));
    const head = [...versions].reverse().find((v) => v.record);
    box.replaceChildren(el("h3", {}, `${kind}/${id} on ${branch}`),
      head ? el("dl", {}, Object.entries(head.record.record).flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, typeof v === "object" ? JSON.stringify(v) : String(v))])) : el("p", {}, "Deleted."),
      el("div", { class: "versions" }, el("h4", {}, `Versions (${versions.length}), oldest first`),
        el("ol", { id: "versions" }, versions.map((v) => el("li", { "data-source": v.source },
          el("strong", {}, fmt(v.at)), ` ${v.source}: `, v.deleted ? "(deleted)" : `${v.record.summary}${v.record.branch && v.record.branch !== branch ? " (on " + v.record.branch + ")" : ""}`)))),
      el("p", { class: "muted" }, "Versions are read by time travel over the record's timeline events, the merges into the branch and its last update."),
      kind === "fact" && head && ["active", "verified", "promoted"].includes(head.record.record.status) ? correctionForm(id, branch, head.record.record.text) : null);
  } catch (err) { showError(box, err); }
}

// correctionForm corrects a live fact: a new text, or an invalidation, with the
// reason kept beside it (POST /facts/{id}/corrections).
function correctionForm(id, branch, text) {
  const out = el("p", { role: "status", id: "correct-out" });
  const textIn = el("textarea", { id: "correct-text", rows: 2, "aria-label": "Corrected text" }, text);
  const why = el("input", { id: "correct-why", "aria-label": "Why", placeholder: "why (kept with the correction)" });
  const send = async (action) => {
    const body = { branch, action, by: "inspector", why: why.value };
    if (action === "update") body.text = textIn.value;
    try {
      const f = await api(`/facts/${esc(id)}/corrections`, { method: "POST", body: JSON.stringify(body) });
      out.textContent = `${action === "update" ? "Corrected" : "Invalidated"}: ${f.text} (${f.status})`;
      loadTimeline(true);
    } catch (err) { showError(out, err); }
  };
  return el("form", { class: "correct", id: "correct-form", onsubmit: (e) => { e.preventDefault(); send("update"); } },
    el("h4", {}, "Correct this fact"), textIn, why,
    el("button", { type: "submit", id: "correct-update" }, "Save the new text"),
    el("button", { type: "button", id: "correct-invalidate", onclick: () => send("invalidate") }, "Invalidate"),
    out);
}

// ---- diff and merge ----

// paged appends to list the items rendered by item, a page at a time, with a button
// that shows the next page.
function paged(list, items, item) {
  let shown = 0;
  const more = el("button", { type: "button", class: "more" });
  const next = () => {
    list.append(...items.slice(shown, shown + pageSize).map(item));
    shown = Math.min(items.length, shown + pageSize);
    more.textContent = `Show ${Math.min(pageSize, items.length - shown)} more of ${items.length - shown}`;
    more.hidden = shown >= items.length;
  };
  more.addEventListener("click", next);
  next();
  return more;
}

// changeList lists a side's changes, counted by kind and change, a page at a time;
// the source's can be ticked for a cherry-pick.
function changeList(title, changes, pickable) {
  const counts = {};
  for (const c of changes) { const k = `${c.ref.split("/")[0]} ${c.op}`; counts[k] = (counts[k] || 0) + 1; }
  const list = el("ul", {});
  const more = paged(list, changes, (c) => el("li", { class: "op-" + c.op },
    pickable ? el("input", { type: "checkbox", class: "pick", "data-pick": c.ref, id: "pick-" + c.ref, "aria-label": `Pick ${c.ref} for a cherry-pick` }) : null,
    `${{ added: "+", updated: "~", deleted: "−" }[c.op]} ${c.ref} `,
    el("span", {}, clip((c.after || c.before).summary))));
  return el("div", {}, el("h3", {}, `${title} (${changes.length})`),
    changes.length ? el("p", { class: "muted counts" }, Object.entries(counts).sort().map(([k, n]) => `${n} ${k}`).join(", ")) : null,
    list, more);
}
async function showDiff() {
  const source = $("diff-source").value, target = $("diff-target").value;
  const out = $("diff-out");
  if (!applying) link({ view: "diff", source, target });
  if (source === target) {
    out.replaceChildren(el("p", { class: "muted", id: "diff-same" }, `${source} and ${target} are the same branch: choose two branches to compare.`));
    return;
  }
  try {
    const d = await api("/diff" + q({ source, target }));
    const conflictList = el("div", {}), conflictBox = el("div", {}, conflictList);
    out.replaceChildren(el("p", { class: "muted" }, `Since ${d.base} at ${fmt(d.base_at)}`),
      changeList("Changes on " + source, d.source_changes, true), changeList("Changes on " + target, d.target_changes),
      el("h3", {}, `Conflicts (${d.conflicts.length})`), conflictBox);
    conflictBox.append(paged(conflictList, d.conflicts, (c) => el("div", { class: "conflict", "data-conflict": c.ref }, el("h4", {}, `${c.ref}: ${c.reason.replaceAll("_", " ")}`),
      el("dl", {}, el("dt", {}, source), el("dd", {}, c.source.after ? clip(c.source.after.summary) : "(deleted)"),
        el("dt", {}, target), el("dd", {}, c.target.after ? clip(c.target.after.summary) : "(deleted)")))));
  } catch (err) { showError(out, err); }
}
$("diff-form").addEventListener("submit", (e) => { e.preventDefault(); showDiff(); });
$("diff-target").addEventListener("change", (e) => (e.target.dataset.touched = "1"));

async function merge(dryRun) {
  const out = $("merge-out");
  const body = { source: $("diff-source").value, target: $("diff-target").value, strategy: $("merge-strategy").value, policy: $("merge-policy").value, dry_run: dryRun, merged_by: "inspector" };
  if (body.strategy === "cherry_pick") {
    body.pick = [...document.querySelectorAll("#diff-out input.pick:checked")].map((i) => i.dataset.pick);
    if (!body.pick.length) { out.replaceChildren(el("p", { class: "error", role: "alert" }, "Tick the records to pick in the changes of the source, then merge.")); return; }
  }
  try {
    const m = await api("/merges", { method: "POST", body: JSON.stringify(body) });
    const r = m.record;
    out.replaceChildren(el("div", { class: "plan", "data-applied": String(m.applied) },
      el("p", {}, el("strong", {}, m.applied ? "Merged" : "Preview (nothing changed)"), `: ${r.source} into ${r.target}, ${r.strategy}; ${(r.merged || []).length} merged, ${(r.rejected || []).length} rejected, ${(r.resolutions || []).length} resolved`),
      el("ul", {}, [...(r.merged || []).map((i) => el("li", { class: "op-added" }, `${i.action} ${i.ref.kind}/${i.ref.id}`)),
        ...(r.rejected || []).map((i) => el("li", { class: "op-deleted" }, `${i.action} ${i.ref.kind}/${i.ref.id} ${i.reason || ""}`)),
        ...(r.resolutions || []).map((i) => el("li", { class: "op-updated" }, `${i.action} ${i.ref.kind}/${i.ref.id} by ${i.by}`))])));
    if (m.applied) { await loadTree(); showDiff(); }
  } catch (err) {
    showError(out, err);
    if (err.problem && err.problem.conflicts) out.append(el("p", {}, `Conflicting: ${err.problem.conflicts.map((c) => c.ref).join(", ")}. Choose how to settle conflicts above.`));
  }
}
$("merge-preview").addEventListener("click", () => merge(true));
$("merge-run").addEventListener("click", () => merge(false));

// ---- search ----
$("search-form").addEventListener("submit", (e) => { e.preventDefault(); runSearch(); });
async function runSearch() {
  const rows = $("search-rows");
  if (!applying) link({ view: "search", q: $("search-q").value, branch: $("search-branch").value, mode: $("search-mode").value });
  try {
    const min = $("search-min").value;
    const hits = await api("/search" + q({ q: $("search-q").value, branch: $("search-branch").value, mode: $("search-mode").value, min_relevance: min === "0" ? "" : min }));
    const rs = (rank, score) => (rank ? `#${rank}  ${(score ?? 0).toFixed(3)}` : "—");
    rows.replaceChildren(...hits.map((h, i) => el("tr", {}, el("td", {}, i + 1), el("td", {}, (h.relevance ?? 0).toFixed(2)), el("td", {}, h.score.toFixed(4)),
      el("td", {}, rs(h.keyword_rank, h.keyword_score)), el("td", {}, rs(h.vector_rank, h.vector_score)),
      el("td", {}, `${h.record.kind}/${h.record.id}`), el("td", {}, clip(h.record.summary)))));
    if (!hits.length) rows.replaceChildren(el("tr", {}, el("td", { colspan: 7 }, min !== "0" ? "Nothing relevant." : "No hits.")));
  } catch (err) { showError(rows, err); }
}

// ---- time travel ----
let travelPoints = [];
async function loadTravel(at) {
  const branch = $("travel-branch").value || "main";
  // Every event, a page at a time, so that the slider reaches back to the first.
  const evs = (await timelineEvents({ branch, order: "newest" }, Infinity)).reverse();
  // Position i shows memory just before event i+1 was written; the last one is the head.
  travelPoints = evs.map((e, i) => (i + 1 < evs.length ? { at: new Date(Date.parse(evs[i + 1].at) - 1).toISOString(), after: e } : { at: "", after: e }));
  const s = $("travel-slider");
  s.max = Math.max(travelPoints.length - 1, 0);
  s.value = s.max;
  if (at) {
    // The point the link names.
    const i = travelPoints.findIndex((p) => p.at === at);
    if (i >= 0) s.value = i;
  }
  s.setAttribute("aria-valuetext", "now");
  await showTravel();
}
async function showTravel() {
  const branch = $("travel-branch").value || "main";
  const p = travelPoints[+$("travel-slider").value];
  if (!p) return;
  const label = p.at ? `${branch} as it was at ${fmt(p.at)}, after ${p.after.kind}/${p.after.id}` : `${branch} now`;
  if (!applying) link({ view: "travel", branch, at: p.at });
  $("travel-at").textContent = label;
  $("travel-slider").setAttribute("aria-valuetext", label);
  try {
    const facts = await api("/facts" + q({ branch, at: p.at }));
    $("travel-rows").replaceChildren(...facts.map((f) => el("tr", {}, el("td", {}, f.id), el("td", {}, f.agent || "-"), el("td", {}, clip(f.summary)))));
    if (!facts.length) $("travel-rows").replaceChildren(el("tr", {}, el("td", { colspan: 3, class: "muted" }, `No facts on ${branch} at this point.`)));
  } catch (err) { showError($("travel-rows"), err); }
}
$("travel-slider").addEventListener("input", showTravel);
$("travel-branch").addEventListener("change", () => loadTravel());

// ---- entities ----
// The entity graph: the relations of a branch walked from one entity, drawn in rings
// by how many relations away each entity is; a click on an entity walks from it.
$("entity-form").addEventListener("submit", (e) => { e.preventDefault(); showEntities(); });
$("entity-branch").addEventListener("change", () => { $("entity-q").value = ""; loadEntities(); });
$("entity-depth").addEventListener("change", () => showEntities());
async function loadEntities() {
  const branch = $("entity-branch").value || "main";
  try {
    const rels = await api("/relations" + q({ branch }));
    const degree = {};
    for (const r of rels) for (const n of [r.record.source, r.record.target]) degree[n] = (degree[n] || 0) + 1;
    const names = Object.keys(degree).sort((a, b) => degree[b] - degree[a] || a.localeCompare(b));
    $("entity-names").replaceChildren(...names.map((n) => el("option", { value: n })));
    if (!names.length) {
      $("entity-note").textContent = `No relations on ${branch} yet: write one (source, type, target) and its entities show here.`;
      $("entity-graph").replaceChildren();
      return;
    }
    if (!$("entity-q").value) $("entity-q").value = names[0]; // the most connected
    await showEntities();
  } catch (err) { showError($("entity-graph"), err); }
}
async function showEntities() {
  const branch = $("entity-branch").value || "main", entity = $("entity-q").value.trim(), depth = $("entity-depth").value;
  if (!entity) return;
  if (!applying) link({ view: "entities", branch, entity, depth });
  try {
    const g = await api("/graph" + q({ branch, entity, depth }));
    drawEntities(g);
    $("entity-note").textContent = `${g.nodes.length} entities and ${g.edges.length} relations within ${depth} of ${g.root} on ${branch}` +
      (g.truncated ? " (cut at the limit)" : "") + ". Select an entity to walk from it.";
  } catch (err) { showError($("entity-graph"), err); }
}
function drawEntities(g) {
  const rings = {};
  for (const n of g.nodes) (rings[n.depth] ||= []).push(n.entity);
  const maxDepth = Math.max(0, ...Object.keys(rings).map(Number));
  const ring = 130, R = ring * maxDepth + 70;
  const W = Math.max($("entity-graph").clientWidth - 2, 2 * R), H = 2 * R;
  const cx = W / 2, cy = H / 2, pos = {};
  for (const [d, names] of Object.entries(rings)) {
    names.forEach((n, i) => {
      const a = (2 * Math.PI * i) / names.length + (+d % 2) * 0.4 - Math.PI / 2;
      pos[n] = +d === 0 ? [cx, cy] : [cx + +d * ring * Math.cos(a), cy + +d * ring * Math.sin(a)];
    });
  }
  const svg = el("svg:svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: "group", "aria-label": `Entities around ${g.root}` });
  for (const r of g.edges) {
    const [a, b] = [pos[r.source], pos[r.target]];
    if (!a || !b) continue;
    svg.append(el("svg:line", { class: "edge", "data-relation": r.id, x1: a[0], y1: a[1], x2: b[0], y2: b[1] },
      el("svg:title", {}, `${r.source} -${r.type}-> ${r.target}`)));
    svg.append(el("svg:text", { class: "etype", x: (a[0] + b[0]) / 2, y: (a[1] + b[1]) / 2 - 3, "text-anchor": "middle" }, r.type));
  }
  for (const n of g.nodes) {
    const [x, y] = pos[n.entity];
    const walk = () => { $("entity-q").value = n.entity; showEntities(); };
    svg.append(el("svg:g", { class: "node" + (n.depth === 0 ? " root" : ""), "data-entity": n.entity, tabindex: 0, role: "button",
      "aria-label": `Entity ${n.entity}, ${n.depth} relations from ${g.root}; walk from it`,
      onclick: walk, onkeydown: (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); walk(); } } },
      el("svg:circle", { cx: x, cy: y, r: 7 }), el("svg:text", { x: x + 10, y: y + 4 }, clip(n.entity, 40))));
  }
  $("entity-graph").replaceChildren(svg);
}

// ---- tasks and handoffs ----
async function loadTasks() {
  try {
    const tasks = await api("/tasks");
    $("task-rows").replaceChildren(...tasks.map((t) => el("tr", {},
      el("td", {}, el("button", { class: "link", type: "button", onclick: () => showTask(t.name) }, t.name)),
      el("td", {}, t.status), el("td", {}, t.owner || "-"), el("td", {}, t.objective_count), el("td", {}, t.description || ""))));
    if (!tasks.length) $("task-rows").replaceChildren(el("tr", {}, el("td", { colspan: 5, class: "muted" }, "No tasks yet. An orchestrator creates them (day1 tasks, POST /api/v1/tasks).")));
  } catch (err) { showError($("task-rows"), err); }
}
async function showTask(name) {
  const out = $("task-out");
  if (!applying) link({ view: "tasks", task: name });
  try {
    const [t, hs, rp] = await Promise.all([api("/tasks/" + esc(name)), api("/handoffs" + q({ task: name })), api(`/tasks/${esc(name)}/replay`)]);
    out.replaceChildren(el("div", { class: "task" },
      el("h3", {}, `Task ${t.name} (${t.status}) on ${t.branch}`),
      el("h4", {}, "Objectives"), el("ol", {}, (t.objectives || []).map((o) => el("li", {}, `${o.description} — ${o.status}${o.assignees ? " (" + o.assignees.join(", ") + ")" : ""}`))),
      el("h4", {}, "Agents"), el("ul", {}, (t.members || []).map((m) => el("li", {}, `${m.agent} as ${m.role || "member"}, ${m.status}, on ${m.branch}`))),
      el("h4", {}, "Handoffs"), hs.length ? null : el("p", { class: "muted" }, "No handoffs."), el("ul", {}, hs.map((h) => el("li", { "data-handoff": h.id }, `${h.type} from ${h.from_agent || "-"} to ${h.to_agent || "anyone"}: ${h.status}. `,
        el("span", { class: "muted" }, `Packet: ${(h.packet.facts || []).length} facts, ${(h.packet.pending_objectives || []).length} pending objectives. ${h.instructions || ""}`),
        h.status === "pending" ? handoffForm(h, name) : null))),
      el("h4", {}, "Replay"), el("table", { class: "rows" }, el("tbody", {}, rp.timeline.map((s) => el("tr", {}, el("td", {}, fmt(s.at)), el("td", {}, s.kind), el("td", {}, s.agent || "-"), el("td", {}, clip(s.summary))))))));
  } catch (err) { showError(out, err); }
}

// handoffForm accepts or rejects a pending handoff for the receiving agent.
function handoffForm(h, task) {
  const agent = el("input", { class: "handoff-agent", "aria-label": "Receiving agent", value: h.to_agent || "", placeholder: "agent" });
  const reason = el("input", { class: "handoff-reason", "aria-label": "Reason to reject", placeholder: "reason (to reject)" });
  const out = el("span", { role: "status", class: "handoff-out" });
  const act = async (verb) => {
    const body = verb === "accept" ? { agent: agent.value } : { agent: agent.value, reason: reason.value };
    try {
      await api(`/handoffs/${esc(h.id)}/${verb}`, { method: "POST", body: JSON.stringify(body) });
      await showTask(task);
    } catch (err) { showError(out, err); }
  };
  return el("div", { class: "handoff-act" }, agent, reason,
    el("button", { type: "button", class: "handoff-accept", onclick: () => act("accept") }, "Accept"),
    el("button", { type: "button", class: "handoff-reject", onclick: () => act("reject") }, "Reject"), out);
}

// ---- live updates ----
let redraw;
function connect() {
  const es = new EventSource("/events" + (token ? "?access_token=" + esc(token) : ""));
  // A page left behind closes its stream: a browser keeps six connections to a server.
  window.addEventListener("pagehide", () => es.close());
  es.addEventListener("ready", () => { $("live").textContent = "live"; $("live").className = "live on"; });
  es.onerror = () => { $("live").textContent = "reconnecting…"; $("live").className = "live off"; };
  const feed = (text) => {
    $("feed").prepend(el("li", {}, `${new Date().toLocaleTimeString()} ${text}`));
    while ($("feed").children.length > 50) $("feed").lastChild.remove();
  };
  const refresh = () => { clearTimeout(redraw); redraw = setTimeout(() => loadTree().catch(() => {}), 150); };
  es.addEventListener("branch", (e) => {
    const { branch } = JSON.parse(e.data);
    feed(`${branch.name}: ${branch.status === "active" ? "changed" : branch.status}`);
    refresh();
    if (branch.name === $("tl-branch").value) loadTimeline(true);
  });
  es.addEventListener("branch_deleted", (e) => { feed(`${JSON.parse(e.data).name}: deleted`); refresh(); });
  es.addEventListener("merge", (e) => { const m = JSON.parse(e.data).merge; feed(`merged ${m.source} into ${m.target}`); refresh(); });
  es.addEventListener("snapshot", (e) => { const s = JSON.parse(e.data).snapshot; feed(`snapshot ${s.name} of ${s.branch}`); refresh(); });
}

(async function start() {
  try {
    const info = await api("/info");
    const c = info.capabilities;
    $("store").textContent = `${c.store}${c.durable ? ", durable" : ""}; embedder ${c.embedder || "none"}`;
    await loadTree();
    if (!(await applyLink())) await loadTimeline();
    await loadSessions($("tl-branch").value || "main");
  } catch (err) {
    if (err.problem && err.problem.status === 401) { askToken(); return; }
    showError($("graph"), err);
  }
  connect();
})();

// askToken asks for the API's token when the page was opened without it (day1 serve
// prints the address with the token to open).
function askToken() {
  $("live").textContent = "a token is needed";
  $("live").className = "live off";
  const input = el("input", { id: "token-input", type: "password", "aria-label": "API token", autocomplete: "off" });
  $("graph").replaceChildren(el("form", { id: "token-form", onsubmit: (e) => {
    e.preventDefault();
    const h = new URLSearchParams(location.hash.slice(1));
    h.set("token", input.value.trim());
    location.hash = h.toString();
    location.reload();
  } }, el("p", {}, "This server asks for a token: paste the one day1 serve was started with (or open the address it printed)."), input,
  el("button", { type: "submit" }, "Open")));
}
