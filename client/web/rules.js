// The table's rules, as the terminal's /rules gives them (client/render/help.py): the rule
// set's key rules with their numbers (docs/rules.md), then the options in force. The
// lines are the terminal's own: rule_lines.json holds them in English, and each
// language's catalog carries the terminal catalog's translation of them, so both
// clients word a rule alike.

import { h } from "./dom.js";
import { t, translate } from "./words.js";

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

/** The options as the terminal lists them: sorted by name, the rule set left out. */
export function optionsLine(options) {
  return Object.keys(options || {}).filter((k) => k !== "rules").sort()
    .map((k) => `${k} ${options[k]}`).join(", ");
}

/** The "Rules" panel of a table with rule set `rules` and `options`. */
export function rulesPanel(rules, options) {
  // Translated when drawn, so a catalog loaded later still takes the lines over.
  const lines = (SUMMARY[rules] ?? []).map((line) => translate(line));
  const opts = optionsLine(options);
  // Closed, it is one word in the header's row; open, it drops over the felt, so the
  // table's height (which fits the screen) does not change.
  return h("details", { class: "rules-panel", id: "table-rules", open, dataset: { key: "table-rules" } },
    h("summary", { dataset: { key: "table-rules-summary" },
      onclick: (ev) => { open = !ev.currentTarget.parentElement.open; } }, t("Rules")),
    h("div", { class: "rules-body" },
      h("p", { class: "title", id: "table-rules-title" }, t("Rules: {rules}", { rules })),
      h("ul", { class: "rules-lines" }, lines.map((line) => h("li", {}, line))),
      opts ? h("p", { class: "muted", id: "table-rules-options" }, t("options: {list}", { list: opts })) : null));
}
