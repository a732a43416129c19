// gridpath viewer: hand-written ES modules, no framework, no build step, nothing loaded
// from elsewhere. It talks to this service's own API only:
//   GET  /v1/maps                       the map list
//   POST /v1/maps?name=                 upload (.map as text/plain, .json, .npy)
//   GET  /v1/maps/{id}                  metadata
//   GET  /v1/maps/{id}/grid             the costs (.npy, float32), drawn exactly here
//   GET  /v1/maps/{id}/image.png        the server's picture, for maps over exactCells
//   GET  /v1/maps/{id}/image.png?classes=true   the terrain classes layer (its map rows)
//   GET  /v1/maps/{id}/profiles         class names and named profiles, for the picker
//   GET  /v1/maps/{id}/links            doors, stairs, teleports: drawn as arrows
//   POST /v1/maps/{id}/path             the query, with "trace": true and the options
//   POST /v1/maps/{id}/field            the field overlay (.npz)
//   POST /v1/maps/{id}/edits            painting, and undoing it
//   DELETE /v1/maps/{id}
// Cells are [x, y] = [column, row]. A map of several layers is drawn as the server
// stacks it: its floors top to bottom, layer 0 first, a blocked row between two; the
// page works in the stacked rows and speaks [x, y, layer] to the API (toApi, fromApi).
// Where cells land on the canvas is the View's (view.js): zoom with the wheel or the
// buttons, pan by dragging (pointer.js).
// State for tests and the curious: window.gridpathViewer (see `viewer` below).

import { ApiError, client, postJson } from "./api.js";
import { CLASS_COLORS, COLORS } from "./colors.js";
import {
  agentSize, paintCost, paintLegend, queryBody, refreshMaps, regionRadius, showAnswer,
  showClassLegend, showMapInfo, showProfiles, showTool, showUndoable, showZoom, text,
  unitOptions, uploadType,
} from "./controls.js";
import { drawScene } from "./draw.js";
import { Stroke, UndoStack, line } from "./edits.js";
import * as floors from "./floors.js";
import { fetchMap, loadClasses, loadField } from "./loading.js";
import { wirePointer } from "./pointer.js";
import { paintCell, paintField, paintRegion, paintTrace } from "./painting.js";
import { View } from "./view.js";

const $ = (id) => document.getElementById(id);

// Maps with more cells are drawn from the server's PNG; smaller ones from their costs.
const EXACT_CELLS = 4 * 1024 * 1024;
const KEY_STORE = "gridpath.apiKey";
const ZOOM_STEP = 1.25;

// Everything the page knows; tests read it (and may lower exactCells).
const viewer = {
  colors: COLORS,
  classColors: CLASS_COLORS,
  exactCells: EXACT_CELLS,
  view: new View(),
  map: null, // metadata of the map shown; its height is the stacked rows (floorHeight: one)
  source: null, // "grid" (exact costs) or "image" (the server's PNG)
  revision: null, // the map revision drawn
  blocked: null, // Uint8Array(width * height): 1 where the cell is blocked
  costs: null, // Float32Array(width * height), for "grid"
  costRange: { low: 1, high: 1 }, // of the walkable costs drawn
  classNames: [], // the map's terrain classes, by id ([]: none)
  profiles: [], // the names of its named profiles
  links: [], // its links, their ends as stacked [x, row]
  classesShown: false, // the classes layer is drawn (and its legend shown)
  tool: "points", // "points", "wall", "clear" or "cost"
  start: null,
  goal: null,
  region: null, // the goal region drawn: {center, radius, cells}, or null
  field: null, // the field overlay drawn: {goal, reached, dearest, revision}, or null
  lastRequest: null, // the last path query's body
  lastAnswer: null, // its answer (null after an error)
  lastFieldRequest: null, // the last field's body
  lastError: null, // {code, message} of the last failed request
  elapsedMs: null, // round trip of the last path query
  drawnPath: [], // the path drawn, as [x, y] points (the answer's "path")
  drawnTrace: [], // the expansions drawn, in order
  traceDots: false, // the expansions are drawn as dots (cells too small to show them)
  busy: 0, // requests under way
  loads: 0, // maps loaded and drawn
  answers: 0, // path queries settled (answer or error)
  fields: 0, // field overlays settled
  edits: 0, // edits settled (painting and undoing)
  undos: 0, // undos settled
  uploads: 0, // uploads settled
  layers: 0, // classes layer toggles settled
  frames: 0, // times the canvas was drawn
  undoStack: new UndoStack(),
  get scale() {
    return viewer.view.scale;
  },
  // Canvas pixel of the centre of cell (x, y).
  cellCenter(x, y) {
    return viewer.view.center(x, y);
  },
};
window.gridpathViewer = viewer;

const api = client(viewer, () => $("api-key").value.trim());
const layers = { base: null, classes: null, field: null, region: null, trace: null };
let loadTicket = 0;
let queryTicket = 0;
let stroke = null; // the Stroke being painted
let hover = null; // the cell under the mouse

// -- errors -------------------------------------------------------------------------------

function showError(err) {
  const code = err instanceof ApiError || (err && err.code) ? err.code : "Error";
  const message = err && err.message ? err.message : String(err);
  viewer.lastError = { code, message };
  $("error").textContent = `${code}: ${message}`;
  $("error").hidden = false;
}

function clearError() {
  viewer.lastError = null;
  $("error").textContent = "";
  $("error").hidden = true;
}


// -- the map list and uploads -------------------------------------------------------------

async function upload() {
  const file = $("file").files[0];
  if (!file) return;
  const name = $("map-name").value.trim();
  const query = name ? `?name=${encodeURIComponent(name)}` : "";
  try {
    const response = await api("POST", `/v1/maps${query}`, file, uploadType(file.name));
    const map = await response.json();
    clearError();
    await refreshMaps(api, map.id);
    await loadMap(map.id);
  } catch (err) {
    showError(err);
  } finally {
    viewer.uploads += 1;
  }
}

async function deleteMap() {
  const map = viewer.map;
  if (!map || !window.confirm(`Delete map ${map.name ?? ""} (${map.id})?`)) return;
  try {
    await api("DELETE", `/v1/maps/${map.id}`);
    clearError();
    await refreshMaps(api, "");
    await loadMap("");
  } catch (err) {
    showError(err);
  }
}

// -- loading a map -------------------------------------------------------------------------

// Thin bindings of the floors to the map shown.
const toApi = (cell) => floors.toApi(viewer.map, cell);
const fromApi = (cell) => floors.fromApi(viewer.map, cell);
const loadMapData = (map) => fetchMap(api, map,
  { exactCells: viewer.exactCells, withClasses: $("classes").checked });

function applyMap({ cells, profiles, classes, links }) {
  layers.base = cells.canvas;
  viewer.blocked = cells.blocked;
  viewer.costs = cells.costs;
  viewer.costRange = { low: cells.low, high: cells.high };
  viewer.source = cells.source;
  viewer.revision = cells.revision;
  text("revision", cells.revision);
  applyProfiles(profiles);
  layers.classes = classes;
  viewer.links = links.map((link) => ({ ...link, from: fromApi(link.from), to: fromApi(link.to) }));
  showClasses();
}

function applyProfiles(list) {
  viewer.classNames = list.class_names;
  viewer.profiles = showProfiles(list);
}

function showClasses() {
  viewer.classesShown = layers.classes !== null;
  showClassLegend(viewer.classNames, viewer.classesShown);
}

function forgetMap() {
  viewer.map = null;
  layers.base = null;
  applyProfiles({ class_names: [], default: null, profiles: [] });
  viewer.links = [];
  text("class-info", null);
  layers.classes = null;
  showClasses();
}

async function toggleClasses() {
  const map = viewer.map;
  try {
    const wanted = map && $("classes").checked && viewer.classNames.length > 0;
    const classes = wanted ? await loadClasses(api, map) : null;
    if (viewer.map === map) layers.classes = classes;
  } catch (err) {
    if (viewer.map === map) layers.classes = null;
    showError(err);
  } finally {
    showClasses();
    draw();
    viewer.layers += 1;
  }
}

async function loadMap(id) {
  const ticket = ++loadTicket;
  queryTicket += 1; // answers for the map before are dropped
  viewer.start = null;
  viewer.goal = null;
  viewer.undoStack = new UndoStack();
  clearAnswer();
  try {
    if (!id) {
      forgetMap();
      history.replaceState(null, "", location.pathname);
      return;
    }
    const map = floors.stacked(await (await api("GET", `/v1/maps/${encodeURIComponent(id)}`)).json());
    const fetched = await loadMapData(map);
    if (ticket !== loadTicket) return;
    viewer.map = map; // (before applyMap: fromApi reads its floors)
    applyMap(fetched);
    fit();
    history.replaceState(null, "", `#${map.id}`);
    clearError();
  } catch (err) {
    if (ticket !== loadTicket) return;
    forgetMap();
    showError(err);
  } finally {
    if (ticket === loadTicket) {
      $("delete").disabled = viewer.map === null;
      showMapInfo(viewer.map, viewer.source);
      showUndo();
      draw();
      viewer.loads += 1;
    }
  }
}

// -- the view: fit, zoom, pan --------------------------------------------------------------

// The canvas fills the box, and the box the window below where it starts.
function sizeCanvas() {
  const box = $("canvas-box");
  const canvas = $("map");
  const top = box.getBoundingClientRect().top + window.scrollY;
  const height = Math.max(320, Math.floor(window.innerHeight - top - 16));
  box.style.height = `${height}px`;
  const width = Math.max(200, box.clientWidth);
  if (canvas.width !== width) canvas.width = width;
  if (canvas.height !== box.clientHeight) canvas.height = box.clientHeight;
}

function fit() {
  sizeCanvas();
  const map = viewer.map;
  if (map) viewer.view.fit(map.width, map.height, $("map").width, $("map").height);
}

function zoomBy(factor) {
  const canvas = $("map");
  viewer.view.zoomAt(canvas.width / 2, canvas.height / 2, factor);
  draw();
}

// The map cell under a canvas point, or null off the map (or between floors).
function cellAt(point) {
  const map = viewer.map;
  if (!map || !layers.base) return null;
  const [x, y] = viewer.view.cellAt(...point);
  if (x < 0 || y < 0 || x >= map.width || y >= map.height || floors.separator(map, y)) return null;
  return [x, y];
}

// -- drawing --------------------------------------------------------------------------------

function draw() {
  const canvas = $("map");
  const map = viewer.map;
  const scene = {
    view: viewer.view,
    layers: map ? layers : {},
    expanded: map ? viewer.drawnTrace : [],
    links: map ? viewer.links : [],
    path: map ? viewer.drawnPath : [],
    start: map ? viewer.start : null,
    goal: map ? viewer.goal : null,
    agentSize: agentSize(),
  };
  viewer.traceDots = drawScene(canvas, scene).traceDots;
  viewer.frames += 1;
  showCursor();
  showZoom(viewer.map ? viewer.view.scale : null);
  const { scale, ox, oy } = viewer.view;
  Object.assign(canvas.dataset, {
    mapId: map ? map.id : "",
    width: String(map ? map.width : 0),
    height: String(map ? map.height : 0),
    scale: String(scale),
    offsetX: String(ox),
    offsetY: String(oy),
    revision: String(viewer.revision),
    pathPoints: String(viewer.drawnPath.length),
    traceCells: String(viewer.drawnTrace.length),
    classes: String(layers.classes !== null),
    layers: String(map ? map.layers : 0),
    links: String(viewer.links.length),
    tool: viewer.tool,
  });
}

// -- queries --------------------------------------------------------------------------------

const cellText = (cell) => (cell ? `(${toApi(cell).join(", ")})` : null);

function clearAnswer() {
  viewer.lastAnswer = null;
  viewer.drawnPath = [];
  viewer.drawnTrace = [];
  layers.trace = null;
  clearField();
  clearRegion();
  for (const id of ["status", "cost", "expanded", "algorithm-used", "heuristic-used",
    "length", "elapsed", "time", "trace-info", "profile-used", "optimal", "snapped"]) {
    text(id, null);
  }
  text("start", cellText(viewer.start));
  text("goal", cellText(viewer.goal));
}

function showTrace(expanded) {
  const map = viewer.map;
  viewer.drawnTrace = expanded ?? [];
  layers.trace = map ? paintTrace(map.width, map.height, expanded) : null;
}

async function runQuery() {
  const map = viewer.map;
  if (!map || !viewer.start || !viewer.goal) return;
  const ticket = ++queryTicket;
  const began = performance.now();
  showRegion();
  if ($("field").checked && !fieldDrawn()) runField(ticket);
  try {
    const body = queryBody(toApi(viewer.start), toApi(viewer.goal)); // (an inline profile that is not JSON: shown as an error)
    viewer.lastRequest = body;
    const answer = await (await postJson(api, `/v1/maps/${map.id}/path`, body)).json();
    const elapsed = performance.now() - began;
    if (ticket !== queryTicket) return;
    if (answer.revision !== viewer.revision) {
      // The map changed since it was drawn (another client's edit): draw what was searched.
      applyMap(await loadMapData(map));
      if (ticket !== queryTicket) return;
    }
    clearError();
    viewer.lastAnswer = answer;
    viewer.elapsedMs = elapsed;
    viewer.drawnPath = answer.path.map(fromApi);
    showTrace(answer.trace ? answer.trace.expanded.map(fromApi) : null);
    showAnswer(answer);
    text("time", `${elapsed.toFixed(1)} ms`);
  } catch (err) {
    if (ticket !== queryTicket) return;
    viewer.lastAnswer = null;
    viewer.drawnPath = [];
    showTrace(null);
    showError(err);
    showAnswer({ status: "error" });
    text("time", `${(performance.now() - began).toFixed(1)} ms`);
  } finally {
    if (ticket === queryTicket) {
      draw();
      viewer.answers += 1;
    }
  }
}

// -- the goal region and the field overlay -------------------------------------------------

function clearRegion() {
  viewer.region = null;
  layers.region = null;
}

function showRegion() {
  clearRegion();
  const map = viewer.map;
  const radius = regionRadius();
  if (!map || !viewer.goal || radius <= 0) return;
  const [top, bottom] = floors.floorRows(map, viewer.goal[1]);
  const painted = paintRegion(map.width, map.height,
    { center: viewer.goal, radius, top, bottom });
  layers.region = painted.canvas;
  viewer.region = { center: viewer.goal, radius, cells: painted.cells };
}

function clearField() {
  viewer.field = null;
  layers.field = null;
  text("field-info", null);
}

// Every cell's cost to the goal (the goal cell; a region's centre), drawn under the path.
// The field's request: the goal cell, for the unit the query is for.
const fieldBody = () => ({ goals: [toApi(viewer.goal)], format: "npz", ...unitOptions() });

// Whether the field drawn is the one the options ask for, on the revision drawn: a
// query that changes only the search (heuristic, algorithm, weight...) keeps it.
function fieldDrawn() {
  if (!viewer.field || viewer.field.revision !== viewer.revision) return false;
  try {
    return JSON.stringify(viewer.field.body) === JSON.stringify(fieldBody());
  } catch (_) {
    return false; // an inline profile that is not JSON: runField shows the error
  }
}

async function runField(ticket) {
  const map = viewer.map;
  const goal = viewer.goal;
  try {
    const body = fieldBody();
    viewer.lastFieldRequest = body;
    const { costs, revision } = await loadField(api, map, body);
    if (ticket !== queryTicket) return;
    const painted = paintField(map.width, map.height, costs);
    layers.field = painted.canvas;
    viewer.field = { goal, body, reached: painted.reached, dearest: painted.dearest, revision };
    text("field-info", `${painted.reached} cells reached, dearest `
      + `${Number(painted.dearest.toPrecision(7))}`);
  } catch (err) {
    if (ticket !== queryTicket) return;
    clearField();
    showError(err);
    text("field-info", `${viewer.lastError.code} (see above)`);
  } finally {
    if (ticket === queryTicket) {
      draw();
      viewer.fields += 1;
    }
  }
}

function toggleField() {
  if ($("field").checked) {
    if (viewer.start && viewer.goal) runField(queryTicket);
    return;
  }
  clearField();
  draw();
}

// -- picking start and goal ----------------------------------------------------------------

function pickPoint(cell) {
  if (!viewer.start || viewer.goal) {
    queryTicket += 1; // an answer still coming is for the points before
    viewer.start = cell;
    viewer.goal = null;
    clearAnswer();
    draw();
    return;
  }
  viewer.goal = cell;
  text("goal", cellText(cell));
  draw();
  runQuery();
}

// -- painting and undo ----------------------------------------------------------------------

// The cost the current tool paints.
function toolCost() {
  if (viewer.tool === "wall") return 0;
  if (viewer.tool === "clear") return 1;
  return paintCost();
}

function paintStep(cell) {
  if (floors.separator(viewer.map, cell[1])) return; // a drag across floors paints on them only
  const index = cell[1] * viewer.map.width + cell[0];
  const before = viewer.costs ? viewer.costs[index] : null;
  if (!stroke.add(cell, before)) return;
  paintCell(layers.base, cell, stroke.cost, viewer.costRange);
  if (layers.classes && stroke.cost === 0) paintCell(layers.classes, cell, 0, viewer.costRange);
}

function beginStroke(cell) {
  stroke = new Stroke(toolCost(), viewer.map.width);
  paintStep(cell);
  draw();
}

function extendStroke(cell) {
  for (const step of line(stroke.last, cell)) paintStep(step);
  draw();
}

// Send edit items; redraw the map as the server holds it, then ask the query again.
async function sendEdits(map, body) {
  let answer = null;
  try {
    answer = await (await postJson(api, `/v1/maps/${map.id}/edits`, body)).json();
    clearError();
  } catch (err) {
    showError(err);
  }
  try {
    if (viewer.map === map) applyMap(await loadMapData(map));
  } catch (err) {
    showError(err);
  }
  return answer;
}

async function endStroke() {
  const done = stroke;
  stroke = null;
  const map = viewer.map;
  if (!done || !map) return;
  const answer = await sendEdits(map, { edits: done.edits(toApi) });
  if (answer && viewer.map === map) {
    viewer.undoStack.push({ mapId: map.id, revision: answer.revision, undo: done.reverse(toApi),
      cells: done.cells.size });
  }
  afterEdit(map);
}

// Put back what the page's last edit replaced, if the map is still at the revision that
// edit left. Else the server refuses (RevisionConflict): another client edited since,
// and no edit the page holds can be undone without overwriting theirs, so all are
// dropped.
async function undo() {
  const map = viewer.map;
  const entry = map ? viewer.undoStack.last(map.id) : null;
  if (!entry || !entry.undo || stroke) return;
  const answer = await sendEdits(map, { edits: entry.undo, if_revision: entry.revision });
  if (answer) viewer.undoStack.pop(answer.revision);
  else if (viewer.lastError && viewer.lastError.code === "RevisionConflict") {
    viewer.undoStack = new UndoStack();
  }
  viewer.undos += 1;
  afterEdit(map);
}

function afterEdit(map) {
  showUndo();
  draw();
  viewer.edits += 1;
  if (viewer.map === map && viewer.start && viewer.goal && !viewer.lastError) runQuery();
}

function chooseTool() {
  const chosen = document.querySelector('input[name="tool"]:checked');
  viewer.tool = chosen ? chosen.value : "points";
  showTool(viewer.tool);
  draw();
}

const showUndo = () => showUndoable(viewer.map ? viewer.undoStack.last(viewer.map.id) : null,
  viewer.undoStack.size);

// -- the pointer and the keys ----------------------------------------------------------

// The cell under the mouse and what it holds (kept true across edits by draw()).
function showCursor() {
  const cell = hover;
  const map = viewer.map;
  if (!cell || !map || !viewer.blocked || cell[0] >= map.width || cell[1] >= map.height) {
    text("cursor", null);
    return;
  }
  const index = cell[1] * map.width + cell[0];
  let what = viewer.blocked[index] ? "blocked" : "walkable";
  if (!viewer.blocked[index] && viewer.costs) what = `cost ${viewer.costs[index]}`;
  text("cursor", `${cellText(cell)} ${what}`);
}

function onKey(event) {
  const typing = event.target instanceof HTMLInputElement && event.target.type !== "radio"
    && event.target.type !== "checkbox";
  if (typing || event.target instanceof HTMLTextAreaElement) return;
  if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "z") {
    event.preventDefault();
    undo();
  }
}

// -- wiring ---------------------------------------------------------------------------------

function wireControls() {
  const key = $("api-key");
  key.value = window.localStorage.getItem(KEY_STORE) ?? "";
  key.addEventListener("change", () => {
    const value = key.value.trim();
    if (value) window.localStorage.setItem(KEY_STORE, value);
    else window.localStorage.removeItem(KEY_STORE);
    refreshMaps(api).then(clearError, showError);
  });
  $("maps").addEventListener("change", () => loadMap($("maps").value));
  $("refresh").addEventListener("click", () => refreshMaps(api).then(clearError, showError));
  $("classes").addEventListener("change", toggleClasses);
  $("profile").addEventListener("change", () => {
    $("inline-box").hidden = $("profile").value !== "inline";
    runQuery();
  });
  $("inline-profile").addEventListener("change", () => {
    if ($("profile").value === "inline") runQuery();
  });
  $("delete").addEventListener("click", deleteMap);
  $("file").addEventListener("change", () => {
    const file = $("file").files[0];
    $("upload").disabled = !file;
    if (file) $("map-name").value = file.name.replace(/\.[^.]*$/, "");
  });
  $("upload").addEventListener("click", upload);
  for (const id of ["heuristic", "algorithm", "diagonal", "format", "weight", "budget",
    "trace", "agent-size", "region-radius", "nearest", "snap"]) {
    $(id).addEventListener("change", runQuery);
  }
  $("field").addEventListener("change", toggleField);
  $("clear-points").addEventListener("click", () => {
    queryTicket += 1;
    viewer.start = null;
    viewer.goal = null;
    clearAnswer();
    draw();
  });
  for (const radio of document.querySelectorAll('input[name="tool"]')) {
    radio.addEventListener("change", chooseTool);
  }
  $("paint-cost").addEventListener("change", () => showTool(viewer.tool));
  $("undo").addEventListener("click", undo);
  $("zoom-fit").addEventListener("click", () => {
    fit();
    draw();
  });
  $("zoom-in").addEventListener("click", () => zoomBy(ZOOM_STEP));
  $("zoom-out").addEventListener("click", () => zoomBy(1 / ZOOM_STEP));
  $("zoom-actual").addEventListener("click", () => {
    const canvas = $("map");
    viewer.view.actualSize(canvas.width / 2, canvas.height / 2);
    draw();
  });
}

function wireCanvas() {
  wirePointer($("map"), {
    view: viewer.view,
    cellAt,
    tool: () => viewer.tool,
    pick: pickPoint,
    paint: { begin: beginStroke, extend: extendStroke, end: endStroke, active: () => stroke !== null },
    hover: (cell) => {
      hover = cell;
      showCursor();
    },
    redraw: draw,
    shown: () => viewer.map !== null,
  });
  document.addEventListener("keydown", onKey);
  let resizing = 0;
  window.addEventListener("resize", () => {
    window.clearTimeout(resizing);
    resizing = window.setTimeout(() => {
      // The cell at the centre stays there.
      const before = $("map");
      const [cx, cy] = [before.width / 2, before.height / 2];
      sizeCanvas();
      viewer.view.panBy(before.width / 2 - cx, before.height / 2 - cy);
      draw();
    }, 150);
  });
}

function init() {
  paintLegend();
  wireControls();
  wireCanvas();
  sizeCanvas();
  showTool(viewer.tool);
  showUndo();
  draw();
  const wanted = decodeURIComponent(location.hash.slice(1));
  refreshMaps(api, wanted)
    .then((maps) => (maps.some((map) => map.id === wanted) ? loadMap(wanted) : null))
    .catch(showError)
    .finally(() => {
      document.body.dataset.ready = "true";
    });
}

init();
