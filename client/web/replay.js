// The replay viewer: a finished match move by move and deal by deal, every hand face
// up, with play/pause and a slider. The page has no rules engine, so it asks `replay`
// for its `steps` (docs/protocol.md, `replay_step`): the server sends each position.
// Its address is #replay=ID; the server decides who may see the match.

import { cardView, h, richText, suitLabel, timeView } from "./dom.js";
import { botTag } from "./ladder.js";
import { refusalText } from "./refusals.js";
import { sheetTable } from "./sheet.js";
import { dealHeadline, describeEvent, playerName, rulesName } from "./state.js";
import { num, t, tn } from "./words.js";

const PLAY_MS = 800;

/** The viewer's state; `request(msg)` sends one request, `redraw()` draws the page. */
export function createReplays(request, redraw) {
  const r = {
    match: null, summary: null, error: null, deals: new Map(), deal: 1, index: 0,
    playing: false, timer: null, download: null,
    sheet: null, // the match's score sheet: each deal's first page carries it
    /** Show match `id` (from its first deal), fetching what it has not yet. */
    open(id) {
      if (r.match === id && !r.error) return; // after a refusal (or a lost link), ask again
      r.stop();
      if (r.download) URL.revokeObjectURL(r.download);
      Object.assign(r, { match: id, summary: null, error: null, deals: new Map(), deal: 1, index: 0, download: null, sheet: null });
      r.load(1);
    },
    /** Fetch deal `n`, page after page, until its every step is here; one fetch at a
     * time per deal, so the export waits for the one under way rather than racing it. */
    load(n) {
      if (r.deals.has(n)) return r.deals.get(n).ready;
      const deal = { steps: [], result: null, record: null, complete: false, ready: null };
      r.deals.set(n, deal);
      deal.ready = r.fetchDeal(n, deal);
      return deal.ready;
    },
    async fetchDeal(n, deal) {
      const match = r.match;
      for (;;) {
        const from = Math.max(0, deal.steps.length - 1);
        const reply = await request({ type: "replay", match, deal: n, from, steps: true });
        if (r.match !== match) return deal; // the viewer went on to another match
        if (reply.type !== "replay" || !Array.isArray(reply.steps)) {
          r.error = reply.type === "error" ? reply : { code: "no_steps" };
          r.deals.delete(n);
          redraw();
          return deal;
        }
        r.summary = reply.match;
        if (Array.isArray(reply.sheet)) r.sheet = reply.sheet;
        deal.result = reply.result;
        // The record's pages join up as the terminal's export joins them: the first
        // page's record, then each later page's moves (they start at `from`).
        if (reply.from === 0) deal.record = { ...reply.record, moves: [...reply.record.moves] };
        else deal.record.moves.push(...reply.record.moves);
        deal.steps.push(...(deal.steps.length ? reply.steps.slice(1) : reply.steps));
        deal.complete = deal.steps.length - 1 >= reply.move_count;
        redraw();
        if (deal.complete) return deal;
      }
    },
    /** The export file (docs/replay.md) of the whole match, every deal fetched first;
     * null if a fetch was refused (r.error says why). */
    async exportText() {
      const match = r.match;
      const deals = [];
      await r.load(1); // a click before the first page came waits for it
      for (let n = 1; r.summary && n <= r.summary.deals; n += 1) {
        const deal = await r.load(n);
        if (r.match !== match || r.error || !deal.complete) return null;
        deals.push({ deal_no: n, result: deal.result, record: deal.record });
      }
      return r.summary ? exportFile(r.summary, deals) : null;
    },
    /** Make the Download link's file: a Blob of the export, kept until another match. */
    async prepareDownload() {
      if (r.download) return r.download;
      const match = r.match;
      const text = await r.exportText();
      if (text === null || r.match !== match) return null;
      r.download = URL.createObjectURL(new Blob([text], { type: "application/json" }));
      redraw();
      return r.download;
    },
    current() {
      return r.deals.get(r.deal) ?? null;
    },
    go(index) {
      const deal = r.current();
      if (!deal) return;
      r.index = Math.max(0, Math.min(index, deal.steps.length - 1));
      redraw();
    },
    async goDeal(n) {
      if (!r.summary || n < 1 || n > r.summary.deals) return;
      r.deal = n;
      r.index = 0;
      redraw();
      await r.load(n);
    },
    /** One step on; at a deal's end, the next deal; at the match's end, a stop. */
    async step() {
      const deal = r.current();
      if (!deal) return;
      if (r.index < deal.steps.length - 1) r.go(r.index + 1);
      else if (deal.complete && r.summary && r.deal < r.summary.deals) await r.goDeal(r.deal + 1);
      else if (deal.complete) r.stop();
    },
    play() {
      if (r.playing) return;
      r.playing = true;
      r.timer = setInterval(() => r.step(), PLAY_MS);
      redraw();
    },
    stop() {
      r.playing = false;
      clearInterval(r.timer);
      r.timer = null;
      redraw();
    },
  };
  return r;
}

/** Python's json.dumps(value, ensure_ascii=False, indent=indent), so the file is the
 * terminal's byte for byte; BigInt (a seed past 2**53) is written with every digit. */
function pyJson(value, indent = null, level = 0) {
  if (value === null || value === undefined) return "null";
  if (typeof value === "bigint") return value.toString();
  if (typeof value !== "object") return JSON.stringify(value);
  const pad = (n) => (indent === null ? "" : `\n${" ".repeat(indent * n)}`);
  const sep = indent === null ? ", " : ",";
  const items = Array.isArray(value) ? value.map((v) => pyJson(v, indent, level + 1))
    : Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${pyJson(v, indent, level + 1)}`);
  const [open, close] = Array.isArray(value) ? ["[", "]"] : ["{", "}"];
  if (!items.length) return open + close;
  return open + pad(level + 1) + items.join(sep + pad(level + 1)) + pad(level) + close;
}

/** The export file, laid out as client/replay.py's `save` lays it: the head indented,
 * then one deal a line. */
export function exportFile(summary, deals) {
  const head = pyJson({ format: "pisyedili-match", version: 1, match: summary }, 2).slice(0, -2);
  return `${head},\n  "deals": [\n    ${deals.map((d) => pyJson(d)).join(",\n    ")}\n  ]\n}\n`;
}

/** describeEvent's view of the match: its seats, and nobody's own seat. */
function seatsOf(summary) {
  return { you: null, table: { rules: summary.rules, seats: summary.players.map((p) => ({ ...p })) } };
}

function errorText(error) {
  if (error.code === "no_such_match") return t("This match is not here: it may be unfinished or forgotten, or it was played at a private table you did not sit at.");
  if (error.code === "no_steps") return t("This server cannot send the positions of a replay.");
  return refusalText(error);
}

function hand(cards) {
  return h("span", { class: "mini-hand" }, cards.map((c) => cardView(c, "small")));
}

function board(summary, step, result, state) {
  return h("div", { class: "felt replay-felt" },
    h("ol", { class: "replay-hands", id: "replay-hands" }, summary.players.map((p) =>
      h("li", { class: `replay-seat ${step.turn === p.seat ? "acting" : ""}`, dataset: { seat: String(p.seat) } },
        h("strong", {}, `${num(p.seat + 1)}. ${playerName(p)}`), botTag(p),
        step.turn === p.seat ? h("span", { class: "turn-mark" }, t("to play")) : null,
        h("span", { class: "count" }, tn("{n} card", "{n} cards", step.hands[p.seat].length)),
        hand(step.hands[p.seat])))),
    h("div", { class: "centre" },
      h("span", { class: "count", id: "replay-stock" }, t("{n} in stock", { n: step.stock })),
      step.top ? cardView(step.top, "top") : h("span", { class: "card empty-slot" }),
      step.named_suit ? h("span", { class: "note" }, t("asks for"), " ", suitLabel(step.named_suit)) : null,
      step.penalty ? h("span", { class: "note warn" }, t("+{n} to draw", { n: step.penalty })) : null),
    step.phase === "over" && result ? h("p", { class: "title", id: "replay-result" }, dealHeadline(state, result)) : null);
}

/** The viewer page for match `match`. */
export function replayPage(match, r) {
  const head = h("div", { class: "panel-head" },
    h("h2", { id: "replay-title" }, t("Replay of match #{id}", { id: match })),
    h("label", { class: "share" }, t("Link to share:"), " ",
      h("input", { id: "replay-link", readonly: true, size: 36, value: `${location.origin}${location.pathname}#replay=${match}`,
        dataset: { key: "replay-link" }, onclick: (ev) => ev.currentTarget.select() })),
    r.error ? null : h("a", { id: "replay-download", class: "button", download: `pisyedili-match-${match}.json`,
      href: r.download ?? "#", dataset: { key: "replay-download", ready: r.download ? "yes" : "no" },
      title: t("Save the whole match as a file that pisyedili replay FILE opens"),
      onclick: (ev) => {
        if (r.download) return; // the file is made: the browser saves it
        ev.preventDefault();
        r.prepareDownload().then((url) => { if (url) document.getElementById("replay-download")?.click(); });
      } }, t("Download")));
  if (r.error) {
    return h("section", { class: "panel replay", id: "replay" }, head,
      h("p", { class: "error", role: "alert", id: "replay-error" }, errorText(r.error)));
  }
  const deal = r.current();
  if (!r.summary || !deal || !deal.steps.length) {
    return h("section", { class: "panel replay", id: "replay" }, head, h("p", { class: "muted", role: "status" }, t("Loading…")));
  }
  const s = r.summary;
  const step = deal.steps[Math.min(r.index, deal.steps.length - 1)];
  const state = seatsOf(s);
  const lines = step.move === null ? [t("Deal {n}: the cards as dealt.", { n: r.deal })]
    : step.events.map((ev) => describeEvent(state, ev)).filter(Boolean).map((line) => line.text);
  const last = deal.steps.length - 1;
  return h("section", { class: "panel replay", id: "replay", "aria-labelledby": "replay-title",
    dataset: { deal: String(r.deal), index: String(r.index), steps: String(deal.steps.length) } },
    head,
    h("p", { class: "muted" }, `${rulesName(s.rules)} · `, s.players.map((p, i) => [i ? ", " : "", `${playerName(p)} ${num(p.total)}`]),
      " · ", timeView(s.finished_at)),
    h("div", { class: "replay-controls", role: "group", "aria-label": t("Replay controls") },
      h("button", { type: "button", id: "replay-prev-deal", disabled: r.deal <= 1, dataset: { key: "replay-prev-deal" },
        onclick: () => r.goDeal(r.deal - 1) }, t("◀◀ Deal")),
      h("span", { id: "replay-deal" }, t("Deal {n} of {total}", { n: r.deal, total: s.deals })),
      h("button", { type: "button", id: "replay-next-deal", disabled: r.deal >= s.deals, dataset: { key: "replay-next-deal" },
        onclick: () => r.goDeal(r.deal + 1) }, t("Deal ▶▶")),
      h("button", { type: "button", id: "replay-back", disabled: r.index === 0, dataset: { key: "replay-back" },
        "aria-label": t("One move back"), onclick: () => r.go(r.index - 1) }, "◀"),
      h("button", { type: "button", id: "replay-play", class: "primary", dataset: { key: "replay-play" },
        onclick: () => (r.playing ? r.stop() : r.play()) }, r.playing ? t("Pause") : t("Play")),
      h("button", { type: "button", id: "replay-forward", disabled: r.index >= last && deal.complete, dataset: { key: "replay-forward" },
        "aria-label": t("One move on"), onclick: () => r.step() }, "▶"),
      h("input", { type: "range", id: "replay-slider", min: 0, max: last, value: r.index, dataset: { key: "replay-slider" },
        "aria-label": t("Move"), oninput: (ev) => r.go(Number(ev.currentTarget.value)) }),
      h("span", { id: "replay-position" }, t("move {n} of {total}", { n: r.index, total: last }))),
    h("ul", { class: "log replay-moves", id: "replay-moves" }, lines.map((line) => h("li", {}, richText(line)))),
    board(s, step, deal.result, state),
    sheetView(r, s, step));
}

/** The score sheet so far: the deals before this one, and this one once it is over. */
function sheetView(r, summary, step) {
  if (!r.sheet) return null; // a server that sends no sheet
  const shown = r.sheet.filter((row) => row.deal_no < r.deal || (row.deal_no === r.deal && step.phase === "over"));
  return h("div", { class: "replay-sheet", id: "replay-sheet" },
    h("h3", {}, t("Score sheet")),
    sheetTable(shown, summary.players.map((p) => p.name), { id: "replay-sheet-table", current: r.deal }));
}
