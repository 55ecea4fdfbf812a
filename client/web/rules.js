// The table's rules, as the terminal's /rules gives them (client/render/help.py): the rule
// set's key rules with their numbers (docs/rules.md), then the options in force.

import { h } from "./dom.js";
import { t } from "./words.js";

/** Each rule set's summary, line for line the terminal's. A function, so each line
 * goes through t() when drawn (a catalog loaded later still takes it over). */
const SUMMARY = {
  classic: () => [
    t("C1 7 cards each, one deck, 2-6 players."),
    t("C2 the player left of the dealer opens with a club (draws until one comes)."),
    t("C4 match the top card's rank or suit."),
    t("C5/C6 a jack goes on anything but a jack and names the suit to follow."),
    t("C7 cannot or will not play: draw one at a time; pass only after drawing."),
    t("C9 8 skips the next player.  C10 10 reverses the direction."),
    t("C11 7: the next player draws 3 or answers with a 7; sevens stack (3 per 7)."),
    t("C12 ace: you may play one more card matching it (or a jack)."),
    t("C13 first out wins; others score J 25, 7 20, A 15, K/Q 10, others face value."),
    t("C14 going out on a 7 triples, on a jack doubles the others' points."),
    t("C15 empty stock ends the deal; the lowest hand wins it."),
    t("C16 a match is 4 deals; the lowest total wins."),
  ],
  cardiva: () => [
    t("K1/K2 7 cards each; 2 players one deck, 3-4 players two decks."),
    t("K3 first round: a club, not J/7/10/A; no effects; draw until you can."),
    t("K4 match the top card's rank or suit.  K5 or draw 1, then play or pass."),
    t("K7 7: the next player draws 3 or answers with a 7 (3, 6, 9...), then plays on."),
    t("K8 a jack goes on anything and names the suit."),
    t("K9 10 bounces the turn one seat back (another 10 bounces further)."),
    t("K10 ace: everyone else draws 1 and you play again; you cannot go out on an ace."),
    t("K11 pişti: an ordinary card on its exact twin: play again (or draw)."),
    t("K12 points: 2-10 face value, Q/K 10, A 11, J 25.  K13 out on J ×2, on 7 ×3."),
    t("K14 muamele: each 7 left in hand means 3 face-down picks; a picked 7 gives 3 more."),
    t("K15 the match ends when someone reaches 101; the lowest total wins."),
  ],
};

/** Whether the panel is open: kept here because a redraw rebuilds the element. */
let open = false;

/** The options as the terminal lists them: sorted by name, the rule set left out. */
export function optionsLine(options) {
  return Object.keys(options || {}).filter((k) => k !== "rules").sort()
    .map((k) => `${k} ${options[k]}`).join(", ");
}

/** The "Rules" panel of a table with rule set `rules` and `options`. */
export function rulesPanel(rules, options) {
  const lines = (SUMMARY[rules] ?? (() => []))();
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
