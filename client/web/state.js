// What the client knows, rebuilt from server messages alone; no DOM here.
//
// The `table` snapshot replaces everything about the table; `table_update` replaces
// the table_info; each `update` replaces the view and the decision (docs/protocol.md,
// "Reading an update"). The screen is drawn from this state alone, and the events only
// become lines of the log.

import { cardText, SUIT_SYMBOLS, suitName } from "./cards.js";
import { refusalText } from "./refusals.js";
import { sheetRow } from "./sheet.js";
import { num, t, tn } from "./words.js";

/** Whether an added table belongs on the page we hold (docs/protocol.md,
 * lobby_update): the list is in the order of the tables' ids, and a new table is the
 * newest, so it joins only a page that reaches the end; a table listed again (a
 * cluster's process was out of reach for a while) joins the page its id falls in. */
function addBelongs(lobby, id) {
  const rows = lobby.tables;
  const reachesEnd = lobby.offset + rows.length >= lobby.total;
  if (rows.length === 0) return reachesEnd;
  if (id < rows[0].id) return lobby.offset === 0;
  if (id > rows[rows.length - 1].id) return reachesEnd;
  return true;
}

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
    sheet: [], // the match's score sheet: a sheet_row per finished deal (docs/protocol.md)
    ratingChange: null, // the table's last `rating_change`, shown with the match's result
    inFlight: false, // a move was sent and its update has not come
    log: [], // {seq, text, cls}
    logSeq: 0,
    greetAfterLogin: false, // a login follows the welcome: greet once it settles
    greeting: null, // the welcome held until then
    tableLogFrom: 0, // the log's last line before we came to this table
    chat: [], // {seq, scope, name, text, spectator}
    chatSeq: 0,
    serial: 0, // counts the decisions handed to us, so a screen can tell them apart
    dealLog: { deal_no: null, count: 0 }, // this deal's events the log has told
    drawn: [], // the cards of our last draw (marked in the hand until we play or pass)
    invites: [], // {invite, from, table, expiresAt}: invitations we hold, oldest first
    botsAt: null, // ms on the page clock when bots take a quick table's open seats
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
  if (seat === null || seat === undefined) return t("nobody");
  if (seat === mySeat(state)) return t("you");
  return seatLabel(state, seat);
}

/** A seat's name as others see it: bots by seat (the server may call every bot the
 * same), a name two players share with its seat number, so the log is never ambiguous. */
export function seatLabel(state, seat) {
  const seats = state.table ? state.table.seats : [];
  const info = seats[seat];
  if (!info || info.kind === "open" || !info.name) return t("seat {n}", { n: seat + 1 });
  if (info.kind === "bot") return t("bot {n}", { n: seat + 1 });
  const same = seats.filter((s) => s.kind === "human" && s.name === info.name).length;
  return same > 1 ? `${info.name} (${num(seat + 1)})` : info.name;
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

/** Add a line to the log. `say(seen)` words it, from `seen`, the table and our place
 * as they were when it happened: it is worded again in the language in use each time
 * the line is drawn, so a language chosen later takes the whole log over. */
function note(state, say, cls = "") {
  state.logSeq += 1;
  const seen = { table: state.table, you: state.you };
  state.log.push({ seq: state.logSeq, cls, get text() { return say(seen); } });
  if (state.log.length > 500) state.log.splice(0, state.log.length - 500);
}

/** A table's name: one opened without a name is worded here from its host's name
 * (`named_for`), in the page's language; `name` is the server's English. */
export function tableName(info) {
  return info.named_for ? t("{name}'s table", { name: info.named_for }) : info.name;
}

/** The welcome's log line, naming the player as they are now (`greetAfterLogin`: once
 * a login that followed the welcome settled, under the account's name or the guest's). */
export function greet(state, welcome) {
  const name = state.me ? state.me.name : welcome.name;
  note(state, () => (welcome.resumed ? t("Welcome back, {name}.", { name })
    : t("Welcome to {server}, {name}.", { server: welcome.server, name })), "dim");
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
    // A login that follows at once (a kept one) may change the name: greet after it.
    if (state.greetAfterLogin) state.greeting = msg;
    else greet(state, msg);
  },
  error(state, msg) {
    state.inFlight = false;
    // In words from the code (refusals.js); the server's own message for a code this
    // page does not know.
    const rule = msg.rule ? ` (${msg.rule})` : "";
    note(state, (seen) => {
      const text = `${refusalText(msg)}${rule}`;
      if (msg.code !== "table_not_ready" || !Array.isArray(msg.waiting_for)) return text;
      return t("{text}: waiting for {seats}", { text, seats: msg.waiting_for.map((s) => seatName(seen, s)).join(", ") });
    }, "error");
  },
  table_lost(state, msg) {
    // (app.js shows why, as it does for table_closed)
    if (state.table && state.table.id === msg.table) leftTable(state);
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
      if (at < 0 && msg.summary && addBelongs(lobby, msg.table)) {
        const next = lobby.tables.findIndex((t) => t.id > msg.table);
        lobby.tables.splice(next < 0 ? lobby.tables.length : next, 0, msg.summary);
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
    setBotsAt(state, msg.table, now);
    // Joining a table we were invited to answers that invitation (an accept).
    state.invites = state.invites.filter((i) => i.table.id !== msg.table.id);
    state.you = msg.you || youOf(msg.table, state.me);
    state.view = msg.view ?? null;
    state.match = msg.match ?? null;
    // The sheet so far; a server without sheets: what this table shows from now on.
    if (Array.isArray(msg.match?.sheet)) state.sheet = msg.match.sheet;
    else if (wasAt !== msg.table.id) state.sheet = [];
    setDecision(state, msg, now);
    if (msg.table.phase !== "over") state.matchEnd = null;
    if (wasAt !== msg.table.id) {
      state.rematch = null;
      state.dealLog = { deal_no: null, count: 0 };
      state.tableLogFrom = state.logSeq;
      const joined = msg.table;
      const watching = state.you.spectator;
      note(state, () => {
        const name = tableName(joined); // worded in the language of the moment
        return watching ? t("You are watching {name}.", { name }) : t("You joined {name}.", { name });
      }, "dim");
    }
    if (Array.isArray(msg.deal_events) && state.view) catchUp(state, msg.deal_events, state.view);
  },
  table_update(state, msg, now) {
    if (!state.table) return;
    const before = state.table;
    state.table = msg.table;
    setBotsAt(state, msg.table, now);
    state.you = youOf(msg.table, state.me);
    if (before.phase !== "playing" && msg.table.phase === "playing") {
      state.matchEnd = null;
      state.rematch = null;
      state.ratingChange = null;
    }
    for (const line of seatChanges(state, before, msg.table)) note(state, line, "dim");
  },
  update(state, msg, now) {
    if (!state.table || msg.table !== state.table.id) return;
    state.view = msg.view;
    for (const ev of msg.events || []) {
      if (ev.event === "match_end") state.matchEnd = { totals: ev.totals, winners: ev.winners };
      if (ev.event === "deal_end" && ev.result) state.sheet = [...state.sheet, sheetRow(ev.result, msg.view)];
      if (ev.event === "deal_start" && ev.deal_no === 1) state.sheet = []; // a rematch: a new sheet
      countEvent(state, ev);
      noteEvent(state, ev);
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
  rating_change(state, msg) {
    // Told to every seat of a rated match wherever they are now: the log says it, and
    // at that table the match's result shows it too.
    const atTable = Boolean(state.table && state.table.id === msg.table);
    if (atTable) state.ratingChange = msg;
    const mine = (seat) => (atTable ? seat.seat === mySeat(state) : Boolean(state.me) && seat.name === state.me.name);
    for (const seat of msg.seats || []) {
      note(state, (seen) => ratingChangeText(seat, atTable ? seen : null), mine(seat) ? "good" : "");
    }
  },
  invited(state, msg, now) {
    state.invites.push({ invite: msg.invite, from: msg.from, table: msg.table,
      expiresAt: now + msg.expires_in * 1000 });
    const name = tableName(msg.table);
    note(state, () => t("{name} invites you to {table}.", { name: msg.from, table: name }), "title");
  },
  invite_ended(state, msg) {
    // To the inviter it names the invitee; to the invitee it ends one it holds.
    if (msg.name !== undefined) {
      note(state, () => sentEnded(msg.reason, msg.name), msg.reason === "accepted" ? "good" : "dim");
      return;
    }
    const held = state.invites.find((i) => i.invite === msg.invite);
    state.invites = state.invites.filter((i) => i.invite !== msg.invite);
    if (held) note(state, () => heldEnded(msg.reason, held.from), "dim");
  },
  replaced(state) {
    note(state, () => t("This session was taken over by another window or tab; this one stops."), "error");
  },
  unreadable(state) {
    note(state, () => t("(a message from the server could not be read)"), "error");
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
  note(state, (seen) => (same ? t("While you were away:")
    : t("Deal {n} so far ({dealer} dealt):", { n: view.deal_no, dealer: seatName(seen, view.dealer) })), "title");
  const me = mySeat(state);
  for (const ev of missed) {
    if (ev.seat === me && me !== null) {
      if (ev.event === "draw" && Array.isArray(ev.cards)) state.drawn = [...ev.cards];
      else if (ev.event === "play" || ev.event === "pass") state.drawn = [];
    }
    noteEvent(state, ev);
  }
}

/** An event's line of the log, if it is worth one. */
function noteEvent(state, ev) {
  const line = describeEvent(state, ev);
  if (line) note(state, (seen) => describeEvent(seen, ev).text, line.cls);
}

/** A rating as players read it: `1523`, or `1500?` while provisional. */
export function ratingText(value, provisional) {
  return provisional ? t("{rating}?", { rating: value }) : num(value);
}

/** A rating's change with its sign: +23, −7, ±0. */
export function signedChange(n) {
  if (n > 0) return `+${num(n)}`;
  return n < 0 ? `−${num(-n)}` : `±${num(0)}`;
}

/** One seat of a `rating_change`: "Ayşe: 1500 → 1523, +23". With `seen` (the table the
 * match was played at, and our place at it), the seat is named as the log names it:
 * "you", a bot by its seat, in the page's language. */
export function ratingChangeText(seat, seen = null) {
  const mark = seat.provisional === true;
  return t("{name}: {before} → {after}, {change}", { name: seen ? seatName(seen, seat.seat) : seat.name,
    before: ratingText(seat.before, mark), after: ratingText(seat.after, mark),
    change: signedChange(seat.after - seat.before) });
}

/** When bots take a waiting quick table's open seats (`table_info.bots_in`). */
function setBotsAt(state, table, now) {
  state.botsAt = typeof table.bots_in === "number" ? now + table.bots_in * 1000 : null;
}

/** How an invitation we sent ended (`invite_ended` naming the invitee). */
function sentEnded(reason, name) {
  switch (reason) {
    case "accepted": return t("{name} accepted your invitation.", { name });
    case "declined": return t("{name} declined your invitation.", { name });
    case "expired": return t("{name} did not answer your invitation in time.", { name });
    case "gone": return t("{name} left the server: your invitation is over.", { name });
    default: return t("Your invitation to {name} is over.", { name });
  }
}

/** How an invitation we held ended without our answer. */
function heldEnded(reason, name) {
  switch (reason) {
    case "expired": return t("The invitation from {name} expired.", { name });
    case "withdrawn": return t("{name} withdrew the invitation: they left the table.", { name });
    case "unavailable": return t("The invitation from {name} is over: the table filled or started.", { name });
    default: return t("The invitation from {name} is over.", { name });
  }
}

/** Why a cluster's server let us go from our table (`table_lost.cause`). */
export function tableLostText(cause) {
  return cause === "server_gone" ? t("The table was lost: the server that held it went away.")
    : t("The server that holds the table lost touch with yours and gave your seat up. Join the table again to play on.");
}

/** Leaving a table: the lobby is what is left. */
export function leftTable(state) {
  Object.assign(state, { table: null, you: null, view: null, match: null, moves: [],
    deadlineAt: null, rematch: null, matchEnd: null, ratingChange: null, inFlight: false,
    dealLog: { deal_no: null, count: 0 }, drawn: [], sheet: [], botsAt: null });
}

/** What changed at the seats, as words for the log (functions: see note). */
function seatChanges(state, before, after) {
  const lines = [];
  for (const now of after.seats) {
    const was = before.seats[now.seat];
    if (!was) continue;
    const mine = now.seat === mySeat(state);
    const who = () => now.name || t("seat {n}", { n: now.seat + 1 });
    const seat = now.seat + 1;
    if (was.kind !== now.kind || was.name !== now.name) {
      if (now.kind === "open") {
        lines.push(() => (was.kind === "bot" ? t("the bot left seat {seat}", { seat }) : t("{name} left seat {seat}", { name: was.name, seat })));
      } else if (now.kind === "bot") {
        lines.push(() => t("a bot ({level}) took seat {seat}", { level: levelName(now.level ?? "medium"), seat }));
      } else lines.push(() => t("{name} took seat {seat}", { name: now.name, seat }));
    } else if (now.kind === "human") {
      if (was.connected !== false && now.connected === false) lines.push(() => (mine ? t("you: connection lost") : t("{who}: connection lost", { who: who() })));
      if (was.connected === false && now.connected !== false) lines.push(() => (mine ? t("you: back") : t("{who}: back", { who: who() })));
      if (!was.held_by_bot && now.held_by_bot) {
        lines.push(() => (mine ? t("a stand-in bot plays for you") : t("a stand-in bot plays for {who}", { who: who() })));
      }
      if (was.held_by_bot && !now.held_by_bot) lines.push(() => (mine ? t("you took the seat back") : t("{who} took the seat back", { who: who() })));
    }
  }
  if (before.phase !== after.phase && after.phase === "playing") lines.push(() => t("The match starts."));
  return lines;
}

/** A rule set's name in words. */
export function rulesName(rules) {
  switch (rules) {
    case "classic": return t("classic");
    case "cardiva": return t("cardiva");
    default: return rules;
  }
}

/** A bot's level in words. */
export function levelName(level) {
  switch (level) {
    case "easy": return t("easy");
    case "medium": return t("medium");
    case "hard": return t("hard");
    default: return level;
  }
}

/** A name the server gives its bots, in the page's words: `bot 3` (the bot of seat 3,
 * at its table and in its match's records) or `bot (hard)` (a level on the ladder, and
 * the records an earlier version kept); null for any other name. No person's name has
 * that shape: the server refuses them. */
export function botName(name) {
  const found = /^bot (?:(\d+)|\((\w+)\))$/.exec(String(name ?? ""));
  if (!found) return null;
  return found[1] ? t("bot {n}", { n: Number(found[1]) }) : t("bot ({level})", { level: levelName(found[2]) });
}

/** A player of a finished match or a ladder row as the page names it. */
export function playerName(p) {
  return botName(p.name) ?? p.name ?? "";
}

function cite(state, classic, cardiva) {
  return state.table && state.table.rules === "cardiva" ? cardiva : classic;
}

/** One line of the log for an event, or null for one not worth a line. Our own seat
 * has its own texts: languages conjugate the verb for "you". */
export function describeEvent(state, ev) {
  const who = seatName(state, ev.seat);
  const mine = ev.seat !== undefined && ev.seat !== null && ev.seat === mySeat(state);
  const line = (text, cls = "") => ({ text, cls });
  switch (ev.event) {
    case "deal_start":
      return line(t("Deal {n}: {dealer} dealt.", { n: ev.deal_no, dealer: seatName(state, ev.dealer) }), "title");
    case "play": {
      const card = cardText(ev.card);
      if (ev.suit) {
        const fields = { who, card, symbol: SUIT_SYMBOLS[ev.suit], suit: suitName(ev.suit) };
        return line(mine ? t("you played {card}, naming {symbol} {suit}", fields) : t("{who} played {card}, naming {symbol} {suit}", fields));
      }
      return line(mine ? t("you played {card}", { card }) : t("{who} played {card}", { who, card }));
    }
    case "penalty": {
      const fields = { who, n: ev.count, rule: cite(state, "C11", "K7") };
      return line(mine ? t("you must draw {n} or answer with a 7 ({rule})", fields)
        : t("{who} must draw {n} or answer with a 7 ({rule})", fields), "warn");
    }
    case "skip":
      return line(mine ? t("you are skipped (8)") : t("{who} is skipped (8)", { who }));
    case "reverse":
      return line(t("10: the direction of play is reversed (C10)"));
    case "bounce":
      return line(mine ? t("10: the turn bounces back to you (K9)") : t("10: the turn bounces back to {who} (K9)", { who }));
    case "pisti":
      return line(mine ? t("Pişti! you must play again (K11)") : t("Pişti! {who} must play again (K11)", { who }));
    case "draw": {
      let text = mine ? tn("you drew {n} card", "you drew {n} cards", ev.count) : tn("{who} drew {n} card", "{who} drew {n} cards", ev.count, { who });
      if (Array.isArray(ev.cards) && ev.cards.length) text += `: ${ev.cards.map(cardText).join(" ")}`;
      if (ev.reason === "penalty") text += ` ${t("(the sevens' penalty)")}`;
      if (ev.reason === "ace") text += ` ${t("(ace, K10)")}`;
      return line(text, ev.reason === "penalty" ? "warn" : "");
    }
    case "reshuffle":
      return line(t("The discards are shuffled into a new stock of {n}.", { n: ev.count }));
    case "stock_out":
      return line(t("The stock is empty: the deal ends ({rule}).", { rule: cite(state, "C15", "K6") }), "warn");
    case "pass":
      return line(mine ? t("you passed") : t("{who} passed", { who }));
    case "muamele": {
      const fields = { who, picks: ev.picks, n: ev.spread };
      return line(mine ? tn("Muamele: you pick {picks} of {n} face-down card (K14)", "Muamele: you pick {picks} of {n} face-down cards (K14)", ev.spread, fields)
        : tn("Muamele: {who} picks {picks} of {n} face-down card (K14)", "Muamele: {who} picks {picks} of {n} face-down cards (K14)", ev.spread, fields), "title");
    }
    case "pick": {
      const card = ev.card ? `: ${cardText(ev.card)}` : "";
      const fields = { who, pos: ev.position + 1, card, n: ev.picks };
      return line(mine ? tn("you picked card {pos}{card} ({n} pick left)", "you picked card {pos}{card} ({n} picks left)", ev.picks, fields)
        : tn("{who} picked card {pos}{card} ({n} pick left)", "{who} picked card {pos}{card} ({n} picks left)", ev.picks, fields));
    }
    case "timeout":
      if (ev.bot) {
        return line(mine ? t("you ran out of time again: a stand-in bot plays for you until you say you are back")
          : t("{who} ran out of time again: a stand-in bot plays for them", { who }), "warn");
      }
      return line(mine ? t("you ran out of time; the server moves for you") : t("{who} ran out of time; the server moves for them", { who }), "warn");
    case "deal_end":
      return line(dealHeadline(state, ev.result), "title");
    case "match_end":
      return line(t("Match over: {winners} won.", { winners: winnersText(state, ev.winners) }), "good");
    default:
      return null; // newer servers may send more events: the view tells the state
  }
}

/** Names joined by "and" (the match's winners). */
export function winnersText(state, winners) {
  const names = (winners || []).map((w) => seatName(state, w));
  if (!names.length) return t("nobody");
  return names.reduce((all, name) => t("{first} and {second}", { first: all, second: name }));
}

export function dealHeadline(state, result) {
  const who = seatName(state, result.winner);
  const mine = result.winner !== null && result.winner === mySeat(state);
  let head;
  if (result.reason === "stock_out") {
    if (result.winner === null) head = t("Deal over: the stock ran out; no winner");
    else head = mine ? t("Deal over: the stock ran out; you have the lowest hand")
      : t("Deal over: the stock ran out; {who} has the lowest hand", { who });
  } else if (result.winner !== null) {
    head = mine ? t("Deal over: you went out") : t("Deal over: {who} went out", { who });
  } else {
    head = t("Deal over");
  }
  if (result.multiplier && result.multiplier !== 1) head = t("{head}, penalties ×{n}", { head, n: result.multiplier });
  return head;
}

/** What the seat to act is asked to do, in words, for the status line. */
export function prompt(state) {
  const v = state.view;
  if (!v) return "";
  if (v.phase === "over") return "";
  if (v.phase === "muamele" && v.muamele) {
    const n = v.muamele.picks;
    if (v.muamele.seat === mySeat(state)) return tn("Pick {n} card from the face-down spread (K14)", "Pick {n} cards from the face-down spread (K14)", n);
    return tn("{who} picks {n} card from the face-down spread (K14)", "{who} picks {n} cards from the face-down spread (K14)", n,
      { who: seatName(state, v.muamele.seat) });
  }
  if (!myTurn(state)) {
    const heldByBot = mySeatInfo(state)?.held_by_bot;
    if (heldByBot && state.table.phase === "playing") return t("A stand-in bot plays for you: press \"I am back\" to take your seat back.");
    return v.turn === null ? "" : t("{who} to play", { who: seatName(state, v.turn) });
  }
  const kinds = new Set(state.moves.map((m) => m.kind));
  const parts = [];
  if (kinds.has("play")) parts.push(t("play a highlighted card"));
  if (kinds.has("draw")) parts.push(v.penalty ? t("draw {n} (or answer with a 7)", { n: v.penalty }) : t("draw"));
  if (kinds.has("pass")) parts.push(t("pass"));
  const choices = parts.reduce((all, part) => t("{first}, or {second}", { first: all, second: part }));
  return t("Your move: {choices}", { choices });
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
  const count = Number(n);
  if (kind === "deals") return dealNo ? t("deal {n} of {total}", { n: dealNo, total: count }) : tn("{n} deal", "{n} deals", count);
  if (kind === "points") return dealNo ? t("deal {n}, to {total} points", { n: dealNo, total: count }) : t("to {n} points", { n: count });
  return "";
}
