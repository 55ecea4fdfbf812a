// Sound and notices: a short sound on your turn, on a seven's penalty and at a deal's
// end; a browser notification on your turn while the tab is hidden. Both are off until
// the player turns them on (remembered in localStorage); notification permission is
// asked for only then, from that click.

import { t } from "./words.js";

const SOUND_KEY = "pisyedili.sound";
const NOTIFY_KEY = "pisyedili.notify";
export const SOUNDS = ["turn", "penalty", "deal_end"];

function stored(key) {
  try {
    return localStorage.getItem(key) === "on";
  } catch {
    return false;
  }
}

function store(key, on) {
  try {
    localStorage.setItem(key, on ? "on" : "off");
  } catch {
    /* kept for this page only */
  }
}

export const prefs = { sound: stored(SOUND_KEY), notify: stored(NOTIFY_KEY) };

/** What the page played or showed, newest last (read by tests and curious people). */
export const played = [];

const audio = {};

function clip(name) {
  if (!audio[name]) {
    audio[name] = new Audio(`sounds/${name}.wav`);
    audio[name].preload = "auto";
  }
  return audio[name];
}

function remember(entry) {
  played.push(entry);
  if (played.length > 50) played.splice(0, played.length - 50);
}

export function play(name) {
  if (!prefs.sound) return;
  const a = clip(name);
  a.currentTime = 0;
  const entry = { kind: "sound", name, ok: null };
  remember(entry);
  // A page that may not play yet (no click so far) stays quiet: never an error.
  const done = a.play();
  if (done && done.then) done.then(() => { entry.ok = true; }, () => { entry.ok = false; });
}

export function setSound(on) {
  prefs.sound = on;
  store(SOUND_KEY, on);
  if (on) for (const name of SOUNDS) clip(name).load();
}

function canNotify() {
  return typeof Notification !== "undefined";
}

/** Turn notices on or off; on asks for permission (once the browser has not decided). */
export async function setNotify(on) {
  if (on && canNotify() && Notification.permission === "default") {
    try {
      await Notification.requestPermission();
    } catch {
      /* an old browser's callback form: the permission stays as it was */
    }
  }
  prefs.notify = on && canNotify() && Notification.permission === "granted";
  store(NOTIFY_KEY, prefs.notify);
  return prefs.notify;
}

export function notifyBlocked() {
  return canNotify() && Notification.permission === "denied";
}

/** Our turn came: a notification if the tab is hidden (the title says it too). */
export function notifyTurn(body) {
  if (!prefs.notify || !document.hidden || !canNotify() || Notification.permission !== "granted") return;
  const note = new Notification(t("Your move · Pis Yedili"), { body, tag: "pisyedili-turn" });
  note.onclick = () => {
    window.focus();
    note.close();
  };
  remember({ kind: "notification", body });
}

/** The sounds one update calls for: our turn, a penalty, a deal's end. */
export function soundsFor(events, turnCame) {
  const names = new Set();
  for (const ev of events) {
    if (ev.event === "penalty") names.add("penalty");
    if (ev.event === "deal_end") names.add("deal_end");
  }
  if (turnCame && !names.size) names.add("turn");
  return [...names];
}
