// A refusal in plain words, from its stable error code (docs/protocol.md, Errors): what
// a person can do about it, shown next to what caused it. The server's own message is
// for logs and developers; a code this page does not know (a newer server's) falls back
// to it on an English page, and to a plain "Refused." in any other language.

import { language, t, tn } from "./words.js";

const PLAIN = {
  bad_field: () => t("The server does not take that."),
  missing_field: () => t("Something required is missing."),
  name_registered: () => t("That name belongs to a registered account: choose another."),
  server_full: () => t("The server is full right now: try again in a while."),
  too_many_connections: () => t("Too many connections from your network: close another tab and try again."),
  too_many_sessions: () => t("Too many players from your network: try again later."),
  unsupported_version: () => t("This page is too old for the server: reload it."),
  rate_limited: () => t("Too fast: wait a moment and try again."),
  no_such_table: () => t("No such table: check the invite code and try again."),
  private_table: () => t("That table is private: join it by its invite code."),
  seat_taken: () => t("That seat was just taken: choose another."),
  already_at_table: () => t("You are at a table already: leave it first."),
  game_in_progress: () => t("A match is being played there: you can watch it."),
  value_too_large: () => t("That is too long."),
  not_connected: () => t("Not connected: wait for the connection to come back."),
  not_your_turn: () => t("It is not your turn."),
  illegal_card: () => t("That card cannot be played now."),
  illegal_move: () => t("That move is not allowed now."),
  card_not_in_hand: () => t("That card is not in your hand."),
  deal_over: () => t("The deal is over: no more moves."),
  no_game: () => t("No deal is being played at this table."),
  table_not_ready: () => t("Not every seat is filled and ready yet."),
  not_host: () => t("Only the table's host may do that."),
  not_seated: () => t("Take a seat first."),
  not_at_table: () => t("You are not at a table."),
  no_such_seat: () => t("The table has no such seat."),
  not_a_bot: () => t("That seat does not hold a bot."),
  too_many_tables: () => t("No more tables can be opened now: try again later."),
  bad_options: () => t("Those table options are refused."),
  match_not_over: () => t("A rematch can only be agreed once the match is over."),
  account_required: () => t("Only players with an account take seats at a rated table."),
  bot_account_refused: () => t("This table's host seats no bot accounts."),
  feature_not_negotiated: () => t("This page and the server do not share that feature."),
  internal_error: () => t("The server failed to handle that."),
  cluster_unavailable: () => t("The server cannot reach the rest of its cluster just now: try again in a moment."),
  server_busy: () => t("The server is busy: try again in a moment."),
  not_operator: () => t("Only a server operator may do that."),
  no_such_player: () => t("Nobody of that name is here."),
  invite_self: () => t("You cannot invite yourself."),
  player_busy: () => t("That player is at a table already."),
  not_invitable: () => t("That player's program takes no invitations."),
  table_full: () => t("Your table has no open seat."),
  too_many_invites: () => t("Too many invitations: wait a while and try again."),
  player_elsewhere: () => t("That player, or your table, is on another server of this cluster: invitations do not reach there."),
  no_such_invite: () => t("That invitation is over: it expired, ended or was answered."),
  shutting_down: () => t("The server is shutting down."),
  idle_timeout: () => t("The connection was idle for too long."),
  frame_too_large: () => t("The message was too large for the server."),
  malformed_frame: () => t("The server could not read a message."),
  not_a_map: () => t("The server could not read a message."),
  missing_type: () => t("The server could not read a message."),
  invalid_utf8: () => t("The server could not read a message."),
  bad_key: () => t("The server could not read a message."),
  text_message: () => t("The server could not read a message."),
  ext_not_allowed: () => t("The server could not read a message."),
  too_deep: () => t("The server could not read a message."),
  unknown_type: () => t("The server does not know that request."),
  hello_required: () => t("The server expected a greeting first."),
  already_welcomed: () => t("Already connected."),
  bad_token: () => t("The session expired: starting a new one."),
  handshake_timeout: () => t("The server waited too long for a greeting."),
  too_slow: () => t("The connection was too slow."),
  test_decks_off: () => t("This server deals no stacked decks."),
  no_such_match: () => t("This match is not here: it may be unfinished or forgotten, or it was played at a private table you did not sit at."),
  history_unavailable: () => t("This server keeps no finished matches."),
  accounts_unavailable: () => t("This server keeps no accounts."),
  logged_in: () => t("You are logged in already."),
  not_logged_in: () => t("You are not logged in."),
  bad_login: () => t("That name and password do not match."),
  too_many_logins: (err) => tn("Too many tries: wait {n} second and try again.", "Too many tries: wait {n} seconds and try again.", Math.ceil(Number(err.retry_after ?? 60))),
  weak_password: (err) => tn("The password needs at least {n} character.", "The password needs at least {n} characters.", err.limit ?? 8),
  bad_password: () => t("That password holds a character no password may."),
  tls_required: () => t("This server takes passwords over a secure connection (https) only."),
  bad_network: () => t("That is not an IP address or range."),
  kicked: (err) => sanctionText(err),
  banned: (err) => sanctionText(err),
  muted: (err) => sanctionText(err),
};

/** Every error code this page words (docs/protocol.md, Errors): a test holds it to
 * the protocol's list, so no refusal falls back to the server's English. */
export const WORDED = Object.keys(PLAIN);

/** Why the name was refused, from the server's detail (`name: must not …`). */
function nameReason(err) {
  const detail = String(err.message || "").replace(/^name:\s*/, "");
  if (/kept for the server's bots/.test(detail)) return t("Names like “bot (easy)” are kept for the server's bots: choose another.");
  if (/at most/.test(detail)) return t("That name is too long: 24 characters at most.");
  if (/blank|letter or digit/.test(detail)) return t("A name needs at least one letter or digit.");
  return t("That name cannot be used: choose another, with letters, digits and spaces.");
}

/** A wait in the largest unit that keeps it readable, rounded up ("5 minutes"). */
export function span(seconds) {
  const whole = Math.max(1, Math.ceil(Number(seconds)));
  if (whole >= 2 * 86400) return tn("{n} day", "{n} days", Math.ceil(whole / 86400));
  if (whole >= 2 * 3600) return tn("{n} hour", "{n} hours", Math.ceil(whole / 3600));
  if (whole >= 120) return tn("{n} minute", "{n} minutes", Math.ceil(whole / 60));
  return tn("{n} second", "{n} seconds", whole);
}

/** An operator's kick, ban or mute (the error, or the `muted` notice): what was done,
 * the operator's reason and how long it lasts (the server's `retry_after`). */
export function sanctionText(err) {
  const code = err.type === "muted" ? "muted" : err.code;
  const what = code === "kicked" ? t("An operator removed you from the server.")
    : code === "banned" ? t("You are banned from this server.")
      : t("An operator muted you: you cannot chat.");
  const why = err.reason ? ` ${t("Reason: {reason}.", { reason: err.reason })}` : "";
  const left = typeof err.retry_after === "number" ? err.retry_after : null;
  const until = left === null ? t("Until an operator lifts it.")
    : code === "kicked" ? t("You may come back in {span}.", { span: span(left) })
      : t("It ends in {span}.", { span: span(left) });
  return `${what}${why} ${until}`;
}

/** The plain-words text for an `error` reply. */
export function refusalText(err) {
  if (!err) return "";
  if (err.code === "kicked" || err.code === "banned" || err.code === "muted") return sanctionText(err);
  if ((err.code === "bad_field" || err.code === "missing_field") && err.field === "name") return nameReason(err);
  if (err.code === "bad_field" && err.field === "code") return t("That is not an invite code: codes are letters and digits.");
  const plain = PLAIN[err.code];
  if (plain) return plain(err);
  // A newer server's code: its message is English, for an English page only.
  return language.lang === "en" && err.message ? err.message : t("Refused.");
}
