// Glue: the connection feeds the state, the state draws the screen, the screen's
// buttons and keys send requests. Also the `?play=1` autopilot of `pisyedili play --web`.

import { accountError, accountPanel, adoptAccount, createAccount, loginEntry, loginStore, ratedNotice } from "./account.js";
import { jackSuits, parseMoveText, parseSuit, playable, sortHand } from "./cards.js";
import { connectionBanner, tickBanner } from "./banner.js";
import { h, replaceKeepingFocus, richText } from "./dom.js";
import { installDrag } from "./drag.js";
import { HISTORY_PAGE, historyPage } from "./history.js";
import { ladderPage, nameLink, profilePage } from "./ladder.js";
import { lobbyScreen, nameScreen } from "./lobby.js";
import { animateEvents, flights } from "./motion.js";
import { invitesPanel } from "./pairing.js";
import { createModeration, doneText, moderationPanel } from "./moderation.js";
import * as notice from "./notice.js";
import { refusalText, sanctionText } from "./refusals.js";
import { loadRuleLines } from "./rules.js";
import { createReplays, replayPage } from "./replay.js";
import {
  apply, atTable, createState, greet, hasFeature, leftTable, mySeat, myTurn, prompt, tableLostText,
} from "./state.js";
import { fitResults, tableScreen, timeLeft } from "./table.js";
import { defaultUrl, sessionStore, Wire } from "./wire.js";
import { renderFrame } from "./page.js";
import { loadLanguage, said, startLanguage, t, tn, useLanguage } from "./words.js";

const state = createState();
const ORDER_KEY = "pisyedili.order";
const ui = { jack: null, moveError: null, nameError: null, serialSeen: 0,
  order: localStorage.getItem(ORDER_KEY) === "rank" ? "rank" : "suit",
  askedName: null, // the name typed last: kept in the field, compared with the welcome's
  helloName: null, // the name the connection being opened asks for in its hello
  renamed: null, // {asked, got} when the server welcomed us under another name
  codeError: null, chatError: null, prefs: notice.prefs, offline: false,
  sheetOpen: false, // the table's score sheet is shown
  resultClosed: false, // the deal's result was closed (until the next deal's)
  inviteNote: null, // {ok, table, text}: what became of the last invitation we sent
  inviteError: null }; // why answering an invitation was refused
const acc = createAccount();
const mod = createModeration();
const replays = createReplays((msg) => wire.request(msg, { quiet: true }), () => render());
const pages = { route: null, data: null, asked: null, ladderAll: false }; // the hash page and its reply
// (`ladderAll`: the leaderboard lists provisional ratings too, after the settled ones)
const $ = (id) => document.getElementById(id);
const main = $("main");
let logShown = 0;
let chatShown = 0;

const params = new URLSearchParams(window.location.search);
const autopilot = params.get("play") === "1" ? {
  name: (params.get("name") || "").trim(),
  rules: params.get("rules") || "classic",
  bots: Math.max(1, Math.min(5, Number(params.get("bots") || 3) || 3)),
  level: params.get("level") || null,
  done: false,
} : null;
ui.offline = Boolean(autopilot);

// The offline page's server ends with its game: after its shutdown, no retries.
const wire = new Wire({ url: defaultUrl(), onMessage, onStatus, endsWithServer: Boolean(autopilot) });

function onStatus(status, detail) {
  state.status = status;
  if (status === "connecting" || status === "reconnecting") ui.helloName = wire.name;
  state.retryAt = status === "reconnecting" && detail && detail.at ? detail.at : null;
  if (status === "welcomed") {
    ui.nameError = null;
    state.stopReason = null;
    // Players' names are unique on a server: a name in use comes back suffixed.
    const asked = ui.askedName ? ui.askedName.normalize("NFC").replace(/\s+/g, " ").trim() : null;
    ui.renamed = !detail.resumed && asked && detail.name !== asked ? { asked, got: detail.name } : null;
    afterWelcome(detail);
  } else if (status === "stopped") {
    state.stopReason = detail;
    if (detail && detail.type === "error") {
      // A refused hello (a name the server will not take): back to the name screen.
      ui.nameError = () => refusalText(detail);
      state.me = null;
    }
  }
  render();
}

function onMessage(msg) {
  const serial = state.serial;
  // Where our cards were before the redraw: a card we played flies from its place.
  const handBefore = msg.type === "update" ? handRects() : null;
  const lost = msg.type === "table_lost" && state.table && state.table.id === msg.table;
  apply(state, msg, performance.now());
  if (lost) acc.info = () => tableLostText(msg.cause);
  if (msg.type === "account") adoptAccount(acc, state, msg);
  if (msg.type === "welcome") {
    pages.asked = null; // the state knows the features now: fetch the hash page's data
    loadPage();
  }
  if (msg.type === "announcement") state.announcement = { text: msg.text, by: msg.by };
  if (msg.type === "muted") ui.chatError = () => sanctionText(msg); // told at once, by the chat box
  if (msg.type === "table_closed" && state.table && state.table.id === msg.table) {
    leftTable(state);
    acc.info = () => (msg.reason ? t("An operator closed the table: {reason}", { reason: msg.reason })
      : t("An operator closed the table."));
  }
  if (msg.type === "error" && ui.jack) ui.jack = null;
  render();
  if (msg.type === "update" && state.table && msg.table === state.table.id) {
    // The screen shows the outcome already; the motion and the sounds follow it.
    const events = msg.events || [];
    animateEvents(events, mySeat(state), handBefore);
    const turnCame = state.serial !== serial && myTurn(state);
    for (const name of notice.soundsFor(events, turnCame)) notice.play(name);
    if (turnCame) notice.notifyTurn(prompt(state));
  }
}

function handRects() {
  const out = new Map();
  for (const el of document.querySelectorAll("#hand button.card")) {
    const r = el.getBoundingClientRect();
    if (r.width && !out.has(el.dataset.card)) out.set(el.dataset.card, r);
  }
  return out;
}

/** A new or resumed session: the lobby list, and where we were. */
function afterWelcome(welcome) {
  wire.request({ type: "lobby_subscribe" });
  afterWelcomeAccount(welcome);
  // A resumed welcome names the table we are at, and its snapshot follows by itself;
  // without it we are at none (a table we showed is gone).
  if (welcome.resumed && welcome.table != null) return;
  if (atTable(state)) {
    leftTable(state);
    render();
  }
  runAutopilot();
}

// ------------------------------------------------------------------ autopilot

/** `?play=1&name=…&rules=…&bots=N&level=…`: a table with N bots, started, no clicks
 * (like the terminal client's offline autopilot). Each step waits for its reply. */
async function runAutopilot() {
  if (!autopilot || autopilot.done) return;
  autopilot.done = true;
  const snapshot = await wire.request({ type: "create_table", rules: autopilot.rules,
    seats: autopilot.bots + 1, private: true });
  if (snapshot.type !== "table") return; // the error is in the log: the player takes over
  for (const seat of snapshot.table.seats.filter((s) => s.kind === "open")) {
    const bot = { type: "add_bot", seat: seat.seat };
    if (autopilot.level) bot.level = autopilot.level;
    if ((await wire.request(bot)).type !== "ok") return;
  }
  if ((await wire.request({ type: "ready", ready: true })).type !== "ok") return;
  await wire.request({ type: "start" });
}

/** The account side of a welcome: a resumed login stays; a fresh session logs in with
 * the password just typed, or else with the kept login token if it is the login of the
 * name this connection asked for (the terminal's way: never someone else's). */
function afterWelcomeAccount(welcome) {
  const saved = loginStore.load(ui.helloName || "");
  acc.registered = Boolean(welcome.registered);
  acc.operator = acc.registered && Boolean(welcome.operator);
  if (!(welcome.features || []).includes("accounts") || acc.registered) {
    acc.pendingLogin = null;
    return;
  }
  const typed = acc.pendingLogin;
  acc.pendingLogin = null;
  // The welcome's greeting waits for the login, which may change the name it says.
  state.greetAfterLogin = Boolean(typed || (saved && !welcome.resumed));
  if (typed) accountRequest({ type: "login", name: typed.name, password: typed.password });
  else if (saved && !welcome.resumed) accountRequest({ type: "login", name: saved.name, token: saved.token }, true);
}

/** Send an account request; its refusal is shown in words. A kept token refused as
 * `bad_login` was revoked: forget it. */
function accountRequest(msg, savedToken = false) {
  acc.error = null;
  acc.info = null;
  return wire.request(msg, { quiet: true }).then((reply) => {
    if (reply.type === "account") {
      onMessage(reply);
      // A login says nothing more: the panel's status line names the account already.
      acc.info = { register: () => t("Registered: {name} is yours now.", { name: reply.name }),
        login: null,
        logout: () => t("Logged out: you play on as the guest {name}.", { name: reply.name }),
        passwd: () => t("The password is changed; other devices must log in again.") }[msg.type];
      sessionStore.save({ name: reply.name, token: reply.token }); // the session we are now
      wire.name = reply.name;
    } else {
      if (savedToken && reply.code === "bad_login") loginStore.forget();
      acc.error = () => accountError(reply);
      if (state.status !== "welcomed" || !state.me) ui.nameError = acc.error;
    }
    greetAfterLogin();
    render();
    return reply;
  });
}

/** The welcome's greeting held for a login that followed it: said now, under the
 * name the login settled on. */
function greetAfterLogin() {
  const welcome = state.greeting;
  state.greetAfterLogin = false;
  state.greeting = null;
  if (welcome) greet(state, welcome);
}

// -------------------------------------------------------------------- actions

const act = {
  /** From the lobby: end this session (it is not at a table) and choose a new name; a
   * logged-in player logs out first, so the kept login token is revoked, not left. */
  async changeName() {
    const saved = acc.registered ? loginStore.load() : null;
    if (acc.registered) await wire.request({ type: "logout", ...(saved ? { token: saved.token } : {}) }, { quiet: true });
    loginStore.forget();
    Object.assign(acc, { registered: false, operator: false, error: null, info: null, notice: null });
    wire.stop();
    sessionStore.forget();
    leftTable(state);
    state.me = null;
    state.status = "idle";
    render();
    document.getElementById("name-input")?.focus();
  },
  connect(name) {
    ui.askedName = name;
    if (!name) {
      ui.nameError = () => t("Please choose a name.");
      render();
      return;
    }
    const saved = sessionStore.load();
    if (saved && saved.name !== name) sessionStore.forget(); // another person: a new session
    ui.nameError = null;
    wire.start(name);
  },
  send(msg) {
    return wire.request(msg).then((reply) => {
      if (reply.code === "not_connected") apply(state, reply, performance.now());
      if (reply.code === "account_required") acc.notice = { table: state.table ? state.table.id : null };
      render();
      return reply;
    });
  },
  redraw() {
    render();
  },
  register(password, again) {
    if (password !== again) {
      acc.error = () => t("The two passwords differ.");
      acc.info = null;
      render();
      return;
    }
    accountRequest({ type: "register", password });
  },
  login(name, password) {
    accountRequest({ type: "login", name, password });
  },
  /** From the name screen: connect as a guest under the account's name, then log in. */
  connectAndLogin(name, password) {
    if (!name || !password) return;
    sessionStore.forget();
    acc.pendingLogin = { name, password };
    ui.nameError = null;
    wire.start(name);
  },
  logout(everywhere) {
    const saved = loginStore.load();
    const msg = { type: "logout", everywhere };
    if (saved) msg.token = saved.token;
    accountRequest(msg).then((reply) => {
      if (reply.type === "account") loginStore.forget(); // whatever else happens: forgotten here
    });
  },
  passwd(old, next) {
    accountRequest({ type: "passwd", old, new: next });
  },
  /** The rated notice's way to an account: back to the lobby's account panel. */
  toAccount() {
    acc.notice = null;
    const go = () => {
      window.location.hash = "";
      render();
      document.getElementById(acc.registered ? "passwd-old" : "login-name")?.focus();
    };
    if (!atTable(state)) go();
    else wire.request({ type: "leave_table" }).then((reply) => {
      if (reply.type === "ok") leftTable(state);
      go();
    });
  },
  dismissNotice() {
    acc.notice = null;
    render();
  },
  moderate(msg) {
    const clean = Object.fromEntries(Object.entries(msg).filter(([, v]) => v !== undefined));
    mod.pending = null;
    wire.request(clean, { quiet: true }).then((reply) => {
      mod.result = reply.type === "ok" ? { ok: true, text: () => doneText(clean.type) }
        : { ok: false, text: () => refusalText(reply) };
      render();
    });
    render();
  },
  ladder(rules) {
    window.location.hash = rules === "classic" ? "#ladder" : `#ladder=${rules}`;
  },
  ladderAll(on) {
    pages.ladderAll = on;
    loadPage();
    render();
  },
  historyPage(offset) {
    loadPage(offset);
  },
  /** Show presence while a stand-in bot holds our seat. The protocol has no request
   * for just that; like docs/protocol.md's own example we send `ready`, which a match
   * refuses (`game_in_progress`) but which counts as presence all the same. */
  comeBack() {
    wire.request({ type: "ready", ready: true }, { quiet: true }).then(render);
  },
  /** A guest asking for a seat at a rated table is seated as a watcher: ask for the
   * seat, so the server's `account_required` says why and the page can offer a login. */
  join(how) {
    ui.codeError = null;
    act.send({ type: "join_table", ...how }).then((reply) => {
      if (reply.type === "error" && how.code !== undefined) {
        ui.codeError = () => refusalText(reply);
        render();
        document.getElementById("code-input")?.focus();
        return;
      }
      const rated = reply.type === "table" && (reply.table.rated || ratedTable(reply.table.id));
      if (reply.type !== "table" || how.spectate || !rated || !state.you || !state.you.spectator) return;
      const open = reply.table.seats.find((s) => s.kind === "open");
      if (open && reply.table.phase === "waiting") act.send({ type: "sit", seat: open.seat });
      else acc.notice = { table: reply.table.id };
      render();
    });
  },
  retryNow() {
    if (state.status === "stopped" && state.me) wire.start(state.me.name);
    else wire.retryNow();
  },
  /** Another tab took the session: take it back here (the token is shared). */
  takeBack() {
    if (state.me) wire.start(state.me.name);
  },
  toggleSound() {
    notice.setSound(!notice.prefs.sound);
    if (notice.prefs.sound) notice.play("turn"); // a sample, and the page may play from now on
    render();
  },
  toggleNotify() {
    notice.setNotify(!notice.prefs.notify).then(render);
  },
  create(msg) {
    act.send(msg);
  },
  playNow(msg) {
    act.send(msg);
  },
  invite(name) {
    wire.request({ type: "invite", name }, { quiet: true }).then((reply) => {
      const table = state.table ? state.table.id : null; // said at this table only
      ui.inviteNote = reply.type === "ok" ? { ok: true, table, text: () => t("Invitation sent to {name}.", { name }) }
        : { ok: false, table, text: () => refusalText(reply) };
      if (reply.type === "ok") document.getElementById("invitee").value = "";
      render();
    });
  },
  answerInvite(invite, accept) {
    ui.inviteError = null;
    wire.request({ type: "answer_invite", invite, accept }, { quiet: true }).then((reply) => {
      if (reply.type === "error") {
        ui.inviteError = () => refusalText(reply);
        // An invitation that is over goes from the list; one refused for now stays.
        if (reply.code === "no_such_invite") state.invites = state.invites.filter((i) => i.invite !== invite);
      } else {
        state.invites = state.invites.filter((i) => i.invite !== invite);
        if (reply.type === "table") apply(state, reply, performance.now());
      }
      render();
    });
  },
  lobbyPage(offset) {
    act.send({ type: "lobby_subscribe", offset });
  },
  leave() {
    const playing = state.table.phase === "playing" && mySeat(state) !== null;
    if (playing && !window.confirm(t("The match is on: leaving hands your seat to a bot for good. Leave?"))) return;
    wire.request({ type: "leave_table" }).then((reply) => {
      if (reply.type === "ok") {
        leftTable(state);
        render();
      }
    });
  },
  move(move) {
    ui.jack = null;
    ui.moveError = null;
    state.inFlight = true;
    render();
    wire.request({ type: "move", move }).then((reply) => {
      if (reply.type === "error") {
        if (reply.code === "not_connected") apply(state, reply, performance.now());
        // Said at the controls too, where the player looks (the log may be out of sight).
        else ui.moveError = () => `${refusalText(reply)}${reply.rule ? ` (${reply.rule})` : ""}`;
        state.inFlight = false;
        render();
      }
    });
  },
  playCard(card) {
    if (!myTurn(state)) {
      ui.moveError = state.moves.length ? null : () => t("It is not your turn.");
      render();
      return;
    }
    if (card.startsWith("J")) {
      const suits = jackSuits(card, state.moves);
      if (suits.length === 1) {
        act.move(suits[0] === null ? { kind: "play", card } : { kind: "play", card, suit: suits[0] });
        return;
      }
      if (suits.length > 1) {
        ui.jack = card;
        render();
        const first = document.querySelector("#suit-picker .suit-choice");
        if (first) first.focus();
        return;
      }
    }
    act.move({ kind: "play", card }); // not offered: the server says which rule refuses it
  },
  sort(order) {
    ui.order = order;
    try {
      localStorage.setItem(ORDER_KEY, order);
    } catch {
      /* kept for this page only */
    }
    render();
  },
  cancelJack() {
    ui.jack = null;
    render();
  },
  /** The deal result's Close: the felt under it, until the next deal's result. */
  closeResult() {
    ui.resultClosed = true;
    render();
  },
  /** The table's "Score sheet" button: the sheet over the felt, or not. */
  toggleSheet() {
    ui.sheetOpen = !ui.sheetOpen;
    render();
  },
  typed(text) {
    const hand = state.view && Array.isArray(state.view.hand) ? state.view.hand : [];
    const moves = state.moves;
    const parsed = parseMoveText(text, moves, hand);
    ui.moveError = parsed.error ? () => parseMoveText(text, moves, hand).error : null;
    if (parsed.move) act.move(parsed.move);
    else if (parsed.jack) act.playCard(parsed.jack);
    else render();
  },
  chat(text) {
    const scope = atTable(state) ? "table" : "lobby";
    return wire.request({ type: "chat", text, scope });
  },
};

// --------------------------------------------------------------------- drawing

function linkText() {
  switch (state.status) {
    case "connecting": return t("connecting…");
    case "reconnecting": return t("connection lost: reconnecting…");
    case "stopped":
      if (state.stopReason && state.stopReason.type === "replaced") return t("this session continues in another tab");
      return state.me ? t("disconnected") : "";
    default: return "";
  }
}

function renderHeader() {
  const who = $("who");
  who.replaceChildren(state.me ? `${state.me.name} · ${state.me.server}` : "");
  if (state.me && acc.registered) who.append(" ", h("span", { class: "tag good", id: "who-registered" }, t("logged in")));
  const nav = $("nav");
  if (nav) {
    nav.hidden = !state.me;
    replaceKeepingFocus(nav, state.me ? navigation() : []);
  }
  const news = $("announcement");
  if (news) {
    news.hidden = !state.announcement;
    news.replaceChildren(state.announcement ? t("Announcement from {by}: {text}", state.announcement) : "");
  }
  const link = $("link");
  link.textContent = linkText();
  link.hidden = !link.textContent;
}

function renderLog() {
  const list = $("log");
  for (const entry of state.log) {
    if (entry.seq <= logShown) continue;
    list.append(h("li", { class: entry.cls }, richText(entry.text)));
    logShown = entry.seq;
  }
  while (list.children.length > 200) list.firstElementChild.remove();
  list.scrollTop = list.scrollHeight;
}

function renderChat() {
  const list = $("chat-list");
  for (const line of state.chat) {
    if (line.seq <= chatShown) continue;
    list.append(h("li", { class: `scope-${line.scope}` },
      h("strong", {}, nameLink(line.name)), line.spectator ? h("span", { class: "muted" }, ` ${t("(watching)")}`) : null,
      line.scope === "lobby" && atTable(state) ? h("span", { class: "muted" }, ` ${t("[lobby]")}`) : null,
      `: ${line.text}`));
    chatShown = line.seq;
  }
  while (list.children.length > 200) list.firstElementChild.remove();
  list.scrollTop = list.scrollHeight;
  $("chat").hidden = !hasFeature(state, "chat");
  $("chat-scope").textContent = atTable(state) ? t("to the table") : t("to the lobby");
}

/** The welcome's name differs from the one asked: say so once, in the lobby. */
function renamedNote() {
  if (!ui.renamed) return null;
  return h("p", { class: "panel notice", id: "renamed", role: "status", dataset: { key: "renamed" } },
    t("“{asked}” is taken on this server, so you play as “{got}”. Choose Change name for another.", ui.renamed),
    h("button", { type: "button", class: "quiet", dataset: { key: "renamed-ok" },
      onclick: () => { ui.renamed = null; render(); } }, t("OK")));
}

const CHAT_WARN_AT = 250;

/** Near the chat's limit a counter says how much is left; a refusal says why. */
function renderChatHelp() {
  const input = $("chat-input");
  const help = $("chat-help");
  if (!input || !help) return;
  const limit = Number(input.getAttribute("maxlength")) || 300;
  const n = input.value.length;
  let text = "";
  let cls = "chat-help";
  if (ui.chatError) {
    text = said(ui.chatError);
    cls += " error";
  } else if (n >= limit) {
    text = tn("{n} character at most: this is the limit.", "{n} characters at most: this is the limit.", limit);
    cls += " error";
  } else if (n >= CHAT_WARN_AT) {
    text = tn("{count} of {n} character", "{count} of {n} characters", limit, { count: n });
  }
  help.textContent = text;
  help.className = cls;
  help.hidden = !text;
}

function screenName() {
  if (!state.me) return "name";
  if (pages.route) return pages.route.page;
  return atTable(state) ? "table" : "lobby";
}

/** Whether the lobby lists table `id` as rated (asked before its snapshot comes). */
function ratedTable(id) {
  return Boolean(state.lobby.tables.find((row) => row.id === id && row.rated));
}

// ---------------------------------------------------------------- hash pages

/** The page the URL's hash names: #ladder[=RULES], #profile=NAME, #history-mine,
 * #history-recent, #history=NAME, #replay=ID; null for the lobby or the table. */
function readRoute(hash = window.location.hash) {
  const [key, raw = ""] = hash.replace(/^#/, "").split("=", 2);
  let value = "";
  try {
    value = decodeURIComponent(raw);
  } catch {
    return null;
  }
  if (key === "ladder") return { page: "ladder", rules: value === "cardiva" ? "cardiva" : "classic" };
  if (key === "profile" && value) return { page: "profile", name: value };
  if (key === "history-mine") return { page: "history", of: "mine" };
  if (key === "history-recent") return { page: "history", of: "recent" };
  if (key === "history" && value) return { page: "history", of: "player", name: value };
  if (key === "replay" && /^\d+$/.test(value)) return { page: "replay", match: Number(value) };
  return null;
}

/** Ask the server for what the hash page shows (once per page, and once welcomed). */
function loadPage(offset = 0) {
  const route = pages.route;
  if (route && route.page !== "replay") replays.stop();
  if (!route || !state.me) return;
  if (route.page === "replay") {
    if (!hasFeature(state, "history")) return;
    replays.open(route.match);
    return;
  }
  const all = route.page === "ladder" && pages.ladderAll;
  const key = `${JSON.stringify(route)}@${offset}${all ? "+all" : ""}`; // the route read, not the hash now
  if (pages.asked === key) return;
  pages.asked = key;
  pages.data = null;
  let msg;
  if (route.page === "ladder") msg = { type: "leaderboard", rules: route.rules, limit: 50, ...(all ? { provisional: true } : {}) };
  else if (route.page === "profile") msg = { type: "profile", name: route.name };
  else msg = { type: "history", of: route.of, name: route.name, offset, limit: HISTORY_PAGE };
  if (msg.name === undefined) delete msg.name;
  wire.request(msg, { quiet: true }).then((reply) => {
    if (pages.asked !== key) return; // the player went on to another page meanwhile
    pages.data = reply;
    render();
  });
}

function onRoute() {
  pages.route = readRoute();
  pages.asked = null;
  loadPage();
  render();
}

function navigation() {
  const route = pages.route;
  const here = route ? route.page : "home";
  const link = (id, href, label, page) => h("a", { id, href, class: here === page ? "current" : "",
    "aria-current": here === page ? "page" : null }, label);
  return [
    link("nav-home", "#", atTable(state) ? t("Table") : t("Tables"), "home"),
    hasFeature(state, "ratings") ? link("nav-ladder", "#ladder", t("Leaderboard"), "ladder") : null,
    hasFeature(state, "history") ? link("nav-history", "#history-recent", t("Matches"), "history") : null,
  ];
}

function render() {
  const screen = screenName();
  const body = document.body.dataset;
  body.screen = screen;
  body.turn = myTurn(state) ? "mine" : "wait";
  body.serial = String(state.serial);
  body.phase = state.view ? state.view.phase : "none";
  body.tablePhase = state.table ? state.table.phase : "none";
  body.link = state.status;
  renderHeader();
  // A tab in the background says when the decision is ours (the terminal's /bell).
  document.title = myTurn(state) ? t("▶ Your move · Pis Yedili") : "Pis Yedili";
  let content;
  if (screen === "name") {
    const saved = sessionStore.load();
    if (state.status === "connecting" || state.status === "reconnecting") {
      content = h("section", { class: "panel" }, h("p", { role: "status" }, t("Connecting…")));
    } else {
      // What was typed stays in the field after a refusal, with the reason beside it.
      content = h("div", { class: "entry" },
        nameScreen(state, act, { name: ui.askedName ?? ((autopilot && autopilot.name) || (saved && saved.name) || ""),
          error: acc.pendingLogin ? null : ui.nameError }),
        h("section", { class: "panel" }, loginEntry(act, acc.error)));
    }
  } else if (screen === "lobby") {
    content = h("div", { class: "lobby-page" }, renamedNote(), ratedNotice(acc, act),
      invitesPanel(state, ui, act),
      lobbyScreen(state, act, { codeError: ui.codeError, registered: acc.registered }),
      h("div", { class: "lobby-side" }, accountPanel(state, acc, act), moderationPanel(acc, mod, act)));
  } else if (screen === "ladder") {
    content = ladderPage(pages.data, pages.route.rules, act, pages.ladderAll);
  } else if (screen === "profile") {
    content = profilePage(pages.route.name, pages.data);
  } else if (screen === "history") {
    content = historyPage(pages.route, pages.data, act);
  } else if (screen === "replay") {
    content = replayPage(pages.route.match, replays);
  } else if (atTable(state) && acc.notice) {
    content = h("div", {}, ratedNotice(acc, act), tableScreen(state, ui, act, performance.now()));
  } else {
    content = [invitesPanel(state, ui, act), tableScreen(state, ui, act, performance.now())];
  }
  const banner = state.me ? connectionBanner(state, act, performance.now()) : null;
  // While the link is down, the table's controls take no input: nothing would arrive.
  main.inert = banner !== null;
  body.banner = banner ? banner.dataset.kind : "none";
  replaceKeepingFocus($("banner-slot"), [banner]);
  replaceKeepingFocus(main, [content].flat());
  fitResults();
  const slider = $("replay-slider");
  if (slider && Number(slider.value) !== replays.index) slider.value = String(replays.index);
  renderLog();
  renderChat();
  if (state.serial !== ui.serialSeen) {
    ui.serialSeen = state.serial;
    if (ui.moveError) {
      ui.moveError = null; // about the last decision, not this one
      render();
      return;
    }
    focusDecision();
  }
}

/** A decision came to us and the keyboard has nothing in hand: put it on the first
 * thing the decision offers, so keyboard play needs no hunting with Tab. */
function focusDecision() {
  const active = document.activeElement;
  if (active && active !== document.body && document.contains(active)) return;
  const target = document.querySelector("#hand .legal, #muamele .legal, #draw:not([disabled]), #pass:not([disabled])");
  if (target) target.focus({ preventScroll: true });
}

function tick() {
  const now = performance.now();
  for (const el of document.querySelectorAll(".timer[data-deadline]")) {
    const text = timeLeft(Number(el.dataset.deadline), now);
    if (el.textContent !== text) el.textContent = text;
    el.classList.toggle("low", Number(el.dataset.deadline) - now < 10000);
  }
  tickBanner(now);
  // The countdown reached zero: the try is due (the wire starts it by itself).
  if (state.retryAt !== null && state.retryAt <= now && $("banner-countdown")?.dataset.at) render();
}

// ------------------------------------------------------------------- keyboard

function typing(target) {
  return target instanceof HTMLElement && (target.isContentEditable
    || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
}

function onKey(ev) {
  if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
  if (ui.jack) {
    if (ev.key === "Escape") {
      act.cancelJack();
      ev.preventDefault();
      return;
    }
    const suit = typing(ev.target) ? null : parseSuit(ev.key);
    if (suit && jackSuits(ui.jack, state.moves).includes(suit)) {
      act.move({ kind: "play", card: ui.jack, suit });
      ev.preventDefault();
    }
    return;
  }
  const group = ev.target instanceof HTMLElement ? ev.target.closest("#hand, .spread, .suit-buttons") : null;
  if (group && ["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", "Home", "End"].includes(ev.key)) {
    const buttons = [...group.querySelectorAll("button")];
    const at = buttons.indexOf(ev.target);
    const step = ev.key === "ArrowLeft" || ev.key === "ArrowUp" ? -1 : 1;
    let next = at + step;
    if (ev.key === "Home") next = 0;
    if (ev.key === "End") next = buttons.length - 1;
    if (buttons.length) buttons[(next + buttons.length) % buttons.length].focus();
    ev.preventDefault();
    return;
  }
  if (typing(ev.target) || screenName() !== "table") return;
  const key = ev.key.toLowerCase();
  if (key === "d" && !$("draw")?.disabled) {
    act.move({ kind: "draw" });
    ev.preventDefault();
  } else if (key === "p" && !$("pass")?.disabled) {
    act.move({ kind: "pass" });
    ev.preventDefault();
  } else if (key === "/" || key === "m") {
    $("move-input")?.focus();
    ev.preventDefault();
  } else if (key === "h") {
    // The first card that can be played, else the first card.
    (document.querySelector("#hand .legal") || document.querySelector("#hand button"))?.focus();
    ev.preventDefault();
  }
}

// -------------------------------------------------------------------- language

/** Everything drawn again in the language (or digits) now in use, without reconnecting:
 * the frame, the screen, and the log and chat lists from the state. */
function relabel() {
  renderFrame(relabel);
  for (const id of ["log", "chat-list"]) $(id).replaceChildren();
  logShown = 0;
  chatShown = 0;
  render();
  renderChatHelp();
}

// ------------------------------------------------------------------------ start

function boot() {
  document.addEventListener("keydown", onKey);
  installDrag({ play: (card) => act.playCard(card), legal: (card) => myTurn(state) && playable(state.moves).has(card) });
  $("chat-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const input = $("chat-input");
    const text = input.value.trim();
    if (!text) return;
    act.chat(text).then((reply) => {
      ui.chatError = reply.type === "ok" ? null : () => refusalText(reply);
      if (reply.type === "ok") input.value = "";
      renderChatHelp();
    });
  });
  const chatInput = $("chat-input");
  const help = h("p", { id: "chat-help", class: "chat-help", "aria-live": "polite", hidden: true });
  $("chat-form").after(help);
  chatInput.setAttribute("aria-describedby", "chat-help");
  chatInput.addEventListener("input", () => {
    ui.chatError = null;
    renderChatHelp();
  });
  const slot = h("div", { id: "banner-slot", class: "banner-slot" });
  document.querySelector(".layout").before(slot);
  setInterval(tick, 250);
  window.addEventListener("hashchange", onRoute);
  window.addEventListener("resize", fitResults);
  pages.route = readRoute();
  const saved = sessionStore.load();
  const login = loginStore.load();
  if (autopilot && autopilot.name) {
    ui.askedName = autopilot.name;
    wire.start(autopilot.name);
  }
  else if (saved && saved.token) wire.start(saved.name); // a reload: resume the seat
  else if (login) wire.start(login.name); // a new visit: a guest, then the kept login
  render();
}

// Tests and curious people may read the state; nothing reads it back from here.
// `useLanguage` takes a compiled catalog as the page would fetch it (a test's own).
window.pisyedili = { state, wire, sortHand, flights, played: notice.played, ui, acc,
  useLanguage(data) {
    useLanguage(data);
    relabel();
  } };
await Promise.all([loadLanguage(startLanguage()), loadRuleLines()]);
renderFrame(relabel);
boot();
