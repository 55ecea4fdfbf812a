// Card codes as the protocol writes them (rank then suit letter: "7h", "10d", "Js")
// and as people see and type them. Pure functions: no DOM here.

export const SUITS = ["c", "d", "h", "s"];
export const RANKS = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"];
export const SUIT_NAMES = { c: "clubs", d: "diamonds", h: "hearts", s: "spades" };
export const SUIT_SYMBOLS = { c: "♣", d: "♦", h: "♥", s: "♠" };
const RANK_NAMES = { J: "jack", Q: "queen", K: "king", A: "ace" };

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
  const rank = rankOf(card);
  return `${RANK_NAMES[rank] ?? rank} of ${SUIT_NAMES[suitOf(card)] ?? suitOf(card)}`;
}

export function parseSuit(text) {
  return SUIT_ALIASES[String(text).trim().toLowerCase()] ?? null;
}

export function parseRank(text) {
  return RANK_ALIASES[String(text).trim().toLowerCase()] ?? null;
}

/** Canonical code ("10s", "Jh") from forgiving text ("10S", "ts", "j♥"), else null. */
export function parseCard(text) {
  const t = String(text).trim().toLowerCase();
  if (!t || /\s/.test(t)) return null;
  for (const split of [t.length - 1, t.length - 2]) {
    if (split < 1) continue;
    const rank = parseRank(t.slice(0, split));
    const suit = parseSuit(t.slice(split));
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
  const t = String(text).trim().toLowerCase();
  if (!t) return { error: "Type a card (7h, 10s, Jh>s), draw, pass or pick N." };
  if (t === "d" || t === "draw") return { move: { kind: "draw" } };
  if (t === "p" || t === "pass") return { move: { kind: "pass" } };
  const pick = /^(?:pick\s*)?(\d+)$/.exec(t);
  if (pick && moves.some((m) => m.kind === "pick")) {
    return { move: { kind: "pick", position: Number(pick[1]) - 1 } };
  }
  const jackSuit = /^(\S+?)\s*(?:[\s>:/=-])\s*(\S+)$/.exec(t);
  let card = parseCard(t);
  let suit = null;
  if (!card && jackSuit) {
    card = parseCard(jackSuit[1]);
    suit = parseSuit(jackSuit[2]);
    if (card && !suit) return { error: `"${jackSuit[2]}" is not a suit (c, d, h or s).` };
  }
  if (!card) return { error: `"${text.trim()}" is not a card or a move.` };
  if (hand && hand.length && !hand.includes(card)) {
    return { error: `You do not hold ${cardText(card)}.` };
  }
  if (rankOf(card) === "J") {
    if (suit) return { move: { kind: "play", card, suit } };
    const offered = jackSuits(card, moves);
    if (offered.length === 1 && offered[0] === null) return { move: { kind: "play", card } };
    return { jack: card };
  }
  if (suit) return { error: "Only a jack names a suit (C5, K8)." };
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
