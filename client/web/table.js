// The table: seats round the felt, the pile and the stock, your hand as buttons, the
// moves the server offers, the waiting room's seat controls, deal and match results.
// Views only: drawn from the state, acting through `act`.

import { cardName, cardText, jackSuits, playable, sortHand, SUIT_SYMBOLS, suitName } from "./cards.js";
import { cardBack, cardButton, cardView, fillNodes, h, richText, suitLabel } from "./dom.js";
import { nameLink } from "./ladder.js";
import { optionsText } from "./lobby.js";
import { inviteForm, quickNote } from "./pairing.js";
import { rulesPanel } from "./rules.js";
import { sheetTable } from "./sheet.js";
import {
  dealHeadline, hasFeature, levelName, matchProgress, mySeat, myTurn, prompt, ratingChangeText, seatLabel, seatName, rulesName, seatsAfter, tableName, winnersText,
} from "./state.js";
import { num, said, t, tn } from "./words.js";

const LEVELS = ["easy", "medium", "hard"];

function heldByBot(state) {
  const me = mySeat(state);
  return me !== null && state.table.phase === "playing" && Boolean(state.table.seats[me].held_by_bot);
}

export function timeLeft(deadlineAt, now) {
  const s = Math.max(0, Math.ceil((deadlineAt - now) / 1000));
  return `${num(Math.floor(s / 60))}:${num(s % 60, { minimumIntegerDigits: 2, useGrouping: false })}`;
}

/** The seat whose clock runs: the picking seat in muamele, else the seat to act. */
function actingSeat(view) {
  if (!view || view.phase === "over") return null;
  if (view.phase === "muamele" && view.muamele) return view.muamele.seat;
  return view.turn;
}

function timer(state, seat, now) {
  if (state.deadlineAt === null || actingSeat(state.view) !== seat) return null;
  return h("span", { class: "timer", role: "timer", "aria-label": t("time left"),
    dataset: { deadline: String(state.deadlineAt) } }, timeLeft(state.deadlineAt, now));
}

function seatBadges(state, info) {
  const tbl = state.table;
  const out = [];
  const host = info.kind === "human" && info.player === tbl.host;
  if (host) out.push(h("span", { class: "tag host" }, t("host")));
  if (info.kind === "bot") out.push(h("span", { class: "tag bot" }, t("bot · {level}", { level: levelName(info.level ?? "medium") })));
  // A bot account: a program on a player's seat, shown as a bot all the same.
  if (info.kind === "human" && info.bot === true) out.push(h("span", { class: "tag bot" }, t("bot")));
  if (info.kind === "human" && info.connected === false) out.push(h("span", { class: "tag warn" }, t("offline")));
  if (info.held_by_bot) {
    const mine = info.seat === mySeat(state);
    out.push(h("span", { class: "tag warn" }, mine ? t("a bot plays for you") : t("a bot plays for them")));
  }
  // The host's "Start" is its ready (docs/protocol.md, start): it is never waited for.
  if (tbl.phase === "waiting" && info.kind !== "open" && !host) {
    out.push(h("span", { class: `tag ${info.ready ? "good" : ""}` }, info.ready ? t("ready") : t("not ready")));
  }
  if (tbl.phase === "over" && info.rematch !== undefined) {
    out.push(h("span", { class: `tag ${info.rematch ? "good" : "warn"}` }, info.rematch ? t("again!") : t("declined")));
  }
  return out;
}

function seatBox(state, seat, now, mine) {
  const info = state.table.seats[seat];
  const v = state.view;
  const count = v && v.hand_counts ? v.hand_counts[seat] : null;
  const total = v && v.scores ? v.scores[seat] : null;
  const acting = actingSeat(v) === seat;
  const name = info.kind === "open" ? t("open seat") : seatLabel(state, seat);
  const backs = [];
  if (!mine && count) for (let i = 0; i < Math.min(count, 12); i += 1) backs.push(cardBack("mini"));
  return h("div", {
    class: `seat ${mine ? "mine" : ""} ${acting ? "acting" : ""} kind-${info.kind}`,
    dataset: { seat: String(seat), key: `seat-${seat}` },
    "aria-label": acting ? t("seat {n}: {name}, to play", { n: seat + 1, name }) : t("seat {n}: {name}", { n: seat + 1, name }),
    role: "group",
  },
    h("div", { class: "seat-head" },
      h("span", { class: "seat-no", "aria-hidden": "true" }, num(seat + 1)),
      h("strong", { class: "seat-name" }, info.kind === "human"
        ? [nameLink(info.name), name !== info.name ? ` (${num(seat + 1)})` : ""] : name, mine ? ` ${t("(you)")}` : ""),
      acting ? h("span", { class: "turn-mark" }, t("to play")) : null,
      timer(state, seat, now)),
    h("div", { class: "seat-tags" }, seatBadges(state, info)),
    count !== null && !mine
      ? h("div", { class: "seat-cards" }, h("span", { class: "fan", "aria-hidden": "true" }, backs),
          h("span", { class: "count" }, tn("{n} card", "{n} cards", count)))
      : null,
    total !== null ? h("div", { class: "seat-score" }, t("total {n}", { n: total })) : null);
}

function centre(state) {
  const v = state.view;
  if (!v) return h("div", { class: "centre empty" }, h("p", { class: "muted" }, t("The cards are dealt when the host starts.")));
  const pile = (v.pile || []).slice(-3);
  const notes = [];
  if (v.named_suit) notes.push(h("span", { class: "note", id: "named-suit" }, t("asks for"), " ", suitLabel(v.named_suit)));
  if (v.penalty) notes.push(h("span", { class: "note warn", id: "penalty" }, t("+{n} to draw", { n: v.penalty })));
  if (v.must_follow === "ace") notes.push(h("span", { class: "note" }, t("ace: play on or pass (C12, K10)")));
  if (v.must_follow === "pisti") notes.push(h("span", { class: "note" }, t("pişti: play on (K11)")));
  if (v.first_round && v.phase === "play") {
    notes.push(h("span", { class: "note" }, v.rules === "cardiva" ? t("opening lap: clubs only (K3)") : t("opening: a club (C2)")));
  }
  notes.push(directionNote(state));
  return h("div", { class: "centre" },
    h("div", { class: "stock", "aria-label": tn("{n} card in the stock", "{n} cards in the stock", v.stock) },
      v.stock ? cardBack("stock-card") : h("span", { class: "card empty-slot" }),
      h("span", { class: "count", id: "stock-count" }, t("{n} in stock", { n: v.stock }))),
    h("div", { class: "pile", id: "pile", "aria-label": v.top ? t("top of the pile: {card}", { card: cardName(v.top) }) : t("the pile is empty") },
      pile.length
        ? pile.map((c, i) => cardView(c, i === pile.length - 1 ? "top" : `under under-${pile.length - 1 - i}`))
        : h("span", { class: "card empty-slot" }, t("pile"))),
    h("div", { class: "notes" }, notes));
}

/** Which way play goes round the felt: our seat is at the bottom and the others run
 * left to right in seat order after ours, so up the seats is clockwise on screen. */
function clockwise(view) {
  return view.direction !== -1;
}

/** How many seats the deal is played by. */
function seatsIn(state) {
  return (state.view && state.view.players) || state.table.seats.length;
}

/** None with two players: either way round the other is next, so a 10 changes nothing
 * there (C12a) and a way shown would only seem to turn. */
function directionNote(state) {
  const v = state.view;
  const n = seatsIn(state);
  if (n === 2) return null;
  const next = v.turn === null || v.turn === undefined ? null : (v.turn + (clockwise(v) ? 1 : -1) + n) % n;
  const way = clockwise(v) ? t("clockwise") : t("anticlockwise");
  return h("span", { class: "note direction-note", id: "direction-note" },
    h("span", { class: "arrow", "aria-hidden": "true" }, clockwise(v) ? "↻" : "↺"), " ",
    next === null ? t("play goes {way}", { way }) : t("play goes {way}; then {next}", { way, next: seatName(state, next) }));
}

/** The arrow round the felt: it shows the way play goes, behind everything (with more
 * than two players: see `directionNote`). */
function directionRing(state) {
  const v = state.view;
  if (!v || v.phase === "over" || seatsIn(state) === 2) return null;
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("class", `direction-ring ${clockwise(v) ? "cw" : "ccw"}`);
  svg.setAttribute("id", "direction-ring");
  svg.setAttribute("viewBox", "0 0 100 100");
  svg.setAttribute("preserveAspectRatio", "none");
  svg.setAttribute("aria-hidden", "true");
  svg.dataset.direction = clockwise(v) ? "cw" : "ccw";
  // Four arcs of one ellipse, drawn clockwise, with arrowheads on the left and right
  // only (the seats and the hand hold the top and the bottom); the anticlockwise ring
  // is the same drawing mirrored (CSS).
  const arcs = ["M 50 4 A 46 46 0 0 1 96 50", "M 96 50 A 46 46 0 0 1 50 96",
    "M 50 96 A 46 46 0 0 1 4 50", "M 4 50 A 46 46 0 0 1 50 4"];
  for (const d of arcs) {
    const path = document.createElementNS(ns, "path");
    path.setAttribute("d", d);
    path.setAttribute("class", "arc");
    svg.append(path);
  }
  const heads = [[96, 50, 90], [4, 50, 270]];
  for (const [x, y, turn] of heads) {
    const head = document.createElementNS(ns, "path");
    head.setAttribute("d", "M -2.2 -2.6 L 2.2 0 L -2.2 2.6 Z");
    head.setAttribute("class", "head");
    head.setAttribute("transform", `translate(${x} ${y}) rotate(${turn})`);
    svg.append(head);
  }
  return svg;
}

/** The suit picker for a jack (C5, K8): only the suits the server offers. */
function suitPicker(state, ui, act) {
  const suits = jackSuits(ui.jack, state.moves);
  return h("div", { class: "suit-picker", role: "dialog", "aria-modal": "false", "aria-labelledby": "suit-title", id: "suit-picker" },
    h("p", { id: "suit-title" }, t("{card}: which suit do you name?", { card: cardText(ui.jack) })),
    h("div", { class: "suit-buttons" },
      suits.filter((s) => s !== null).map((s) => h("button", {
        type: "button", class: `suit-choice suit-${s}`, dataset: { suit: s, key: `suit-${s}` },
        "aria-label": suitName(s), "aria-keyshortcuts": s,
        onclick: () => act.move({ kind: "play", card: ui.jack, suit: s }),
      }, h("span", { "aria-hidden": "true", class: s === "d" || s === "h" ? "red" : "black" }, SUIT_SYMBOLS[s]), ` ${suitName(s)}`)),
      h("button", { type: "button", class: "cancel", dataset: { key: "suit-cancel" }, onclick: () => act.cancelJack() }, t("Cancel"))));
}

/** How many of each card the hand holds that we drew last (two decks: a card twice). */
function drawnCounts(state, hand) {
  const left = {};
  for (const card of hand) left[card] = (left[card] || 0) + 1;
  const out = {};
  for (const card of state.drawn) {
    if ((left[card] || 0) > (out[card] || 0)) out[card] = (out[card] || 0) + 1;
  }
  return out;
}

function handArea(state, ui, act) {
  const v = state.view;
  if (!v || !Array.isArray(v.hand)) return null;
  const mine = myTurn(state);
  const legal = mine ? playable(state.moves) : new Set();
  const shown = sortHand(v.hand, ui.order);
  const drawn = drawnCounts(state, v.hand);
  const total = {};
  for (const card of shown) total[card] = (total[card] || 0) + 1;
  const seen = {};
  const buttons = shown.map((card) => {
    seen[card] = (seen[card] || 0) + 1; // two decks: the same card twice (K1)
    const ok = legal.has(card);
    // The last copies of a card are the newest: a draw appends to the hand.
    const isNew = (drawn[card] || 0) > total[card] - seen[card];
    const button = cardButton(card, {
      legal: ok,
      key: `card-${card}-${seen[card]}`,
      label: `${ok ? t("{card}, playable", { card: cardName(card) }) : cardName(card)}${isNew ? t(", just drawn") : ""}`,
      onclick: () => act.playCard(card),
    });
    if (isNew) {
      button.classList.add("drawn");
      button.append(h("span", { class: "new-mark", "aria-hidden": "true" }, t("new")));
    }
    return button;
  });
  return h("div", { class: "hand-area" },
    // A long hand overlaps its cards rather than take a second row (no scrolling).
    h("div", { class: `hand ${shown.length > 11 ? "many" : ""}`, id: "hand", role: "group",
      "aria-label": ui.order === "suit" ? tn("your hand, {n} card, by suit", "your hand, {n} cards, by suit", shown.length)
        : tn("your hand, {n} card, by rank", "your hand, {n} cards, by rank", shown.length) }, buttons),
    shown.length > 1 ? h("button", { type: "button", class: "sort", id: "sort", dataset: { key: "sort" },
      onclick: () => act.sort(ui.order === "suit" ? "rank" : "suit") }, ui.order === "suit" ? t("Sort by rank") : t("Sort by suit")) : null);
}

function muameleSpread(state, act) {
  const v = state.view;
  if (!v || v.phase !== "muamele" || !v.muamele) return null;
  const picks = new Set(myTurn(state) ? state.moves.filter((m) => m.kind === "pick").map((m) => m.position) : []);
  const m = v.muamele;
  const cards = [];
  for (let i = 0; i < m.spread; i += 1) {
    const ok = picks.has(i);
    cards.push(h("button", {
      type: "button", class: `card back pick ${ok ? "legal" : "idle"}`,
      "aria-label": t("face-down card {n}", { n: i + 1 }), "aria-disabled": ok ? null : "true",
      dataset: { position: String(i), key: `pick-${i}` },
      onclick: () => ok && act.move({ kind: "pick", position: i }),
    }, h("span", { class: "pick-no", "aria-hidden": "true" }, num(i + 1))));
  }
  return h("div", { class: "muamele", id: "muamele" },
    h("p", {}, m.seat === mySeat(state)
      ? tn("Muamele (K14): you pick {picks} of {n} face-down card.", "Muamele (K14): you pick {picks} of {n} face-down cards.", m.spread, { picks: m.picks })
      : tn("Muamele (K14): {who} picks {picks} of {n} face-down card.", "Muamele (K14): {who} picks {picks} of {n} face-down cards.", m.spread,
        { who: seatName(state, m.seat), picks: m.picks })),
    h("div", { class: "spread", role: "group", "aria-label": t("the face-down spread") }, cards));
}

/** A phone's width (style.css's narrowest layout), where the move box shares its row
 * with Draw and Pass: room for a word of hint, not the whole one. */
function narrow() {
  return window.matchMedia("(max-width: 30rem)").matches;
}

function moveControls(state, ui, act) {
  const v = state.view;
  if (!v || v.phase === "over" || mySeat(state) === null) return null;
  const mine = myTurn(state);
  const kinds = new Set(mine ? state.moves.map((m) => m.kind) : []);
  const input = h("input", { id: "move-input", name: "move", autocomplete: "off", spellcheck: "false",
    placeholder: narrow() ? t("a move…") : t("type 7h, Jh>s, d, p…"), "aria-label": t("Type a move"),
    dataset: { key: "move-input" } });
  return h("div", { class: "actions" },
    h("button", { type: "button", id: "draw", class: "action", disabled: !kinds.has("draw"),
      "aria-keyshortcuts": "d", dataset: { key: "draw" }, onclick: () => act.move({ kind: "draw" }) },
      v.penalty && kinds.has("draw") ? t("Draw {n}", { n: v.penalty }) : t("Draw"), h("kbd", {}, "D")),
    h("button", { type: "button", id: "pass", class: "action", disabled: !kinds.has("pass"),
      "aria-keyshortcuts": "p", dataset: { key: "pass" }, onclick: () => act.move({ kind: "pass" }) },
      t("Pass"), h("kbd", {}, "P")),
    h("form", { class: "move-form", onsubmit: (ev) => {
      ev.preventDefault();
      const field = ev.currentTarget.elements.move; // the element on screen (dom.js keeps it)
      const text = field.value;
      field.value = "";
      act.typed(text);
    } },
      input, h("button", { type: "submit", dataset: { key: "move-send" } }, t("Send"))),
    ui.moveError ? h("p", { class: "error", role: "alert" }, said(ui.moveError)) : null);
}

function waitingControls(state, ui, act, now) {
  const tbl = state.table;
  if (tbl.phase !== "waiting") return null;
  const me = mySeat(state);
  const host = state.you && state.you.host;
  const rows = tbl.seats.map((s) => {
    const actions = [];
    if (s.kind === "open") {
      actions.push(h("button", { type: "button", class: "sit", dataset: { key: `sit-${s.seat}` },
        onclick: () => act.send({ type: "sit", seat: s.seat }) }, me === null ? t("Sit here") : t("Move here")));
      if (host) {
        const level = h("select", { "aria-label": t("bot level for seat {n}", { n: s.seat + 1 }), class: "bot-level",
          dataset: { key: `level-${s.seat}` } }, LEVELS.map((l) => h("option", { value: l, selected: l === "medium" }, levelName(l))));
        actions.push(level, h("button", { type: "button", class: "add-bot", dataset: { key: `bot-${s.seat}` },
          onclick: (ev) => act.send({ type: "add_bot", seat: s.seat,
            level: ev.currentTarget.parentElement.querySelector(".bot-level").value }) }, t("Add a bot")));
      }
    } else if (s.kind === "bot" && host) {
      actions.push(h("button", { type: "button", class: "remove-bot", dataset: { key: `unbot-${s.seat}` },
        onclick: () => act.send({ type: "remove_bot", seat: s.seat }) }, t("Remove the bot")));
    }
    return h("li", { class: "seat-row", dataset: { seat: String(s.seat), key: `seatrow-${s.seat}` } },
      h("span", { class: "seat-no" }, num(s.seat + 1)),
      h("span", { class: "seat-name" }, s.kind === "open" ? t("open") : s.name, s.seat === me ? ` ${t("(you)")}` : ""),
      h("span", { class: "seat-tags" }, seatBadges(state, s)),
      h("span", { class: "seat-actions" }, actions));
  });
  const mineInfo = me === null ? null : tbl.seats[me];
  const code = h("strong", { class: "code", id: "invite-code" }, tbl.code);
  return h("div", { class: "panel waiting", id: "waiting" },
    h("h3", {}, t("Waiting for players")),
    // Offline (`pisyedili play --web`) nobody else can come: no code to share.
    tbl.code && !ui.offline ? h("p", {}, fillNodes(tbl.private ? t("Invite code: {code} (this table is private: share the code)")
      : t("Invite code: {code}"), { code })) : null,
    quickNote(state, now, timeLeft),
    h("ul", { class: "seat-list" }, rows),
    inviteForm(state, ui, act),
    h("div", { class: "buttons" },
      mineInfo && !host ? h("button", { type: "button", id: "ready", class: "primary", dataset: { key: "ready" },
        "aria-pressed": mineInfo.ready ? "true" : "false",
        onclick: () => act.send({ type: "ready", ready: !mineInfo.ready }) }, mineInfo.ready ? t("Not ready") : t("Ready")) : null,
      host ? h("button", { type: "button", id: "start", class: "primary", dataset: { key: "start" },
        onclick: () => act.send({ type: "start" }) }, t("Start the match")) : null,
      me !== null ? h("button", { type: "button", id: "stand", dataset: { key: "stand" },
        onclick: () => act.send({ type: "stand" }) }, t("Stand up")) : null));
}

/** The deal's result: each seat's hand and points, the match's sheet so far and, under
 * them, its buttons (`buttons`: the table's own, then Close). */
function dealResult(state, act, buttons) {
  const v = state.view;
  if (!v || v.phase !== "over" || !v.result) return null;
  const r = v.result;
  const n = v.players;
  const rows = [];
  for (let seat = 0; seat < n; seat += 1) {
    const hand = sortHand(r.hands[seat] || []);
    rows.push(h("tr", { class: seat === r.winner ? "winner" : "" },
      h("th", { scope: "row" }, seatName(state, seat)),
      h("td", { class: "hand-cell" }, hand.length ? h("span", { class: "mini-hand" }, hand.map((c) => cardView(c, "small"))) : h("span", { class: "muted" }, t("out"))),
      h("td", { class: "num" }, `+${num(r.points[seat])}`),
      h("td", { class: "num" }, num(v.scores[seat]))));
  }
  const over = state.table.phase === "over" || state.matchEnd;
  return h("div", { class: "panel result", id: "deal-result", role: "region", "aria-label": t("deal result") },
    h("h3", {}, dealHeadline(state, r)),
    h("div", { class: "result-scores" }, h("table", { class: "scores" },
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, t("Seat")), h("th", { scope: "col" }, t("Hand left")),
        h("th", { scope: "col", class: "num" }, t("Points")), h("th", { scope: "col", class: "num" }, t("Total")))),
      h("tbody", {}, rows))),
    h("h4", { class: "sheet-title" }, t("Score sheet")),
    h("div", { class: "sheet-box" }, sheetTable(state.sheet, seatNames(state), { id: "deal-sheet" })),
    over ? null : h("p", { class: "muted" }, t("The next deal comes in a few seconds.")),
    h("div", { class: "buttons" }, buttons,
      h("button", { type: "button", class: "quiet", id: "result-close", dataset: { key: "result-close" },
        onclick: () => act.closeResult() }, t("Close"))));
}

/** Every seat's name in seat order, as the log calls them ("you" for ours). */
function seatNames(state) {
  return state.table.seats.map((s) => seatName(state, s.seat));
}

/** The "Score sheet" button and, open, the sheet over the felt: the match's every
 * deal so far, for players and spectators alike. */
function sheetButton(state, ui, act) {
  if (!state.match) return null; // no match yet: nothing to score
  return h("span", { class: "sheet-control" },
    h("button", { type: "button", id: "sheet-toggle", class: "quiet toggle", "aria-expanded": ui.sheetOpen ? "true" : "false",
      "aria-controls": "score-sheet", dataset: { key: "sheet-toggle" }, onclick: () => act.toggleSheet() }, t("Score sheet")),
    ui.sheetOpen ? h("div", { class: "panel sheet-panel", id: "score-sheet", role: "region", "aria-label": t("Score sheet") },
      h("div", { class: "sheet-box" }, sheetTable(state.sheet, seatNames(state), { id: "score-sheet-table" })),
      h("button", { type: "button", class: "quiet", id: "sheet-close", dataset: { key: "sheet-close" },
        onclick: () => act.toggleSheet() }, t("Close"))) : null);
}

function matchResult(state, act) {
  const tbl = state.table;
  const end = state.matchEnd;
  if (tbl.phase !== "over" && !end) return null;
  const totals = end ? end.totals : (state.view ? state.view.scores : []);
  const winners = end ? end.winners : [];
  const order = totals.map((p, seat) => [p, seat]).sort((a, b) => a[0] - b[0]);
  const seated = mySeat(state) !== null;
  const canRematch = tbl.phase === "over" && seated && hasFeature(state, "rematch");
  const agreed = state.rematch ? state.rematch.agreed.map((s) => seatName(state, s)) : [];
  return h("div", { class: "panel match-result", id: "match-result", role: "region", "aria-label": t("match result") },
    h("h3", {}, winners.length ? t("Match over: {winners} won", { winners: winnersText(state, winners) }) : t("Match over")),
    h("ol", { class: "totals" }, order.map(([p, seat]) => h("li", {}, `${seatName(state, seat)}: ${num(p)}`))),
    ratingChanges(state),
    agreed.length ? h("p", {}, t("Playing again: {names}", { names: agreed.join(", ") })) : null,
    canRematch ? h("div", { class: "buttons" },
      h("button", { type: "button", id: "rematch", class: "primary", dataset: { key: "rematch" },
        onclick: () => act.send({ type: "rematch", agree: true }) }, t("Play again")),
      h("button", { type: "button", id: "no-rematch", dataset: { key: "no-rematch" },
        onclick: () => act.send({ type: "rematch", agree: false }) }, t("No more"))) : null);
}

/** How the rated match moved each seat's rating, once the server has rated it. */
function ratingChanges(state) {
  const told = state.ratingChange;
  if (!told || told.table !== state.table.id) return null;
  const me = mySeat(state);
  return h("div", { id: "rating-changes" },
    h("h4", {}, t("Ratings")),
    h("ul", { class: "rating-changes" }, told.seats.map((seat) => {
      const change = seat.after - seat.before;
      return h("li", { class: seat.seat === me ? "mine" : "", dataset: { seat: String(seat.seat) } },
        h("span", { class: change > 0 ? "up" : change < 0 ? "down" : "" }, ratingChangeText(seat, state)));
    })));
}

/** Sound and notices, off until turned on (notice.js remembers the choice). */
function noticeToggles(ui, act) {
  const { sound, notify } = ui.prefs;
  return h("span", { class: "toggles" },
    h("button", { type: "button", id: "sound-toggle", class: "quiet toggle", "aria-pressed": sound ? "true" : "false",
      dataset: { key: "sound-toggle" }, onclick: () => act.toggleSound() },
      h("span", { "aria-hidden": "true" }, "♪ "), t("Sound")),
    typeof Notification === "undefined" ? null
      : h("button", { type: "button", id: "notify-toggle", class: "quiet toggle", "aria-pressed": notify ? "true" : "false",
          title: Notification.permission === "denied" ? t("This browser blocks notices from this page.") : t("A notice on your turn while this tab is hidden"),
          dataset: { key: "notify-toggle" }, onclick: () => act.toggleNotify() }, t("Notify me")));
}

/** The last few lines of the log, on the felt: on a phone the log is far below. Only
 * this table's: the lines of a table left before would read as moves made here. */
function recentMoves(state) {
  const lines = state.log.filter((e) => e.seq > state.tableLogFrom && e.cls !== "dim").slice(-3);
  if (!lines.length) return null;
  return h("ol", { class: "recent", id: "recent", "aria-hidden": "true" },
    lines.map((e) => h("li", { class: e.cls, dataset: { key: `recent-${e.seq}` } }, richText(e.text))));
}

function tableHeader(state, ui, act) {
  const tbl = state.table;
  const spect = state.table.spectator_count ?? tbl.spectators.length;
  return h("div", { class: "table-head" },
    h("h2", { id: "table-title" }, tableName(tbl)),
    h("span", { class: "muted" }, ` #${num(tbl.id)} · ${rulesName(tbl.rules)}`, matchProgress(state) ? ` · ${matchProgress(state)}` : ""),
    tbl.code && tbl.phase !== "waiting" && !ui.offline ? h("span", { class: "muted" }, ` · ${t("code {code}", { code: tbl.code })}`) : null,
    tbl.rated ? h("span", { class: "tag rated", id: "table-rated" }, t("rated")) : null,
    spect ? h("span", { class: "muted", title: tbl.spectators.join(", ") }, ` · ${t("{n} watching", { n: spect })}`) : null,
    state.you && state.you.spectator ? h("span", { class: "tag" }, t("you are watching")) : null,
    spect ? h("p", { class: "watchers", id: "watchers" }, t("Watching:"), " ",
      tbl.spectators.map((n, i) => [i ? ", " : "", nameLink(n)]),
      spect > tbl.spectators.length ? ` ${t("and {n} more", { n: spect - tbl.spectators.length })}` : "") : null,
    h("span", { class: "muted options", id: "table-options" }, optionsText(tbl.options || {})),
    rulesPanel(tbl.rules, tbl.options || (state.view || {}).options),
    sheetButton(state, ui, act),
    noticeToggles(ui, act),
    h("button", { type: "button", id: "leave", class: "leave", dataset: { key: "leave" },
      onclick: () => act.leave() }, t("Leave")));
}

/** The whole table screen. */
export function tableScreen(state, ui, act, now) {
  const n = state.table.seats.length;
  const me = mySeat(state);
  const others = me === null ? [...Array(n).keys()] : seatsAfter(n, me).slice(0, -1);
  const turnClass = myTurn(state) ? "my-turn" : "";
  // Once a deal is over its result takes the middle of the felt, and the hand (now in
  // the result) and the move controls step aside until the next deal. Until it is
  // closed, the result lies over the felt, within the window (`fitResults`).
  const over = Boolean(state.view && state.view.phase === "over" && state.view.result);
  if (!over) ui.resultClosed = false; // the next deal's result shows again
  const shown = over && !ui.resultClosed;
  const comeBack = heldByBot(state) ? h("button", { type: "button", id: "come-back", class: "primary",
    dataset: { key: "come-back" }, onclick: () => act.comeBack() }, t("I am back: take my seat")) : null;
  return h("section", { class: `table-screen ${turnClass}`, "aria-labelledby": "table-title" },
    tableHeader(state, ui, act),
    h("div", { class: "felt" },
      directionRing(state),
      me === null ? recentMoves(state) : null,
      h("div", { class: `opponents n${others.length}` }, others.map((s) => seatBox(state, s, now, false))),
      over ? null : centre(state),
      shown ? h("div", { class: "results", id: "results" }, matchResult(state, act), dealResult(state, act, comeBack))
        : matchResult(state, act),
      me !== null ? h("div", { class: "me" },
        seatBox(state, me, now, true),
        recentMoves(state), // by the hand: in view where the hand is, on a phone
        shown ? null : comeBack)
        : muameleSpread(state, act),
      me !== null && !over ? dock(state, ui, act) : null),
    waitingControls(state, ui, act, now));
}

/** A deal's result over the felt stays whole in the window: as tall as the room from
 * the felt's top to the window's bottom (the felt grown to match, so nothing scrolls),
 * its sheet scrolling inside. Where that room is too short (a phone, under its header)
 * it covers the window instead. Measured, since the header above wraps with the width. */
export function fitResults() {
  const box = document.getElementById("results");
  if (!box) return;
  const felt = box.parentElement;
  const rem = parseFloat(getComputedStyle(document.documentElement).fontSize);
  const room = Math.floor(window.innerHeight - felt.getBoundingClientRect().top - window.scrollY - rem);
  const pinned = room < MIN_ROOM * rem;
  box.classList.toggle("pinned", pinned);
  felt.style.minHeight = pinned ? "" : `${room}px`;
}

/** Rems of room the result needs over the felt: its headline, a few rows of hands and
 * of the sheet, its buttons. */
const MIN_ROOM = 30;

/** What a move needs, together: the prompt, the muamele spread, the hand, the jack's
 * suit picker and the move controls. On a narrow screen it stays on screen (style.css,
 * sticky at the bottom) however far the page is scrolled up the felt. */
function dock(state, ui, act) {
  return h("div", { class: "dock", id: "dock" },
    h("p", { class: "prompt", id: "prompt", role: "status" }, prompt(state)),
    muameleSpread(state, act),
    handArea(state, ui, act),
    // Over the felt just above the hand (style.css): the controls stay where they were.
    ui.jack ? suitPicker(state, ui, act) : null,
    moveControls(state, ui, act));
}
