// Play now and invitations (docs/protocol.md, "Play now" and "Invitations"): the
// lobby's one-click seat, the invitations we hold with their Accept and Decline, and
// inviting a player from a waiting table. Views only: they call `act` for what they do.

import { fillNodes, h } from "./dom.js";
import { hasFeature, rulesName, tableName } from "./state.js";
import { num, said, t, tn } from "./words.js";

const WAITS = [30, 60, 120, 0]; // seconds before bots fill a quick table (0: never)

function waitName(seconds) {
  if (!seconds) return t("never");
  return seconds < 60 ? tn("{n} second", "{n} seconds", seconds) : tn("{n} minute", "{n} minutes", seconds / 60);
}

/** The lobby's Play now: rules, seats, rated, and how long to wait for people. */
export function playNowForm(state, act, registered) {
  return h("form", { class: "play-now-form", id: "play-now-form",
    onsubmit: (ev) => {
      ev.preventDefault();
      const f = new FormData(ev.currentTarget);
      const msg = { type: "play_now", rules: f.get("pn_rules"), bots_after: Number(f.get("pn_wait")) };
      if (f.get("pn_seats")) msg.seats = Number(f.get("pn_seats"));
      if (f.get("pn_rated") === "on") msg.rated = true;
      act.playNow(msg);
    } },
    h("h3", {}, t("Play now")),
    h("p", { class: "help" }, t("A seat at a table that waits for players, or a new one that bots fill after a wait.")),
    h("div", { class: "fields" },
      field("pn_rules", t("Rules"), [["classic", rulesName("classic")], ["cardiva", rulesName("cardiva")]], "classic"),
      field("pn_seats", t("Seats"), [["", t("any")], ...[2, 3, 4, 5, 6].map((n) => [String(n), num(n)])], ""),
      field("pn_wait", t("Bots after"), WAITS.map((s) => [String(s), waitName(s)]), "60"),
      registered ? h("div", { class: "field check" },
        h("input", { id: "pn_rated", name: "pn_rated", type: "checkbox", dataset: { key: "pn_rated" } }),
        h("label", { for: "pn_rated" }, t("Rated"))) : null),
    h("button", { type: "submit", id: "play-now", class: "primary", dataset: { key: "play-now" } }, t("Play now")));
}

function field(id, label, choices, value) {
  return h("div", { class: "field" },
    h("label", { for: id }, label),
    h("select", { id, name: id, dataset: { key: id } },
      choices.map(([v, text]) => h("option", { value: v, selected: v === value }, text))));
}

/** The invitations we hold, each with Accept and Decline (lobby and table alike). */
export function invitesPanel(state, ui, act) {
  if (!state.invites.length) return null;
  return h("section", { class: "panel invites", id: "invites", role: "alert", "aria-labelledby": "invites-title" },
    h("h2", { id: "invites-title" }, t("Invitations")),
    h("ul", {}, state.invites.map((inv) => {
      const row = inv.table;
      return h("li", { class: "invite", dataset: { invite: String(inv.invite), key: `invite-${inv.invite}` } },
        h("span", {}, t("{name} invites you to {table} ({rules}, {taken}/{seats} seated).", {
          name: inv.from, table: tableName(row), rules: rulesName(row.rules), taken: row.taken, seats: row.seats })),
        " ",
        h("button", { type: "button", class: "primary accept-invite", dataset: { key: `accept-${inv.invite}` },
          onclick: () => act.answerInvite(inv.invite, true) }, t("Accept")),
        h("button", { type: "button", class: "decline-invite", dataset: { key: `decline-${inv.invite}` },
          onclick: () => act.answerInvite(inv.invite, false) }, t("Decline")));
    })),
    ui.inviteError ? h("p", { class: "error", role: "alert", id: "invite-answer-error" }, said(ui.inviteError)) : null);
}

/** At a waiting table with an open seat: invite a player by name. */
export function inviteForm(state, ui, act) {
  const tbl = state.table;
  if (!hasFeature(state, "invites") || ui.offline || tbl.phase !== "waiting"
      || !tbl.seats.some((s) => s.kind === "open")) return null;
  const note = ui.inviteNote && ui.inviteNote.table === tbl.id ? ui.inviteNote : null;
  return h("form", { class: "invite-form", id: "invite-form", onsubmit: (ev) => {
    ev.preventDefault();
    const input = ev.currentTarget.elements.invitee;
    const name = input.value.trim();
    if (name) act.invite(name);
  } },
    h("label", { for: "invitee" }, t("Invite a player")),
    h("input", { id: "invitee", name: "invitee", maxlength: 24, autocomplete: "off", dataset: { key: "invitee" },
      "aria-describedby": note ? "invite-note" : null }),
    h("button", { type: "submit", id: "invite", dataset: { key: "invite" } }, t("Invite")),
    note ? h("p", { id: "invite-note", role: "status",
      class: note.ok ? "help" : "error" }, said(note.text)) : null);
}

/** A waiting quick table: it starts by itself, and when bots come (counting down). */
export function quickNote(state, now, timeLeft) {
  const tbl = state.table;
  if (!tbl.quick || tbl.phase !== "waiting") return null;
  if (state.botsAt === null) return h("p", { id: "quick-note", class: "help" }, t("A quick table: it starts once every seat is filled and ready."));
  const timer = h("span", { class: "timer", dataset: { deadline: String(state.botsAt) } }, timeLeft(state.botsAt, now));
  return h("p", { id: "quick-note", class: "help" },
    fillNodes(t("A quick table: it starts once every seat is filled and ready; bots take the seats still open in {time}."), { time: timer }));
}
