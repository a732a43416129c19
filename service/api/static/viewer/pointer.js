// The mouse on the map: the wheel zooms about the pointer; a drag pans (the right or
// middle button with any tool, the left one with the pick tool); a left click picks a
// cell; with a paint tool a left drag paints.

// A press that moves this many pixels is a drag (a pan), not a click.
const DRAG_PIXELS = 4;
// Zoom per pixel of wheel travel (a notch is about 100).
const WHEEL_ZOOM = 0.0015;

// Canvas pixel under a pointer event.
export function canvasPoint(canvas, event) {
  const rect = canvas.getBoundingClientRect();
  return [((event.clientX - rect.left) * canvas.width) / rect.width,
    ((event.clientY - rect.top) * canvas.height) / rect.height];
}

// `page`: {view, cellAt([px, py]) (a map cell or null), tool() ("points" or a paint
// tool), pick(cell), paint: {begin(cell), extend(cell), end(), active()},
// hover(cell or null), redraw(), shown() (a map is shown)}.
export function wirePointer(canvas, page) {
  let press = null; // a left press of the pick tool: {x, y, cell}, until it moves or ends
  let pan = null; // a drag moving the map: {x, y} of the pointer last

  function down(event) {
    if (page.paint.active() || pan || press) return;
    const [x, y] = canvasPoint(canvas, event);
    if (event.button === 1 || event.button === 2) {
      event.preventDefault();
      pan = { x, y };
      canvas.setPointerCapture(event.pointerId);
      return;
    }
    if (event.button !== 0) return;
    const cell = page.cellAt([x, y]);
    event.preventDefault();
    canvas.setPointerCapture(event.pointerId);
    if (page.tool() === "points") press = { x, y, cell };
    else if (cell) page.paint.begin(cell);
  }

  function move(event) {
    const [x, y] = canvasPoint(canvas, event);
    if (press && Math.hypot(x - press.x, y - press.y) >= DRAG_PIXELS) {
      pan = { x: press.x, y: press.y };
      press = null;
    }
    if (pan) {
      page.view.panBy(x - pan.x, y - pan.y);
      pan = { x, y };
      page.redraw();
      return;
    }
    const cell = page.cellAt([x, y]);
    page.hover(cell);
    if (cell && page.paint.active() && (event.buttons & 1) === 1) page.paint.extend(cell);
  }

  function up() {
    if (press) {
      const { cell } = press;
      press = null;
      if (cell) page.pick(cell);
    }
    pan = null;
    if (page.paint.active()) page.paint.end();
  }

  function wheel(event) {
    if (!page.shown()) return;
    event.preventDefault();
    const pixels = event.deltaMode === 1 ? event.deltaY * 16 : event.deltaY;
    page.view.zoomAt(...canvasPoint(canvas, event), Math.exp(-pixels * WHEEL_ZOOM));
    page.redraw();
  }

  canvas.addEventListener("pointerdown", down);
  canvas.addEventListener("pointermove", move);
  canvas.addEventListener("pointerup", up);
  canvas.addEventListener("pointercancel", up);
  canvas.addEventListener("pointerleave", () => page.hover(null));
  canvas.addEventListener("wheel", wheel, { passive: false });
  canvas.addEventListener("contextmenu", (event) => event.preventDefault());
}
