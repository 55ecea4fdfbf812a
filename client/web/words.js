// Every word the page shows goes through t() or tn(), gettext-style: the English text
// is its own key, so a language catalog can take the page over by looking each one up
// (CATALOG maps an English text, or "singular\u0004plural" for plurals, to its
// translation). Placeholders are {name}, filled from `fields`; names, chat and table
// names are passed as fields and never translated.

/** The loaded catalog: English text → translated text (empty: English). */
const CATALOG = new Map();

function fill(text, fields) {
  return text.replace(/\{(\w+)\}/g, (whole, key) => (key in fields ? String(fields[key]) : whole));
}

/** The page's text for `english`, with `{name}` placeholders filled from `fields`. */
export function t(english, fields = {}) {
  return fill(CATALOG.get(english) ?? english, fields);
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
  if (plural) pluralIndex = plural;
}
