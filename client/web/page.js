// The page's own frame in the language in use: index.html's static texts (each marked
// with a data attribute naming its text here, so the extractor sees every one as a
// t() literal), the keyboard help, and the header's language chooser and digits setting.

import { fillNodes, h } from "./dom.js";
import { chooseLanguage, language, LANGUAGES, setWesternDigits, t } from "./words.js";

/** index.html's texts by their data-t / data-t-label / data-t-placeholder name. */
const STATIC = {
  skip: () => t("Skip to the game"),
  nav: () => t("pages"),
  side: () => t("what happened and chat"),
  "log-title": () => t("What happened"),
  "chat-title": () => t("Chat"),
  "chat-label": () => t("Say something"),
  "chat-placeholder": () => t("Say something…"),
  "chat-send": () => t("Send"),
  "keys-title": () => t("Keyboard"),
};

const kbd = (key) => h("kbd", {}, key);

/** The keyboard help: the keys stay as the keyboard prints them, the words translate. */
function keyLines() {
  return [
    fillNodes(t("{tab} moves between controls; {left} {right} move along your hand; {enter} plays the card."),
      { tab: kbd("Tab"), left: kbd("←"), right: kbd("→"), enter: kbd("Enter") }),
    fillNodes(t("{d} draws, {p} passes, {h} goes to the first card you can play."),
      { d: kbd("D"), p: kbd("P"), h: kbd("H") }),
    fillNodes(t("{slash} or {m}: type a move as in the terminal client ({examples})."),
      { slash: kbd("/"), m: kbd("M"), examples: ["7h", "10s", "Jh>s", "d", "p", "pick 3"]
        .map((code, i) => [i ? ", " : "", h("code", {}, code)]) }),
    fillNodes(t("Naming a suit for a jack: {keys}; {esc} keeps the jack."),
      { keys: ["C", "D", "H", "S"].map((k, i) => [i ? " " : "", kbd(k)]), esc: kbd("Esc") }),
  ].map((nodes) => h("li", {}, nodes));
}

/** The header's settings: the language (each named in itself) and Western digits.
 * Made once and only relabelled after, so the focus stays on the control just used. */
function settings(slot, redraw) {
  if (!slot.firstChild) {
    const select = h("select", { id: "lang-choice", onchange: (ev) => chooseLanguage(ev.currentTarget.value).then(redraw) },
      LANGUAGES.map(([code, name]) => h("option", { value: code, lang: code }, name)));
    const digits = h("input", { type: "checkbox", id: "western-digits",
      onchange: (ev) => { setWesternDigits(ev.currentTarget.checked); redraw(); } });
    slot.append(select, h("label", { class: "digits", for: "western-digits" }, digits, " ", h("span", {})));
  }
  const select = slot.querySelector("#lang-choice");
  select.value = language.lang;
  select.setAttribute("aria-label", t("Language"));
  slot.querySelector("#western-digits").checked = language.western;
  slot.querySelector(".digits span").textContent = t("Western digits");
}

/** Put the page's frame into the language in use; `redraw` draws all of it again. */
export function renderFrame(redraw) {
  for (const el of document.querySelectorAll("[data-t]")) el.textContent = STATIC[el.dataset.t]();
  for (const el of document.querySelectorAll("[data-t-label]")) el.setAttribute("aria-label", STATIC[el.dataset.tLabel]());
  for (const el of document.querySelectorAll("[data-t-placeholder]")) {
    el.setAttribute("placeholder", STATIC[el.dataset.tPlaceholder]());
  }
  document.getElementById("keys-list")?.replaceChildren(...keyLines());
  const slot = document.getElementById("settings");
  if (slot) settings(slot, redraw);
}
