// The map's layers, each a canvas of one pixel per cell (the page's stacked rows), which
// draw.js scales onto the screen: the costs, the server's picture, the expansions, the
// field and the goal region.

import { BLOCKED, COLORS, blend, groundGrey } from "./colors.js";

export function layer(width, height) {
  const canvas = document.createElement("canvas");
  canvas.width = width;
  canvas.height = height;
  return canvas;
}

function finished(width, height, image) {
  const canvas = layer(width, height);
  canvas.getContext("2d").putImageData(image, 0, 0);
  return canvas;
}

// The walkable costs' range: {low, high} (both Infinity/-Infinity when none is walkable).
export function costRange(costs) {
  let low = Infinity;
  let high = -Infinity;
  for (const cost of costs) {
    if (cost > 0) {
      if (cost < low) low = cost;
      if (cost > high) high = cost;
    }
  }
  return { low, high };
}

// The map from its costs: blocked dark, walkable grey from the cheapest (light) to the
// dearest, as the server's picture. Also which cells are blocked (1) or not (0).
export function paintCosts(width, height, costs) {
  const { low, high } = costRange(costs);
  const image = new ImageData(width, height);
  const pixels = image.data;
  const blocked = new Uint8Array(width * height);
  for (let i = 0; i < costs.length; i += 1) {
    const o = 4 * i;
    const cost = costs[i];
    if (cost > 0) {
      const grey = groundGrey(cost, low, high);
      pixels[o] = grey;
      pixels[o + 1] = grey;
      pixels[o + 2] = grey;
    } else {
      blocked[i] = 1;
      [pixels[o], pixels[o + 1], pixels[o + 2]] = BLOCKED;
    }
    pixels[o + 3] = 255;
  }
  return { canvas: finished(width, height, image), blocked, low, high };
}

// The map from the server's picture (one pixel per cell); blocked cells by colour.
export async function paintPicture(width, height, blob) {
  const bitmap = await createImageBitmap(blob);
  const canvas = layer(width, height);
  const context = canvas.getContext("2d", { willReadFrequently: true });
  context.drawImage(bitmap, 0, 0);
  bitmap.close();
  const pixels = context.getImageData(0, 0, width, height).data;
  const blocked = new Uint8Array(width * height);
  for (let i = 0; i < blocked.length; i += 1) {
    const o = 4 * i;
    blocked[i] = pixels[o] === BLOCKED[0] && pixels[o + 1] === BLOCKED[1]
      && pixels[o + 2] === BLOCKED[2] ? 1 : 0;
  }
  return { canvas, blocked, low: 1, high: 1 };
}

// A painted cell shown at once (the server's grid replaces it after the edit).
export function paintCell(canvas, [x, y], cost, { low, high }) {
  const context = canvas.getContext("2d");
  const grey = cost > 0 ? groundGrey(Math.min(Math.max(cost, low), high), low, high) : 0;
  context.fillStyle = cost > 0 ? `rgb(${grey},${grey},${grey})` : `rgb(${BLOCKED.join(",")})`;
  context.fillRect(x, y, 1, 1);
}

// The expansions in order, tinted from early to late, or null without any.
export function paintTrace(width, height, expanded) {
  if (!expanded || expanded.length === 0) return null;
  const image = new ImageData(width, height);
  const pixels = image.data;
  const last = Math.max(1, expanded.length - 1);
  expanded.forEach(([x, y], i) => {
    if (x < 0 || y < 0 || x >= width || y >= height) return;
    const o = 4 * (y * width + x);
    [pixels[o], pixels[o + 1], pixels[o + 2]] = blend(COLORS.early, COLORS.late, i / last);
    pixels[o + 3] = COLORS.traceAlpha;
  });
  return finished(width, height, image);
}

// A distance field: each reached cell tinted from `near` (cost 0) to `far` (the
// dearest finite cost); cells not reached (inf, or NaN in the rows between floors) stay
// clear. {canvas, reached, dearest}.
export function paintField(width, height, costs) {
  let dearest = 0;
  for (const cost of costs) if (Number.isFinite(cost) && cost > dearest) dearest = cost;
  const image = new ImageData(width, height);
  const pixels = image.data;
  let reached = 0;
  for (let i = 0; i < costs.length; i += 1) {
    const cost = costs[i];
    if (!Number.isFinite(cost)) continue;
    reached += 1;
    const o = 4 * i;
    [pixels[o], pixels[o + 1], pixels[o + 2]] = blend(COLORS.near, COLORS.far,
      dearest > 0 ? cost / dearest : 0);
    pixels[o + 3] = COLORS.fieldAlpha;
  }
  return { canvas: finished(width, height, image), reached, dearest };
}

// The cells of a goal region {center: [x, row], radius} (centres within radius of the
// centre's, on rows [top, bottom] of its floor), tinted; and their count.
export function paintRegion(width, height, { center, radius, top, bottom }) {
  const image = new ImageData(width, height);
  const pixels = image.data;
  const reach = Math.floor(radius);
  let cells = 0;
  for (let y = Math.max(top, center[1] - reach); y <= Math.min(bottom, center[1] + reach); y += 1) {
    for (let x = Math.max(0, center[0] - reach); x <= Math.min(width - 1, center[0] + reach); x += 1) {
      const dx = x - center[0];
      const dy = y - center[1];
      if (dx * dx + dy * dy > radius * radius) continue;
      const o = 4 * (y * width + x);
      [pixels[o], pixels[o + 1], pixels[o + 2]] = COLORS.region;
      pixels[o + 3] = COLORS.regionAlpha;
      cells += 1;
    }
  }
  return { canvas: finished(width, height, image), cells };
}
