// Strata's page: documents (CouchDB's Futon steps) and a table browser for
// SQLite files. Plain JavaScript, no build step, nothing loaded from
// elsewhere. Every action is a call of the server's HTTP API with the
// signed-in session, so it is authorized as any client's would be.
// Data is only ever put in the page as text (textContent), never as HTML.
"use strict";

const main = document.getElementById("main");
let session = { name: null, roles: [] };
let generation = 0; // bumped on each route: live loops of old pages stop

// ---- helpers ---------------------------------------------------------------

/** An element: el("a", {href: "#/"}, "text", child…). Strings become text. */
function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else if (name === "class") node.className = value;
    else if (value === true) node.setAttribute(name, "");
    else node.setAttribute(name, String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** Replaces a node's children; null, undefined and false are left out (the
 * DOM's replaceChildren would insert them as text). */
function fill(node, ...children) {
  node.replaceChildren(...children.filter((child) => child !== undefined && child !== null && child !== false));
}

/** Shows a page: its parts (null, undefined and false are left out, as in
 * el()), from the top. */
function show(...nodes) {
  fill(main, ...nodes);
  window.scrollTo(0, 0);
  main.focus({ preventScroll: true });
}

/** Shows a page unless another was asked for since the page began
 * (`mine`, the generation it began in): a slow page must not replace the
 * one that followed it. */
function showFor(mine, ...nodes) {
  if (mine === generation) show(...nodes);
}

/** A short message at the bottom. It belongs to the page shown now, or with
 * `forNextPage` to the page the action goes to next; any other page hides it. */
function toast(text, forNextPage) {
  const box = document.getElementById("toast");
  box.textContent = text;
  box.classList.add("show");
  toast.generation = generation + (forNextPage ? 1 : 0);
  clearTimeout(toast.timer);
  toast.timer = setTimeout(hideToast, 2500);
}

function hideToast() {
  clearTimeout(toast.timer);
  document.getElementById("toast").classList.remove("show");
}

function errorBox(text) { return el("div", { class: "error", role: "alert" }, text); }

/** Calls the API; answers {status, body} with the body parsed when JSON. */
async function api(method, path, body, extraHeaders) {
  const headers = Object.assign({ Accept: "application/json" }, extraHeaders || {});
  const init = { method, headers, credentials: "same-origin" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = typeof body === "string" ? body : JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const text = await response.text();
  let parsed = text;
  try { parsed = text ? JSON.parse(text) : null; } catch (e) { /* not JSON */ }
  return { status: response.status, body: parsed, response };
}

function reason(answer) {
  const b = answer.body;
  if (b && typeof b === "object") return (b.error ? b.error + ": " : "") + (b.reason || "");
  return "HTTP " + answer.status;
}

const enc = encodeURIComponent;
/** A query string for the API: spaces as %20 (URLSearchParams writes "+",
 * which the server, like a path, reads as a plus sign). */
function qs(params) { return new URLSearchParams(params).toString().replace(/\+/g, "%20"); }
function dbPath(db) { return "/" + enc(db); }
function docPath(db, id) {
  if (id.startsWith("_design/")) return dbPath(db) + "/_design/" + enc(id.slice(8));
  if (id.startsWith("_local/")) return dbPath(db) + "/_local/" + enc(id.slice(7));
  return dbPath(db) + "/" + enc(id);
}
function docLink(db, id) { return "#/db/" + enc(db) + "/doc/" + enc(id); }
/** An attachment's URL: each part of a name with slashes encoded alone, as
 * CouchDB reads `/db/doc/a/b.txt` as the attachment `a/b.txt`. */
function attachmentPath(db, id, name) { return docPath(db, id) + "/" + name.split("/").map(enc).join("/"); }

function bytes(n) {
  if (n == null) return "";
  const units = ["B", "KB", "MB", "GB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return (i ? n.toFixed(1) : n) + " " + units[i];
}

function pretty(value) { return JSON.stringify(value, null, 2); }

/** A textarea's JSON, or undefined with the parse error shown in `problem`. */
function parseSource(textarea, problem) {
  try { return JSON.parse(textarea.value); } catch (e) { problem.replaceChildren(errorBox("Not valid JSON: " + e.message)); return undefined; }
}

function table(headings, rows) {
  return el("div", { class: "scroll" }, el("table", {},
    el("thead", {}, el("tr", {}, headings.map((h) => el("th", { scope: "col" }, h)))),
    el("tbody", {}, rows)));
}

function crumbs(...parts) { return el("div", { class: "crumbs" }, parts.flatMap((p, i) => i ? [" / ", p] : [p])); }

/** Databases / db / where: the trail of a database's pages. */
function dbCrumbs(db, where) { return crumbs(el("a", { href: "#/" }, "Databases"), el("a", { href: "#/db/" + enc(db) }, db), where); }

function dbTabs(db, active) {
  const tab = (name, href, label) => el("a", { href, class: active === name ? "active" : null, "aria-current": active === name ? "page" : null }, label);
  return el("nav", { class: "tabs", "aria-label": "Database" },
    tab("docs", "#/db/" + enc(db), "Documents"),
    tab("views", "#/db/" + enc(db) + "/views", "Views"),
    tab("changes", "#/db/" + enc(db) + "/changes", "Changes"),
    tab("find", "#/db/" + enc(db) + "/find", "Mango query"),
    tab("security", "#/db/" + enc(db) + "/security", "Security"));
}

// ---- session ---------------------------------------------------------------

async function loadSession() {
  const answer = await api("GET", "/_session");
  session = (answer.body && answer.body.userCtx) || { name: null, roles: [] };
  document.getElementById("who").textContent = session.name ? session.name : "";
  document.getElementById("signout").hidden = !session.name;
  document.getElementById("signout").title = session.name ? "Sign out " + session.name : "";
}

function loginPage(message) {
  const name = el("input", { type: "text", id: "login-name", name: "name", autocomplete: "username", required: true, autofocus: true });
  const password = el("input", { type: "password", id: "login-password", name: "password", autocomplete: "current-password", required: true });
  const problem = el("div");
  const form = el("form", { class: "panel login", onsubmit: async (event) => {
    event.preventDefault();
    const answer = await api("POST", "/_session", { name: name.value, password: password.value });
    if (answer.status !== 200) { problem.replaceChildren(errorBox("Sign-in refused: " + reason(answer))); return; }
    await loadSession();
    route();
  } },
    el("h1", {}, "Sign in"),
    el("p", { class: "muted" }, message || "Sign in as a server admin to manage databases."),
    el("label", { class: "block", for: "login-name" }, "Name", name),
    el("label", { class: "block", for: "login-password" }, "Password", password),
    problem,
    el("div", { class: "row" }, el("button", { type: "submit", id: "login-submit" }, "Sign in")));
  show(form);
  name.focus();
}

document.getElementById("signout").addEventListener("click", async () => {
  await api("DELETE", "/_session");
  await loadSession();
  location.hash = "#/";
  loginPage("Signed out.");
});

// ---- databases ---------------------------------------------------------------

async function databasesPage() {
  const mine = generation;
  const answer = await api("GET", "/_all_dbs");
  if (answer.status === 401) return loginPage();
  if (answer.status !== 200) return showFor(mine, errorBox(reason(answer)));
  const infos = await Promise.all(answer.body.map((name) => api("GET", dbPath(name)).then((a) => a.body)));
  // Each database's security, to mark those open to everyone (not the
  // server's own `_users` and `_replicator`, whose rules are not their
  // security objects'; none when it cannot be read).
  const securities = await Promise.all(answer.body.map((name) => name.startsWith("_") ? {} : api("GET", dbPath(name) + "/_security")
    .then((a) => a.status === 200 ? a.body || {} : { members: { names: ["?"] } })));
  const nameInput = el("input", { type: "text", id: "new-db-name", name: "name", placeholder: "name", required: true, pattern: "[a-z][a-z0-9_$\\(\\)+\\/\\-]*", "aria-label": "New database name" });
  const problem = el("div");
  const create = el("form", { class: "row", onsubmit: async (event) => {
    event.preventDefault();
    const made = await api("PUT", dbPath(nameInput.value));
    if (made.status !== 201) { problem.replaceChildren(errorBox(reason(made))); return; }
    location.hash = "#/db/" + enc(nameInput.value);
  } }, nameInput, el("button", { type: "submit", id: "create-db" }, "Create database"));
  const rows = answer.body.map((name, i) => {
    const info = infos[i] || {};
    return el("tr", {},
      el("td", { class: "mono" }, el("a", { href: "#/db/" + enc(name) }, name),
        !name.startsWith("_") && openToEveryone(securities[i]) ? el("span", { class: "pill crashing open-mark", title: "Anyone may read and write its documents" }, " open to everyone") : null),
      el("td", { class: "num" }, info.doc_count),
      el("td", { class: "num hide-narrow" }, info.doc_del_count),
      el("td", { class: "num" }, bytes(info.sizes && info.sizes.file)),
      el("td", {}, el("button", { type: "button", class: "danger", onclick: async () => {
        if (!confirm("Delete the database " + name + " and all its documents?")) return;
        const gone = await api("DELETE", dbPath(name));
        if (gone.status !== 200) return toast(reason(gone));
        toast("Deleted " + name);
        databasesPage();
      } }, "Delete")));
  });
  showFor(mine, el("h1", {}, "Databases"),
    el("div", { class: "panel" }, create, problem),
    table(["Name", "Documents", el("span", { class: "hide-narrow" }, "Deleted"), "Size", ""], rows));
}

// ---- documents -----------------------------------------------------------------

/** A member of a document by a dotted path (`answers.0.answer`). */
function member(doc, path) {
  let value = doc;
  for (const part of path.split(".")) {
    if (value === null || typeof value !== "object") return undefined;
    value = value[part];
  }
  return value;
}

async function documentsPage(db, params) {
  const mine = generation;
  const pageSize = 25;
  const skip = Number(params.get("skip") || 0);
  const prefix = params.get("prefix") || "";
  const design = params.get("design") === "true";
  const mode = ["ids", "fields", "json"].includes(params.get("show")) ? params.get("show") : "ids";
  const fieldList = (params.get("fields") || "").split(",").map((f) => f.trim()).filter(Boolean);
  const query = new URLSearchParams({ limit: String(pageSize + 1), skip: String(skip), include_docs: "true", conflicts: "true" });
  const start = (design ? "_design/" : "") + prefix;
  if (start) { query.set("startkey", JSON.stringify(start)); query.set("endkey", JSON.stringify(start + "\ufff0")); }
  const [answer, info] = await Promise.all([api("GET", dbPath(db) + "/_all_docs?" + qs(query)), api("GET", dbPath(db))]);
  if (answer.status === 401) return loginPage();
  if (answer.status !== 200) return showFor(mine, crumbs(el("a", { href: "#/" }, "Databases"), db), errorBox(reason(answer)));
  const rows = answer.body.rows.slice(0, pageSize);
  const more = answer.body.rows.length > pageSize;
  const search = el("input", { type: "search", id: "id-prefix", name: "prefix", value: prefix, placeholder: "id starts with…", "aria-label": "Search by id prefix" });
  const designOnly = el("input", { type: "checkbox", id: "design-only", checked: design });
  const showAs = el("select", { id: "show-as", "aria-label": "Show" },
    [["ids", "ids"], ["fields", "chosen fields"], ["json", "documents (JSON)"]].map(([value, label]) => el("option", { value, selected: value === mode }, label)));
  const fields = el("input", { type: "text", id: "show-fields", value: fieldList.join(", "), placeholder: "fields: title, author.name", "aria-label": "Fields to show" });
  const go = (changes) => {
    const next = new URLSearchParams({ skip: "0", prefix: search.value, design: String(designOnly.checked), show: showAs.value, fields: fields.value });
    for (const [k, v] of Object.entries(changes || {})) next.set(k, String(v));
    for (const k of [...next.keys()]) if (next.get(k) === "" || next.get(k) === "false") next.delete(k);
    location.hash = "#/db/" + enc(db) + "?" + next;
  };
  const problem = el("div");
  const selected = () => [...main.querySelectorAll("input.pick:checked")];
  const removeSelected = el("button", { type: "button", class: "danger", id: "delete-selected", disabled: true, onclick: async () => {
    const picks = selected();
    if (!picks.length || !confirm(`Delete ${picks.length} document${picks.length === 1 ? "" : "s"}?`)) return;
    const docs = picks.map((pick) => ({ _id: pick.dataset.id, _rev: pick.dataset.rev, _deleted: true }));
    const answer = await api("POST", dbPath(db) + "/_bulk_docs", { docs });
    if (answer.status !== 201) { problem.replaceChildren(errorBox(reason(answer))); return; }
    const refused = answer.body.filter((r) => r.error);
    toast(`Deleted ${docs.length - refused.length} of ${docs.length}` + (refused.length ? `; ${refused[0].id}: ${refused[0].reason}` : ""), true);
    route();
  } }, "Delete selected");
  const headings = [el("span", { class: "visually-hidden" }, "Select"), "Id", "Revision"]
    .concat(mode === "fields" ? fieldList : mode === "json" ? ["Document"] : []);
  const tableRows = rows.map((row) => {
    const doc = row.doc || {};
    const conflicts = doc._conflicts || [];
    return el("tr", {},
      el("td", {}, el("input", { type: "checkbox", class: "pick", "data-id": row.id, "data-rev": row.value.rev,
        "aria-label": "Select " + row.id, onchange: () => { removeSelected.disabled = !selected().length; } })),
      el("td", { class: "mono" }, el("a", { href: docLink(db, row.id) }, row.id),
        conflicts.length ? el("span", { class: "pill failed conflict-mark", title: conflicts.join(", ") }, ` ${conflicts.length} conflict${conflicts.length === 1 ? "" : "s"}`) : null),
      el("td", { class: "mono muted" }, row.value.rev),
      mode === "fields" ? fieldList.map((f) => {
        const value = member(doc, f);
        return el("td", { class: typeof value === "number" ? "num" : "mono" }, value === undefined ? "" : typeof value === "string" ? value : JSON.stringify(value));
      }) : null,
      mode === "json" ? el("td", {}, el("pre", { class: "preview" }, pretty(Object.fromEntries(Object.entries(doc).filter(([k]) => k !== "_conflicts"))))) : null);
  });
  showFor(mine, crumbs(el("a", { href: "#/" }, "Databases"), db),
    el("h1", {}, db),
    dbTabs(db, "docs"),
    el("div", { class: "row" },
      el("a", { class: "button", id: "new-doc", href: "#/db/" + enc(db) + "/new" }, "New document"),
      el("form", { class: "row", role: "search", onsubmit: (event) => { event.preventDefault(); go(); } },
        search, el("button", { type: "submit", class: "secondary" }, "Search")),
      el("span", { class: "muted", id: "doc-count" }, prefix || design
        ? `${rows.length}${more ? "+" : ""} ${design ? "design " : ""}document${rows.length === 1 && !more ? "" : "s"}` + (prefix ? ` starting with “${prefix}”` : "")
        : info.body ? info.body.doc_count + " documents" : "")),
    el("form", { class: "row", onsubmit: (event) => { event.preventDefault(); go(); } },
      el("label", {}, designOnly, "Design documents only"),
      el("label", { for: "show-as" }, "Show"), showAs, fields,
      el("button", { type: "submit", class: "secondary", id: "apply-show" }, "Apply"),
      removeSelected),
    problem,
    table(headings, tableRows),
    rows.length ? null : el("p", { class: "muted" }, prefix ? "No document id starts with that." : design ? "No design documents." : "No documents yet."),
    el("div", { class: "row" },
      el("button", { type: "button", class: "secondary", disabled: skip === 0, onclick: () => go({ skip: Math.max(0, skip - pageSize) }) }, "← Previous"),
      el("span", { class: "muted" }, rows.length ? `${skip + 1}–${skip + rows.length}` : ""),
      el("button", { type: "button", class: "secondary", disabled: !more, onclick: () => go({ skip: skip + pageSize }) }, "Next →")));
  // The design filter and the display apply as soon as they change.
  designOnly.addEventListener("change", () => go());
  showAs.addEventListener("change", () => { if (showAs.value !== "fields" || fields.value) go(); else fields.focus(); });
}

/** The source editor: a document's JSON, saved with PUT (or POST for a new one). */
async function documentPage(db, id) {
  const mine = generation;
  const isNew = id === null;
  let current = null;
  let conflicts = [];
  let revsInfo = [];
  if (!isNew) {
    const answer = await api("GET", docPath(db, id) + "?conflicts=true&revs_info=true");
    if (answer.status === 401) return loginPage();
    if (answer.status !== 200) return showFor(mine, dbCrumbs(db, id), errorBox(reason(answer)));
    current = answer.body;
    conflicts = current._conflicts || [];
    revsInfo = current._revs_info || [];
    delete current._conflicts;
    delete current._revs_info;
  } else {
    const uuids = await api("GET", "/_uuids");
    current = { _id: uuids.body && uuids.body.uuids ? uuids.body.uuids[0] : "" };
  }
  const source = el("textarea", { id: "source", spellcheck: "false", "aria-label": "Document source (JSON)" });
  source.value = pretty(current);
  const problem = el("div", { id: "doc-problem" });
  const save = async (event) => {
    event.preventDefault();
    const doc = parseSource(source, problem);
    if (doc === undefined) return;
    if (typeof doc !== "object" || doc === null || Array.isArray(doc)) { problem.replaceChildren(errorBox("A document is a JSON object.")); return; }
    const answer = doc._id ? await api("PUT", docPath(db, doc._id), doc) : await api("POST", dbPath(db), doc);
    if (answer.status === 409) {
      const latest = await api("GET", docPath(db, doc._id));
      const rev = latest.body && latest.body._rev;
      problem.replaceChildren(el("div", { class: "notice", role: "alert", id: "conflict" },
        "Conflict: the document changed since you opened it. The current revision is ", el("code", {}, rev || "?"), ". ",
        el("button", { type: "button", class: "secondary", onclick: () => {
          doc._rev = rev;
          source.value = pretty(doc);
          problem.replaceChildren(el("p", { class: "muted" }, "Your changes now carry the current revision: review them and save again."));
        } }, "Use the current revision with my changes"), " ",
        el("button", { type: "button", class: "secondary", onclick: () => { source.value = pretty(latest.body); problem.replaceChildren(); } }, "Load the current document")));
      return;
    }
    if (answer.status !== 201 && answer.status !== 202) { problem.replaceChildren(errorBox(reason(answer))); return; }
    toast("Saved " + answer.body.id + " at " + answer.body.rev, true);
    const target = docLink(db, answer.body.id);
    if (location.hash === target) route(); else location.hash = target;
  };
  const format = () => {
    const doc = parseSource(source, problem);
    if (doc === undefined) return;
    source.value = pretty(doc);
    problem.replaceChildren();
  };
  const remove = async () => {
    if (!confirm("Delete " + id + "?")) return;
    const answer = await api("DELETE", docPath(db, id) + "?rev=" + enc(current._rev));
    if (answer.status !== 200) { problem.replaceChildren(errorBox(reason(answer))); return; }
    toast("Deleted " + id, true);
    location.hash = "#/db/" + enc(db);
  };
  const parts = [
    dbCrumbs(db, isNew ? "new document" : id),
    el("h1", {}, isNew ? "New document" : id),
    el("form", { class: "panel", onsubmit: save },
      el("label", { class: "block", for: "source" }, "Source"),
      source, problem,
      el("div", { class: "row" },
        el("button", { type: "submit", id: "save" }, isNew ? "Create document" : "Save"),
        el("button", { type: "button", class: "secondary", onclick: format }, "Format JSON"),
        isNew ? null : el("button", { type: "button", class: "danger", id: "delete-doc", onclick: remove }, "Delete"))),
  ];
  if (!isNew && conflicts.length) {
    const leaves = [current._rev, ...conflicts];
    const bodies = await Promise.all(leaves.map((rev) => api("GET", docPath(db, id) + "?rev=" + enc(rev)).then((a) => a.body)));
    parts.push(el("h2", {}, "Conflicts"),
      el("p", { class: "notice" }, `${leaves.length} revisions are current. The first is the winner CouchDB's rules pick; keep the one you want and the others are deleted.`),
      ...leaves.map((rev, i) => el("div", { class: "panel conflict" },
        el("div", { class: "row" }, el("code", {}, rev), i === 0 ? el("span", { class: "pill completed" }, "winner") : null,
          el("button", { type: "button", class: "secondary", onclick: async () => {
            for (const other of leaves) {
              if (other === rev) continue;
              const gone = await api("DELETE", docPath(db, id) + "?rev=" + enc(other));
              if (gone.status !== 200) { toast(reason(gone)); return; }
            }
            toast("Kept " + rev);
            route();
          } }, "Keep this revision")),
        el("pre", {}, pretty(bodies[i])))));
  }
  if (!isNew) parts.push(...attachmentsPanel(db, id, current));
  if (!isNew && revsInfo.length) {
    parts.push(el("h2", {}, "Revisions"), table(["Revision", "Status"], revsInfo.map((info) => el("tr", {},
      el("td", { class: "mono" }, info.rev), el("td", {}, info.status)))));
  }
  showFor(mine, ...parts);
}

/** A document's attachments: open, download or delete each; upload a file. */
function attachmentsPanel(db, id, doc) {
  const attachments = Object.entries(doc._attachments || {});
  const file = el("input", { type: "file", id: "att-file", "aria-label": "File to attach" });
  const problem = el("div");
  const upload = async (event) => {
    event.preventDefault();
    const chosen = file.files[0];
    if (!chosen) { problem.replaceChildren(errorBox("Choose a file to attach.")); return; }
    const response = await fetch(attachmentPath(db, id, chosen.name) + "?rev=" + enc(doc._rev), {
      method: "PUT", credentials: "same-origin", body: chosen,
      headers: { "Content-Type": chosen.type || "application/octet-stream", Accept: "application/json" } });
    if (!response.ok) {
      let body = null;
      try { body = JSON.parse(await response.text()); } catch (e) { /* not JSON */ }
      problem.replaceChildren(errorBox(reason({ status: response.status, body })));
      return;
    }
    toast("Attached " + chosen.name, true);
    route();
  };
  return [
    el("h2", {}, "Attachments"),
    attachments.length ? table(["Name", "Type", "Size", ""], attachments.map(([name, info]) => el("tr", {},
      el("td", { class: "mono" }, el("a", { href: attachmentPath(db, id, name), target: "_blank", rel: "noopener" }, name)),
      el("td", {}, info.content_type),
      el("td", { class: "num" }, bytes(info.length)),
      el("td", {}, el("div", { class: "row" },
        el("a", { class: "button secondary", href: attachmentPath(db, id, name), download: name.split("/").pop() }, "Download"),
        el("button", { type: "button", class: "danger", onclick: async () => {
          if (!confirm("Delete the attachment " + name + "?")) return;
          const gone = await api("DELETE", attachmentPath(db, id, name) + "?rev=" + enc(doc._rev));
          if (gone.status !== 200) { problem.replaceChildren(errorBox(reason(gone))); return; }
          toast("Deleted " + name, true);
          route();
        } }, "Delete")))))) : el("p", { class: "muted" }, "No attachments."),
    el("form", { class: "row panel", onsubmit: upload }, file, el("button", { type: "submit", id: "att-upload", class: "secondary" }, "Upload"), problem),
  ];
}

// ---- views -------------------------------------------------------------------------

/** A design document's view, queried with CouchDB's options; the options
 * live in the page's address, so a query can be bookmarked. */
async function viewsPage(db, params) {
  const mine = generation;
  const answer = await api("GET", dbPath(db) + "/_design_docs?include_docs=true");
  if (answer.status === 401) return loginPage();
  const head = [dbCrumbs(db, "views"), el("h1", {}, db), dbTabs(db, "views")];
  if (answer.status !== 200) return showFor(mine, ...head, errorBox(reason(answer)));
  const views = [];
  for (const row of answer.body.rows) {
    for (const [view, functions] of Object.entries((row.doc && row.doc.views) || {})) {
      views.push({ name: row.id.slice("_design/".length) + "/" + view, reduce: Boolean(functions && functions.reduce) });
    }
  }
  if (!views.length) return showFor(mine, ...head, el("p", { class: "muted" }, "No design document of this database has views."));
  const chosen = views.find((v) => v.name === params.get("view")) || views[0];
  const pick = el("select", { id: "view-name", "aria-label": "View" }, views.map((v) => el("option", { value: v.name, selected: v === chosen }, v.name)));
  const field = (name, placeholder) => el("input", { type: "text", id: "view-" + name, value: params.get(name) || "", placeholder, "aria-label": placeholder });
  const key = field("key", "key (JSON)"), startkey = field("startkey", "start key (JSON)"), endkey = field("endkey", "end key (JSON)");
  const check = (name, label, on) => [el("input", { type: "checkbox", id: "view-" + name, checked: on }), label];
  const [reduce, reduceLabel] = check("reduce", "Reduce", params.get("reduce") !== "false");
  const [includeDocs, docsLabel] = check("include_docs", "Include documents", params.get("include_docs") === "true");
  const [descending, descendingLabel] = check("descending", "Descending", params.get("descending") === "true");
  const grouping = params.get("group") || "none";
  const group = el("select", { id: "view-group", "aria-label": "Grouping" },
    ["none", "exact", "1", "2", "3"].map((g) => el("option", { value: g, selected: g === grouping },
      g === "none" ? "no grouping" : g === "exact" ? "group by key" : "group level " + g)));
  const pageSize = Math.min(Math.max(Number(params.get("limit") || 25), 1), 1000);
  const limit = el("input", { type: "number", id: "view-limit", min: 1, max: 1000, value: pageSize, "aria-label": "Rows per page" });
  const skip = Number(params.get("skip") || 0);
  const go = (changes) => {
    const next = new URLSearchParams({ view: pick.value, key: key.value, startkey: startkey.value, endkey: endkey.value,
      reduce: String(reduce.checked), group: group.value, include_docs: String(includeDocs.checked),
      descending: String(descending.checked), limit: limit.value, skip: "0" });
    for (const [k, v] of Object.entries(changes || {})) next.set(k, String(v));
    for (const k of [...next.keys()]) if (next.get(k) === "") next.delete(k);
    location.hash = "#/db/" + enc(db) + "/views?" + next;
  };
  const out = el("div", { id: "view-result" });
  showFor(mine, ...head,
    el("form", { class: "panel", onsubmit: (event) => { event.preventDefault(); go(); } },
      el("div", { class: "row" }, el("label", { for: "view-name" }, "View"), pick),
      el("div", { class: "row" }, key, startkey, endkey),
      el("div", { class: "row" },
        chosen.reduce ? el("label", {}, reduce, reduceLabel) : null, chosen.reduce ? group : null,
        el("label", {}, includeDocs, docsLabel), el("label", {}, descending, descendingLabel),
        el("label", { for: "view-limit" }, "Rows", limit)),
      el("div", { class: "row" }, el("button", { type: "submit", id: "run-view" }, "Run"))),
    out);
  if (!params.get("view")) return;
  const query = new URLSearchParams({ limit: String(pageSize + 1), skip: String(skip) });
  for (const [name, input] of [["key", key], ["startkey", startkey], ["endkey", endkey]]) {
    if (!input.value) continue;
    try { JSON.parse(input.value); } catch (e) { out.replaceChildren(errorBox(`The ${name} is not JSON: ${e.message}`)); return; }
    query.set(name, input.value);
  }
  const reducing = chosen.reduce && reduce.checked;
  if (chosen.reduce) query.set("reduce", String(reducing));
  if (reducing && group.value === "exact") query.set("group", "true");
  else if (reducing && group.value !== "none") query.set("group_level", group.value);
  if (!reducing && includeDocs.checked) query.set("include_docs", "true");
  if (descending.checked) query.set("descending", "true");
  const [ddoc, view] = [chosen.name.slice(0, chosen.name.lastIndexOf("/")), chosen.name.slice(chosen.name.lastIndexOf("/") + 1)];
  const result = await api("GET", dbPath(db) + "/_design/" + enc(ddoc) + "/_view/" + enc(view) + "?" + qs(query));
  if (result.status !== 200) { out.replaceChildren(errorBox(reason(result))); return; }
  const rows = result.body.rows.slice(0, pageSize);
  const more = result.body.rows.length > pageSize;
  const showDocs = !reducing && includeDocs.checked;
  const headings = reducing ? ["Key", "Value"] : ["Key", "Value", "Id"].concat(showDocs ? ["Document"] : []);
  out.replaceChildren(
    el("p", { class: "muted", id: "view-count" }, rows.length
      ? `Rows ${skip + 1}–${skip + rows.length}` + (result.body.total_rows !== undefined ? ` of ${result.body.total_rows} in the view` : "")
      : "No rows."),
    table(headings, rows.map((row) => el("tr", {},
      el("td", { class: "mono" }, JSON.stringify(row.key)),
      el("td", { class: "mono" }, JSON.stringify(row.value)),
      reducing ? null : el("td", { class: "mono" }, row.id !== undefined ? el("a", { href: docLink(db, row.id) }, row.id) : ""),
      showDocs ? el("td", {}, el("pre", {}, pretty(row.doc))) : null))),
    el("div", { class: "row" },
      el("button", { type: "button", class: "secondary", disabled: skip === 0, onclick: () => go({ skip: Math.max(0, skip - pageSize) }) }, "← Previous"),
      el("button", { type: "button", class: "secondary", id: "view-next", disabled: !more, onclick: () => go({ skip: skip + pageSize }) }, "Next →")));
}

// ---- changes, Mango, security ------------------------------------------------------

async function changesPage(db) {
  const mine = generation;
  const list = el("ul", { class: "changes", id: "changes", "aria-live": "polite" });
  const status = el("p", { class: "muted" }, "Listening for changes…");
  showFor(mine, dbCrumbs(db, "changes"),
    el("h1", {}, db), dbTabs(db, "changes"), status, list);
  const add = (change, fresh) => {
    const item = el("li", { class: fresh ? "fresh" : null },
      el("span", { class: "muted" }, String(change.seq).split("-")[0] + "  "),
      el("a", { href: docLink(db, change.id) }, change.id), "  ",
      el("span", { class: "muted" }, change.changes.map((c) => c.rev).join(", ")),
      change.deleted ? el("span", { class: "pill failed" }, "deleted") : null);
    list.prepend(item);
    while (list.children.length > 200) list.lastChild.remove();
  };
  const first = await api("GET", dbPath(db) + "/_changes?descending=true&limit=25");
  if (first.status !== 200) return status.replaceWith(errorBox(reason(first)));
  first.body.results.slice().reverse().forEach((c) => add(c, false));
  let since = first.body.results.length ? first.body.results[0].seq : "now";
  while (mine === generation) {
    let answer;
    try { answer = await api("GET", dbPath(db) + "/_changes?feed=longpoll&timeout=25000&since=" + enc(since)); } catch (e) { answer = null; }
    if (mine !== generation) return;
    if (!answer || answer.status !== 200) { status.textContent = "The feed stopped: " + (answer ? reason(answer) : "no answer") + ". Reload to try again."; return; }
    answer.body.results.forEach((c) => add(c, true));
    since = answer.body.last_seq;
  }
}

async function findPage(db) {
  const mine = generation;
  const query = el("textarea", { id: "mango", class: "short", spellcheck: "false", "aria-label": "Mango query (JSON)" });
  query.value = pretty({ selector: { _id: { $gt: null } }, limit: 25 });
  const out = el("div", { id: "find-result" });
  showFor(mine, dbCrumbs(db, "Mango query"),
    el("h1", {}, db), dbTabs(db, "find"),
    el("form", { class: "panel", onsubmit: async (event) => {
      event.preventDefault();
      const body = parseSource(query, out);
      if (body === undefined) return;
      const answer = await api("POST", dbPath(db) + "/_find", body);
      if (answer.status !== 200) { out.replaceChildren(errorBox(reason(answer))); return; }
      fill(out,
        answer.body.warning ? el("p", { class: "notice" }, answer.body.warning) : null,
        el("p", { class: "muted" }, answer.body.docs.length + " documents"),
        table(["Id", "Document"], answer.body.docs.map((doc) => el("tr", {},
          el("td", { class: "mono" }, doc._id ? el("a", { href: docLink(db, doc._id) }, doc._id) : ""),
          el("td", {}, el("pre", {}, pretty(doc)))))));
    } }, el("label", { class: "block", for: "mango" }, "Query"), query,
      el("div", { class: "row" }, el("button", { type: "submit", id: "run-find" }, "Run query"),
        el("button", { type: "button", class: "secondary", id: "explain-find", onclick: async () => {
          const body = parseSource(query, out);
          if (body === undefined) return;
          const answer = await api("POST", dbPath(db) + "/_explain", body);
          if (answer.status !== 200) { out.replaceChildren(errorBox(reason(answer))); return; }
          const index = answer.body.index || {};
          out.replaceChildren(
            el("p", { id: "explain-index" }, "Index used: ", el("code", {}, index.name || "?"),
              index.ddoc ? el("span", { class: "muted" }, " (" + index.ddoc + ")") : null),
            el("pre", {}, pretty(answer.body)));
        } }, "Explain"))),
    out,
    el("h2", {}, "Indexes"),
    await mangoIndexes(db));
}

/** The database's Mango indexes: listed, created from fields, deleted. */
async function mangoIndexes(db) {
  const box = el("div", { id: "indexes" });
  const fields = el("input", { type: "text", id: "index-fields", required: true, placeholder: "fields, comma-separated: type, year", "aria-label": "Fields to index" });
  const name = el("input", { type: "text", id: "index-name", placeholder: "name (optional)", "aria-label": "Index name" });
  const problem = el("div");
  const refresh = async () => {
    const answer = await api("GET", dbPath(db) + "/_index");
    if (answer.status !== 200) { box.replaceChildren(errorBox(reason(answer))); return; }
    box.replaceChildren(table(["Name", "Design document", "Type", "Fields", ""], answer.body.indexes.map((index) => el("tr", {},
      el("td", { class: "mono" }, index.name),
      el("td", { class: "mono" }, index.ddoc || ""),
      el("td", {}, index.type),
      el("td", { class: "mono" }, ((index.def && index.def.fields) || []).map((f) => Object.keys(f)[0] + (Object.values(f)[0] === "desc" ? " ↓" : "")).join(", ")),
      el("td", {}, index.ddoc ? el("button", { type: "button", class: "danger", onclick: async () => {
        if (!confirm("Delete the index " + index.name + "?")) return;
        const gone = await api("DELETE", dbPath(db) + "/_index/" + enc(index.ddoc.replace(/^_design\//, "")) + "/json/" + enc(index.name));
        if (gone.status !== 200) { problem.replaceChildren(errorBox(reason(gone))); return; }
        problem.replaceChildren();
        refresh();
      } }, "Delete") : "")))));
  };
  await refresh();
  return el("div", {}, box,
    el("form", { class: "row panel", onsubmit: async (event) => {
      event.preventDefault();
      const list = fields.value.split(",").map((f) => f.trim()).filter(Boolean);
      const made = await api("POST", dbPath(db) + "/_index", Object.assign({ index: { fields: list } }, name.value ? { name: name.value } : {}));
      if (made.status !== 200) { problem.replaceChildren(errorBox(reason(made))); return; }
      problem.replaceChildren();
      fields.value = ""; name.value = "";
      refresh();
    } }, fields, name, el("button", { type: "submit", id: "create-index", class: "secondary" }, "Create index"), problem));
}

/** Whether a security object lets anyone read and write documents: no
 * member names and no member roles, as CouchDB reads it. */
function openToEveryone(security) {
  const members = (security && security.members) || {};
  return !(members.names || []).length && !(members.roles || []).length;
}

async function securityPage(db) {
  const mine = generation;
  const answer = await api("GET", dbPath(db) + "/_security");
  if (answer.status === 401) return loginPage();
  const security = answer.body && typeof answer.body === "object" ? answer.body : {};
  for (const group of ["admins", "members"]) {
    security[group] = Object.assign({ names: [], roles: [] }, security[group] || {});
  }
  const source = el("textarea", { id: "security", class: "short", spellcheck: "false", "aria-label": "Security object (JSON)" });
  const problem = el("div");
  const mark = el("div");
  const save = async (body) => {
    const saved = await api("PUT", dbPath(db) + "/_security", body);
    if (saved.status !== 200) { problem.replaceChildren(errorBox(reason(saved))); return false; }
    problem.replaceChildren();
    toast("Security saved");
    return true;
  };
  const lists = el("div", { class: "security-lists" });
  const render = () => {
    source.value = pretty(security);
    fill(mark, openToEveryone(security)
      ? el("p", { class: "notice", id: "open-mark" }, "Open to everyone: with no member names or roles, anyone may read and write this database's documents.")
      : null);
    lists.replaceChildren(...["admins", "members"].flatMap((group) => ["names", "roles"].map((kind) => {
      const id = `${group}-${kind}`;
      const input = el("input", { type: "text", id: "add-" + id, placeholder: kind === "names" ? "a user name" : "a role", "aria-label": `Add to ${group}' ${kind}` });
      return el("div", { class: "panel", id }, el("h3", {}, `${group[0].toUpperCase() + group.slice(1)}: ${kind}`),
        security[group][kind].length
          ? el("ul", { class: "chips" }, security[group][kind].map((value, index) => el("li", {}, el("span", { class: "mono" }, value), " ",
            el("button", { type: "button", class: "secondary", "aria-label": `Remove ${value} from ${group}' ${kind}`, onclick: async () => {
              security[group][kind].splice(index, 1);
              if (await save(security)) render();
            } }, "Remove"))))
          : el("p", { class: "muted" }, "None."),
        el("form", { class: "row", onsubmit: async (event) => {
          event.preventDefault();
          const value = input.value.trim();
          if (!value || security[group][kind].includes(value)) return;
          security[group][kind].push(value);
          if (await save(security)) render(); else security[group][kind].pop();
        } }, input, el("button", { type: "submit", class: "secondary", id: "add-" + id + "-button" }, "Add")));
    })));
  };
  render();
  showFor(mine, dbCrumbs(db, "security"),
    el("h1", {}, db), dbTabs(db, "security"),
    el("p", { class: "muted" }, "Admins and members by name or role. With no members, anyone may read and write the database's documents."),
    mark, problem, lists,
    el("details", {}, el("summary", {}, "The security object as JSON"),
      el("form", { class: "panel", onsubmit: async (event) => {
        event.preventDefault();
        const body = parseSource(source, problem);
        if (body === undefined) return;
        if (typeof body !== "object" || body === null || Array.isArray(body)) { problem.replaceChildren(errorBox("A security object is a JSON object.")); return; }
        if (!(await save(body))) return;
        for (const key of Object.keys(security)) delete security[key];
        Object.assign(security, body);
        for (const group of ["admins", "members"]) security[group] = Object.assign({ names: [], roles: [] }, security[group] || {});
        render();
      } }, source, el("div", { class: "row" }, el("button", { type: "submit", id: "save-security" }, "Save security")))));
}

// ---- replication ---------------------------------------------------------------

async function replicationPage() {
  const mine = generation;
  const source = el("input", { type: "text", id: "rep-source", required: true, placeholder: "a database name, or a URL" });
  const target = el("input", { type: "text", id: "rep-target", required: true, placeholder: "a database name, or a URL" });
  // Credentials for a URL, sent as the replication document's `auth` and
  // never shown back (the document holds them; the list shows none).
  const credentials = (side) => [
    el("input", { type: "text", id: `rep-${side}-user`, autocomplete: "off", placeholder: "user (for a URL)", "aria-label": `${side} user` }),
    el("input", { type: "password", id: `rep-${side}-password`, autocomplete: "new-password", placeholder: "password", "aria-label": `${side} password` }),
  ];
  const [sourceUser, sourcePassword] = credentials("source");
  const [targetUser, targetPassword] = credentials("target");
  const side = (input, user, password) => user.value
    ? { url: input.value.trim(), auth: { basic: { username: user.value, password: password.value } } }
    : input.value.trim();
  const continuous = el("input", { type: "checkbox", id: "rep-continuous" });
  const create = el("input", { type: "checkbox", id: "rep-create", checked: true });
  const problem = el("div");
  const jobs = el("div", { id: "rep-jobs" });
  showFor(mine, el("h1", {}, "Replication"),
    el("form", { class: "panel", onsubmit: async (event) => {
      event.preventDefault();
      const doc = { source: side(source, sourceUser, sourcePassword), target: side(target, targetUser, targetPassword),
        create_target: create.checked, continuous: continuous.checked };
      const answer = await api("POST", "/_replicator", doc);
      if (answer.status !== 201 && answer.status !== 202) { problem.replaceChildren(errorBox(reason(answer))); return; }
      problem.replaceChildren();
      // The fields may hold a URL with its password: not kept in the page.
      for (const input of [source, target, sourceUser, sourcePassword, targetUser, targetPassword]) input.value = "";
      toast("Replication " + answer.body.id + " started");
      refresh();
    } },
      el("p", { class: "muted" }, "Starts a replication document in _replicator: the server runs it, and again after a restart."),
      el("label", { class: "block", for: "rep-source" }, "Source", source),
      el("div", { class: "row credentials" }, sourceUser, sourcePassword),
      el("label", { class: "block", for: "rep-target" }, "Target", target),
      el("div", { class: "row credentials" }, targetUser, targetPassword),
      el("div", { class: "row" }, el("label", {}, continuous, "Continuous"), el("label", {}, create, "Create the target")),
      problem,
      el("div", { class: "row" }, el("button", { type: "submit", id: "rep-start" }, "Replicate"))),
    el("h2", {}, "Replications"), jobs);
  async function refresh() {
    const answer = await api("GET", "/_scheduler/docs");
    if (answer.status !== 200) { jobs.replaceChildren(errorBox(reason(answer))); return; }
    jobs.replaceChildren(answer.body.docs.length ? table(["Document", "Source → target", "State", "Read", "Written", ""], answer.body.docs.map((doc) => {
      const info = doc.info || {};
      return el("tr", {},
        el("td", { class: "mono" }, el("a", { href: docLink("_replicator", doc.doc_id) }, doc.doc_id)),
        el("td", { class: "mono" }, doc.source + " → " + doc.target),
        el("td", {}, el("span", { class: "pill " + doc.state }, doc.state), info.error ? el("div", { class: "muted" }, info.error) : null),
        el("td", { class: "num" }, info.docs_read),
        el("td", { class: "num" }, info.docs_written),
        el("td", {}, el("button", { type: "button", class: "danger", onclick: async () => {
          const current = await api("GET", docPath("_replicator", doc.doc_id));
          if (current.status === 200) await api("DELETE", docPath("_replicator", doc.doc_id) + "?rev=" + enc(current.body._rev));
          refresh();
        } }, doc.state === "running" || doc.state === "crashing" ? "Stop" : "Remove")));
    })) : el("p", { class: "muted" }, "No replications."));
  }
  await refresh();
  while (mine === generation) {
    await new Promise((done) => setTimeout(done, 2000));
    if (mine !== generation) return;
    await refresh();
  }
}

// ---- SQLite files ------------------------------------------------------------------

const longCell = 100;

/** A cell: NULL and BLOBs marked, numbers aligned, a web address a link,
 * long text cut with the whole of it one click away. */
function cell(value) {
  if (value === null) return el("td", {}, el("span", { class: "null" }, "NULL"));
  if (typeof value === "object" && value.blob !== undefined) return el("td", { class: "muted" }, `BLOB, ${value.bytes} bytes`);
  if (typeof value === "number") return el("td", { class: "num" }, String(value));
  const text = String(value);
  if (/^https?:\/\/\S+$/i.test(text)) {
    return el("td", {}, el("a", { href: text, target: "_blank", rel: "noopener noreferrer nofollow", class: "url" }, text));
  }
  if (text.length <= longCell) return el("td", {}, text);
  const shown = el("span", {}, text.slice(0, longCell) + "…");
  const more = el("button", { type: "button", class: "more secondary", "aria-label": "Show the whole value", onclick: () => {
    shown.textContent = text;
    more.remove();
  } }, "more");
  return el("td", { class: "long" }, shown, " ", more);
}

/** Rows of values under their columns' names; a column whose values are
 * all numbers (or NULL) has its heading aligned with them. */
function resultTable(columns, rows, headingFor) {
  const numeric = columns.map((_, i) => rows.length > 0 && rows.every((row) => row[i] === null || typeof row[i] === "number")
    && rows.some((row) => typeof row[i] === "number"));
  const headings = columns.map((c, i) => headingFor ? headingFor(c, i) : c);
  const built = table(headings, rows.map((row) => el("tr", {}, row.map(cell))));
  built.querySelectorAll("thead th").forEach((th, i) => { if (numeric[i]) th.classList.add("num"); });
  built.classList.add("rows-table");
  return built;
}

async function download(path, body, name) {
  const response = await fetch(path, { method: "POST", credentials: "same-origin", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  if (!response.ok) { const text = await response.text(); let b = null; try { b = JSON.parse(text); } catch (e) { /* */ } return toast(reason({ status: response.status, body: b })); }
  const url = URL.createObjectURL(await response.blob());
  const link = el("a", { href: url, download: name });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

async function sqliteFilesPage() {
  const mine = generation;
  const answer = await api("GET", "/_sqlite");
  if (answer.status === 401) return loginPage();
  if (answer.status !== 200) return showFor(mine, el("h1", {}, "SQLite files"), el("p", { class: "notice" }, reason(answer)));
  showFor(mine, el("h1", {}, "SQLite files"),
    el("p", { class: "muted" }, answer.body.writable ? "The SQL box may write to these files." : "Read-only: the SQL box cannot change these files."),
    answer.body.files.length ? table(["File", "Size"], answer.body.files.map((file) => el("tr", {},
      el("td", { class: "mono" }, el("a", { href: "#/sqlite/" + enc(file.name) }, file.name)),
      el("td", { class: "num" }, bytes(file.size))))) : el("p", { class: "muted" }, "No .sqlite, .sqlite3 or .db files in the folder."));
}

async function sqliteFilePage(file, params) {
  const mine = generation;
  const answer = await api("GET", "/_sqlite/" + enc(file));
  if (answer.status === 401) return loginPage();
  if (answer.status !== 200) return showFor(mine, crumbs(el("a", { href: "#/sqlite" }, "SQLite files"), file), errorBox(reason(answer)));
  const sql = el("textarea", { id: "sql", class: "short", spellcheck: "false", "aria-label": "SQL" });
  const first = answer.body.tables[0];
  const asked = params.get("sql");
  sql.value = asked !== null ? asked : first ? `SELECT * FROM "${first.name.replace(/"/g, '""')}" LIMIT 20` : "SELECT sqlite_version()";
  const out = el("div", { id: "sql-result" });
  const execute = async () => {
    const result = await api("POST", "/_sqlite/" + enc(file) + "/_query", { sql: sql.value });
    if (result.status !== 200) { out.replaceChildren(errorBox(reason(result))); return; }
    out.replaceChildren(el("p", { class: "muted" }, `${result.body.rows.length} rows in ${result.body.elapsed_ms.toFixed(1)} ms`),
      resultTable(result.body.columns, result.body.rows));
  };
  // The query goes into the address, so it can be bookmarked and shared.
  const run = async (event) => {
    event.preventDefault();
    const target = "#/sqlite/" + enc(file) + "?" + new URLSearchParams({ sql: sql.value });
    if (location.hash === target) await execute();
    else { history.replaceState(null, "", target); await execute(); }
  };
  sql.addEventListener("keydown", (event) => { if ((event.ctrlKey || event.metaKey) && event.key === "Enter") run(event); });
  showFor(mine, crumbs(el("a", { href: "#/sqlite" }, "SQLite files"), file),
    el("h1", {}, file),
    table(["Name", "Kind", "Rows", "Columns"], answer.body.tables.map((t) => el("tr", {},
      el("td", { class: "mono" }, el("a", { href: "#/sqlite/" + enc(file) + "/" + enc(t.name) }, t.name)),
      el("td", {}, t.type),
      el("td", { class: "num" }, t.rows),
      el("td", { class: "mono columns" }, t.columns.map((c) => c.name + (c.type ? " " + c.type : "") + (c.pk ? " (key)" : "")).join(", "))))),
    el("h2", {}, "SQL"),
    el("form", { class: "panel", onsubmit: run },
      el("label", { class: "block", for: "sql" }, answer.body.writable ? "Query" : "Query (read-only)"), sql,
      el("div", { class: "row" },
        el("button", { type: "submit", id: "run-sql" }, "Run"),
        el("button", { type: "button", class: "secondary", id: "export-sql-csv", onclick: () => download("/_sqlite/" + enc(file) + "/_query?format=csv", { sql: sql.value }, "query.csv") }, "Export CSV"),
        el("button", { type: "button", class: "secondary", onclick: () => download("/_sqlite/" + enc(file) + "/_query?format=json", { sql: sql.value }, "query.json") }, "Export JSON"),
        el("span", { class: "muted" }, "Ctrl+Enter runs"))),
    out,
    el("h2", {}, "Schema"),
    ...answer.body.tables.map((t) => el("pre", {}, t.sql)));
  // A query from the address runs at once when it cannot write; on a
  // writable file it waits for Run, so opening a link never writes.
  if (asked !== null) {
    if (answer.body.writable) out.replaceChildren(el("p", { class: "notice" }, "This file is writable: press Run to run the query from the address."));
    else await execute();
  }
}

async function sqliteTablePage(file, name, params) {
  const mine = generation;
  const pageSize = 50;
  const skip = Number(params.get("skip") || 0);
  const sort = params.get("sort") || "";
  const descending = params.get("descending") === "true";
  const column = params.get("column") || "";
  const value = params.get("value") || "";
  let filters = [];
  try { filters = JSON.parse(params.get("filters") || "[]"); } catch (e) { filters = []; }
  if (!Array.isArray(filters)) filters = [];
  const query = new URLSearchParams({ limit: String(pageSize), skip: String(skip) });
  if (sort) { query.set("sort", sort); if (descending) query.set("descending", "true"); }
  if (column) query.set("column", column);
  if (column || value) query.set("value", value);
  if (filters.length) query.set("filters", JSON.stringify(filters));
  const base = "/_sqlite/" + enc(file) + "/" + enc(name);
  const answer = await api("GET", base + "?" + qs(query));
  if (answer.status === 401) return loginPage();
  const head = [crumbs(el("a", { href: "#/sqlite" }, "SQLite files"), el("a", { href: "#/sqlite/" + enc(file) }, file), name), el("h1", {}, name)];
  if (answer.status !== 200) return showFor(mine, ...head, errorBox(reason(answer)));
  const go = (changes) => {
    const next = new URLSearchParams({ skip: String(skip), sort, descending: String(descending), column, value, filters: JSON.stringify(filters) });
    for (const [k, v] of Object.entries(changes)) next.set(k, typeof v === "string" ? v : JSON.stringify(v));
    if (next.get("filters") === "[]") next.delete("filters");
    location.hash = "#/sqlite/" + enc(file) + "/" + enc(name) + "?" + next;
  };
  const columns = answer.body.columns;
  // Filters as Datasette has them: a column, a test and a value, combined.
  const operators = [["=", "="], ["!=", "≠"], ["<", "<"], [">", ">"], ["<=", "≤"], [">=", "≥"], ["contains", "contains"], ["starts", "starts with"], ["null", "is null"], ["notnull", "is not null"]];
  const filterRows = el("div", { id: "filters" });
  const addFilterRow = (filter) => {
    const [col, op, val] = filter || [columns[0], "contains", ""];
    const colPick = el("select", { class: "filter-col", "aria-label": "Filter column" }, columns.map((c) => el("option", { value: c, selected: c === col }, c)));
    const opPick = el("select", { class: "filter-op", "aria-label": "Test" }, operators.map(([v, label]) => el("option", { value: v, selected: v === op }, label)));
    const valInput = el("input", { type: "text", class: "filter-val", value: val || "", "aria-label": "Filter value" });
    const row = el("div", { class: "row filter-row" }, colPick, opPick, valInput,
      el("button", { type: "button", class: "secondary", "aria-label": "Remove this filter", onclick: () => row.remove() }, "×"));
    filterRows.append(row);
  };
  filters.forEach(addFilterRow);
  const readFilters = () => [...filterRows.querySelectorAll(".filter-row")].map((row) => {
    const op = row.querySelector(".filter-op").value;
    const filter = [row.querySelector(".filter-col").value, op];
    if (op !== "null" && op !== "notnull") filter.push(row.querySelector(".filter-val").value);
    return filter;
  });
  const pick = el("select", { id: "filter-column", "aria-label": "Filter column" }, el("option", { value: "" }, "(any column)"), columns.map((c) => el("option", { value: c, selected: c === column }, c)));
  const wanted = el("input", { type: "text", id: "filter-value", value, placeholder: "equals…", "aria-label": "Filter value" });
  const exportQuery = new URLSearchParams(query);
  exportQuery.delete("limit"); exportQuery.delete("skip");
  const total = answer.body.total_rows;
  showFor(mine, ...head,
    el("form", { class: "panel", role: "search", onsubmit: (event) => { event.preventDefault(); go({ column: pick.value, value: wanted.value, filters: readFilters(), skip: 0 }); } },
      el("div", { class: "row" }, el("label", { for: "filter-column" }, "Where"), pick, wanted),
      filterRows,
      el("div", { class: "row" },
      el("button", { type: "button", class: "secondary", id: "add-filter", onclick: () => addFilterRow() }, "Add filter"),
      el("button", { type: "submit", id: "filter" }, "Filter"),
      column || value || filters.length ? el("button", { type: "button", class: "secondary", onclick: () => go({ column: "", value: "", filters: [], skip: 0 }) }, "Clear") : null,
      el("span", { class: "muted" }, "Export:"),
      el("a", { class: "button secondary", id: "export-csv", href: base + "?" + qs(exportQuery) + "&format=csv" }, "CSV"),
      el("a", { class: "button secondary", id: "export-json", href: base + "?" + qs(exportQuery) + "&format=json" }, "JSON"))),
    el("p", { class: "muted", id: "row-count" }, total ? `Rows ${skip + 1}–${skip + answer.body.rows.length} of ${total}` : "No rows."),
    resultTable(columns, answer.body.rows, (c) => el("button", { type: "button", class: "sort", "data-column": c,
      "aria-label": "Sort by " + c, onclick: () => go({ sort: c, descending: sort === c && !descending, skip: 0 }) },
      c + (sort === c ? (descending ? " ▼" : " ▲") : ""))),
    el("div", { class: "row" },
      el("button", { type: "button", class: "secondary", disabled: skip === 0, onclick: () => go({ skip: Math.max(0, skip - pageSize) }) }, "← Previous"),
      el("button", { type: "button", class: "secondary", id: "next-page", disabled: skip + pageSize >= total, onclick: () => go({ skip: skip + pageSize }) }, "Next →")));
  // The sorted column stays in view in a wide table.
  const sorted = sort && main.querySelector(`button.sort[data-column="${CSS.escape(sort)}"]`);
  if (sorted) sorted.scrollIntoView({ block: "nearest", inline: "center" });
}

// ---- routing ---------------------------------------------------------------------

async function route() {
  generation++;
  if (toast.generation !== generation) hideToast();
  const hash = location.hash.replace(/^#/, "") || "/";
  const [path, queryText] = hash.split("?");
  const params = new URLSearchParams(queryText || "");
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  const section = parts[0] === "sqlite" ? "sqlite" : parts[0] === "replication" ? "replication" : "databases";
  for (const link of document.querySelectorAll(".top nav a")) link.classList.toggle("active", link.dataset.section === section);
  if (!session.name) return loginPage();
  try {
    if (parts.length === 0) return await databasesPage();
    if (parts[0] === "db" && parts.length >= 2) {
      const db = parts[1];
      if (parts.length === 2) return await documentsPage(db, params);
      if (parts[2] === "doc") return await documentPage(db, parts.slice(3).join("/"));
      if (parts[2] === "new") return await documentPage(db, null);
      if (parts[2] === "changes") return await changesPage(db);
      if (parts[2] === "views") return await viewsPage(db, params);
      if (parts[2] === "find") return await findPage(db);
      if (parts[2] === "security") return await securityPage(db);
    }
    if (parts[0] === "replication") return await replicationPage();
    if (parts[0] === "sqlite") {
      if (parts.length === 1) return await sqliteFilesPage();
      if (parts.length === 2) return await sqliteFilePage(parts[1], params);
      return await sqliteTablePage(parts[1], parts.slice(2).join("/"), params);
    }
    show(el("h1", {}, "Not found"), el("p", {}, el("a", { href: "#/" }, "Back to the databases")));
  } catch (error) {
    show(errorBox("The page failed: " + error.message));
  }
}

window.addEventListener("hashchange", route);
loadSession().then(route);
