// Finished matches: yours, a player's, and the latest public ones, a page at a time;
// each links to its replay (#replay=ID), which the server shows to whoever may see it.

import { h, timeView } from "./dom.js";
import { botTag, nameLink } from "./ladder.js";
import { refusalText } from "./refusals.js";
import { rulesName } from "./state.js";
import { num, t, tn } from "./words.js";

export const HISTORY_PAGE = 20;

function matchRow(m) {
  const winners = new Set(m.winners);
  return h("li", { class: "match-row", dataset: { match: String(m.id) } },
    h("a", { href: `#replay=${m.id}`, class: "replay-link", dataset: { match: String(m.id) } },
      t("Match #{id}", { id: m.id })), " ",
    h("span", { class: "muted" }, `${rulesName(m.rules)} · `, tn("{n} deal", "{n} deals", m.deals), " · ", timeView(m.finished_at)),
    m.private ? h("span", { class: "tag" }, t("private")) : null,
    h("div", { class: "match-players" }, m.players.map((p, i) => [i ? " · " : "",
      winners.has(p.seat) ? h("strong", {}, nameLink(p.name), " ★") : nameLink(p.name), botTag(p),
      ` ${num(p.total)}`])));
}

/** The matches page. `which` is {of, name}; `data` the server's `history` (or an error). */
export function historyPage(which, data, act) {
  const tabs = [["mine", t("Mine")], ["recent", t("Latest public")]];
  const title = which.of === "player" ? t("{name}'s matches", { name: which.name })
    : which.of === "mine" ? t("Your matches") : t("Latest public matches");
  const matches = data && data.type === "history" ? data.matches : [];
  const offset = data && data.type === "history" ? data.offset : 0;
  const total = data && data.type === "history" ? data.total : 0;
  return h("section", { class: "panel history", id: "history", "aria-labelledby": "history-title" },
    h("div", { class: "panel-head" },
      h("h2", { id: "history-title" }, title),
      h("div", { class: "buttons" }, tabs.map(([of, label]) => h("a", { href: `#history-${of}`, id: `history-${of}`,
        class: `tab ${which.of === of ? "current" : ""}`, "aria-current": which.of === of ? "page" : null }, label)))),
    !data ? h("p", { class: "muted", role: "status" }, t("Loading…")) : null,
    data && data.type === "error" ? h("p", { class: "error", role: "alert" }, refusalText(data)) : null,
    data && data.type === "history" && !matches.length ? h("p", { class: "muted", id: "history-empty" }, t("No finished matches.")) : null,
    matches.length ? h("ol", { class: "match-list", id: "match-list", start: offset + 1 }, matches.map(matchRow)) : null,
    total > matches.length ? h("div", { class: "pager" },
      h("button", { type: "button", disabled: offset === 0, dataset: { key: "history-prev" },
        onclick: () => act.historyPage(Math.max(0, offset - HISTORY_PAGE)) }, t("Previous")),
      h("span", {}, t("{from}-{to} of {total}", { from: offset + 1, to: offset + matches.length, total })),
      h("button", { type: "button", disabled: offset + matches.length >= total, dataset: { key: "history-next" },
        onclick: () => act.historyPage(offset + HISTORY_PAGE) }, t("Next"))) : null);
}
