// The connection: one WebSocket to the server's /ws, one msgpack map per binary
// message, the handshake, request ids, heartbeats, reconnecting and resuming.
// It knows the protocol's envelope, never the game.

import { encode } from "./vendor/msgpack/encode.mjs";
import { decode } from "./vendor/msgpack/decode.mjs";

/** 64-bit integers (a deal record's `seed`, up to 2**64-1) decode as BigInt so no digit
 * is lost; those a Number holds exactly become Numbers again, so the rest of the page
 * does plain arithmetic. */
function exactInts(value) {
  if (typeof value === "bigint") {
    return value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(value) : value;
  }
  if (Array.isArray(value)) return value.map(exactInts);
  if (value && typeof value === "object" && !(value instanceof Uint8Array)) {
    for (const key of Object.keys(value)) value[key] = exactInts(value[key]);
  }
  return value;
}

export const PROTOCOL = 2;
export const FEATURES = ["chat", "rematch", "accounts", "ratings", "history", "moderation", "invites"];
const CLIENT = "pisyedili-web";
const VERSION = "0.1.0";
const SESSION_KEY = "pisyedili.session";
const FRAME_LIMIT = 1048576; // server -> client, docs/protocol.md "Limits"

// Closing codes after which the same hello would fail the same way (docs/protocol.md,
// Errors, "reconnect: no"), and the hello refusals, which always close. A kick or a ban
// ends the session: resuming it fails, and a fresh hello is refused while it lasts.
const FINAL_CODES = new Set(["unsupported_version", "hello_required", "missing_field", "bad_field",
  "kicked", "banned"]);
// The codes after which the server closes a welcomed connection (Errors, "closes").
const CLOSING_CODES = new Set(["frame_too_large", "idle_timeout", "too_slow", "shutting_down",
  "server_full", "too_many_connections", "too_many_sessions", "rate_limited", "kicked", "banned"]);
const BACKOFF_MS = [500, 1000, 2000, 4000, 8000];
// Tries in a row that reach no server before the page gives up (about a minute).
export const MAX_FAILED_TRIES = 10;

/** The session token kept across reloads: the page's origin is the server, so one
 * key per origin is one key per server. */
export const sessionStore = {
  load() {
    try {
      const raw = localStorage.getItem(SESSION_KEY);
      const data = raw ? JSON.parse(raw) : null;
      return data && typeof data.name === "string" ? data : null;
    } catch {
      return null;
    }
  },
  save(data) {
    try {
      localStorage.setItem(SESSION_KEY, JSON.stringify(data));
    } catch {
      /* storage refused (private mode): the session lasts as long as the page */
    }
  },
  forget() {
    try {
      localStorage.removeItem(SESSION_KEY);
    } catch {
      /* as above */
    }
  },
};

export function defaultUrl(loc = window.location) {
  return `${loc.protocol === "https:" ? "wss:" : "ws:"}//${loc.host}/ws`;
}

export class Wire {
  /**
   * onMessage(msg): every server message, replies included, after the wire used it.
   * onStatus(status, detail): "connecting", "open", "welcomed", "reconnecting",
   *   "stopped" (with the reason: an error map, {type: "replaced"}, or {type: "gone"}
 *   when the server is gone for good or was not reached MAX_FAILED_TRIES times).
   */
  constructor({ url, onMessage, onStatus, store = sessionStore, endsWithServer = false }) {
    this.url = url;
    this.onMessage = onMessage;
    this.onStatus = onStatus;
    this.store = store;
    this.ws = null;
    this.nextId = 1;
    this.pending = new Map();
    this.welcomed = false;
    this.stopped = true;
    this.name = null;
    this.attempt = 0;
    this.retryTimer = null;
    this.closing = null; // the closing error the server sent before it hung up
    this.failed = 0; // tries in a row that were not welcomed
    // The server lives only as long as this page's game (`pisyedili play --web`): its
    // `shutting_down` means it is gone for good, so no retry follows.
    this.endsWithServer = endsWithServer;
  }

  /** Connect as `name`, resuming the stored session if there is one. */
  start(name) {
    this.name = name;
    this.stopped = false;
    this.attempt = 0;
    this.failed = 0;
    clearTimeout(this.retryTimer);
    this._open();
  }

  /** Skip the wait before the next try (the "Try now" button). */
  retryNow() {
    if (this.stopped || this.ws) return;
    clearTimeout(this.retryTimer);
    this._open();
  }

  /** Hang up for good (no reconnect). */
  stop(reason = null) {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    if (this.ws) this.ws.close();
    this._failPending();
    this.onStatus("stopped", reason);
  }

  get connected() {
    return this.welcomed && this.ws !== null && this.ws.readyState === WebSocket.OPEN;
  }

  /** Send a request; the promise resolves with its one reply (`error` included), or
   * with an `error` of code `not_connected` when no reply will come. A `quiet` request's
   * reply goes to the promise only, not to `onMessage`. */
  request(msg, { quiet = false } = {}) {
    if (!this.connected) {
      return Promise.resolve({ type: "error", code: "not_connected", message: "not connected" });
    }
    const id = this.nextId++;
    const full = { ...msg, id };
    return new Promise((resolve) => {
      this.pending.set(id, { resolve, msg: full, retries: 0, quiet });
      this._send(full);
    });
  }

  _send(msg) {
    this.ws.send(encode(msg));
  }

  _open() {
    this.welcomed = false;
    this.closing = null;
    this.onStatus(this.attempt ? "reconnecting" : "connecting");
    let ws;
    try {
      ws = new WebSocket(this.url);
    } catch {
      this.failed += 1;
      this._retry();
      return;
    }
    ws.binaryType = "arraybuffer";
    this.ws = ws;
    ws.onopen = () => {
      const saved = this.store.load();
      const hello = { type: "hello", protocol: PROTOCOL, name: this.name, client: CLIENT,
        version: VERSION, features: FEATURES, id: 0 };
      if (saved && saved.token) hello.token = saved.token;
      this._send(hello);
    };
    ws.onmessage = (ev) => this._receive(ev.data);
    ws.onclose = (ev) => {
      if (this.ws !== ws) return;
      if (!this.welcomed) this.failed += 1;
      // The close's reason is the error code when the server closes for one; it stands
      // in for an `error` that did not arrive first (docs/protocol.md, WebSocket).
      if (!this.closing && ev.reason) this.closing = { type: "error", code: ev.reason, message: ev.reason };
      this.ws = null;
      this.welcomed = false;
      this._failPending();
      this._closed();
    };
  }

  _receive(data) {
    if (!(data instanceof ArrayBuffer) || data.byteLength > FRAME_LIMIT) {
      this.ws.close(); // text frames or an oversized body: not this protocol
      return;
    }
    let msg;
    try {
      msg = exactInts(decode(new Uint8Array(data), { useBigInt64: true }));
    } catch {
      this.onMessage({ type: "unreadable" });
      return;
    }
    if (!msg || typeof msg !== "object" || typeof msg.type !== "string") {
      this.onMessage({ type: "unreadable" });
      return;
    }
    this._handle(msg);
  }

  _handle(msg) {
    const kind = msg.type;
    if (kind === "ping") {
      this._send(msg.id === undefined ? { type: "pong" } : { type: "pong", id: msg.id });
      return;
    }
    if (kind === "welcome") {
      this.welcomed = true;
      this.attempt = 0;
      this.failed = 0;
      this.name = msg.name;
      this.store.save({ name: msg.name, token: msg.token });
      this.onStatus("welcomed", msg);
    }
    if (kind === "replaced") {
      this.onMessage(msg);
      this.stop(msg);
      return;
    }
    if (kind === "error" && (!this.welcomed || CLOSING_CODES.has(msg.code))) {
      this.closing = msg; // every refused hello closes, and so do these: a close follows
      // A kept session that expired is no news to the player: a fresh hello follows.
      if (!this.welcomed && msg.code === "bad_token") return;
    }
    if (kind === "error" && msg.code === "rate_limited" && this.pending.has(msg.id)) {
      const p = this.pending.get(msg.id);
      if (p.retries < 3) {
        p.retries += 1;
        setTimeout(() => this.connected && this._send(p.msg),
          1000 * Math.min(Number(msg.retry_after ?? 1), 10));
        return;
      }
    }
    const p = msg.id !== undefined && kind !== "welcome" ? this.pending.get(msg.id) : undefined;
    if (!p || !p.quiet) this.onMessage(msg);
    if (p) {
      this.pending.delete(msg.id);
      p.resolve(msg);
    }
  }

  _closed() {
    if (this.stopped) return;
    const why = this.closing;
    if (why && why.code === "bad_token") {
      this.store.forget(); // the session is gone: a fresh hello, at once
      this.attempt = 0;
      this._open();
      return;
    }
    if (why && FINAL_CODES.has(why.code)) {
      this.stop(why);
      return;
    }
    if ((why && why.code === "shutting_down" && this.endsWithServer) || this.failed >= MAX_FAILED_TRIES) {
      this.stop({ type: "gone", code: why ? why.code : null });
      return;
    }
    this._retry();
  }

  _retry() {
    const delay = BACKOFF_MS[Math.min(this.attempt, BACKOFF_MS.length - 1)];
    this.attempt += 1;
    this.onStatus("reconnecting", { delay, at: performance.now() + delay });
    this.retryTimer = setTimeout(() => this._open(), delay);
  }

  _failPending() {
    const waiting = [...this.pending.values()];
    this.pending.clear();
    for (const p of waiting) {
      p.resolve({ type: "error", code: "not_connected", message: "the connection was lost" });
    }
  }
}
