// The name screen and the lobby: the live table list, a new table with its options,
// joining by id or invite code. Views only: they call `act` for everything they do.

import { fillNodes, h } from "./dom.js";
import { nameLink } from "./ladder.js";
import { playNowForm } from "./pairing.js";
import { rulesName, tableName } from "./state.js";
import { num, said, t, tn } from "./words.js";

/** Choose a name (or come back as the stored one). */
export function nameScreen(state, act, { name = "", error = null } = {}) {
  const input = h("input", { id: "name-input", name: "name", autocomplete: "nickname",
    maxlength: 24, required: true, value: name, "aria-describedby": error ? "name-error name-help" : "name-help",
    "aria-invalid": error ? "true" : null,
    dataset: { key: "name-input" } });
  return h("section", { class: "panel name-panel", "aria-labelledby": "name-title" },
    h("h2", { id: "name-title" }, "Pis Yedili"),
    h("p", {}, t("Dirty Seven, the Turkish shedding game: be the first out, and hold as few penalty points as you can when someone else is.")),
    // Handlers read the form they fire on: a redraw may keep the old elements (dom.js).
    h("form", { class: "name-form", onsubmit: (ev) => {
      ev.preventDefault();
      act.connect(ev.currentTarget.elements.name.value.trim());
    } },
      h("label", { for: "name-input" }, t("Your name")),
      input,
      h("p", { id: "name-help", class: "help" }, t("1 to 24 characters; it is shown to the other players.")),
      error ? h("p", { class: "error", role: "alert", id: "name-error" }, said(error)) : null,
      h("button", { type: "submit", id: "connect", class: "primary", dataset: { key: "connect" } }, t("Play"))));
}

function matchEndText(matchEnd) {
  const [kind, count] = String(matchEnd).split(":");
  const n = Number(count);
  if (kind === "deals") return tn("{n} deal", "{n} deals", n);
  if (kind === "points") return tn("{n} point", "{n} points", n);
  return String(matchEnd).replace(":", " ");
}

function tenText(ten) {
  if (ten === "reverse") return t("10 reverses");
  if (ten === "bounce") return t("10 bounces");
  return `10 ${ten}s`;
}

/** The options of a table in a few words: the match, a 10, the stock, decks, timer. */
export function optionsText(opts) {
  const parts = [];
  if (opts.match_end) parts.push(matchEndText(opts.match_end));
  if (opts.ten) parts.push(tenText(opts.ten));
  if (opts.empty_stock) parts.push(opts.empty_stock === "reshuffle" ? t("reshuffle") : t("stock out ends"));
  if (opts.decks && opts.decks > 1) parts.push(tn("{n} deck", "{n} decks", opts.decks));
  parts.push(opts.turn_seconds ? t("{n}s turns", { n: opts.turn_seconds }) : t("untimed"));
  return parts.join(" · ");
}

function phaseName(phase) {
  switch (phase) {
    case "waiting": return t("waiting");
    case "playing": return t("playing");
    case "over": return t("over");
    default: return phase;
  }
}

function tableRow(row, act) {
  const name = tableName(row);
  const full = row.taken >= row.seats || row.phase !== "waiting";
  const buttons = row.private
    ? [h("span", { class: "tag" }, t("private: join by code"))]
    : [
        h("button", { type: "button", class: "join", disabled: full, dataset: { key: `join-${row.id}` },
          onclick: () => act.join({ table: row.id }), "aria-label": t("Join {name}", { name }) }, t("Join")),
        h("button", { type: "button", class: "watch", dataset: { key: `watch-${row.id}` },
          onclick: () => act.join({ table: row.id, spectate: true }), "aria-label": t("Watch {name}", { name }) }, t("Watch")),
      ];
  return h("li", { class: "lobby-row", dataset: { table: row.id, key: `table-${row.id}` } },
    h("div", { class: "row-main" },
      h("strong", {}, name),
      row.rated ? h("span", { class: "tag rated", title: t("Its matches change ratings; only players with an account take its seats.") }, t("rated")) : null,
      row.quick ? h("span", { class: "tag quick", title: t("It starts once every seat is filled and ready; bots fill it after a wait.") }, t("quick")) : null,
      h("span", { class: "muted" }, ` #${num(row.id)} · ${rulesName(row.rules)} · `,
        fillNodes(t("host {name}"), { name: row.host ? nameLink(row.host) : t("none") }))),
    h("div", { class: "row-info" },
      h("span", {}, t("{taken}/{seats} seated", { taken: row.taken, seats: row.seats }),
        row.bots ? ` ${tn("({n} bot)", "({n} bots)", row.bots)}` : ""),
      row.spectators ? h("span", {}, ` · ${t("{n} watching", { n: row.spectators })}`) : null,
      h("span", { class: `phase phase-${row.phase}` }, ` · ${phaseName(row.phase)}`),
      h("span", { class: "muted" }, ` · ${optionsText(row.options || {})}`)),
    h("div", { class: "row-actions" }, buttons));
}

function select(id, label, choices, value) {
  return h("div", { class: "field" },
    h("label", { for: id }, label),
    h("select", { id, name: id, dataset: { key: id } },
      choices.map(([v, text]) => h("option", { value: v, selected: v === value }, text))));
}

/** The create-table form; its options are those of `create_table.options`. */
function createForm(act) {
  return h("form", { class: "create-form", id: "create-form",
    onsubmit: (ev) => {
      ev.preventDefault();
      const f = new FormData(ev.currentTarget);
      const rules = f.get("rules");
      const options = {};
      for (const key of ["ten", "empty_stock"]) if (f.get(key)) options[key] = f.get(key);
      const count = Number(f.get("match_count"));
      if (f.get("match_kind") && count) options.match_end = `${f.get("match_kind")}:${count}`;
      if (f.get("decks")) options.decks = Number(f.get("decks"));
      const turn = f.get("turn_seconds");
      if (turn !== "") options.turn_seconds = Number(turn);
      const msg = { type: "create_table", rules, seats: Number(f.get("seats")), options,
        private: f.get("private") === "on" };
      if (f.get("rated") === "on") msg.rated = true;
      const name = String(f.get("table_name") || "").trim();
      if (name) msg.name = name;
      act.create(msg);
    } },
    h("h3", {}, t("New table")),
    h("div", { class: "fields" },
      select("rules", t("Rules"), [["classic", t("Classic")], ["cardiva", t("Cardiva")]], "classic"),
      select("seats", t("Seats"), [2, 3, 4, 5, 6].map((n) => [String(n), num(n)]), "4"),
      select("ten", t("A 10"), [["", t("rule set's default")], ["reverse", t("reverses (C10)")], ["bounce", t("bounces back (K9)")]], ""),
      select("empty_stock", t("Empty stock"), [["", t("rule set's default")], ["end_deal", t("ends the deal")], ["reshuffle", t("reshuffle")]], ""),
      select("match_kind", t("Match"), [["", t("rule set's default")], ["deals", t("deals")], ["points", t("points")]], ""),
      h("div", { class: "field" },
        h("label", { for: "match_count" }, t("Deals or points")),
        h("input", { id: "match_count", name: "match_count", type: "number", min: 1, max: 10000,
          placeholder: t("{deals} or {points}", { deals: 4, points: 101 }), dataset: { key: "match_count" } })),
      select("decks", t("Decks"), [["", t("rule set's default")], ["1", num(1)], ["2", num(2)]], ""),
      h("div", { class: "field" },
        h("label", { for: "turn_seconds" }, t("Seconds a turn")),
        h("input", { id: "turn_seconds", name: "turn_seconds", type: "number", min: 0, max: 3600,
          placeholder: t("{n} = untimed", { n: 0 }), dataset: { key: "turn_seconds" } })),
      h("div", { class: "field" },
        h("label", { for: "table_name" }, t("Table name")),
        h("input", { id: "table_name", name: "table_name", maxlength: 40, placeholder: t("your name's table"), dataset: { key: "table_name" } })),
      h("div", { class: "field check" },
        h("input", { id: "private", name: "private", type: "checkbox", dataset: { key: "private" } }),
        h("label", { for: "private" }, t("Private (join by invite code only)"))),
      h("div", { class: "field check" },
        h("input", { id: "rated", name: "rated", type: "checkbox", dataset: { key: "rated" } }),
        h("label", { for: "rated" }, t("Rated (players with an account only)")))),
    h("button", { type: "submit", id: "create", class: "primary", dataset: { key: "create" } }, t("Open the table")));
}

function codeForm(act, error) {
  const input = h("input", { id: "code-input", name: "code", maxlength: 16, autocomplete: "off",
    autocapitalize: "characters", required: true, dataset: { key: "code-input" },
    "aria-invalid": error ? "true" : null, "aria-describedby": error ? "code-error" : null });
  const spectate = h("input", { id: "code-spectate", name: "spectate", type: "checkbox", dataset: { key: "code-spectate" } });
  return h("form", { class: "code-form", onsubmit: (ev) => {
    ev.preventDefault();
    const fields = ev.currentTarget.elements;
    act.join({ code: fields.code.value.trim(), spectate: fields.spectate.checked });
  } },
    h("h3", {}, t("Join by invite code")),
    h("div", { class: "fields" },
      h("div", { class: "field" }, h("label", { for: "code-input" }, t("Invite code")), input,
        error ? h("p", { class: "error field-error", id: "code-error", role: "alert" }, said(error)) : null),
      h("div", { class: "field check" }, spectate, h("label", { for: "code-spectate" }, t("Watch only")))),
    h("button", { type: "submit", id: "join-code", dataset: { key: "join-code" } }, t("Join")));
}

/** The lobby: the table list, a page at a time, and the two ways to a table. */
export function lobbyScreen(state, act, { codeError = null, registered = false } = {}) {
  const { tables, total, offset, page } = state.lobby;
  const pager = total > tables.length
    ? h("div", { class: "pager" },
        h("button", { type: "button", disabled: offset === 0, dataset: { key: "prev" },
          onclick: () => act.lobbyPage(Math.max(0, offset - page)) }, t("Previous")),
        h("span", {}, t("{from}-{to} of {total}", { from: offset + 1, to: offset + tables.length, total })),
        h("button", { type: "button", disabled: offset + tables.length >= total, dataset: { key: "next" },
          onclick: () => act.lobbyPage(offset + page) }, t("Next")))
    : null;
  // A finished table takes no one: the list shows the tables a player can still join
  // or watch a match at (its players' results are in the match history).
  const open = tables.filter((row) => row.phase !== "over");
  return h("section", { class: "lobby", "aria-labelledby": "lobby-title" },
    h("div", { class: "panel tables-panel" },
      h("div", { class: "panel-head" },
        h("h2", { id: "lobby-title" }, t("Tables")),
        h("button", { type: "button", id: "change-name", class: "quiet", dataset: { key: "change-name" },
          onclick: () => act.changeName() }, t("Change name"))),
      open.length
        ? h("ul", { class: "lobby-list", id: "lobby-list" }, open.map((row) => tableRow(row, act)))
        : h("p", { class: "muted", id: "lobby-empty" }, t("No tables are open. Open one below.")),
      pager),
    h("div", { class: "panel forms-panel" }, playNowForm(state, act, registered), createForm(act),
      codeForm(act, codeError)));
}
