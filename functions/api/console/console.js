// The session console: plain JavaScript, no third-party code. Every call goes to this origin's API with the
// signed-in user's bearer token; what a session holds is rendered as text (never as HTML).
"use strict";

const BASE = location.pathname.replace(/\/console(\/.*)?$/, "");
const TOKEN_KEY = "agent-store-token";
const PAGE = 100;
const main = document.getElementById("main");
const statusLine = document.getElementById("status");
let stopLive = null;

// ---- small DOM helpers ------------------------------------------------------------------------------
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}
function say(text, isError) {
  statusLine.textContent = text || "";
  statusLine.classList.toggle("error", Boolean(isError));
}
function when(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  return isNaN(d) ? String(iso) : d.toLocaleString();
}
function pretty(value) {
  if (typeof value === "string") {
    try { return JSON.stringify(JSON.parse(value), null, 2); } catch { return value; }
  }
  return JSON.stringify(value, null, 2);
}
function usageText(usage) {
  if (!usage) return "";
  const parts = [];
  if (usage.input_tokens != null) parts.push(`in ${usage.input_tokens}`);
  if (usage.output_tokens != null) parts.push(`out ${usage.output_tokens}`);
  if (usage.total_tokens != null) parts.push(`total ${usage.total_tokens}`);
  if (usage.cost != null) parts.push(`$${usage.cost}`);
  return parts.join(" · ");
}

// ---- signing in -------------------------------------------------------------------------------------
function token() { return sessionStorage.getItem(TOKEN_KEY); }
function subjectOf(jwt) {
  try {
    const part = jwt.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
    return JSON.parse(atob(part + "=".repeat((4 - part.length % 4) % 4))).sub || "";
  } catch { return ""; }
}
function signedIn(jwt) {
  sessionStorage.setItem(TOKEN_KEY, jwt);
  document.getElementById("who").textContent = subjectOf(jwt) ? `signed in as ${subjectOf(jwt)}` : "signed in";
  document.getElementById("sign-out").hidden = false;
}
document.getElementById("sign-out").addEventListener("click", () => {
  sessionStorage.removeItem(TOKEN_KEY);
  location.hash = "#/";
  location.reload();
});

function b64url(bytes) {
  return btoa(String.fromCharCode(...new Uint8Array(bytes))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
async function startOidc(oidc) {
  const verifier = b64url(crypto.getRandomValues(new Uint8Array(32)));
  const state = b64url(crypto.getRandomValues(new Uint8Array(16)));
  const challenge = b64url(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)));
  sessionStorage.setItem("pkce", JSON.stringify({ verifier, state }));
  const url = new URL(oidc.authorize_url);
  url.search = new URLSearchParams({
    response_type: "code", client_id: oidc.client_id, redirect_uri: location.origin + location.pathname,
    scope: oidc.scope, state, code_challenge: challenge, code_challenge_method: "S256",
  }).toString();
  location.assign(url.toString());
}
async function finishOidc(oidc, params) {
  const saved = JSON.parse(sessionStorage.getItem("pkce") || "{}");
  sessionStorage.removeItem("pkce");
  if (!saved.state || saved.state !== params.get("state")) throw new Error("sign-in answer does not match the request");
  const answer = await fetch(oidc.token_url, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "authorization_code", client_id: oidc.client_id, code: params.get("code"),
      redirect_uri: location.origin + location.pathname, code_verifier: saved.verifier,
    }),
  });
  if (!answer.ok) throw new Error(`the issuer refused the sign-in (${answer.status})`);
  const tokens = await answer.json();
  history.replaceState(null, "", location.pathname + "#/");
  signedIn(tokens.access_token || tokens.id_token);
}
function signInView(oidc) {
  const box = el("textarea", { id: "token", "aria-label": "Bearer token", placeholder: "eyJ…" });
  const form = el("form", {
    class: "signin", onsubmit: (event) => {
      event.preventDefault();
      if (box.value.trim()) { signedIn(box.value.trim()); route(); }
    },
  },
  el("h1", {}, "Sign in"),
  oidc ? el("p", {}, el("button", { type: "button", onclick: () => startOidc(oidc) }, "Sign in with your identity provider")) : null,
  el("p", {}, oidc ? "Or paste a bearer token (a JWT the API accepts):" : "Paste a bearer token (a JWT the API accepts):"),
  el("label", { for: "token", class: "muted" }, "Token"), box,
  el("p", {}, el("button", { type: "submit" }, "Use this token")));
  main.replaceChildren(form);
  box.focus();
}

// ---- the API ----------------------------------------------------------------------------------------
class ApiError extends Error {
  constructor(status, code, message) { super(message); this.status = status; this.code = code; }
}
async function api(path, params) {
  const url = new URL(BASE + path, location.origin);
  for (const [key, value] of Object.entries(params || {})) {
    if (value !== null && value !== undefined && value !== "") url.searchParams.set(key, value);
  }
  const answer = await fetch(url, { headers: { Authorization: `Bearer ${token()}` } });
  if (answer.status === 401) {
    sessionStorage.removeItem(TOKEN_KEY);
    throw new ApiError(401, "unauthorized", "your sign-in has expired: sign in again");
  }
  const body = answer.headers.get("content-type")?.includes("json") ? await answer.json() : null;
  if (!answer.ok) throw new ApiError(answer.status, body?.code || "", body?.message || `HTTP ${answer.status}`);
  return body;
}
async function apiSend(method, path, body, params) {
  // a change: POST, PUT, PATCH or DELETE with a JSON body (none for DELETE); the answer's JSON, or null
  const url = new URL(BASE + path, location.origin);
  for (const [key, value] of Object.entries(params || {})) url.searchParams.set(key, value);
  const answer = await fetch(url, {
    method,
    headers: { Authorization: `Bearer ${token()}`, ...(method === "DELETE" ? {} : { "Content-Type": "application/json" }) },
    body: method === "DELETE" ? undefined : JSON.stringify(body || {}),
  });
  const reply = answer.headers.get("content-type")?.includes("json") ? await answer.json() : null;
  if (!answer.ok) throw new ApiError(answer.status, reply?.code || "", reply?.message || `HTTP ${answer.status}`);
  return reply;
}
function apiPost(path, body) { return apiSend("POST", path, body); }
async function apiBlob(path, params) {
  const url = new URL(BASE + path, location.origin);
  for (const [key, value] of Object.entries(params || {})) url.searchParams.set(key, value);
  const answer = await fetch(url, { headers: { Authorization: `Bearer ${token()}` } });
  if (!answer.ok) {
    const body = await answer.json().catch(() => ({}));
    throw new ApiError(answer.status, body.code || "", body.message || `HTTP ${answer.status}`);
  }
  return answer.blob();
}
function failed(error) {
  if (error.status === 401) { signInView(CONFIG.oidc); say(error.message, true); return; }
  say(error.message || String(error), true);
}

// ---- sessions: list, filters, search ----------------------------------------------------------------
function sessionsView() {
  const q = el("input", { type: "search", id: "q", name: "q", placeholder: "words in titles and messages" });
  const after = el("input", { type: "date", id: "after", name: "after" });
  const before = el("input", { type: "date", id: "before", name: "before" });
  const meta = el("input", { type: "text", id: "meta", name: "meta", placeholder: "key=value" });
  const results = el("div", { id: "results" });
  const form = el("form", { class: "filters", role: "search", onsubmit: (e) => { e.preventDefault(); run(); } },
    el("label", { for: "q" }, "Search", q),
    el("label", { for: "after" }, "Created after", after),
    el("label", { for: "before" }, "Created before", before),
    el("label", { for: "meta" }, "Metadata", meta),
    el("button", { type: "submit" }, "Apply"));
  main.replaceChildren(el("h1", {}, "Sessions"), form, results);
  function run() {
    if (q.value.trim()) search(results, q.value.trim(), null, true);
    else list(results, { after: after.value, before: before.value, meta: meta.value.trim() }, null, true);
  }
  run();
}
function metadataFilter(text) {
  if (!text) return null;
  const filter = {};
  for (const pair of text.split(",")) {
    const [key, ...rest] = pair.split("=");
    if (!key.trim()) continue;
    const raw = rest.join("=").trim();
    let value = raw;
    try { value = JSON.parse(raw); } catch { /* a plain string */ }
    filter[key.trim()] = value;
  }
  return JSON.stringify(filter);
}
function forkMark(s) {
  // a fork says so in the list, and of what (its source, at which message)
  const source = s.metadata?.forked_from;
  if (!source || typeof source.session_id !== "string") return null;
  return el("span", { class: "badge fork-of", title: `forked from ${source.session_id} at message #${Number(source.seq)}` },
    `fork of ${source.session_id} @ #${Number(source.seq)}`);
}
function count(n, noun) {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}
async function list(target, filters, cursor, fresh) {
  say("Loading sessions…");
  try {
    const page = await api("/sessions", {
      limit: 50, cursor, conversations_only: "true",
      created_after: filters.after ? new Date(filters.after).toISOString() : null,
      created_before: filters.before ? new Date(filters.before + "T23:59:59").toISOString() : null,
      metadata: metadataFilter(filters.meta),
    });
    let table = target.querySelector("table");
    if (fresh || !table) {
      table = el("table", { "aria-label": "Sessions" },
        el("thead", {}, el("tr", {}, el("th", {}, "Title"), el("th", {}, "Id"), el("th", { class: "num" }, "Messages"),
          el("th", { class: "num" }, "Tokens"), el("th", {}, "Updated"))),
        el("tbody"));
      target.replaceChildren(table, el("p", { class: "totals", id: "totals" }), el("div", { id: "more" }));
    }
    const body = table.querySelector("tbody");
    for (const s of page.items) {
      body.append(el("tr", { "data-messages": s.last_seq, "data-tokens": s.usage?.total_tokens || 0 },
        el("td", {}, el("a", { href: `#/s/${encodeURIComponent(s.id)}` }, s.title || s.preview || "(untitled)"),
          forkMark(s)),
        el("td", { class: "muted" }, s.id),
        el("td", { class: "num" }, s.last_seq),
        el("td", { class: "num" }, s.usage?.total_tokens ?? ""),
        el("td", {}, when(s.updated_at))));
    }
    const rows = [...body.rows];
    const messages = rows.reduce((n, r) => n + Number(r.dataset.messages), 0);
    const tokens = rows.reduce((n, r) => n + Number(r.dataset.tokens), 0);
    target.querySelector("#totals").textContent = rows.length
      ? `${count(rows.length, "session")} · ${count(messages, "message")} · ${count(tokens, "token")}` : "No sessions yet.";
    const more = target.querySelector("#more");
    more.replaceChildren(page.next_cursor
      ? el("button", { type: "button", onclick: () => list(target, filters, page.next_cursor, false) }, "Load more sessions")
      : "");
    say("");
  } catch (error) { failed(error); }
}
async function search(target, q, cursor, fresh) {
  say("Searching…");
  try {
    const found = await api("/search", { q, limit: 20, cursor });
    if (fresh) target.replaceChildren();
    const rows = found.items.map((h) => el("tr", {},
      el("td", {}, el("a", { href: `#/s/${encodeURIComponent(h.session_id)}` }, h.title || h.session_id)),
      el("td", {}, h.seq == null ? "title" : `message #${h.seq}`),
      el("td", {}, h.snippet)));
    target.append(
      el("table", { "aria-label": "Search results" },
        el("thead", {}, el("tr", {}, el("th", {}, "Session"), el("th", {}, "Where"), el("th", {}, "Match"))),
        el("tbody", {}, rows.length ? rows : el("tr", {}, el("td", { colspan: 3 }, "No match in these sessions.")))),
      el("p", { class: "totals" }, `Searched ${count(found.sessions_searched, "session")} and ${count(found.messages_searched, "message")}.`));
    if (found.next_cursor) {
      const button = el("button", { type: "button", onclick: () => { button.remove(); search(target, q, found.next_cursor, false); } },
        "Search older sessions");
      target.append(button);
    }
    say("");
  } catch (error) { failed(error); }
}

// ---- long-term memory: namespaces, memories, search with scores --------------------------------------
function nsText(ns) { return ns.join(" / "); }
function namespaceOf(text) {
  // a namespace in the address: a JSON array of labels (anything else is no namespace: the whole memory)
  if (!text) return null;
  try {
    const ns = JSON.parse(decodeURIComponent(text));
    return Array.isArray(ns) && ns.length && ns.every((l) => typeof l === "string") ? ns : null;
  } catch { return null; }
}
function memoryRows(items, withScore, changed) {
  return items.map((h) => {
    const text = el("td", {}, typeof h.value?.text === "string" ? h.value.text : pretty(h.value), provenance(h.value));
    return el("tr", {},
      withScore ? el("td", { class: "num" }, h.score == null ? "–" : h.score.toFixed(3)) : null,
      el("td", {}, el("a", { href: `#/memory/${encodeURIComponent(JSON.stringify(h.namespace))}` }, nsText(h.namespace))),
      el("td", {}, h.key), text, el("td", {}, when(h.updated_at)),
      el("td", { class: "actions" }, memoryActions(h, text, changed)));
  });
}
function memoryActions(h, cell, changed) {
  // the owner corrects a memory's text (the old one goes to its history) or deletes it, each when confirmed
  const where = { namespace: JSON.stringify(h.namespace), key: h.key };
  const correct = el("button", { type: "button", onclick: () => {
    const box = el("textarea", { rows: 3, "aria-label": "Corrected text", maxlength: 2000 });
    box.value = typeof h.value?.text === "string" ? h.value.text : "";
    const before = [...cell.childNodes];
    const form = el("form", { class: "correct", onsubmit: async (e) => {
      e.preventDefault();
      say("Correcting the memory…");
      try {
        await apiSend("PATCH", "/memories/item", { text: box.value }, where);
        say("Corrected: the earlier text is in its history.");
        await changed();
      } catch (error) { failed(error); }
    } }, box, el("div", { class: "row" }, el("button", { type: "submit" }, "Save"),
      el("button", { type: "button", onclick: () => cell.replaceChildren(...before) }, "Cancel")));
    cell.replaceChildren(form);
    box.focus();
  } }, "Correct");
  const remove = el("button", { type: "button", onclick: () => {
    const question = el("span", { class: "confirm", role: "group", "aria-label": "Confirm the delete" },
      "Delete this memory? ",
      el("button", { type: "button", onclick: async () => {
        say("Deleting the memory…");
        try {
          await apiSend("DELETE", "/memories/item", null, where);
          say("Deleted.");
          await changed();
        } catch (error) { failed(error); }
      } }, "Delete"),
      el("button", { type: "button", onclick: () => { question.replaceWith(remove); remove.focus(); } }, "Cancel"));
    remove.replaceWith(question);
    question.querySelector("button").focus();
  } }, "Delete");
  return [correct, remove];
}
function provenance(value) {
  // an extracted memory: where it came from (a session's messages, by a strategy and a model), its source
  // messages on demand, and the texts it had before a merge or a supersede
  const source = value?.source;
  if (!source || typeof source.session_id !== "string") return null;
  const seqs = (Array.isArray(source.seqs) ? source.seqs : []).filter((n) => Number.isInteger(n));
  const first = seqs.length ? Math.min(...seqs) : 1;
  const line = el("p", { class: "meta provenance" }, "From ",
    el("a", { href: `#/s/${encodeURIComponent(source.session_id)}/transcript?seq=${first}` }, source.session_id),
    seqs.length ? ` · messages ${seqs.join(", ")}` : "", ` · ${source.strategy || "?"} · ${source.model || "?"} · ${when(source.extracted_at)}`);
  const shown = el("div", { class: "source-messages" });
  const details = el("details", {}, el("summary", {}, "Source messages and history"), shown);
  details.addEventListener("toggle", async () => {
    if (!details.open || shown.childElementCount) return;
    const history = (Array.isArray(value.history) ? value.history : []).map((h) => el("li", {},
      `Was (${h.change || "changed"} ${when(h.replaced_at)}): ${h.text ?? ""}`));
    try {
      const page = seqs.length ? await api(`/sessions/${encodeURIComponent(source.session_id)}/messages`,
        { after_seq: first - 1, before_seq: Math.max(...seqs) + 1, limit: 100 }) : { items: [] };
      const said = page.items.filter((m) => seqs.includes(m.seq)).map((m) => el("li", {},
        el("span", { class: "who" }, `#${m.seq} ${m.canonical?.role || m.role}: `), textOf(m)));
      shown.replaceChildren(el("ul", { "aria-label": "Source messages" }, said.length ? said : [el("li", { class: "muted" }, "The messages are no longer there.")]),
        el("ul", { "aria-label": "History" }, history.length ? history : [el("li", { class: "muted" }, "No earlier text.")]));
    } catch (error) {
      shown.replaceChildren(el("p", { class: "muted" }, error.status === 404 ? "The session is no longer there." : error.message),
        el("ul", { "aria-label": "History" }, history));
    }
  });
  return el("div", {}, line, details);
}
function textOf(message) {
  const parts = message.canonical?.parts || [];
  return parts.filter((p) => p.type === "text" && p.text).map((p) => p.text).join(" ") || "(no text)";
}
function memoryTable(label, items, withScore, changed) {
  const head = [withScore ? el("th", { class: "num" }, "Score") : null, el("th", {}, "Namespace"), el("th", {}, "Key"),
    el("th", {}, "Value"), el("th", {}, "Updated"), el("th", {}, el("span", { class: "sr-only" }, "Actions"))];
  return el("table", { "aria-label": label },
    el("thead", {}, el("tr", {}, head)),
    el("tbody", {}, items.length ? memoryRows(items, withScore, changed)
      : el("tr", {}, el("td", { colspan: withScore ? 6 : 5 }, withScore ? "No memory matches." : "No memories here."))));
}
function extractionLine(choice, changed) {
  // the owner's choice about memory extraction: on (with which strategies) or off, switched here
  const strategies = choice.strategies ? choice.strategies.join(", ") : "the stack's default strategies";
  const button = el("button", { type: "button", onclick: async () => {
    button.disabled = true;
    say(choice.enabled ? "Switching memory extraction off…" : "Switching memory extraction on…");
    try {
      await apiSend("PUT", "/memories/extraction", { enabled: !choice.enabled, strategies: choice.strategies });
      say("");
      await changed();
    } catch (error) { failed(error); button.disabled = false; }
  } }, choice.enabled ? "Switch extraction off" : "Switch extraction on");
  return el("p", { class: "row extraction", "aria-label": "Memory extraction" },
    choice.enabled ? `Memory extraction is on (${strategies}): your conversations are distilled into memories.`
      : "Memory extraction is off: nothing is extracted from your conversations.", button);
}
async function memoryView(namespace) {
  const q = el("input", { type: "search", id: "mq", name: "mq", placeholder: "what to recall (by meaning)" });
  const results = el("div", { id: "memory-results" });
  const names = el("ul", { class: "namespaces", "aria-label": "Namespaces" });
  const form = el("form", { class: "filters", role: "search", onsubmit: (e) => { e.preventDefault(); find(); } },
    el("label", { for: "mq" }, "Recall", q), el("button", { type: "submit" }, "Search memories"));
  const choice = el("div", { id: "memory-extraction" });
  main.replaceChildren(el("h1", {}, namespace ? `Memory · ${nsText(namespace)}` : "Memory"), choice, form,
    el("h2", {}, "Namespaces"), names, results);
  const prefix = namespace ? JSON.stringify(namespace) : null;
  const changed = async () => { const said = statusLine.textContent; await memoryView(namespace); say(said); };
  async function find() {
    if (!q.value.trim()) return;
    say("Searching memories…");
    try {
      const found = await api("/memories/search", { q: q.value.trim(), prefix, limit: 20 });
      const how = { semantic: "by meaning", keyword: "by words (the stack has no embedder)", hybrid: "by words and meaning" };
      results.replaceChildren(el("h2", {}, "Best matches"), memoryTable("Memory search results", found.items, true, changed),
        el("p", { class: "totals" }, `Searched ${how[found.mode] || "by words"}.`));
      say("");
    } catch (error) { failed(error); }
  }
  say("Loading memories…");
  try {
    choice.replaceChildren(extractionLine(await api("/memories/extraction"), changed));
    const listed = await api("/memories/namespaces", { prefix, limit: 200 });
    names.replaceChildren(...(listed.items.length ? listed.items.map((ns) => el("li", {},
      el("a", { href: `#/memory/${encodeURIComponent(JSON.stringify(ns))}` }, nsText(ns))))
      : [el("li", { class: "muted" }, "No memories yet.")]));
    const page = await api("/memories/search", { prefix, limit: 100 });
    results.replaceChildren(el("h2", {}, namespace ? "Memories here" : "Memories"), memoryTable("Memories", page.items, false, changed),
      el("p", { class: "totals" }, `${page.items.length} ${page.items.length === 1 ? "memory" : "memories"}`));
    say("");
  } catch (error) { failed(error); }
}

// ---- one session --------------------------------------------------------------------------------------
function part(kind, label, body, name) {
  // the label names the part's kind (in small capitals) and, for tools, the tool's name exactly as written
  return el("div", { class: `part ${kind}` },
    el("div", { class: "label" }, el("span", { class: "kind" }, label), name ? el("span", { class: "name" }, ` · ${name}`) : null), body);
}
function imageOf(block) {
  const source = block.source || {};
  if (source.type === "base64" && /^image\/(png|jpeg|gif|webp)$/.test(source.media_type || "")) {
    return el("img", { src: `data:${source.media_type};base64,${source.data}`, alt: "image in the message" });
  }
  const url = typeof block.image_url === "string" ? block.image_url : block.image_url?.url;
  if (url && url.startsWith("data:image/")) return el("img", { src: url, alt: "image in the message" });
  return el("span", { class: "muted" }, url ? `image: ${url}` : "image");
}
function partsOf(m) {
  // the canonical view the API gives with every message: the same parts whatever framework wrote it
  const view = m.canonical || { parts: [] };
  const images = (Array.isArray(m.content) ? m.content : []).filter((b) => b && typeof b === "object"
    && (b.type === "image" || b.type === "image_url" || b.type === "input_image"));
  const out = [];
  for (const p of view.parts) {
    if (p.type === "text") out.push(el("div", { class: "text" }, p.text || ""));
    else if (p.type === "reasoning") out.push(part("reasoning", "reasoning", el("div", { class: "text" }, p.text || "")));
    else if (p.type === "tool_call") {
      out.push(part("call", "tool call", el("pre", {}, pretty(p.arguments ?? {})), p.name || "?"));
    } else if (p.type === "tool_result") {
      out.push(part("result", p.is_error ? "tool error" : "tool result", el("pre", {}, p.content || ""), p.name));
    } else if (p.type === "image") {
      const raw = images.shift();
      out.push(part("image", "image", raw ? imageOf(raw) : el("span", { class: "muted" },
        [p.name, p.media_type, p.url || (p.inline ? "inline" : "")].filter(Boolean).join(" · ") || "image")));
    } else if (p.type === "file") {
      out.push(part("file", "file", el("span", {}, [p.name || "file", p.media_type, p.url].filter(Boolean).join(" · "))));
    } else out.push(el("pre", { class: "json" }, pretty(p.data)));
  }
  return out;
}
function rawOf(m) {
  // what the writer stored, exactly (a framework's own payload), a click away
  const raw = { role: m.role, content: m.content };
  for (const key of ["name", "tool_call_id", "metadata"]) if (m[key] !== null && m[key] !== undefined) raw[key] = m[key];
  return el("details", { class: "raw" }, el("summary", {}, `raw${m.canonical?.dialect && m.canonical.dialect !== "store" ? " · " + m.canonical.dialect : ""}`),
    el("pre", { class: "json" }, pretty(raw)));
}
function messageNode(m, sessionId) {
  const view = m.canonical || { role: m.role, parts: [] };
  const usage = view.usage || m.usage;
  const fork = sessionId ? el("button", {
    type: "button", class: "fork", title: `a new session holding messages 1 to ${m.seq} of this one`,
    onclick: (event) => askToFork(event.currentTarget, sessionId, m.seq),
  }, "Fork from here") : null;
  return el("article", { class: `msg ${view.role}`, id: `m-${m.seq}`, "aria-label": `message ${m.seq}, ${view.role}` },
    m.kind === "compaction" ? el("div", { class: "compaction" }, "compaction: the live context starts here") : null,
    el("header", {}, el("span", { class: "role" }, view.role),
      view.author && view.author !== view.role ? el("span", { class: "author" }, view.author) : null,
      el("span", {}, `#${m.seq}`), el("span", {}, when(m.created_at)),
      view.model ? el("span", { class: "model" }, view.model) : null,
      usage ? el("span", { class: "usage" }, usageText(usage)) : null, fork),
    partsOf(m), rawOf(m));
}
function askToFork(button, sessionId, seq) {
  // a fork is a new session: say what it will hold, and make it only when asked to
  const question = el("span", { class: "confirm", role: "group", "aria-label": "Confirm the fork" },
    `A new session holding messages 1 to ${seq}? `,
    el("button", { type: "button", onclick: () => forkAt(sessionId, seq) }, "Fork"),
    el("button", { type: "button", onclick: () => { question.replaceWith(button); button.focus(); } }, "Cancel"));
  button.replaceWith(question);
  question.querySelector("button").focus();
}
async function forkAt(sessionId, seq) {
  // a fork is a session of its own, the same conversation up to here: open it, ready to go on differently
  say(`Forking at message ${seq}…`);
  try {
    const fork = await apiPost(`/sessions/${encodeURIComponent(sessionId)}/fork`, { at_seq: seq });
    location.hash = `#/s/${encodeURIComponent(fork.id)}`;
  } catch (error) { failed(error); }
}

async function sessionView(id, tab) {
  say("Loading the session…");
  let session;
  try {
    session = await api(`/sessions/${encodeURIComponent(id)}`);
  } catch (error) {
    if (error.status === 404) {
      main.replaceChildren(el("h1", {}, "Session not found"),
        el("p", {}, `No session ${id} of yours exists (it may have expired or been deleted).`), el("a", { href: "#/" }, "All sessions"));
      say("");
      return;
    }
    failed(error);
    return;
  }
  const tabs = ["transcript", "context", "state", "artifacts", "traces", "memory"];
  const current = tabs.includes(tab) ? tab : "transcript";
  const bar = el("div", { class: "tabs", role: "tablist" }, tabs.map((t) => el("button", {
    role: "tab", type: "button", "aria-selected": t === current ? "true" : "false",
    onclick: () => { location.hash = `#/s/${encodeURIComponent(id)}/${t}`; },
  }, t[0].toUpperCase() + t.slice(1))));
  const panel = el("section", { role: "tabpanel", "aria-label": current });
  main.replaceChildren(
    el("p", {}, el("a", { href: "#/" }, "← Sessions")),
    el("h1", {}, session.title || session.preview || session.id),
    el("p", { class: "meta" }, `${session.id} · ${session.model || "no model"} · ${count(session.last_seq, "message")} · created ${when(session.created_at)} · updated ${when(session.updated_at)}`
      + (usageText(session.usage) ? ` · ${usageText(session.usage)}` : "")),
    sourceOf(session), agentsOf(id), checkpointsOf(id, session), branchesOf(id, session), bar, panel);
  say("");
  if (session.copying) { copyingPanel(id, session, panel); return; }
  if (current === "transcript") await transcriptTab(id, panel);
  if (current === "state") await stateTab(id, panel);
  if (current === "artifacts") await artifactsTab(id, panel);
  if (current === "traces") await tracesTab(id, panel);
  if (current === "memory") await memoryRunsTab(id, panel);
  if (current === "context") await contextTab(id, panel);
}

async function contextTab(id, panel, question = "", budget = 2000) {
  // what the model sees for the next turn (GET /sessions/{id}/context): each part, where it comes from and what
  // it costs, and the budget's use
  const q = el("input", { type: "text", value: question, placeholder: "the question (default: the last user message)", "aria-label": "Question" });
  const b = el("input", { type: "number", value: String(budget), min: "64", max: "200000", "aria-label": "Budget in tokens" });
  const form = el("form", { class: "row", onsubmit: (e) => { e.preventDefault(); contextTab(id, panel, q.value.trim(), Number(b.value)); } },
    q, b, el("button", { type: "submit" }, "Assemble"));
  const params = new URLSearchParams({ budget: String(budget) });
  if (question) params.set("q", question);
  try {
    const found = await api(`/sessions/${encodeURIComponent(id)}/context?${params}`);
    const share = Math.round((100 * found.used_tokens) / found.budget_tokens);
    const use = el("p", { class: "meta", "aria-label": "Budget" },
      `${found.used_tokens.toLocaleString()} of ${found.budget_tokens.toLocaleString()} tokens (${share}%)`
      + (found.query ? ` for “${found.query}”` : " (no question: the recent window)"));
    const fill = el("span", {});
    fill.style.width = `${Math.min(100, share)}%`;  // through the CSSOM: the page's policy refuses style attributes
    const meter = el("div", { class: "budget", role: "meter", "aria-valuenow": String(found.used_tokens), "aria-valuemax": String(found.budget_tokens) },
      fill);
    const parts = [...(found.summary ? [found.summary] : []), ...found.memories, ...found.recalled, ...found.recent];
    const rows = parts.map((p) => el("tr", {},
      el("td", {}, p.kind === "message" ? (p.recent ? "recent" : "recalled") : p.kind),
      el("td", {}, p.kind === "message"
        ? el("a", { href: `#/s/${encodeURIComponent(id)}/transcript?seq=${Number(p.seqs[0])}` }, `#${p.seqs[0]}`)
        : el("a", { href: `#/memory/${encodeURIComponent(JSON.stringify(p.namespace))}` }, `${nsText(p.namespace)} ${p.key}`)),
      el("td", {}, p.role || "–"), el("td", { class: "num" }, String(p.tokens)), el("td", {}, p.text)));
    panel.replaceChildren(form, use, meter, el("p", { class: "meta" }, found.token_counting),
      el("table", { "aria-label": "What the model sees" },
        el("thead", {}, el("tr", {}, ["Part", "From", "Role", "Tokens", "Text"].map((h) => el("th", {}, h)))),
        el("tbody", {}, rows)));
  } catch (error) { panel.replaceChildren(form); failed(error); }
}

async function memoryRunsTab(id, panel) {
  // the extraction runs that read this session: what each wrote (links to the memories), or why it failed
  const path = `/sessions/${encodeURIComponent(id)}/memory-runs`;
  const note = el("p", { class: "meta" });
  const button = el("button", { type: "button", onclick: async () => {
    button.disabled = true;
    say("Extracting memories…");
    try {
      const made = await apiPost(path, {});
      say(made.accepted ? "Asked for: the runs appear here when the stack has made them." : "");
      await memoryRunsTab(id, panel);
    } catch (error) { failed(error); button.disabled = false; }
  } }, "Extract memories now");
  try {
    const runs = (await api(path)).items;
    const rows = runs.slice().reverse().map((r) => el("tr", {},
      el("td", {}, when(r.started_at)), el("td", {}, r.strategy), el("td", {}, `#${r.first_seq}–#${r.last_seq}`),
      r.trigger === "forget" ? el("td", { class: "muted", title: "forget_owner took what these runs wrote; the messages they read are not read again" }, "forgotten")
        : el("td", { class: r.status === "succeeded" ? "" : "error" }, r.status + (r.error ? ` (${r.error})` : "")),
      el("td", {}, r.changes.length ? r.changes.map((c) => el("div", {}, `${c.action} `,
        el("a", { href: `#/memory/${encodeURIComponent(JSON.stringify(c.namespace))}` }, nsText(c.namespace)), ` ${c.key}`)) : "–"),
      el("td", { class: "num" }, String(r.unchanged)), el("td", {}, r.model || "–"),
      el("td", { class: "num" }, String(r.input_tokens + r.output_tokens))));
    note.textContent = runs.length ? `${count(runs.length, "run")}, newest first.` : "No memory has been extracted from this session yet.";
    panel.replaceChildren(el("p", { class: "row" }, button), note, el("table", { "aria-label": "Memory runs" },
      el("thead", {}, el("tr", {}, ["Started", "Strategy", "Messages", "Status", "Wrote", "Known", "Model", "Tokens"].map((h) => el("th", {}, h)))),
      el("tbody", {}, rows)));
  } catch (error) { failed(error); }
}

function sourceOf(session) {
  // a fork links to the session it was forked from, at the message it was forked at
  const line = el("p", { class: "meta source", "aria-label": "Forked from" });
  const source = session.metadata?.forked_from;
  if (!source || typeof source.session_id !== "string") return line;
  line.append("Forked from ", el("a", { href: `#/s/${encodeURIComponent(source.session_id)}/transcript?seq=${Number(source.seq)}` },
    source.session_id), ` at message #${Number(source.seq)}`);
  return line;
}
function copyingPanel(id, session, panel) {
  // a long fork (or rewind) is readable once its copy is done: show its progress, and open it then
  panel.replaceChildren(el("p", { class: "meta copying", "aria-label": "Copying" },
    `Its transcript is being copied: ${Number(session.copied ?? 0)} of ${count(session.last_seq, "message")}. `
    + "It opens here when the copy is done."));
  const here = location.hash;
  setTimeout(async () => {
    if (location.hash !== here) return;
    try {
      const now = await api(`/sessions/${encodeURIComponent(id)}`);
      if (location.hash !== here) return;
      if (now.copying) copyingPanel(id, now, panel); else route();
    } catch (error) { failed(error); }
  }, 2000);
}
function branchesOf(id, session) {
  // what a rewind kept aside: each branch's messages, and making it the transcript again (once any copy is done)
  const line = el("p", { class: "meta branches", "aria-label": "Branches" });
  if (session.copying) return line;
  api(`/sessions/${encodeURIComponent(id)}/branches`).then((found) => {
    if (!found.items.length) return;
    line.append("Branches: ");
    found.items.forEach((b, i) => {
      if (i) line.append(" · ");
      const own = b.last_seq - b.from_seq;  // the branch's own messages: those after the point it parted at
      line.append(el("a", { href: `#/s/${encodeURIComponent(id)}/branch/${encodeURIComponent(b.id)}` }, b.id),
        ` (after #${b.from_seq}: ${count(own, "message")} of its own)`);
    });
  }).catch(() => {});
  return line;
}
async function branchView(id, branch) {
  const path = `/sessions/${encodeURIComponent(id)}/branches/${encodeURIComponent(branch)}`;
  const list = el("div", { class: "transcript", "aria-label": "Branch transcript" });
  const restore = el("button", { type: "button", onclick: async () => {
    try {
      await apiPost(`${path}/restore`, {});
      location.hash = `#/s/${encodeURIComponent(id)}`;
    } catch (error) { failed(error); }
  } }, "Restore this branch");
  main.replaceChildren(el("p", {}, el("a", { href: `#/s/${encodeURIComponent(id)}` }, `← ${id}`)),
    el("h1", {}, `Branch ${branch}`), el("p", { class: "row" }, restore), list);
  try {
    let cursor = null;
    do {
      const page = await api(`/sessions/${encodeURIComponent(id)}/messages`, { branch, limit: PAGE, cursor });
      list.append(...page.items.map((m) => messageNode(m)));
      cursor = page.next_cursor;
    } while (cursor);
    say("");
  } catch (error) { failed(error); }
}
function checkpointsOf(id, session) {
  // a LangGraph thread holds its conversation; its checkpoints are in its log, a session the thread's state names
  const line = el("p", { class: "meta checkpoints", "aria-label": "Checkpoints" });
  if (session.metadata?.langgraph !== "thread") return line;
  api(`/sessions/${encodeURIComponent(id)}/overview`).then(({ state }) => {
    const generation = Number(state?.state?.generation ?? 0);
    line.append("LangGraph checkpoints: ", el("a", { href: `#/s/${encodeURIComponent(`${id}.g${generation}`)}` },
      `the thread's log (generation ${generation})`));
  }).catch(() => {});
  return line;
}
function agentsOf(id) {
  // the other agents of a multi-agent session (Strands: each a session of its own), listed under it
  const line = el("p", { class: "meta agents", "aria-label": "Agents" });
  api("/sessions", { metadata: JSON.stringify({ strands_parent: id }), limit: 50 }).then((page) => {
    if (!page.items.length) return;
    line.append("Other agents of this session: ");
    page.items.forEach((s, i) => {
      if (i) line.append(" · ");
      line.append(el("a", { href: `#/s/${encodeURIComponent(s.id)}` }, s.metadata?.agent_id || s.id));
    });
  }).catch(() => {});
  return line;
}

async function transcriptTab(id, panel) {
  const path = `/sessions/${encodeURIComponent(id)}/messages`;
  const list = el("div", { class: "transcript", "aria-label": "Transcript" });
  const sentinel = el("div", { class: "sentinel" }, "");
  const live = el("input", { type: "checkbox", id: "live", checked: true });
  panel.replaceChildren(el("p", { class: "row" }, live, el("label", { for: "live" }, "Live: show new messages as they are appended")), sentinel, list);
  let oldest = null, newest = 0, loading = false;
  try {
    const first = await api(path, { newest_first: "true", limit: PAGE });
    const items = first.items.slice().reverse();
    list.append(...items.map((m) => messageNode(m, id)));
    if (items.length) { oldest = items[0].seq; newest = items[items.length - 1].seq; }
    sentinel.textContent = oldest > 1 ? "Scroll up for older messages" : items.length ? "Start of the transcript" : "No messages yet.";
  } catch (error) { failed(error); return; }
  const observer = new IntersectionObserver(async (entries) => {
    if (!entries.some((e) => e.isIntersecting) || loading || !(oldest > 1)) return;
    loading = true;
    try {
      const older = await api(path, { newest_first: "true", before_seq: oldest, limit: PAGE });
      const items = older.items.slice().reverse();
      const anchor = list.firstChild, top = anchor ? anchor.getBoundingClientRect().top : 0;
      list.prepend(...items.map((m) => messageNode(m, id)));
      if (anchor) window.scrollBy(0, anchor.getBoundingClientRect().top - top);
      if (items.length) oldest = items[0].seq;
      sentinel.textContent = oldest > 1 && items.length ? "Scroll up for older messages" : "Start of the transcript";
      if (!items.length) oldest = 1;
    } catch (error) { failed(error); }
    loading = false;
  });
  observer.observe(sentinel);
  const timer = setInterval(async () => {
    if (!live.checked || document.hidden) return;
    try {
      const fresh = await api(path, { after_seq: newest, limit: PAGE });
      for (const m of fresh.items) { list.append(messageNode(m, id)); newest = m.seq; }
    } catch (error) { failed(error); }
  }, 2000);
  stopLive = () => { clearInterval(timer); observer.disconnect(); };
  const wanted = new URLSearchParams(location.hash.split("?")[1] || "").get("seq");
  if (wanted) document.getElementById(`m-${wanted}`)?.scrollIntoView();
  else window.scrollTo(0, document.body.scrollHeight);
}

async function stateTab(id, panel) {
  const sid = encodeURIComponent(id);
  try {
    const { state, interrupt, checkpoint } = await api(`/sessions/${sid}/overview`);
    panel.replaceChildren(
      el("h2", {}, state ? `State · version ${state.version} · as of message #${state.seq}` : "State"),
      state ? el("pre", { class: "json", "aria-label": "State" }, pretty(state.state)) : el("p", { class: "muted" }, "No state saved."),
      el("h2", {}, "Pending interrupt"),
      interrupt ? el("pre", { class: "json" }, pretty(interrupt)) : el("p", { class: "muted" }, "None."),
      recordsForm(sid),
      el("h2", {}, "Checkpoint"),
      checkpoint ? el("div", {}, el("p", { class: "meta" }, `saved ${when(checkpoint.saved_at)} · expires ${when(checkpoint.expires_at)}`
        + (checkpoint.seq != null ? ` · at message #${checkpoint.seq}` : "")), el("pre", { class: "json" }, pretty(checkpoint.data)))
        : el("p", { class: "muted" }, "None."));
  } catch (error) { failed(error); }
}

function recordsForm(sid) {
  // a session's records are kept by kind, and a store does not list kinds: name the one to read
  const kind = el("input", { type: "text", id: "kind", placeholder: "notes" });
  const shown = el("div", { "aria-live": "polite" });
  const form = el("form", { class: "row", onsubmit: async (event) => {
    event.preventDefault();
    if (!kind.value.trim()) return;
    try {
      const found = await api(`/sessions/${sid}/records/${encodeURIComponent(kind.value.trim())}`);
      shown.replaceChildren(found.records.length ? el("pre", { class: "json", "aria-label": "Records" }, pretty(found.records))
        : el("p", { class: "muted" }, "No records of this kind."));
    } catch (error) { failed(error); }
  } }, el("label", { for: "kind" }, "Records of kind"), kind, el("button", { type: "submit" }, "Show"));
  return el("div", {}, el("h2", {}, "Records"), form, shown);
}

async function artifactsTab(id, panel) {
  const sid = encodeURIComponent(id);
  try {
    const found = await api(`/sessions/${sid}/artifacts`);
    if (!found.items.length) { panel.replaceChildren(el("p", { class: "muted" }, "No artifacts.")); return; }
    const body = el("tbody");
    for (const a of found.items) {
      const versions = el("td");
      const show = el("button", { type: "button", onclick: async () => {
        show.disabled = true;
        const all = await api(`/sessions/${sid}/artifacts/${encodeURIComponent(a.name)}/versions`);
        versions.replaceChildren(el("ul", {}, all.items.map((v) => el("li", {}, `v${v.version} · ${count(v.size, "byte")} · ${when(v.created_at)} `,
          download(sid, v)))));
      } }, `${a.version} version${a.version === 1 ? "" : "s"}`);
      versions.append(show);
      body.append(el("tr", {}, el("td", {}, a.name), el("td", {}, a.content_type), el("td", { class: "num" }, a.size),
        el("td", {}, when(a.created_at)), versions, el("td", {}, download(sid, a))));
    }
    panel.replaceChildren(el("table", { "aria-label": "Artifacts" },
      el("thead", {}, el("tr", {}, ["Name", "Type", "Size", "Created", "Versions", ""].map((h) => el("th", {}, h)))), body));
  } catch (error) { failed(error); }
}
function download(sid, version) {
  return el("button", { type: "button", onclick: async () => {
    try {
      const blob = await apiBlob(`/sessions/${sid}/artifacts/${encodeURIComponent(version.name)}`, { version: version.version, inline: "true" });
      const link = el("a", { href: URL.createObjectURL(blob), download: version.name.split("/").pop() });
      document.body.append(link); link.click(); link.remove();
    } catch (error) { failed(error); }
  } }, `Download v${version.version}`);
}

// ---- traces: a waterfall per run ------------------------------------------------------------------------
function seconds(value) {
  if (typeof value === "number") return value;
  if (typeof value === "string") { const t = Date.parse(value); return isNaN(t) ? Number(value) || null : t / 1000; }
  return null;
}
function durationOf(e) {
  // an event's own duration in seconds, as store/tools/trace_view.py reads it (0 when it states none)
  for (const key of ["duration_ms", "ms", "latency_ms", "elapsed_ms"]) {
    const v = e[key];
    if (typeof v === "number" && isFinite(v) && v >= 0) return v / 1000;
  }
  return 0;
}
function spansOf(events) {
  const rows = events.map((e) => {
    let start = null, end = null;
    if (e.start_time_unix_nano != null) { start = Number(e.start_time_unix_nano) / 1e9; end = Number(e.end_time_unix_nano ?? e.start_time_unix_nano) / 1e9; }
    else if (e.start != null) { start = seconds(e.start); end = e.end != null ? seconds(e.end) : start; }
    else if (e.timestamp != null || e.time != null) { start = seconds(e.timestamp ?? e.time); end = start + durationOf(e); }
    const attrs = e.attributes && !Array.isArray(e.attributes) ? e.attributes : {};
    const status = e.status && typeof e.status === "object" ? String(e.status.code).toUpperCase() : String(e.status || "");
    return { event: e, start, end, attrs, name: String(e.name || e.type || e.event || "event"),
      id: e.span_id ?? e.id ?? null, parent: e.parent_span_id ?? e.parent_id ?? null,
      error: Boolean(e.error) || status === "ERROR" || status === "2",
      tokens: [attrs["gen_ai.usage.input_tokens"] ?? e.input_tokens, attrs["gen_ai.usage.output_tokens"] ?? e.output_tokens] };
  });
  const known = rows.filter((r) => r.start !== null).map((r) => r.start);
  const origin = known.length ? Math.min(...known) : 0;
  let previous = 0;
  for (const r of rows) {
    if (r.start === null) {  // after the event before it, for as long as it says it took
      r.start = previous; r.end = previous + durationOf(r.event); previous = r.end;
    } else {
      r.start -= origin; r.end = r.end === null ? r.start : Math.max(r.start, r.end - origin); previous = r.start;
    }
  }
  const byId = new Map(rows.filter((r) => r.id).map((r) => [r.id, r]));
  for (const r of rows) {
    let depth = 0, p = byId.get(r.parent);
    const seen = new Set();
    while (p && !seen.has(p) && depth < 32) { seen.add(p); depth += 1; p = byId.get(p.parent); }
    r.depth = depth;
  }
  return rows.sort((a, b) => a.start - b.start);
}
async function tracesTab(id, panel) {
  const sid = encodeURIComponent(id);
  try {
    const runs = (await api(`/sessions/${sid}/trace-runs`)).items;
    if (!runs.length) { panel.replaceChildren(el("p", { class: "muted" }, "No trace runs.")); return; }
    panel.replaceChildren();
    for (const run of runs.slice().reverse()) {
      const events = (await api(`/sessions/${sid}/traces`, { run_id: run })).items;
      panel.append(waterfall(id, run, spansOf(events)));
    }
  } catch (error) { failed(error); }
}
function waterfall(id, run, spans) {
  const total = Math.max(0, ...spans.map((s) => s.end)) || 1;
  const details = el("div", { class: "attrs", "aria-live": "polite" });
  const rows = spans.map((s) => {
    const tokens = s.tokens.filter((t) => t != null);
    const row = el("button", {
      type: "button", class: `span-row${s.error ? " error" : ""}`, "aria-pressed": "false",
      "aria-label": `${s.name}, ${((s.end - s.start) * 1000).toFixed(1)} ms${s.error ? ", error" : ""}`,
      onclick: () => {
        for (const other of row.parentNode.querySelectorAll(".span-row")) other.setAttribute("aria-pressed", "false");
        row.setAttribute("aria-pressed", "true");
        showSpan(id, s, details);
      },
    },
    el("span", { class: "span-name", style: null }, "\u00a0\u00a0".repeat(s.depth) + s.name),
    el("span", { class: "span-track" }, el("span", { class: "span-bar" })),
    el("span", { class: "span-ms" }, `${((s.end - s.start) * 1000).toFixed(1)} ms${tokens.length ? " · " + tokens.join("/") + " tok" : ""}`));
    const bar = row.querySelector(".span-bar");
    bar.style.left = `${(s.start / total) * 100}%`;
    bar.style.width = `${Math.max(0.3, ((s.end - s.start) / total) * 100)}%`;
    return row;
  });
  return el("section", { class: "run", "aria-label": `run ${run}` },
    el("h2", {}, `Run ${run}`, el("span", { class: "muted" }, ` · ${count(spans.length, "span")} · ${(total * 1000).toFixed(1)} ms`)),
    el("div", { class: "waterfall" }, rows), details);
}
function showSpan(id, span, target) {
  const rows = Object.entries(span.attrs).map(([k, v]) => el("tr", {}, el("th", {}, k), el("td", {}, typeof v === "string" ? v : JSON.stringify(v))));
  const seq = span.attrs["message.seq"] ?? span.attrs["message_seq"] ?? span.event.message_seq;
  target.replaceChildren(...[
    el("h2", {}, span.name),
    el("p", { class: "meta" }, `starts at ${(span.start * 1000).toFixed(1)} ms · lasts ${((span.end - span.start) * 1000).toFixed(1)} ms${span.error ? " · error" : ""}`),
    /^\d+$/.test(String(seq)) ? el("p", {}, el("a", { href: `#/s/${encodeURIComponent(id)}/transcript?seq=${encodeURIComponent(String(seq))}` }, `The message it produced (#${seq})`)) : null,
    rows.length ? el("table", { "aria-label": "Span attributes" }, el("tbody", {}, rows)) : el("p", { class: "muted" }, "No attributes."),
  ].filter(Boolean));
}

// ---- routing ------------------------------------------------------------------------------------------
let CONFIG = { oidc: null };
async function signInWithCode() {
  // `make run` opens the console with a one-time code (#sign-in=...), never the token itself: a URL stays
  // in the browser's history. The code leaves the address bar at once and is traded for the token once,
  // only here, at start: a link followed later (a hash change) signs nobody in.
  const code = new URLSearchParams(location.hash.slice(1)).get("sign-in");
  if (!code) return;
  history.replaceState(null, "", location.pathname + "#/");
  try {
    const answer = await fetch(BASE + "/_local/console-sign-in", {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ code }),
    });
    if (!answer.ok) throw new Error("this sign-in link was used already or has expired: paste a token");
    signedIn((await answer.json()).token);
  } catch (error) { say(error.message, true); }
}
function route() {
  if (stopLive) { stopLive(); stopLive = null; }
  if (!token()) { signInView(CONFIG.oidc); return; }
  signedIn(token());
  const hash = location.hash.split("?")[0];
  const memory = hash.match(/^#\/memory(?:\/(.+))?$/);
  const branch = hash.match(/^#\/s\/([^/]+)\/branch\/([^/]+)$/);
  const match = hash.match(/^#\/s\/([^/]+)(?:\/(\w+))?$/);
  if (memory) memoryView(namespaceOf(memory[1]));
  else if (branch) branchView(decodeURIComponent(branch[1]), decodeURIComponent(branch[2]));
  else if (match) sessionView(decodeURIComponent(match[1]), match[2]);
  else sessionsView();
  main.focus({ preventScroll: true });
}
async function start() {
  await signInWithCode();
  try { CONFIG = await (await fetch("config.json")).json(); } catch { CONFIG = { oidc: null }; }
  const query = new URLSearchParams(location.search);
  if (query.get("code") && CONFIG.oidc) {
    try { await finishOidc(CONFIG.oidc, query); } catch (error) { say(error.message, true); }
  }
  window.addEventListener("hashchange", route);
  route();
}
start();
