// Ratings: the leaderboard of a rule set and a player's profile (ratings, matches,
// recent results). A player's name anywhere on the page links to the profile; the
// pages are addressed by the URL's hash (#ladder, #profile=NAME), so they can be shared.

import { h, timeView } from "./dom.js";
import { botName, rulesName } from "./state.js";
import { refusalText } from "./refusals.js";
import { num, t, tn } from "./words.js";

/** The mark of a bot account (a program playing on a person's kind of seat: its
 * `bot`), as the server's bots have theirs, so a person always sees who is a bot. */
export function botTag(who) {
  return who && who.bot === true ? [" ", h("span", { class: "tag bot" }, t("bot"))] : null;
}

/** A name that opens its profile; the server's bots (named in the page's words) and
 * empty seats are plain text. */
export function nameLink(name, attrs = {}) {
  const bot = botName(name);
  if (!name || bot) return h("span", attrs, bot ?? name ?? "");
  return h("a", { href: `#profile=${encodeURIComponent(name)}`, class: "name-link",
    title: t("{name}'s profile", { name }), ...attrs }, name);
}

function rating(x) {
  return num(Number(x), { minimumFractionDigits: 1, maximumFractionDigits: 1, useGrouping: false });
}

/** The leaderboard page: `data` is the server's `leaderboard` (or an error). */
export function ladderPage(data, rules, act) {
  const rows = data && data.type === "leaderboard" ? data.rows : [];
  return h("section", { class: "panel ladder", id: "ladder", "aria-labelledby": "ladder-title" },
    h("div", { class: "panel-head" },
      h("h2", { id: "ladder-title" }, t("Leaderboard")),
      h("div", { class: "buttons", role: "group", "aria-label": t("Rule set") },
        ["classic", "cardiva"].map((r) => h("button", { type: "button", id: `ladder-${r}`,
          class: r === rules ? "primary" : "", "aria-pressed": String(r === rules), dataset: { key: `ladder-${r}` },
          onclick: () => act.ladder(r) }, r === "classic" ? t("Classic") : t("Cardiva"))))),
    data && data.type === "error" ? h("p", { class: "error", role: "alert" }, refusalText(data)) : null,
    !data ? h("p", { class: "muted", role: "status" }, t("Loading…")) : null,
    data && data.type === "leaderboard" && !rows.length ? h("p", { class: "muted" }, t("Nobody has played a rated match of these rules yet.")) : null,
    rows.length ? h("table", { class: "scores ladder-table", id: "ladder-table" },
      h("thead", {}, h("tr", {},
        h("th", { scope: "col", class: "num" }, t("Rank")), h("th", { scope: "col" }, t("Player")),
        h("th", { scope: "col", class: "num" }, t("Rating")), h("th", { scope: "col", class: "num" }, t("Matches")),
        h("th", { scope: "col", class: "num" }, t("Wins")))),
      h("tbody", {}, rows.map((r) => h("tr", { dataset: { name: r.name } },
        h("td", { class: "num" }, num(r.rank)),
        h("th", { scope: "row" }, r.kind === "bot" ? botName(r.name) ?? r.name : nameLink(r.name), botTag(r)),
        h("td", { class: "num", title: t("mu {mu}, sigma {sigma}", { mu: rating(r.mu), sigma: rating(r.sigma) }) }, rating(r.rating)),
        h("td", { class: "num" }, num(r.matches)),
        h("td", { class: "num" }, num(r.wins)))))) : null,
    h("p", { class: "help" }, t("The rating is mu − 3 sigma: a cautious estimate of skill, which rises as rated matches show it.")));
}

/** A player's profile page: `data` is the server's `profile` (or an error). */
export function profilePage(name, data) {
  let body;
  if (!data) {
    body = h("p", { class: "muted", role: "status" }, t("Loading…"));
  } else if (data.type !== "profile") {
    body = h("p", { class: data.code === "no_such_player" ? "muted" : "error", id: "profile-error" },
      data.code === "no_such_player" ? t("{name} has no account here: guests are not rated.", { name }) : refusalText(data) || data.type);
  } else {
    body = [
      h("p", { id: "profile-totals" }, tn("{n} match kept", "{n} matches kept", data.matches), ", ",
        tn("{n} won", "{n} won", data.wins)),
      data.ratings.length ? h("table", { class: "scores", id: "profile-ratings" },
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, t("Rules")), h("th", { scope: "col", class: "num" }, t("Rating")),
          h("th", { scope: "col", class: "num" }, t("Rank")), h("th", { scope: "col", class: "num" }, t("Rated matches")),
          h("th", { scope: "col", class: "num" }, t("Wins")))),
        h("tbody", {}, data.ratings.map((r) => h("tr", {},
          h("th", { scope: "row" }, rulesName(r.rules)), h("td", { class: "num" }, rating(r.rating)),
          h("td", { class: "num" }, num(r.rank)), h("td", { class: "num" }, num(r.matches)),
          h("td", { class: "num" }, num(r.wins)))))) : h("p", { class: "muted" }, t("No rated matches yet.")),
      h("h3", {}, t("Recent results")),
      data.recent.length ? h("ol", { class: "match-list", id: "profile-recent" }, data.recent.map((m) =>
        h("li", { dataset: { match: String(m.id) } },
          h("span", { class: `tag ${m.won ? "good" : ""}` }, m.won ? t("won") : t("lost")), " ",
          t("{rules}, {total} points", { rules: rulesName(m.rules), total: m.total }), " ",
          m.rated ? h("span", { class: "tag" }, t("rated")) : null, " ",
          h("span", { class: "muted" }, timeView(m.finished_at)), " · ",
          m.players.map((p, i) => [i ? ", " : "", nameLink(p)]), " · ",
          h("a", { href: `#replay=${m.id}`, class: "replay-link" }, t("replay"))))) : h("p", { class: "muted" }, t("No matches yet.")),
    ];
  }
  return h("section", { class: "panel profile", id: "profile", "aria-labelledby": "profile-title" },
    h("div", { class: "panel-head" },
      h("h2", { id: "profile-title" }, name, botTag(data)),
      h("a", { href: `#history=${encodeURIComponent(name)}`, id: "profile-history" }, t("All their matches"))),
    body);
}
