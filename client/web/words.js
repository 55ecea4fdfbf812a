// Every word the page shows goes through t() or tn(), gettext-style: the English text
// is its own key, so a language catalog can take the page over by looking each one up
// (CATALOG maps an English text, or "singular\u0004plural" for plurals, to its
// translation). Placeholders are {name}, filled from `fields`; names, chat and table
// names are passed as fields and never translated. Numbers in fields are written in
// the language's digits (num()).
//
// The catalogs are client/web/locale/<lang>.json, compiled at install from
// client/locale/<lang>/LC_MESSAGES/web.po: {lang, dir, plural_table, messages, typed},
// `typed` the words a player types for draw, pass and the suits (the language's
// glossary, client/locale/<lang>/glossary.toml).

/** The languages the page speaks, each named in itself (the chooser's labels). */
export const LANGUAGES = [
  ["en", "English"], ["tr", "Türkçe"], ["ru", "Русский"], ["uk", "Українська"], ["fa", "فارسی"], ["th", "ไทย"],
];
const LANG_KEY = "pisyedili.lang";
const DIGITS_KEY = "pisyedili.digits";

/** The loaded catalog: English text → translated text (empty: English). */
const CATALOG = new Map();

/** The language in use: its code, its direction, whether digits are Western, and the
 * words typed in it for moves and suits (cards.js reads them). */
export const language = { lang: "en", dir: "ltr", western: readStored(DIGITS_KEY) === "latn", typed: {} };

let numbers = null; // Intl.NumberFormat of the language in use, made on first use

function readStored(key) {
  try {
    return localStorage.getItem(key);
  } catch {
    return null;
  }
}

function store(key, value) {
  try {
    if (value === null) localStorage.removeItem(key);
    else localStorage.setItem(key, value);
  } catch {
    /* storage refused: the choice holds for this page only */
  }
}

/** The Intl locale of the language in use: latn digits asked for by extension. */
function locale() {
  return language.western ? `${language.lang}-u-nu-latn` : language.lang;
}

/** `n` in the language's digits (Persian's own in fa, unless Western digits are on). */
export function num(n, options) {
  if (options) return new Intl.NumberFormat(locale(), options).format(n);
  numbers ??= new Intl.NumberFormat(locale(), { useGrouping: false });
  return numbers.format(n);
}

/** A date and time (`seconds` since the epoch) as the language writes them. */
export function when(seconds) {
  return new Intl.DateTimeFormat(locale(), { dateStyle: "medium", timeStyle: "short" })
    .format(new Date(seconds * 1000));
}

/** Digits a translation writes itself (Persian's own in fa's rule texts) as Western
 * ones, when the page is set to Western digits. */
const EASTERN_DIGITS = ["۰۱۲۳۴۵۶۷۸۹", "٠١٢٣٤٥٦٧٨٩"];

function western(text) {
  if (!language.western) return text;
  return text.replace(/[۰-۹٠-٩]/g, (d) => String(Math.max(...EASTERN_DIGITS.map((set) => set.indexOf(d)))));
}

function fill(text, fields) {
  return western(text).replace(/\{(\w+)\}/g, (whole, key) => {
    if (!(key in fields)) return whole;
    const value = fields[key];
    return typeof value === "number" ? num(value) : String(value);
  });
}

/** The page's text for `english`, with `{name}` placeholders filled from `fields`. */
export function t(english, fields = {}) {
  return fill(CATALOG.get(english) ?? english, fields);
}

/** The translation of a text this page does not write as a literal: a rule line, read
 * from rule_lines.json and translated in the terminal's catalog (compiled in here). */
export function translate(english) {
  return western(CATALOG.get(english) ?? english);
}

/** A text kept to be shown later (a refusal, what a request did): a function that
 * words it in the language in use when drawn, or a plain string. */
export function said(text) {
  return typeof text === "function" ? text() : text;
}

/** Plural text: `one` when n is 1, else `other` (English rules; catalogs bring their own). */
export function tn(one, other, n, fields = {}) {
  const all = { n, ...fields };
  const translated = CATALOG.get(`${one}\u0004${other}`);
  if (Array.isArray(translated)) return fill(translated[pluralIndex(n)] ?? other, all);
  return fill(n === 1 ? one : other, all);
}

/** Which plural form `n` takes; English's rule until a catalog sets its own. */
let pluralIndex = (n) => (n === 1 ? 0 : 1);

/** Install a catalog: `entries` as above, `plural` the language's plural rule. */
export function useCatalog(entries, plural) {
  CATALOG.clear();
  for (const [key, value] of Object.entries(entries)) CATALOG.set(key, value);
  pluralIndex = plural || ((n) => (n === 1 ? 0 : 1));
}

/** Install a compiled catalog (the JSON's shape above); null goes back to English. */
export function useLanguage(data) {
  const table = data && Array.isArray(data.plural_table) ? data.plural_table : null;
  useCatalog(data ? data.messages || {} : {},
    table ? (n) => table[n < 200 ? n : 100 + (n % 100)] ?? 0 : null);
  language.lang = data ? data.lang : "en";
  language.dir = data && data.dir === "rtl" ? "rtl" : "ltr";
  language.typed = (data && data.typed) || {};
  numbers = null;
  document.documentElement.lang = language.lang;
  document.documentElement.dir = language.dir;
}

/** The first of the browser's languages the page speaks ("tr-TR" → "tr"), else English. */
export function preferredLanguage(wanted = navigator.languages || [navigator.language]) {
  const known = new Set(LANGUAGES.map(([code]) => code));
  for (const tag of wanted) {
    const base = String(tag || "").toLowerCase().split("-")[0];
    if (known.has(base)) return base;
  }
  return "en";
}

/** The language to start in: the one chosen on this page before, else the browser's. */
export function startLanguage() {
  const chosen = readStored(LANG_KEY);
  return LANGUAGES.some(([code]) => code === chosen) ? chosen : preferredLanguage();
}

/** Fetch and install language `lang`'s catalog (English needs none). A catalog that
 * cannot be had leaves the page in English rather than without words. */
export async function loadLanguage(lang) {
  if (lang === "en") {
    useLanguage(null);
    return;
  }
  try {
    const reply = await fetch(`locale/${lang}.json`);
    if (!reply.ok) throw new Error(`HTTP ${reply.status}`);
    useLanguage(await reply.json());
  } catch {
    useLanguage(null);
  }
}

/** The chooser's pick: remembered, loaded, installed. */
export async function chooseLanguage(lang) {
  store(LANG_KEY, lang);
  await loadLanguage(lang);
}

/** The "Western digits" setting: remembered; numbers drawn after it follow. */
export function setWesternDigits(on) {
  language.western = Boolean(on);
  numbers = null;
  store(DIGITS_KEY, on ? "latn" : null);
}
