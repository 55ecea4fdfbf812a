// Motion: a played card flies from its seat to the pile, a drawn card from the stock
// to the hand (ours) or to the seat (others'). The DOM is already final when a flight
// starts: the flight is a clone on an overlay that takes no input, so nothing waits on
// it, and it is skipped under `prefers-reduced-motion`.

import { cardBack, cardView } from "./dom.js";

export const FLIGHT_MS = 220;

/** What the page flew, newest last (read by tests and curious people). */
export const flights = [];

function reduced() {
  return window.matchMedia("(prefers-reduced-motion: reduce)").matches;
}

function overlay() {
  let layer = document.getElementById("flights");
  if (!layer) {
    layer = document.createElement("div");
    layer.id = "flights";
    layer.className = "flights";
    layer.setAttribute("aria-hidden", "true");
    document.body.append(layer);
  }
  return layer;
}

function rectOf(selector) {
  const el = selector ? document.querySelector(selector) : null;
  if (!el) return null;
  const r = el.getBoundingClientRect();
  return r.width && r.height ? r : null;
}

/** One clone from `from` to `to` (rects), `source` saying where it came from; it
 * removes itself when done. */
function fly(kind, source, clone, from, to) {
  flights.push({ kind, source, at: performance.now(), ms: FLIGHT_MS });
  if (flights.length > 50) flights.splice(0, flights.length - 50);
  if (!clone.animate) return;
  clone.classList.add("flying");
  Object.assign(clone.style, { left: `${to.left}px`, top: `${to.top}px`, width: `${to.width}px`, height: `${to.height}px` });
  overlay().append(clone);
  const dx = from.left + from.width / 2 - (to.left + to.width / 2);
  const dy = from.top + from.height / 2 - (to.top + to.height / 2);
  const scale = Math.max(0.3, Math.min(1.5, from.width / to.width));
  const anim = clone.animate([
    { transform: `translate(${dx}px, ${dy}px) scale(${scale})`, opacity: 0.85 },
    { transform: "translate(0, 0) scale(1)", opacity: 1 },
  ], { duration: FLIGHT_MS, easing: "cubic-bezier(.2,.7,.3,1)" });
  const done = () => clone.remove();
  anim.onfinish = done;
  anim.oncancel = done;
}

/** Fly the cards of one update's events, after the screen shows their outcome;
 * `handBefore` maps our cards to where they were before the redraw. */
export function animateEvents(events, mySeat, handBefore = null) {
  if (!events.length || reduced()) return;
  const seatSel = (seat) => (seat === mySeat ? ".seat.mine" : `.seat[data-seat="${seat}"]`);
  for (const ev of events) {
    if (ev.event === "play" && ev.card) {
      // Ours from where it was in the hand; others' from their seat.
      const own = ev.seat === mySeat && handBefore ? handBefore.get(ev.card) : null;
      const from = own || rectOf(seatSel(ev.seat));
      const to = rectOf("#pile .top");
      if (from && to) fly("play", own ? "hand" : "seat", cardView(ev.card, "flight"), from, to);
    } else if (ev.event === "draw") {
      const from = rectOf(".stock .card");
      if (!from) continue;
      if (ev.seat === mySeat && Array.isArray(ev.cards)) {
        for (const card of ev.cards) {
          const to = rectOf(`#hand .card.drawn[data-card="${CSS.escape(card)}"]`) || rectOf("#hand");
          if (to) fly("draw", "stock", cardView(card, "flight"), from, to);
        }
      } else {
        const to = rectOf(seatSel(ev.seat));
        if (to) fly("draw", "stock", cardBack("flight"), from, { left: to.left + to.width / 2 - from.width / 2,
          top: to.top + to.height / 2 - from.height / 2, width: from.width, height: from.height });
      }
    }
  }
}
