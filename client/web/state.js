// What the client knows, rebuilt from server messages alone; no DOM here.
//
// The `table` snapshot replaces everything about the table; `table_update` replaces
// the table_info; each `update` replaces the view and the decision (docs/protocol.md,
// "Reading an update"). The screen is drawn from this state alone, and the events only
// become lines of the log.

import { cardText, SUIT_NAMES, SUIT_SYMBOLS } from "./cards.js";
import { t } from "./words.js";

export function createState() {
  return {
    status: "idle", // idle | connecting | welcomed | reconnecting | stopped
    stopReason: null,
    retryAt: null, // ms on the page clock of the next try while reconnecting
    me: null, // {player, name, server, features, limits}
    lobby: { tables: [], total: 0, offset: 0, page: 200 },
    table: null, // table_info
    you: null, // {seat, spectator, host}
    view: null,
    match: null,
    moves: [],
    deadlineAt: null, // ms on the page clock when the seat to act runs out of time
    rematch: null, // {agreed, declined}
    matchEnd: null, // {totals, winners}
    inFlight: false, // a move was sent and its update has not come
    log: [], // {seq, text, cls}
    logSeq: 0,
    tableLogFrom: 0, // the log's last line before we came to this table
    chat: [], // {seq, scope, name, text, spectator}
    chatSeq: 0,
    serial: 0, // counts the decisions handed to us, so a screen can tell them apart
    dealLog: { deal_no: null, count: 0 }, // this deal's events the log has told
    drawn: [], // the cards of our last draw (marked in the hand until we play or pass)
  };
}

export function atTable(state) {
  return state.table !== null;
}

export function mySeat(state) {
  return state.you ? state.you.seat : null;
}

/** Our decision is pending and nothing we sent is still on its way. */
export function myTurn(state) {
  return state.moves.length > 0 && !state.inFlight;
}

export function hasFeature(state, name) {
  return Boolean(state.me && state.me.features.includes(name));
}

/** "you" for our own seat, the seat's name otherwise, "seat N" (1-based) without one. */
export function seatName(state, seat) {
  if (seat === null || seat === undefined) return "nobody";
  if (seat === mySeat(state)) return "you";
  return seatLabel(state, seat);
}

/** A seat's name as others see it: bots by seat (the server may call every bot the
 * same), a name two players share with its seat number, so the log is never ambiguous. */
export function seatLabel(state, seat) {
  const seats = state.table ? state.table.seats : [];
  const info = seats[seat];
  if (!info || info.kind === "open" || !info.name) return `seat ${seat + 1}`;
  if (info.kind === "bot") return `bot ${seat + 1}`;
  const same = seats.filter((s) => s.kind === "human" && s.name === info.name).length;
  return same > 1 ? `${info.name} (${seat + 1})` : info.name;
}

function youOf(table, me) {
  const seat = table.seats.find((s) => s.kind === "human" && me && s.player === me.player);
  return {
    seat: seat ? seat.seat : null,
    spectator: !seat,
    host: Boolean(me && table.host === me.player),
  };
}

function setDecision(state, msg, now) {
  state.moves = Array.isArray(msg.moves) ? msg.moves : [];
  state.deadlineAt = typeof msg.deadline === "number" ? now + msg.deadline * 1000 : null;
  state.inFlight = false;
  if (state.moves.length) state.serial += 1;
}

function note(state, text, cls = "") {
  state.logSeq += 1;
  state.log.push({ seq: state.logSeq, text, cls });
  if (state.log.length > 500) state.log.splice(0, state.log.length - 500);
}

/** Apply one server message; the log lines it adds are pushed onto `state.log`. */
export function apply(state, msg, now) {
  const handler = HANDLERS[msg.type];
  if (handler) handler(state, msg, now);
  return state;
}

const HANDLERS = {
  welcome(state, msg) {
    state.me = { player: msg.player, name: msg.name, server: msg.server,
      features: msg.features || [], limits: msg.limits || {} };
    note(state, msg.resumed ? `Welcome back, ${msg.name}.` : `Welcome to ${msg.server}, ${msg.name}.`, "dim");
  },
  error(state, msg) {
    state.inFlight = false;
    const rule = msg.rule ? ` (${msg.rule})` : "";
    let text = `${msg.message || msg.code}${rule}`;
    if (msg.code === "table_not_ready" && Array.isArray(msg.waiting_for)) {
      text += `: waiting for ${msg.waiting_for.map((s) => seatName(state, s)).join(", ")}`;
    }
    note(state, text, "error");
  },
  lobby(state, msg) {
    state.lobby.tables = msg.tables || [];
    state.lobby.offset = msg.offset ?? 0;
    state.lobby.total = msg.total ?? state.lobby.tables.length;
  },
  lobby_update(state, msg) {
    const lobby = state.lobby;
    const at = lobby.tables.findIndex((t) => t.id === msg.table);
    if (msg.op === "add") {
      // A new table is the newest: it belongs on our page only if the page reaches the
      // end of the list (docs/protocol.md, lobby_update).
      if (at < 0 && lobby.offset + lobby.tables.length >= lobby.total && msg.summary) {
        lobby.tables.push(msg.summary);
      }
      lobby.total += 1;
    } else if (msg.op === "update" && at >= 0 && msg.summary) {
      lobby.tables[at] = msg.summary;
    } else if (msg.op === "remove") {
      if (at >= 0) lobby.tables.splice(at, 1);
      lobby.total = Math.max(0, lobby.total - 1);
    }
  },
  table(state, msg, now) {
    const wasAt = state.table ? state.table.id : null;
    state.table = msg.table;
    state.you = msg.you || youOf(msg.table, state.me);
    state.view = msg.view ?? null;
    state.match = msg.match ?? null;
    setDecision(state, msg, now);
    if (msg.table.phase !== "over") state.matchEnd = null;
    if (wasAt !== msg.table.id) {
      state.rematch = null;
      state.dealLog = { deal_no: null, count: 0 };
      state.tableLogFrom = state.logSeq;
      const how = state.you.spectator ? "You are watching" : "You joined";
      note(state, `${how} ${msg.table.name}.`, "dim");
    }
    if (Array.isArray(msg.deal_events) && state.view) catchUp(state, msg.deal_events, state.view);
  },
  table_update(state, msg) {
    if (!state.table) return;
    const before = state.table;
    state.table = msg.table;
    state.you = youOf(msg.table, state.me);
    if (before.phase !== "playing" && msg.table.phase === "playing") {
      state.matchEnd = null;
      state.rematch = null;
    }
    for (const line of seatChanges(state, before, msg.table)) note(state, line, "dim");
  },
  update(state, msg, now) {
    if (!state.table || msg.table !== state.table.id) return;
    state.view = msg.view;
    for (const ev of msg.events || []) {
      if (ev.event === "match_end") state.matchEnd = { totals: ev.totals, winners: ev.winners };
      countEvent(state, ev);
      const line = describeEvent(state, ev);
      if (line) note(state, line.text, line.cls);
    }
    state.match = { deal_no: msg.view.deal_no, totals: msg.view.scores };
    setDecision(state, msg, now);
  },
  chat(state, msg) {
    state.chatSeq += 1;
    state.chat.push({ seq: state.chatSeq, scope: msg.scope, name: msg.name, text: msg.text, spectator: msg.spectator });
    if (state.chat.length > 300) state.chat.splice(0, state.chat.length - 300);
  },
  rematch(state, msg) {
    state.rematch = { agreed: msg.agreed || [], declined: msg.declined || [] };
  },
  replaced(state) {
    note(state, "This session was taken over by another window or tab; this one stops.", "error");
  },
  unreadable(state) {
    note(state, "(a message from the server could not be read)", "error");
  },
};

/** Keep count of the deal's events the log told (as a snapshot's `deal_events` counts
 * them: no deal_start, no timeout), and of the cards we drew last. */
function countEvent(state, ev) {
  const me = mySeat(state);
  if (ev.event === "deal_start") {
    state.dealLog = { deal_no: ev.deal_no, count: 0 };
    state.drawn = [];
    return;
  }
  if (ev.event === "timeout") return;
  state.dealLog.count += 1;
  if (ev.seat !== me || me === null) return;
  if (ev.event === "draw" && Array.isArray(ev.cards)) state.drawn = [...ev.cards]; // the last draw only
  else if (ev.event === "play" || ev.event === "pass") state.drawn = [];
}

/** A snapshot's deal so far: the lines the log has not told yet (all of them after a
 * reload, those we missed while the link was down after a resume). */
function catchUp(state, events, view) {
  const same = state.dealLog.deal_no === view.deal_no;
  const told = same ? Math.min(state.dealLog.count, events.length) : 0;
  const missed = events.slice(told);
  state.dealLog = { deal_no: view.deal_no, count: events.length };
  if (!missed.length) return;
  note(state, same ? t("While you were away:")
    : t("Deal {n} so far ({dealer} dealt):", { n: view.deal_no, dealer: seatName(state, view.dealer) }), "title");
  const me = mySeat(state);
  for (const ev of missed) {
    if (ev.seat === me && me !== null) {
      if (ev.event === "draw" && Array.isArray(ev.cards)) state.drawn = [...ev.cards];
      else if (ev.event === "play" || ev.event === "pass") state.drawn = [];
    }
    const line = describeEvent(state, ev);
    if (line) note(state, line.text, line.cls);
  }
}

/** Leaving a table: the lobby is what is left. */
export function leftTable(state) {
  Object.assign(state, { table: null, you: null, view: null, match: null, moves: [],
    deadlineAt: null, rematch: null, matchEnd: null, inFlight: false,
    dealLog: { deal_no: null, count: 0 }, drawn: [] });
}

function seatChanges(state, before, after) {
  const lines = [];
  for (const now of after.seats) {
    const was = before.seats[now.seat];
    if (!was) continue;
    const who = now.seat === mySeat(state) ? "you" : (now.name || `seat ${now.seat + 1}`);
    if (was.kind !== now.kind || was.name !== now.name) {
      if (now.kind === "open") lines.push(`${was.kind === "bot" ? "the bot" : was.name} left seat ${now.seat + 1}`);
      else if (now.kind === "bot") lines.push(`a bot (${now.level ?? "medium"}) took seat ${now.seat + 1}`);
      else lines.push(`${now.name} took seat ${now.seat + 1}`);
    } else if (now.kind === "human") {
      if (was.connected !== false && now.connected === false) lines.push(`${who}: connection lost`);
      if (was.connected === false && now.connected !== false) lines.push(`${who}: back`);
      if (!was.held_by_bot && now.held_by_bot) lines.push(`a stand-in bot plays for ${who}`);
      if (was.held_by_bot && !now.held_by_bot) lines.push(`${who} took the seat back`);
    }
  }
  if (before.phase !== after.phase && after.phase === "playing") lines.push("The match starts.");
  return lines;
}

function plural(n, word) {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function cite(state, classic, cardiva) {
  return state.table && state.table.rules === "cardiva" ? cardiva : classic;
}

/** One line of the log for an event, or null for one not worth a line. */
export function describeEvent(state, ev) {
  const who = seatName(state, ev.seat);
  switch (ev.event) {
    case "deal_start":
      return { text: `Deal ${ev.deal_no}: ${seatName(state, ev.dealer)} dealt.`, cls: "title" };
    case "play": {
      const named = ev.suit ? `, naming ${SUIT_SYMBOLS[ev.suit]} ${SUIT_NAMES[ev.suit]}` : "";
      return { text: `${who} played ${cardText(ev.card)}${named}`, cls: "" };
    }
    case "penalty":
      return { text: `${who} must draw ${ev.count} or answer with a 7 (${cite(state, "C11", "K7")})`, cls: "warn" };
    case "skip":
      return { text: `${who} ${who === "you" ? "are" : "is"} skipped (8)`, cls: "" };
    case "reverse":
      return { text: "10: the direction of play is reversed (C10)", cls: "" };
    case "bounce":
      return { text: `10: the turn bounces back to ${who} (K9)`, cls: "" };
    case "pisti":
      return { text: `Pişti! ${who} must play again (K11)`, cls: "" };
    case "draw": {
      let text = `${who} drew ${plural(ev.count, "card")}`;
      if (Array.isArray(ev.cards) && ev.cards.length) text += `: ${ev.cards.map(cardText).join(" ")}`;
      if (ev.reason === "penalty") text += " (the sevens' penalty)";
      if (ev.reason === "ace") text += " (ace, K10)";
      return { text, cls: ev.reason === "penalty" ? "warn" : "" };
    }
    case "reshuffle":
      return { text: `The discards are shuffled into a new stock of ${ev.count}.`, cls: "" };
    case "stock_out":
      return { text: `The stock is empty: the deal ends (${cite(state, "C15", "K6")}).`, cls: "warn" };
    case "pass":
      return { text: `${who} passed`, cls: "" };
    case "muamele":
      return { text: `Muamele: ${who} ${who === "you" ? "pick" : "picks"} ${ev.picks} of ${plural(ev.spread, "face-down card")} (K14)`, cls: "title" };
    case "pick": {
      const card = ev.card ? `: ${cardText(ev.card)}` : "";
      return { text: `${who} picked card ${ev.position + 1}${card} (${plural(ev.picks, "pick")} left)`, cls: "" };
    }
    case "timeout":
      if (ev.bot) return { text: `${who} ran out of time again: a stand-in bot plays for ${who === "you" ? "you until you say you are back" : "them"}`, cls: "warn" };
      return { text: `${who} ran out of time; the server moves for ${who === "you" ? "you" : "them"}`, cls: "warn" };
    case "deal_end":
      return { text: dealHeadline(state, ev.result), cls: "title" };
    case "match_end":
      return { text: `Match over: ${winnersText(state, ev.winners)} won.`, cls: "good" };
    default:
      return null; // newer servers may send more events: the view tells the state
  }
}

export function winnersText(state, winners) {
  return (winners || []).map((w) => seatName(state, w)).join(" and ") || "nobody";
}

export function dealHeadline(state, result) {
  const who = seatName(state, result.winner);
  let head;
  if (result.reason === "stock_out") {
    head = "Deal over: the stock ran out; " + (result.winner === null
      ? "no winner" : `${who} ${who === "you" ? "have" : "has"} the lowest hand`);
  } else if (result.winner !== null) {
    head = `Deal over: ${who} went out`;
  } else {
    head = "Deal over";
  }
  if (result.multiplier && result.multiplier !== 1) head += `, penalties ×${result.multiplier}`;
  return head;
}

/** What the seat to act is asked to do, in words, for the status line. */
export function prompt(state) {
  const v = state.view;
  if (!v) return "";
  if (v.phase === "over") return "";
  if (v.phase === "muamele" && v.muamele) {
    const who = seatName(state, v.muamele.seat);
    return `${who === "you" ? "Pick" : `${who} picks`} ${plural(v.muamele.picks, "card")} from the face-down spread (K14)`;
  }
  if (!myTurn(state)) {
    const heldByBot = mySeatInfo(state)?.held_by_bot;
    if (heldByBot && state.table.phase === "playing") return 'A stand-in bot plays for you: press "I am back" to take your seat back.';
    return v.turn === null ? "" : `${seatName(state, v.turn)} to play`;
  }
  const kinds = new Set(state.moves.map((m) => m.kind));
  const parts = [];
  if (kinds.has("play")) parts.push("play a highlighted card");
  if (kinds.has("draw")) parts.push(v.penalty ? `draw ${v.penalty} (or answer with a 7)` : "draw");
  if (kinds.has("pass")) parts.push("pass");
  return `Your move: ${parts.join(", or ")}`;
}

export function mySeatInfo(state) {
  const seat = mySeat(state);
  return seat === null || !state.table ? null : state.table.seats[seat];
}

/** The seats in the order play goes round, starting after `from`. */
export function seatsAfter(n, from) {
  const out = [];
  for (let i = 1; i <= n; i += 1) out.push((from + i) % n);
  return out;
}

export function matchProgress(state) {
  const opts = state.table ? state.table.options : null;
  if (!opts) return "";
  const [kind, n] = String(opts.match_end || "").split(":");
  const dealNo = state.view ? state.view.deal_no : 0;
  if (kind === "deals") return dealNo ? `deal ${dealNo} of ${n}` : `${n} deals`;
  if (kind === "points") return dealNo ? `deal ${dealNo}, to ${n} points` : `to ${n} points`;
  return "";
}
