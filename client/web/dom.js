// A few lines of DOM building, so the views read as the markup they make.

import { cardName, cardText, isRed, rankOf, SUIT_SYMBOLS, suitName, suitOf } from "./cards.js";
import { t, when } from "./words.js";

/** h("button", {class: "x", onclick: f}, "text", child...) */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      el[key] = value; // a property, so `morph` can hand a kept element the new one
    } else if (key === "class") {
      el.className = value;
    } else if (key === "dataset") {
      Object.assign(el.dataset, value);
    } else if (value === true) {
      el.setAttribute(key, "");
    } else {
      el.setAttribute(key, String(value));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** A moment (`seconds` since the epoch) as the language writes it, machine-readable too. */
export function timeView(seconds) {
  return h("time", { datetime: new Date(seconds * 1000).toISOString() }, when(seconds));
}

/** A translated text whose `{name}` placeholders are nodes (keys, links, badges):
 * t() leaves the placeholders it has no field for, and here they become `nodes[name]`. */
export function fillNodes(text, nodes) {
  return String(text).split(/\{(\w+)\}/).map((part, i) => (i % 2 ? nodes[part] ?? `{${part}}` : part))
    .filter((part) => part !== "");
}

/** Text with its suit symbols coloured: the symbol says the suit, the colour helps. */
export function richText(text) {
  const out = [];
  for (const part of String(text).split(/([♥♦♣♠])/)) {
    if (!part) continue;
    if (part === "♥" || part === "♦") out.push(h("span", { class: "red" }, part));
    else if (part === "♣" || part === "♠") out.push(h("span", { class: "black" }, part));
    else out.push(part);
  }
  return out;
}

/** The face of a card: rank and suit in the corners, the suit large in the middle. */
export function cardFace(card) {
  const suit = suitOf(card);
  const sym = SUIT_SYMBOLS[suit] ?? "?";
  return [
    h("span", { class: "corner", "aria-hidden": "true" }, h("b", {}, rankOf(card)), h("i", {}, sym)),
    h("span", { class: "pip", "aria-hidden": "true" }, sym),
    h("span", { class: "corner flip", "aria-hidden": "true" }, h("b", {}, rankOf(card)), h("i", {}, sym)),
  ];
}

function cardClass(card, extra) {
  return `card face suit-${suitOf(card)} ${isRed(suitOf(card)) ? "red" : "black"} ${extra}`;
}

/** A card that is only looked at (the pile, revealed hands). */
export function cardView(card, extra = "") {
  return h("span", { class: cardClass(card, extra), role: "img", "aria-label": cardName(card),
    title: cardText(card), dataset: { card } }, cardFace(card));
}

/** A card of the hand: a real button. */
export function cardButton(card, { legal, onclick, key, label }) {
  return h("button", {
    type: "button",
    class: cardClass(card, legal ? "legal" : "idle"),
    "aria-label": label ?? (legal ? t("{card}, playable", { card: cardName(card) }) : cardName(card)),
    "aria-disabled": legal ? null : "true",
    title: cardText(card),
    draggable: "true", // to the pile (drag.js)
    dataset: { card, key },
    onclick,
  }, cardFace(card));
}

export function cardBack(extra = "", attrs = {}) {
  return h("span", { class: `card back ${extra}`, "aria-hidden": "true", ...attrs });
}

export function suitLabel(suit) {
  return h("span", { class: `suit-badge ${isRed(suit) ? "red" : "black"}` },
    h("span", { "aria-hidden": "true" }, SUIT_SYMBOLS[suit]), ` ${suitName(suit)}`);
}

const HANDLERS = ["onclick", "onsubmit", "onchange", "oninput", "onkeydown"];

function keyOf(node) {
  return node.nodeType === Node.ELEMENT_NODE && node.dataset.key ? `${node.nodeName}:${node.dataset.key}` : null;
}

function alike(a, b) {
  return a.nodeType === b.nodeType && a.nodeName === b.nodeName
    && (a.nodeType !== Node.ELEMENT_NODE || (keyOf(a) === keyOf(b) && a.id === b.id));
}

function patch(old, next) {
  if (old.nodeType !== Node.ELEMENT_NODE) {
    if (old.data !== next.data) old.data = next.data;
    return;
  }
  for (const attr of [...old.attributes]) if (!next.hasAttribute(attr.name)) old.removeAttribute(attr.name);
  for (const attr of next.attributes) {
    if (old.getAttribute(attr.name) !== attr.value) old.setAttribute(attr.name, attr.value);
  }
  for (const name of HANDLERS) if (old[name] !== next[name]) old[name] = next[name];
  morphChildren(old, [...next.childNodes]);
}

/** Make `parent`'s children look like `next`, keeping the elements that stay: a button
 * under the pointer or the keyboard stays the same button while the state changes
 * round it (a click is never lost to a redraw, and focus stays put). Elements are
 * matched by `data-key`, the others by position; typed input values are kept. */
export function morphChildren(parent, next) {
  const old = [...parent.childNodes];
  const keyed = new Map();
  for (const node of old) if (keyOf(node)) keyed.set(keyOf(node), node);
  const used = new Set();
  const result = next.map((node, i) => {
    const key = keyOf(node);
    let match = key ? keyed.get(key) : old[i];
    if (!match || used.has(match) || !alike(match, node)) return node;
    used.add(match);
    patch(match, node);
    return match;
  });
  result.forEach((node, i) => {
    const at = parent.childNodes[i];
    if (at !== node) parent.insertBefore(node, at ?? null);
  });
  while (parent.childNodes.length > result.length) parent.lastChild.remove();
}

/** Redraw `el`'s children; if the focused element had to go, focus its successor with
 * the same key (a card kept in hand, a button drawn again). */
export function replaceKeepingFocus(el, children) {
  const active = document.activeElement;
  const key = active && el.contains(active) ? active.dataset.key : null;
  morphChildren(el, children.filter(Boolean));
  if (key && !el.contains(document.activeElement)) {
    const again = el.querySelector(`[data-key="${CSS.escape(key)}"]`);
    if (again) again.focus({ preventScroll: true });
  }
}
