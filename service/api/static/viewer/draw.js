// The screen: the map's one-pixel-per-cell layers scaled through the View, then what is
// drawn at screen size so it stays visible at any zoom (expansions as dots when cells
// are small, links, the path, the start and goal markers and the unit's footprint).

import { COLORS, blend, css } from "./colors.js";

// Below this many pixels per cell the expansions are drawn as dots of DOT pixels (so a
// jump point stays visible on a zoomed-out map), up to MAX_DOTS of them.
const DOT_BELOW_SCALE = 4;
const DOT = 3;
const MAX_DOTS = 200000;
const MARKER_RADIUS = 6;
const BACKGROUND = "#ffffff";

function drawLayer(context, canvas, view) {
  if (!canvas) return;
  context.drawImage(canvas, view.ox, view.oy, canvas.width * view.scale,
    canvas.height * view.scale);
}

// The expansions as dots of at least DOT pixels, tinted early to late.
function drawTraceDots(context, view, expanded) {
  const size = Math.max(DOT, view.scale);
  const last = Math.max(1, expanded.length - 1);
  context.globalAlpha = COLORS.traceAlpha / 255;
  expanded.forEach(([x, y], i) => {
    const [cx, cy] = view.center(x, y);
    context.fillStyle = css(blend(COLORS.early, COLORS.late, i / last).map(Math.round));
    context.fillRect(cx - size / 2, cy - size / 2, size, size);
  });
  context.globalAlpha = 1;
}

function drawPath(context, view, path) {
  if (path.length < 2) return;
  context.beginPath();
  path.forEach(([x, y], i) => {
    const [cx, cy] = view.center(x, y);
    if (i === 0) context.moveTo(cx, cy);
    else context.lineTo(cx, cy);
  });
  context.lineWidth = Math.max(2, view.scale * 0.35);
  context.lineJoin = "round";
  context.lineCap = "round";
  context.strokeStyle = css(COLORS.path);
  context.stroke();
}

// Each link as an arrow between its ends' centres, a head at each end it leads to.
function drawLinks(context, view, links) {
  const head = Math.max(6, view.scale * 0.8);
  for (const link of links) {
    const [ax, ay] = view.center(link.from[0], link.from[1]);
    const [bx, by] = view.center(link.to[0], link.to[1]);
    const colour = css(link.enabled ? COLORS.link : COLORS.closedLink);
    context.beginPath();
    context.moveTo(ax, ay);
    context.lineTo(bx, by);
    context.lineWidth = Math.max(1.5, view.scale / 4);
    context.strokeStyle = colour;
    context.stroke();
    const tips = link.two_way ? [[bx, by, ax, ay], [ax, ay, bx, by]] : [[bx, by, ax, ay]];
    for (const [tx, ty, fx, fy] of tips) {
      const angle = Math.atan2(ty - fy, tx - fx);
      context.beginPath();
      context.moveTo(tx, ty);
      context.lineTo(tx - head * Math.cos(angle - 0.45), ty - head * Math.sin(angle - 0.45));
      context.lineTo(tx - head * Math.cos(angle + 0.45), ty - head * Math.sin(angle + 0.45));
      context.closePath();
      context.fillStyle = colour;
      context.fill();
    }
  }
}

// A disc on the cell's centre, never smaller than MARKER_RADIUS pixels; for a unit of
// k x k cells, its footprint outlined too (the cell is its top-left).
function drawMarker(context, view, cell, colour, size) {
  if (!cell) return;
  const [cx, cy] = view.center(cell[0], cell[1]);
  if (size > 1) {
    context.lineWidth = 2;
    context.strokeStyle = colour;
    context.strokeRect(view.ox + cell[0] * view.scale, view.oy + cell[1] * view.scale,
      size * view.scale, size * view.scale);
  }
  context.beginPath();
  context.arc(cx, cy, Math.max(MARKER_RADIUS, view.scale * 0.42), 0, 2 * Math.PI);
  context.fillStyle = colour;
  context.fill();
  context.lineWidth = 1;
  context.strokeStyle = "#ffffff";
  context.stroke();
}

// Everything, in order: map, classes, field, region, expansions, links, path, markers.
// `scene`: {view, layers: {base, classes, field, region, trace}, expanded, links, path,
// start, goal, agentSize}.
export function drawScene(canvas, scene) {
  const { view, layers } = scene;
  const context = canvas.getContext("2d", { willReadFrequently: true });
  context.setTransform(1, 0, 0, 1, 0, 0);
  context.fillStyle = BACKGROUND;
  context.fillRect(0, 0, canvas.width, canvas.height);
  context.imageSmoothingEnabled = view.scale < 1; // cells stay crisp squares
  drawLayer(context, layers.base, view);
  context.imageSmoothingEnabled = false;
  drawLayer(context, layers.classes, view);
  drawLayer(context, layers.field, view);
  drawLayer(context, layers.region, view);
  const dots = view.scale < DOT_BELOW_SCALE && scene.expanded.length <= MAX_DOTS;
  if (dots) drawTraceDots(context, view, scene.expanded);
  else drawLayer(context, layers.trace, view);
  drawLinks(context, view, scene.links);
  drawPath(context, view, scene.path);
  drawMarker(context, view, scene.start, css(COLORS.start), scene.agentSize);
  drawMarker(context, view, scene.goal, css(COLORS.goal), scene.agentSize);
  return { traceDots: dots };
}
