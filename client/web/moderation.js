// Moderation, for operators: kick, mute, unmute, ban, unban, close a table, announce
// (the terminal client's operator commands). Each form asks
// for a confirmation on the page before the request leaves (`mod.pending`); the server
// checks the operator, so the panel only decides what a non-operator is shown.

import { h } from "./dom.js";
import { said, t, tn } from "./words.js";

export function createModeration() {
  return { pending: null, result: null }; // pending: {msg, question}; result: {ok, text}
}

function field(id, label, attrs = {}) {
  return h("div", { class: "field" }, h("label", { for: id }, label),
    h("input", { id, name: id, dataset: { key: id }, ...attrs }));
}

const optional = (v) => (v === "" ? undefined : v);

/** The request and the question a form's values make. */
export function moderationRequest(kind, f) {
  const name = (f.get("mod-name") || "").trim();
  const reason = optional((f.get("mod-reason") || "").trim());
  const minutes = f.get("mod-minutes") ? Number(f.get("mod-minutes")) : undefined;
  switch (kind) {
    case "kick":
      return { msg: { type: "kick", name, reason }, question: t("Disconnect {name} and end their session?", { name }) };
    case "mute":
      return { msg: { type: "mute", name, minutes, reason },
        question: minutes ? tn("Stop {name} from chatting for {n} minute?", "Stop {name} from chatting for {n} minutes?", minutes, { name })
          : t("Stop {name} from chatting until unmuted?", { name }) };
    case "ban": {
      const network = (f.get("mod-network") || "").trim();
      const target = network || name;
      const msg = network ? { type: "ban", network, minutes, reason } : { type: "ban", name, minutes, reason };
      return { msg, question: minutes ? tn("Ban {target} for {n} minute and disconnect whoever it covers?", "Ban {target} for {n} minutes and disconnect whoever it covers?", minutes, { target })
        : t("Ban {target} until unbanned and disconnect whoever it covers?", { target }) };
    }
    case "unmute":
      return { msg: { type: "unmute", name }, question: t("Let {name} chat again?", { name }) };
    case "unban": {
      const network = (f.get("mod-network") || "").trim();
      return { msg: network ? { type: "unban", network } : { type: "unban", name },
        question: t("Lift the ban of {target}?", { target: network || name }) };
    }
    case "close_table": {
      const table = Number(f.get("mod-table"));
      return { msg: { type: "close_table", table, reason }, question: t("Close table #{table} and send its players to the lobby?", { table }) };
    }
    default: {
      const text = (f.get("mod-text") || "").trim();
      return { msg: { type: "announce", text }, question: t("Send every connected player: “{text}”?", { text }) };
    }
  }
}

/** What an operator's request did, once the server took it. */
export function doneText(type) {
  switch (type) {
    case "kick": return t("Done: kick.");
    case "mute": return t("Done: mute.");
    case "unmute": return t("Done: unmute.");
    case "ban": return t("Done: ban.");
    case "unban": return t("Done: unban.");
    case "close_table": return t("Done: close table.");
    case "announce": return t("Done: announce.");
    default: return t("Done: {what}.", { what: type });
  }
}

function form(kind, title, fields, mod, act) {
  return h("form", { class: "mod-form", id: `mod-${kind}`, dataset: { kind, key: `mod-${kind}` }, onsubmit: (ev) => {
    ev.preventDefault();
    const values = new FormData(ev.currentTarget);
    const { msg } = moderationRequest(kind, values);
    mod.pending = { msg, question: () => moderationRequest(kind, values).question };
    mod.result = null;
    act.redraw();
  } },
    h("h4", {}, title),
    h("div", { class: "fields" }, fields),
    h("button", { type: "submit", dataset: { key: `mod-${kind}-go` } }, title));
}

const nameField = (kind, required = true) => field(`mod-name`, t("Player"), { maxlength: 24, required, id: `mod-${kind}-name`, autocomplete: "off" });
const reasonField = (kind) => field("mod-reason", t("Reason (told to them)"), { maxlength: 200, id: `mod-${kind}-reason`, autocomplete: "off" });
const minutesField = (kind) => field("mod-minutes", t("Minutes (empty: until lifted)"), { type: "number", min: 1, max: 5270400, id: `mod-${kind}-minutes` });

/** The operators' panel in the lobby (null for everyone else). */
export function moderationPanel(acc, mod, act) {
  if (!acc.operator) return null;
  // The `for` of each label must follow the ids the helpers gave the inputs.
  const fix = (el) => {
    for (const label of el.querySelectorAll("label")) {
      const input = label.nextElementSibling;
      if (input && input.id) label.setAttribute("for", input.id);
    }
    return el;
  };
  return fix(h("div", { class: "panel moderation", id: "moderation" },
    h("h3", {}, t("Moderation")),
    mod.pending ? h("div", { class: "confirm", id: "mod-confirm", role: "alertdialog", "aria-labelledby": "mod-question" },
      h("p", { id: "mod-question" }, said(mod.pending.question)),
      h("div", { class: "buttons" },
        h("button", { type: "button", class: "primary", id: "mod-yes", dataset: { key: "mod-yes" },
          onclick: () => act.moderate(mod.pending.msg) }, t("Yes, do it")),
        h("button", { type: "button", id: "mod-no", dataset: { key: "mod-no" },
          onclick: () => { mod.pending = null; act.redraw(); } }, t("Cancel")))) : null,
    mod.result ? h("p", { class: mod.result.ok ? "good" : "error", role: "status", id: "mod-result" }, said(mod.result.text)) : null,
    form("kick", t("Kick"), [nameField("kick"), reasonField("kick")], mod, act),
    form("mute", t("Mute"), [nameField("mute"), minutesField("mute"), reasonField("mute")], mod, act),
    form("ban", t("Ban"), [nameField("ban", false),
      field("mod-network", t("or an address range"), { maxlength: 64, placeholder: "203.0.113.0/24", id: "mod-ban-network", autocomplete: "off" }),
      minutesField("ban"), reasonField("ban")], mod, act),
    form("unmute", t("Unmute"), [nameField("unmute")], mod, act),
    form("unban", t("Unban"), [nameField("unban", false),
      field("mod-network", t("or an address range"), { maxlength: 64, id: "mod-unban-network", autocomplete: "off" })], mod, act),
    form("close_table", t("Close a table"), [field("mod-table", t("Table number"), { type: "number", min: 1, required: true, id: "mod-close-table" }),
      reasonField("close")], mod, act),
    form("announce", t("Announce"), [field("mod-text", t("Announcement"), { maxlength: 300, required: true, id: "mod-announce-text", autocomplete: "off" })], mod, act)));
}
