// Where the map sits on the canvas: `scale` canvas pixels per cell side (any positive
// number) and the canvas pixel (ox, oy) where cell (0, 0)'s top-left corner lies. So
// cell (x, y) covers [ox + x * scale, ox + (x + 1) * scale) x [oy + y * scale, ...).

// Closest and farthest zoom: a cell at most this many pixels wide, and a map at least
// this share of the fitted size.
export const MAX_SCALE = 96;
const MIN_SHARE_OF_FIT = 0.25;
// A map fitted to the window is never blown up past this many pixels per cell.
const MAX_FIT_SCALE = 32;
const MARGIN = 8;

export class View {
  constructor() {
    this.scale = 1;
    this.ox = 0;
    this.oy = 0;
    this.fitted = 1; // the scale that fits the whole map, from the last fit()
  }

  // The whole map in a box of boxWidth x boxHeight pixels, centred.
  fit(width, height, boxWidth, boxHeight) {
    const room = Math.min((boxWidth - 2 * MARGIN) / width, (boxHeight - 2 * MARGIN) / height);
    this.fitted = Math.max(1e-3, Math.min(MAX_FIT_SCALE, room));
    this.scale = this.fitted;
    this.ox = (boxWidth - width * this.scale) / 2;
    this.oy = (boxHeight - height * this.scale) / 2;
  }

  // Zoom by `factor` keeping the point under canvas pixel (px, py) where it is.
  zoomAt(px, py, factor) {
    const low = Math.min(this.fitted, 1) * MIN_SHARE_OF_FIT;
    const scale = Math.min(MAX_SCALE, Math.max(low, this.scale * factor));
    const cx = (px - this.ox) / this.scale;
    const cy = (py - this.oy) / this.scale;
    this.scale = scale;
    this.ox = px - cx * scale;
    this.oy = py - cy * scale;
  }

  // Cell-size zoom: one canvas pixel per cell, about the point (px, py).
  actualSize(px, py) {
    this.zoomAt(px, py, 1 / this.scale);
  }

  panBy(dx, dy) {
    this.ox += dx;
    this.oy += dy;
  }

  // The cell under canvas pixel (px, py), as whole [x, y] (it may lie off the map).
  cellAt(px, py) {
    return [Math.floor((px - this.ox) / this.scale), Math.floor((py - this.oy) / this.scale)];
  }

  // Canvas pixel of the centre of cell (x, y).
  center(x, y) {
    return [this.ox + (x + 0.5) * this.scale, this.oy + (y + 0.5) * this.scale];
  }
}
