// The connection's banner: over the table while the link is down (a countdown to the
// next try and a button to try now), when another tab took the session over (a button
// to take it back), and when the server is gone for good (no more tries).

import { h } from "./dom.js";
import { t, tn } from "./words.js";

/** Seconds until the next try, for the countdown (whole seconds, at least 0). */
export function secondsLeft(at, now) {
  return Math.max(0, Math.ceil((at - now) / 1000));
}

function countdown(at, now) {
  const s = secondsLeft(at, now);
  return tn("Trying again in {n} second.", "Trying again in {n} seconds.", s);
}

/** The banner for the link's state, or null while it is up (or before any welcome). */
export function connectionBanner(state, act, now) {
  const status = state.status;
  if (status === "reconnecting" && state.me) {
    const waiting = state.retryAt !== null && state.retryAt > now;
    return h("div", { class: "banner", id: "banner", role: "alert", dataset: { kind: "lost" } },
      h("strong", {}, t("Connection lost.")), " ",
      h("span", { id: "banner-countdown", class: "countdown", dataset: waiting ? { at: String(state.retryAt) } : {} },
        waiting ? countdown(state.retryAt, now) : t("Trying to reconnect…")),
      h("button", { type: "button", id: "retry-now", class: "primary", disabled: !waiting,
        dataset: { key: "retry-now" }, onclick: () => act.retryNow() }, t("Try now")));
  }
  if (status !== "stopped" || !state.stopReason) return null;
  const why = state.stopReason;
  if (why.type === "replaced") {
    return h("div", { class: "banner", id: "banner", role: "alert", dataset: { kind: "replaced" } },
      h("strong", {}, t("This game continues in another tab or window.")), " ",
      t("This tab stopped; you can take the game back here."),
      h("button", { type: "button", id: "take-back", class: "primary", dataset: { key: "take-back" },
        onclick: () => act.takeBack() }, t("Play here")));
  }
  if (why.type === "gone") {
    const shutdown = why.code === "shutting_down";
    return h("div", { class: "banner", id: "banner", role: "alert", dataset: { kind: "gone" } },
      h("strong", {}, shutdown ? t("The game's server has stopped.") : t("The server cannot be reached.")), " ",
      shutdown ? t("This game is over; start a new one to play again.") : t("The page stopped trying."),
      shutdown ? null : h("button", { type: "button", id: "retry-now", class: "primary",
        dataset: { key: "retry-now" }, onclick: () => act.retryNow() }, t("Try again")));
  }
  return null;
}

/** Keep the banner's countdown current between redraws. */
export function tickBanner(now) {
  const el = document.getElementById("banner-countdown");
  if (!el || !el.dataset.at) return;
  const text = countdown(Number(el.dataset.at), now);
  if (el.textContent !== text) el.textContent = text;
}
