// The page's watchman, a classic script so that it runs whatever else fails. The
// modules (app.js and everything it imports) load as one graph: if any file of it
// cannot be had (a dropped connection, a server too busy to answer), none of it runs
// and the page stays blank without a word. The failed script's `error` event (and a
// stylesheet's) reaches this listener, which says so, in the player's language when
// its catalog can be had, with a button that loads the page again.

(() => {
  "use strict";

  const LANG_KEY = "pisyedili.lang"; // words.js's: the language chosen on this page
  const CATALOGS = ["tr", "ru", "uk", "fa", "th"];
  /** Marks a text for the extractor (client/locale/web.cfg); `say` translates it. */
  const t = (english) => english;
  let told = false;

  function chosenLanguage() {
    let chosen = null;
    try {
      chosen = localStorage.getItem(LANG_KEY);
    } catch {
      /* storage refused: the browser's languages decide */
    }
    const wanted = chosen ? [chosen] : navigator.languages || [navigator.language];
    for (const tag of wanted) {
      const base = String(tag || "").toLowerCase().split("-")[0];
      if (CATALOGS.includes(base)) return base;
    }
    return "en";
  }

  async function catalog(lang) {
    if (lang === "en") return null;
    try {
      const reply = await fetch(`locale/${lang}.json`);
      return reply.ok ? await reply.json() : null;
    } catch {
      return null; // that failed too: English
    }
  }

  async function tell() {
    if (told) return;
    told = true;
    const data = await catalog(chosenLanguage());
    const messages = (data && data.messages) || {};
    const say = (english) => (typeof messages[english] === "string" && messages[english]) || english;
    if (data) {
      document.documentElement.lang = data.lang;
      document.documentElement.dir = data.dir === "rtl" ? "rtl" : "ltr";
    }
    const box = document.createElement("section");
    box.id = "load-failed";
    box.className = "panel";
    box.setAttribute("role", "alert");
    const text = document.createElement("p");
    text.textContent = say(t("Part of the page could not be loaded. Check your connection, then try again."));
    const retry = document.createElement("button");
    retry.type = "button";
    retry.id = "load-retry";
    retry.textContent = say(t("Try again"));
    retry.addEventListener("click", () => location.reload());
    box.append(text, retry);
    (document.getElementById("main") || document.body).prepend(box);
    retry.focus();
  }

  function failed(event) {
    const part = event.target;
    if (!(part instanceof HTMLScriptElement || (part instanceof HTMLLinkElement && part.rel === "stylesheet"))) return;
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", tell, { once: true });
    else tell();
  }

  // A load's `error` does not bubble: it is seen here, on its way down to its element.
  window.addEventListener("error", failed, true);
})();
