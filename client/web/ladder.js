// Ratings: the leaderboard of a rule set and a player's profile (ratings with a chart
// of their history, matches, recent results), and how a rated match moved each seat's
// rating. A player's name anywhere on the page links to the profile; the pages are
// addressed by the URL's hash (#ladder, #profile=NAME), so they can be shared.
//
// A rating is shown as the server's `display` (1500 for a new player, never negative),
// marked "?" while `provisional` (docs/protocol.md, "Accounts, ratings and moderation").

import { h, timeView } from "./dom.js";
import { botName, levelName, ratingText, rulesName } from "./state.js";
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

/** A ladder row's or a profile rating's number, from the fields the server sent (an
 * older server sends only mu − 3 sigma). */
function shownRating(r) {
  if (typeof r.display === "number") return ratingText(r.display, r.provisional === true);
  return num(Number(r.rating), { minimumFractionDigits: 1, maximumFractionDigits: 1, useGrouping: false });
}

/** A ladder row's player: a bot level named as one ("bot (hard)") in the page's
 * language; a person's name linking to the profile, a bot account's marked as a bot. */
function ladderName(r) {
  if (r.kind === "bot") return h("span", { class: "bot-level" }, botName(r.name) ?? t("bot ({level})", { level: levelName(r.level) }));
  return [nameLink(r.name), botTag(r)];
}

/** The leaderboard page: `data` is the server's `leaderboard` (or an error); `all`:
 * provisional ratings were asked for too. */
export function ladderPage(data, rules, act, all = false) {
  const rows = data && data.type === "leaderboard" ? data.rows : [];
  return h("section", { class: "panel ladder", id: "ladder", "aria-labelledby": "ladder-title" },
    h("div", { class: "panel-head" },
      h("h2", { id: "ladder-title" }, t("Leaderboard")),
      h("div", { class: "buttons", role: "group", "aria-label": t("Rule set") },
        ["classic", "cardiva"].map((r) => h("button", { type: "button", id: `ladder-${r}`,
          class: r === rules ? "primary" : "", "aria-pressed": String(r === rules), dataset: { key: `ladder-${r}` },
          onclick: () => act.ladder(r) }, r === "classic" ? t("Classic") : t("Cardiva")))),
      h("label", { class: "check" },
        h("input", { type: "checkbox", id: "ladder-provisional", checked: all, dataset: { key: "ladder-provisional" },
          onchange: (e) => act.ladderAll(e.target.checked) }), " ", t("Show provisional ratings"))),
    data && data.type === "error" ? h("p", { class: "error", role: "alert" }, refusalText(data)) : null,
    !data ? h("p", { class: "muted", role: "status" }, t("Loading…")) : null,
    data && data.type === "leaderboard" && !rows.length ? h("p", { class: "muted", id: "ladder-empty" },
      all ? t("Nobody has played a rated match of these rules yet.") : t("Nobody has a settled rating of these rules yet.")) : null,
    rows.length ? h("table", { class: "scores ladder-table", id: "ladder-table" },
      h("thead", {}, h("tr", {},
        h("th", { scope: "col", class: "num" }, t("Rank")), h("th", { scope: "col" }, t("Player")),
        h("th", { scope: "col", class: "num" }, t("Rating")), h("th", { scope: "col", class: "num" }, t("Matches")),
        h("th", { scope: "col", class: "num" }, t("Wins")))),
      h("tbody", {}, rows.map((r) => h("tr", { dataset: { name: r.name }, class: r.provisional ? "provisional" : "" },
        h("td", { class: "num" }, num(r.rank)),
        h("th", { scope: "row" }, ladderName(r)),
        h("td", { class: "num rating", title: r.provisional ? t("provisional: it settles after more rated matches") : null }, shownRating(r)),
        h("td", { class: "num" }, num(r.matches)),
        h("td", { class: "num" }, num(r.wins)))))) : null,
    h("p", { class: "help" }, t("A new player's rating is 1500. It is provisional, marked ?, until about ten rated matches have shown how strong they play; only then does it take a place on the leaderboard.")));
}

const SVG_NS = "http://www.w3.org/2000/svg";

/** An SVG element, as h() makes an HTML one (attributes only: a chart has no handlers). */
function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs)) el.setAttribute(key, String(value));
  for (const child of children) if (child) el.append(child);
  return el;
}

/** The points a rating's chart or sparkline draws: its `display` after each rated match
 * the profile holds, from 1500, where every rating starts, when it holds them all. */
export function historyValues(r) {
  const values = (r.history || []).map((p) => p.display);
  return values.length && values.length === r.matches ? [1500, ...values] : values;
}

/** A rating's history as an inline chart, oldest at the left, the lowest and highest
 * values named on their lines. */
export function ratingChart(values, label) {
  if (!values.length) return null;
  const W = 320, H = 96, PAD = 8;
  let low = Math.min(...values), high = Math.max(...values);
  if (low === high) { low -= 10; high += 10; }
  const x = (i) => (values.length === 1 ? W / 2 : PAD + (i * (W - 2 * PAD)) / (values.length - 1));
  const y = (v) => PAD + ((high - v) * (H - 2 * PAD)) / (high - low);
  const line = values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
  const last = values.length - 1;
  return h("figure", { class: "rating-chart" },
    svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": label, class: "chart" },
      svg("line", { x1: PAD, x2: W - PAD, y1: y(Math.max(...values)), y2: y(Math.max(...values)), class: "grid" }),
      svg("line", { x1: PAD, x2: W - PAD, y1: y(Math.min(...values)), y2: y(Math.min(...values)), class: "grid" }),
      svg("polyline", { points: line, class: "line" }),
      svg("circle", { cx: x(last), cy: y(values[last]), r: 3, class: "dot" })),
    h("figcaption", { class: "muted" }, t("Lowest {low}, highest {high}, now {now}",
      { low: Math.min(...values), high: Math.max(...values), now: values[last] })));
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
        h("tbody", {}, data.ratings.map((r) => h("tr", { dataset: { rules: r.rules } },
          h("th", { scope: "row" }, rulesName(r.rules)), h("td", { class: "num rating" }, shownRating(r)),
          h("td", { class: "num" }, r.provisional ? "—" : num(r.rank)), h("td", { class: "num" }, num(r.matches)),
          h("td", { class: "num" }, num(r.wins)))))) : h("p", { class: "muted" }, t("No rated matches yet.")),
      data.ratings.filter((r) => Array.isArray(r.history) && r.history.length).map((r) =>
        h("div", { class: "rating-history", id: `rating-history-${r.rules}` },
          h("h3", {}, t("Rating history: {rules}", { rules: rulesName(r.rules) })),
          ratingChart(historyValues(r), tn("{name}'s {rules} rating after the last rated match",
            "{name}'s {rules} rating after each of the last {n} rated matches", r.history.length,
            { name, rules: rulesName(r.rules) })))),
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
