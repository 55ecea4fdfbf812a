// Card codes as the protocol writes them (rank then suit letter: "7h", "10d", "Js")
// and as people see and type them. Pure functions: no DOM here. The notation (7♥, 10s)
// is the same in every language, as the terminal's; suit and rank names translate.

import { language, t } from "./words.js";

export const SUITS = ["c", "d", "h", "s"];
export const RANKS = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"];
export const SUIT_SYMBOLS = { c: "♣", d: "♦", h: "♥", s: "♠" };

/** A suit's name in the language in use ("hearts"). */
export function suitName(suit) {
  switch (suit) {
    case "c": return t("clubs");
    case "d": return t("diamonds");
    case "h": return t("hearts");
    case "s": return t("spades");
    default: return suit;
  }
}

function rankName(rank) {
  switch (rank) {
    case "J": return t("jack");
    case "Q": return t("queen");
    case "K": return t("king");
    case "A": return t("ace");
    default: return rank;
  }
}

// Shown in the order of the terminal client (♣ ♥ ♠ ♦): neighbouring suits alternate
// colours, so a hand never shows two red or two black groups side by side.
const DISPLAY_ORDER = { c: 0, h: 1, s: 2, d: 3 };

const SUIT_ALIASES = {
  c: "c", d: "d", h: "h", s: "s",
  club: "c", clubs: "c", diamond: "d", diamonds: "d",
  heart: "h", hearts: "h", spade: "s", spades: "s",
  "♣": "c", "♦": "d", "♥": "h", "♠": "s", "♧": "c", "♢": "d", "♡": "h", "♤": "s",
};
const RANK_ALIASES = Object.fromEntries([
  ...RANKS.map((r) => [r.toLowerCase(), r]),
  ["t", "10"], ["jack", "J"], ["queen", "Q"], ["king", "K"], ["ace", "A"],
]);

export function rankOf(card) {
  return String(card).slice(0, -1);
}

export function suitOf(card) {
  return String(card).slice(-1);
}

export function isRed(suit) {
  return suit === "d" || suit === "h";
}

/** "7♥": what a card looks like in running text. */
export function cardText(card) {
  return rankOf(card) + (SUIT_SYMBOLS[suitOf(card)] ?? suitOf(card));
}

/** "7 of hearts": what a screen reader says for a card. */
export function cardName(card) {
  const rank = rankName(rankOf(card));
  // One text a suit: languages inflect the suit's name after the rank.
  switch (suitOf(card)) {
    case "c": return t("{rank} of clubs", { rank });
    case "d": return t("{rank} of diamonds", { rank });
    case "h": return t("{rank} of hearts", { rank });
    case "s": return t("{rank} of spades", { rank });
    default: return `${rank} ${suitOf(card)}`;
  }
}

export function parseSuit(text) {
  const low = String(text).trim().toLowerCase();
  return SUIT_ALIASES[low] ?? (language.typed.suits || {})[low] ?? null;
}

/** "draw" or "pass" for a word the language in use types for it (çek, برداشتن...). */
function typedMove(low) {
  return ["draw", "pass"].find((kind) => (language.typed[kind] || []).includes(low)) ?? null;
}

export function parseRank(text) {
  return RANK_ALIASES[String(text).trim().toLowerCase()] ?? null;
}

/** Canonical code ("10s", "Jh") from forgiving text ("10S", "ts", "j♥"), else null. */
export function parseCard(text) {
  const low = String(text).trim().toLowerCase();
  if (!low || /\s/.test(low)) return null;
  for (const split of [low.length - 1, low.length - 2]) {
    if (split < 1) continue;
    const rank = parseRank(low.slice(0, split));
    const suit = parseSuit(low.slice(split));
    if (rank && suit) return rank + suit;
  }
  return null;
}

function displayKey(card) {
  return [DISPLAY_ORDER[suitOf(card)] ?? 9, RANKS.indexOf(rankOf(card))];
}

/** The hand in display order: by suit (alternating colours) then rank, or by rank
 * then suit (pairs and sevens together). The order depends only on the cards held, so
 * a card keeps its place from turn to turn. */
export function sortHand(hand, order = "suit") {
  return [...hand].sort((a, b) => {
    const [sa, ra] = displayKey(a);
    const [sb, rb] = displayKey(b);
    return order === "rank" ? ra - rb || sa - sb : sa - sb || ra - rb;
  });
}

/** What a typed move means, given the legal moves the server offered.
 *
 * Returns {move} (send it), {jack} (a jack chosen without a suit: ask which),
 * or {error} (tell the player). Legality stays the server's call: a well-formed move it
 * did not offer is still sent, so the player gets the server's reason and rule.
 */
export function parseMoveText(text, moves, hand) {
  const low = String(text).trim().toLowerCase();
  if (!low) return { error: t("Type a card (7h, 10s, Jh>s), draw, pass or pick N.") };
  const local = typedMove(low);
  if (low === "d" || low === "draw" || local === "draw") return { move: { kind: "draw" } };
  if (low === "p" || low === "pass" || local === "pass") return { move: { kind: "pass" } };
  const pick = /^(?:pick\s*)?(\d+)$/.exec(low);
  if (pick && moves.some((m) => m.kind === "pick")) {
    return { move: { kind: "pick", position: Number(pick[1]) - 1 } };
  }
  const jackSuit = /^(\S+?)\s*(?:[\s>:/=-])\s*(\S+)$/.exec(low);
  let card = parseCard(low);
  let suit = null;
  if (!card && jackSuit) {
    card = parseCard(jackSuit[1]);
    suit = parseSuit(jackSuit[2]);
    if (card && !suit) return { error: t("\"{text}\" is not a suit (c, d, h or s).", { text: jackSuit[2] }) };
  }
  if (!card) return { error: t("\"{text}\" is not a card or a move.", { text: text.trim() }) };
  if (hand && hand.length && !hand.includes(card)) {
    return { error: t("You do not hold {card}.", { card: cardText(card) }) };
  }
  if (rankOf(card) === "J") {
    if (suit) return { move: { kind: "play", card, suit } };
    const offered = jackSuits(card, moves);
    if (offered.length === 1 && offered[0] === null) return { move: { kind: "play", card } };
    return { jack: card };
  }
  if (suit) return { error: t("Only a jack names a suit (C5, K8).") };
  return { move: { kind: "play", card } };
}

/** The suits the server lets this jack name; [null] when it names none (the classic
 * opening jack of clubs, C2); [] when the jack is not playable now. */
export function jackSuits(card, moves) {
  const out = [];
  for (const m of moves) {
    if (m.kind === "play" && m.card === card) out.push(m.suit ?? null);
  }
  return out;
}

/** The cards of the hand the offered moves let us play. */
export function playable(moves) {
  return new Set(moves.filter((m) => m.kind === "play").map((m) => m.card));
}

export function sameMove(a, b) {
  return a.kind === b.kind && (a.card ?? null) === (b.card ?? null)
    && (a.suit ?? null) === (b.suit ?? null) && (a.position ?? null) === (b.position ?? null);
}
