// Accounts: register, log in, log out, change the password, from the lobby. The page
// keeps the login token an `account` gives (never the password) in localStorage, as
// the terminal client keeps it per server, and logs in with it on the next visit.

import { h } from "./dom.js";
import { refusalText } from "./refusals.js";
import { said, t, tn } from "./words.js";

const LOGIN_KEY = "pisyedili.login";

/** A name as the server compares it, near enough: case, width forms and spacing aside.
 * The server also folds look-alike letters; a pair only it would match is simply not
 * logged in by itself, which is the safe way to miss. */
function nameKey(name) {
  return name.normalize("NFKC").replace(/\s+/g, " ").trim().toLowerCase();
}

/** The remembered login: {name, token, operator}; one per origin, so per server.
 * `operator` only decides which forms the page shows: the server checks every request.
 * With `name`, only a login of that name: a page that connected under another name
 * (someone else at the same browser) never logs in to this account. */
export const loginStore = {
  load(name = null) {
    try {
      const data = JSON.parse(localStorage.getItem(LOGIN_KEY) || "null");
      const ok = data && typeof data.name === "string" && typeof data.token === "string";
      return ok && (name === null || nameKey(name) === nameKey(data.name)) ? data : null;
    } catch {
      return null;
    }
  },
  save(data) {
    try {
      localStorage.setItem(LOGIN_KEY, JSON.stringify(data));
    } catch {
      /* storage refused: logged in for this page only */
    }
  },
  forget() {
    try {
      localStorage.removeItem(LOGIN_KEY);
    } catch {
      /* as above */
    }
  },
};

export function createAccount() {
  return {
    registered: false,
    operator: false,
    error: null, // the last account request's refusal, in words (see said())
    info: null, // what the last one did
    notice: null, // a rated table refused a guest a seat: {table}
    pendingLogin: null, // {name, password} from the name screen, sent once welcomed
  };
}

/** Plain words for the codes an account request is refused with. */
export function accountError(reply) {
  switch (reply.code) {
    case "bad_login": return t("That name and password do not match.");
    case "weak_password": return tn("The password needs at least {n} character.", "The password needs at least {n} characters.", reply.limit ?? 8);
    case "name_registered": return t("Someone has registered this name already: log in, or play under another name.");
    case "too_many_logins": return tn("Too many tries: wait {n} second and try again.", "Too many tries: wait {n} seconds and try again.", Math.ceil(Number(reply.retry_after ?? 60)));
    case "banned": return t("This account is banned from the server.");
    case "already_at_table": return t("Leave the table first.");
    case "tls_required": return t("This server takes passwords over a secure connection (https) only.");
    case "logged_in": return t("You are logged in already.");
    case "not_logged_in": return t("You are not logged in.");
    default: return refusalText(reply);
  }
}

/** What an `account` answer means for the page: who we are now, and what to keep. */
export function adoptAccount(acc, state, msg) {
  acc.registered = Boolean(msg.registered);
  acc.operator = Boolean(msg.operator);
  if (state.me) Object.assign(state.me, { player: msg.player, name: msg.name });
  if (!acc.registered) loginStore.forget();
  else if (msg.login) loginStore.save({ name: msg.name, token: msg.login });
}

function field(id, label, attrs = {}) {
  return h("div", { class: "field" },
    h("label", { for: id }, label),
    h("input", { id, name: id, dataset: { key: id }, ...attrs }));
}

function messages(acc) {
  return [
    acc.error ? h("p", { class: "error", role: "alert", id: "account-error" }, said(acc.error)) : null,
    acc.info ? h("p", { class: "good", role: "status", id: "account-info" }, said(acc.info)) : null,
  ];
}

/** The lobby's account panel: a guest registers or logs in; a player changes the
 * password or logs out. */
export function accountPanel(state, acc, act) {
  if (!state.me || !state.me.features.includes("accounts")) return null;
  if (!acc.registered) {
    return h("div", { class: "panel account-panel", id: "account-panel" },
      h("h3", {}, t("Account")),
      h("p", { class: "help" }, t("You play as the guest {name}. Register this name to keep it and be rated, or log in to your account.", { name: state.me.name })),
      messages(acc),
      h("form", { class: "register-form", id: "register-form", dataset: { key: "register-form" }, onsubmit: (ev) => {
        ev.preventDefault();
        const f = ev.currentTarget.elements;
        act.register(f["register-password"].value, f["register-again"].value);
      } },
        h("h4", {}, t("Register {name}", { name: state.me.name })),
        h("div", { class: "fields" },
          field("register-password", t("Password"), { type: "password", autocomplete: "new-password", minlength: 8, required: true }),
          field("register-again", t("The password again"), { type: "password", autocomplete: "new-password", required: true })),
        h("button", { type: "submit", id: "register", dataset: { key: "register" } }, t("Register"))),
      h("form", { class: "login-form", id: "login-form", dataset: { key: "login-form" }, onsubmit: (ev) => {
        ev.preventDefault();
        const f = ev.currentTarget.elements;
        act.login(f["login-name"].value.trim(), f["login-password"].value);
      } },
        h("h4", {}, t("Log in")),
        h("div", { class: "fields" },
          field("login-name", t("Account name"), { autocomplete: "username", maxlength: 24, required: true }),
          field("login-password", t("Password"), { type: "password", autocomplete: "current-password", required: true })),
        h("button", { type: "submit", id: "login", dataset: { key: "login" } }, t("Log in"))));
  }
  return h("div", { class: "panel account-panel", id: "account-panel" },
    h("h3", {}, t("Account")),
    h("p", { id: "account-status" }, t("Logged in as {name}.", { name: state.me.name }),
      acc.operator ? h("span", { class: "tag host", id: "operator-tag" }, t("operator")) : null),
    messages(acc),
    h("form", { class: "passwd-form", id: "passwd-form", dataset: { key: "passwd-form" }, onsubmit: (ev) => {
      ev.preventDefault();
      const f = ev.currentTarget.elements;
      act.passwd(f["passwd-old"].value, f["passwd-new"].value);
    } },
      h("h4", {}, t("Change the password")),
      h("div", { class: "fields" },
        field("passwd-old", t("Current password"), { type: "password", autocomplete: "current-password", required: true }),
        field("passwd-new", t("New password"), { type: "password", autocomplete: "new-password", minlength: 8, required: true })),
      h("p", { class: "help" }, t("Your other devices will have to log in again.")),
      h("button", { type: "submit", id: "passwd", dataset: { key: "passwd" } }, t("Change the password"))),
    h("form", { class: "logout-form", dataset: { key: "logout-form" }, onsubmit: (ev) => {
      ev.preventDefault();
      act.logout(ev.currentTarget.elements.everywhere.checked);
    } },
      h("div", { class: "field check" },
        h("input", { id: "logout-everywhere", name: "everywhere", type: "checkbox", dataset: { key: "logout-everywhere" } }),
        h("label", { for: "logout-everywhere" }, t("On every device"))),
      h("button", { type: "submit", id: "logout", dataset: { key: "logout" } }, t("Log out"))));
}

/** The name screen's way in for a registered player: name and password. */
export function loginEntry(act, error) {
  return h("form", { class: "name-form login-entry", id: "login-entry", dataset: { key: "login-entry" }, onsubmit: (ev) => {
    ev.preventDefault();
    const f = ev.currentTarget.elements;
    act.connectAndLogin(f["entry-name"].value.trim(), f["entry-password"].value);
  } },
    h("h3", {}, t("Have an account?")),
    h("div", { class: "fields" },
      field("entry-name", t("Account name"), { autocomplete: "username", maxlength: 24, required: true }),
      field("entry-password", t("Password"), { type: "password", autocomplete: "current-password", required: true })),
    error ? h("p", { class: "error", role: "alert", id: "entry-error" }, said(error)) : null,
    h("button", { type: "submit", id: "entry-login", dataset: { key: "entry-login" } }, t("Log in and play")));
}

/** A rated table would not seat a guest: why, in plain words, and the way to a seat. */
export function ratedNotice(acc, act) {
  if (!acc.notice) return null;
  return h("div", { class: "panel notice", id: "rated-notice", role: "alert" },
    h("p", {}, t("This table is rated: only players with an account may take a seat, so that ratings follow real people. You can watch it as a guest, or log in (or register your name) and come back to play.")),
    h("div", { class: "buttons" },
      h("button", { type: "button", id: "notice-login", class: "primary", dataset: { key: "notice-login" },
        onclick: () => act.toAccount() }, t("Log in or register")),
      h("button", { type: "button", id: "notice-watch", dataset: { key: "notice-watch" },
        onclick: () => act.dismissNotice() }, t("Watch"))));
}
