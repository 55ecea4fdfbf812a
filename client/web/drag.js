// Cards dragged from the hand to the pile. A mouse drags by the browser's own drag and
// drop (HTML5); a finger or a pen by pointer events, since a touch screen starts no
// HTML5 drag from a press. A card let go on the pile is played as a click plays it
// (app.js, act.playCard: one the server did not offer is refused in words at the move
// controls); let go anywhere else, it stays in the hand. Clicks and keys play as ever.
//
// The listeners sit on the document, not on the cards, so they survive every redraw.
// While a card is dragged the body says so (`data-drag`: `on`, or over the pile `ok` or
// `no` by whether the card is on offer), which style.css shows round the pile.

const HAND_CARD = "#hand button.card";
const SLOP = 8; // CSS px a finger moves before a press becomes a drag, not a tap
const REACH = 24; // CSS px round the pile that still count as on it: a finger is blunt
const AFTER_DRAG_MS = 500; // the click a touch may send after a drag is not a click

let drag = null; // {card, pointer?, x, y, source?, ghost?}
let draggedAt = -Infinity;

function onPile(x, y) {
  const pile = document.getElementById("pile");
  if (!pile) return false;
  const r = pile.getBoundingClientRect();
  return x >= r.left - REACH && x <= r.right + REACH && y >= r.top - REACH && y <= r.bottom + REACH;
}

function handCard(target) {
  return target instanceof Element ? target.closest(HAND_CARD) : null;
}

/** Listen for drags for good; `play(card)` plays a card let go on the pile, `legal(card)`
 * says whether the moves on offer include it. */
export function installDrag({ play, legal }) {
  const mark = (x, y) => {
    document.body.dataset.drag = !onPile(x, y) ? "on" : legal(drag.card) ? "ok" : "no";
  };
  const end = () => {
    if (drag && drag.ghost) drag.ghost.remove();
    drag = null;
    delete document.body.dataset.drag;
  };
  const release = (x, y) => {
    const { card } = drag;
    const there = onPile(x, y);
    end();
    if (there) play(card);
  };

  // ---------------------------------------------------------------- a mouse: HTML5
  document.addEventListener("dragstart", (ev) => {
    const el = handCard(ev.target);
    if (!el) return;
    if (drag) {
      ev.preventDefault(); // a finger's drag is under way: not a second, the browser's
      return;
    }
    drag = { card: el.dataset.card };
    ev.dataTransfer.setData("text/plain", el.dataset.card);
    ev.dataTransfer.effectAllowed = "move";
    document.body.dataset.drag = "on";
  });
  document.addEventListener("dragover", (ev) => {
    if (!drag || drag.pointer !== undefined) return;
    mark(ev.clientX, ev.clientY);
    // Any card may be let go on the pile: one not on offer is refused in words, which
    // says more than the browser's no-entry cursor would.
    if (onPile(ev.clientX, ev.clientY)) {
      ev.preventDefault();
      ev.dataTransfer.dropEffect = "move";
    }
  });
  document.addEventListener("drop", (ev) => {
    if (!drag || drag.pointer !== undefined) return;
    ev.preventDefault();
    release(ev.clientX, ev.clientY);
  });
  document.addEventListener("dragend", () => {
    if (drag && drag.pointer === undefined) end();
  });

  // ------------------------------------------------------- a finger or a pen: pointers
  document.addEventListener("pointerdown", (ev) => {
    if (ev.pointerType === "mouse" || !ev.isPrimary || drag) return;
    const el = handCard(ev.target);
    if (el) drag = { card: el.dataset.card, pointer: ev.pointerId, x: ev.clientX, y: ev.clientY, source: el };
  });
  document.addEventListener("pointermove", (ev) => {
    if (!drag || drag.pointer !== ev.pointerId) return;
    if (!drag.ghost) {
      if (Math.hypot(ev.clientX - drag.x, ev.clientY - drag.y) < SLOP) return;
      drag.ghost = ghostOf(drag.source);
    }
    drag.ghost.style.transform = `translate(${ev.clientX - drag.x}px, ${ev.clientY - drag.y}px)`;
    mark(ev.clientX, ev.clientY);
    ev.preventDefault();
  }, { passive: false });
  document.addEventListener("pointerup", (ev) => {
    if (!drag || drag.pointer !== ev.pointerId) return;
    if (!drag.ghost) {
      drag = null; // a tap: its click plays the card
      return;
    }
    draggedAt = performance.now();
    release(ev.clientX, ev.clientY);
  });
  document.addEventListener("pointercancel", (ev) => {
    if (drag && drag.pointer === ev.pointerId) end();
  });
  // A touch dragged and let go may still click the card it started on.
  document.addEventListener("click", (ev) => {
    if (performance.now() - draggedAt < AFTER_DRAG_MS && handCard(ev.target)) {
      draggedAt = -Infinity;
      ev.preventDefault();
      ev.stopPropagation();
    }
  }, true);
}

/** The card under the finger: a copy over the page, where the card was, that takes no
 * input; the card itself stays in the hand until the move is made. */
function ghostOf(source) {
  const r = source.getBoundingClientRect();
  const ghost = source.cloneNode(true);
  ghost.removeAttribute("id");
  delete ghost.dataset.key;
  ghost.setAttribute("aria-hidden", "true");
  ghost.tabIndex = -1;
  ghost.classList.add("drag-ghost");
  Object.assign(ghost.style, { left: `${r.left}px`, top: `${r.top}px`, width: `${r.width}px`, height: `${r.height}px` });
  document.body.append(ghost);
  return ghost;
}
