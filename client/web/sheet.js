// The score sheet (docs/protocol.md, "The score sheet"): a row per finished deal with
// each seat's points and the deal's multiplier (C14, K13) or its stock-out (C15, K6),
// then the match totals (C16, K15). The table and the replay viewer draw it alike.

import { h } from "./dom.js";
import { num, t } from "./words.js";

/** A deal's row, as the protocol keeps the sheet: the `deal_end` event's result, with
 * the update's view's `deal_no`, and its `scores` as the totals after the deal. */
export function sheetRow(result, view) {
  return { deal_no: view.deal_no, reason: result.reason, winner: result.winner,
    multiplier: result.multiplier, points: [...result.points], totals: [...view.scores] };
}

/** What made a deal's scores: its multiplier, or the stock running out. */
function note(row) {
  if (row.multiplier > 1) return `×${num(row.multiplier)}`;
  return row.reason === "stock_out" ? t("stock out") : "";
}

/** The sheet as a table. `names`: each seat's name, in seat order; `current`: the
 * deal to mark (the replay's). */
export function sheetTable(rows, names, { id, current = null } = {}) {
  if (!rows.length) return h("p", { class: "muted sheet-empty", id }, t("No deal of this match has ended yet."));
  const last = rows[rows.length - 1];
  const won = t("won the deal");
  return h("table", { class: "scores sheet", id },
    h("thead", {}, h("tr", {},
      h("th", { scope: "col" }, t("Deal")),
      names.map((name) => h("th", { scope: "col", class: "num" }, name)),
      h("th", { scope: "col", class: "sheet-note" }, t("Note")))),
    h("tbody", {}, rows.map((row) => h("tr", {
      class: row.deal_no === current ? "current" : null, dataset: { deal: String(row.deal_no) },
      "aria-current": row.deal_no === current ? "true" : null },
    h("th", { scope: "row" }, num(row.deal_no)),
    names.map((_, seat) => h("td", { class: row.winner === seat ? "num winner" : "num" },
      num(row.points[seat]),
      row.winner === seat ? h("span", { class: "won", title: won, "aria-label": won }, " ★") : null)),
    h("td", { class: "sheet-note" }, note(row))))),
    h("tfoot", {}, h("tr", {},
      h("th", { scope: "row" }, t("Total")),
      names.map((_, seat) => h("td", { class: "num" }, num(last.totals[seat]))),
      h("td", {}))));
}
