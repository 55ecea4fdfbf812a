// The table's rules, as the terminal's /rules gives them (client/render/help.py): the rule
// set's key rules with their numbers (docs/rules.md), then the options in force. The
// lines are the terminal's own: rule_lines.json holds them in English, and each
// language's catalog carries the terminal catalog's translation of them, so both
// clients word a rule alike.

import { h } from "./dom.js";
import { rulesName } from "./state.js";
import { t, tn, translate } from "./words.js";

/** Each rule set's summary lines, in English (rule_lines.json), once loaded. */
let SUMMARY = {};

/** Load the rule lines; the panel shows none when they cannot be had. */
export async function loadRuleLines() {
  try {
    const reply = await fetch("rule_lines.json");
    if (reply.ok) SUMMARY = await reply.json();
  } catch {
    /* a dropped connection: the panel keeps its title and options */
  }
}

/** Whether the panel is open: kept here because a redraw rebuilds the element. */
let open = false;

/** The options in a player's words, as the terminal's /rules lists them
 * (client/render/settings.py): the match, a 10, the empty stock, the decks, the timer. */
export function optionsList(options) {
  const opts = options || {};
  const parts = [];
  const [kind, count] = String(opts.match_end ?? "").split(":");
  if (kind === "deals" && /^\d+$/.test(count)) parts.push(tn("{n} deal", "{n} deals", Number(count)));
  else if (kind === "points" && /^\d+$/.test(count)) parts.push(tn("{n} point", "{n} points", Number(count)));
  else if (opts.match_end) parts.push(String(opts.match_end));
  if (opts.ten === "reverse") parts.push(t("10 reverses"));
  else if (opts.ten === "bounce") parts.push(t("10 bounces"));
  else if (opts.ten) parts.push(`10 ${opts.ten}`);
  if (opts.empty_stock === "end_deal") parts.push(t("stock out ends"));
  else if (opts.empty_stock === "reshuffle") parts.push(t("reshuffle"));
  else if (opts.empty_stock) parts.push(String(opts.empty_stock));
  if (Number.isInteger(opts.decks)) parts.push(tn("{n} deck", "{n} decks", opts.decks));
  if (Number.isInteger(opts.turn_seconds)) parts.push(opts.turn_seconds ? t("{n}s turns", { n: opts.turn_seconds }) : t("untimed"));
  // i18n: what separates the items of a list ("4 deals, 10 reverses").
  return parts.join(t(", "));
}

/** The "Rules" panel of a table with rule set `rules` and `options`. */
export function rulesPanel(rules, options) {
  // Translated when drawn, so a catalog loaded later still takes the lines over.
  const lines = (SUMMARY[rules] ?? []).map((line) => translate(line));
  const opts = optionsList(options);
  // Closed, it is one word in the header's row; open, it drops over the felt, so the
  // table's height (which fits the screen) does not change.
  return h("details", { class: "rules-panel", id: "table-rules", open, dataset: { key: "table-rules" } },
    h("summary", { dataset: { key: "table-rules-summary" },
      onclick: (ev) => { open = !ev.currentTarget.parentElement.open; } }, t("Rules")),
    h("div", { class: "rules-body" },
      h("p", { class: "title", id: "table-rules-title" }, t("Rules: {rules}", { rules: rulesName(rules) })),
      h("ul", { class: "rules-lines" }, lines.map((line) => h("li", {}, line))),
      opts ? h("p", { class: "muted", id: "table-rules-options" }, t("options: {list}", { list: opts })) : null));
}
