// gridpath viewer: hand-written, no framework, no build step, nothing loaded from
// elsewhere. It talks to this service's own API only:
//   GET  /v1/maps                       the map list
//   POST /v1/maps?name=                 upload (.map as text/plain, .json, .npy)
//   GET  /v1/maps/{id}                  metadata
//   GET  /v1/maps/{id}/grid             the costs (.npy, float32), drawn exactly here
//   GET  /v1/maps/{id}/image.png        the server's picture, for maps over EXACT_CELLS
//   GET  /v1/maps/{id}/image.png?classes=true   the terrain classes layer (its map rows)
//   GET  /v1/maps/{id}/profiles         class names and named profiles, for the picker
//   GET  /v1/maps/{id}/links            doors, stairs, teleports: drawn as arrows
//   POST /v1/maps/{id}/path             the query, with "trace": true and the profile
//   POST /v1/maps/{id}/edits            painted walls
//   DELETE /v1/maps/{id}
// Cells are [x, y] = [column, row]; cell (x, y) covers canvas pixels
// [x * scale, (x + 1) * scale) x [y * scale, (y + 1) * scale). A map of several layers
// is drawn as the server stacks it: its floors top to bottom, layer 0 first, a blocked
// row between two; the page works in the stacked rows and speaks [x, y, layer] to the
// API (toApi, fromApi).
// State for tests and the curious: window.gridpathViewer (see `viewer` below).
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);

  // The server's picture colours (service/engine/pictures.py and the path.png route in
  // service/api/routes/pictures.py), so the page and the PNGs look alike.
  const BLOCKED = [28, 28, 32];
  const CHEAPEST = 236;
  const DEAREST = 120;
  // What the canvas draws with, as [r, g, b]; the legend's swatches are painted from
  // these too (paintLegend), so the two cannot disagree.
  const COLORS = {
    path: [31, 119, 180],
    start: [44, 160, 44],
    goal: [214, 39, 40],
    early: [255, 236, 160], // first expansion
    late: [232, 106, 24], // last expansion
    traceAlpha: 160, // of 255: the map shows through
    link: [255, 127, 14], // the LINK_COLOUR of service/api/routes/pictures.py
    closedLink: [150, 150, 156],
  };
  // The terrain classes' colours by class id: service/engine/pictures.py's
  // CLASS_PALETTE, which the classes layer (image.png?classes=true) is drawn with; the
  // class legend's swatches are painted from these.
  const CLASS_COLORS = [
    [222, 204, 160], [150, 160, 60], [66, 135, 215], [34, 120, 50],
    [255, 127, 14], [148, 103, 189], [227, 119, 194], [23, 190, 207],
    [140, 86, 75], [188, 189, 34], [214, 39, 40], [174, 199, 232],
    [255, 187, 120], [152, 223, 138], [255, 152, 150], [197, 176, 213],
    [235, 139, 70], [124, 112, 204], [50, 173, 26], [250, 112, 175],
    [50, 161, 199], [180, 70, 235], [112, 204, 147], [173, 39, 26],
    [112, 141, 250], [124, 199, 50], [230, 149, 213], [70, 235, 221],
    [204, 170, 112], [75, 26, 173], [112, 250, 118], [199, 50, 87],
    [207, 235, 70], [193, 112, 204], [26, 173, 112], [50, 50, 199],
    [235, 70, 166], [112, 193, 204], [173, 149, 26], [187, 112, 250],
    [50, 199, 87], [170, 204, 112], [173, 26, 161], [112, 250, 221],
    [199, 124, 50], [166, 149, 230], [84, 235, 70], [204, 112, 147],
    [26, 125, 173], [244, 250, 112], [161, 50, 199], [149, 230, 186],
    [250, 118, 112], [193, 230, 149], [70, 167, 235], [235, 70, 85],
    [112, 147, 204], [125, 173, 26], [250, 112, 245], [50, 199, 160],
    [96, 70, 235], [124, 204, 112], [173, 26, 89], [112, 211, 250],
  ];
  const css = ([r, g, b]) => `rgb(${r},${g},${b})`;
  // Maps with more cells are drawn from the server's PNG, scaled down (coarse) when they
  // do not fit; smaller ones from their exact costs, at least one pixel per cell.
  const EXACT_CELLS = 4 * 1024 * 1024;
  const MAX_CELL_PIXELS = 32;
  const KEY_STORE = "gridpath.apiKey";
  // Cost given to a painted wall when it is cleared again.
  const CLEARED_COST = 1;

  class ApiError extends Error {
    constructor(code, message, status) {
      super(message);
      this.code = code;
      this.status = status;
    }
  }

  // Everything the page knows; tests read it (and may lower exactCells).
  const viewer = {
    colors: COLORS,
    classColors: CLASS_COLORS,
    exactCells: EXACT_CELLS,
    map: null, // metadata of the map shown; its height is the stacked rows (floorHeight: one)
    source: null, // "grid" (exact costs) or "image" (the server's PNG)
    revision: null, // the map revision drawn
    blocked: null, // Uint8Array(width * height): 1 where the cell is blocked
    costs: null, // Float32Array(width * height), for "grid"
    classNames: [], // the map's terrain classes, by id ([]: none)
    profiles: [], // the names of its named profiles
    links: [], // its links, their ends as stacked [x, row]
    classesShown: false, // the classes layer is drawn (and its legend shown)
    scale: 0, // canvas pixels per cell side (below 1: coarse)
    start: null,
    goal: null,
    lastRequest: null, // the last path query's body
    lastAnswer: null, // its answer (null after an error)
    lastError: null, // {code, message} of the last failed request
    elapsedMs: null, // round trip of the last path query
    drawnPath: [], // the path drawn, as [x, y] points (the answer's "path")
    drawnTrace: [], // the expansions drawn, in order
    busy: 0, // requests under way
    loads: 0, // maps loaded and drawn
    answers: 0, // path queries settled (answer or error)
    edits: 0, // wall edits settled
    uploads: 0, // uploads settled
    layers: 0, // classes layer toggles settled
    cellCenter(x, y) {
      return [(x + 0.5) * viewer.scale, (y + 0.5) * viewer.scale];
    },
  };
  window.gridpathViewer = viewer;

  let base = null; // canvas, one pixel per cell: the map
  let traceLayer = null; // canvas, one pixel per cell: the expansions (or null)
  let classesLayer = null; // canvas, one pixel per cell: the terrain classes (or null)
  let loadTicket = 0;
  let queryTicket = 0;
  let stroke = null; // walls being painted: {cost, cells: Map(index -> [x, y]), last}
  let hover = null; // the cell under the mouse

  // -- requests -------------------------------------------------------------------------

  async function api(method, path, body, contentType) {
    const headers = {};
    const key = $("api-key").value.trim();
    if (key) headers.Authorization = `Bearer ${key}`;
    if (contentType) headers["Content-Type"] = contentType;
    let response;
    viewer.busy += 1;
    document.body.dataset.busy = "true";
    try {
      response = await fetch(path, { method, headers, body });
    } catch (err) {
      throw new ApiError("NetworkError", String(err && err.message ? err.message : err), 0);
    } finally {
      viewer.busy -= 1;
      if (viewer.busy === 0) delete document.body.dataset.busy;
    }
    if (!response.ok) {
      let code = `HTTP ${response.status}`;
      let message = response.statusText;
      try {
        const error = await response.json();
        if (error && typeof error.code === "string") {
          code = error.code;
          message = error.message;
        }
      } catch (_) {
        // not the service's error body: keep the status line
      }
      throw new ApiError(code, message, response.status);
    }
    return response;
  }

  function showError(err) {
    const code = err instanceof ApiError ? err.code : "Error";
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

  async function refreshMaps(selected) {
    const { maps } = await (await api("GET", "/v1/maps")).json();
    const select = $("maps");
    const keep = selected === undefined ? select.value : selected;
    select.replaceChildren(new Option("(none)", ""));
    for (const map of maps) {
      const layers = (map.layers ?? 1) > 1 ? `x${map.layers}` : "";
      const label = `${map.name ?? "(unnamed)"} - ${map.width}x${map.height}${layers} (${map.id})`;
      select.add(new Option(label, map.id));
    }
    select.value = maps.some((map) => map.id === keep) ? keep : "";
    return maps;
  }

  function uploadType(fileName) {
    const lower = fileName.toLowerCase();
    if (lower.endsWith(".npy")) return "application/x-npy";
    if (lower.endsWith(".json")) return "application/json";
    return "text/plain"; // Moving AI .map
  }

  async function upload() {
    const file = $("file").files[0];
    if (!file) return;
    const name = $("map-name").value.trim();
    const query = name ? `?name=${encodeURIComponent(name)}` : "";
    try {
      const response = await api("POST", `/v1/maps${query}`, file, uploadType(file.name));
      const map = await response.json();
      clearError();
      await refreshMaps(map.id);
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
      await refreshMaps("");
      await loadMap("");
    } catch (err) {
      showError(err);
    }
  }

  // -- layers --------------------------------------------------------------------------------

  // The map as the page draws it: `height` the rows of its floors stacked, one blocked
  // row between two (as the server's grid stacks them).
  function stacked(map) {
    const layers = map.layers ?? 1;
    return { ...map, layers, floorHeight: map.height, height: layers * (map.height + 1) - 1 };
  }

  // A stacked [x, row] as the API names it: [x, y, layer] on a layered map.
  function toApi(cell) {
    const map = viewer.map;
    if (!cell || !map || map.layers === 1) return cell;
    const band = map.floorHeight + 1;
    return [cell[0], cell[1] % band, Math.floor(cell[1] / band)];
  }

  // An API cell ([x, y] or [x, y, layer]) as the page's stacked [x, row].
  function fromApi(cell) {
    const map = viewer.map;
    if (!cell || cell.length < 3 || !map) return cell;
    return [cell[0], cell[2] * (map.floorHeight + 1) + cell[1]];
  }

  // Whether a stacked row is the blocked row between two floors.
  function separator(map, row) {
    return map.layers > 1 && row % (map.floorHeight + 1) === map.floorHeight;
  }

  // -- drawing the map ----------------------------------------------------------------------

  // A (height, width) float32 .npy, as GET /grid sends it; (layers, height, width) on a
  // layered map, stacked here with a blocked row between two floors.
  function parseNpy(buffer) {
    const bytes = new Uint8Array(buffer);
    const magic = String.fromCharCode(...bytes.subarray(1, 6));
    if (bytes[0] !== 0x93 || magic !== "NUMPY") throw new ApiError("BadGrid", "not a .npy file");
    const view = new DataView(buffer);
    const v1 = bytes[6] === 1;
    const start = v1 ? 10 : 12;
    const length = v1 ? view.getUint16(8, true) : view.getUint32(8, true);
    const header = new TextDecoder("latin1").decode(bytes.subarray(start, start + length));
    const descr = /'descr':\s*'([^']+)'/.exec(header);
    const shape = /'shape':\s*\((?:(\d+),\s*)?(\d+),\s*(\d+)\)/.exec(header);
    if (!descr || descr[1] !== "<f4" || !shape || /'fortran_order':\s*True/.test(header)) {
      throw new ApiError("BadGrid", `unexpected .npy header ${header.trim()}`);
    }
    const layers = shape[1] === undefined ? 1 : Number(shape[1]);
    const floor = Number(shape[2]);
    const width = Number(shape[3]);
    const offset = start + length;
    const data = new Float32Array(buffer.slice(offset, offset + 4 * layers * width * floor));
    const height = layers * (floor + 1) - 1;
    const costs = new Float32Array(width * height); // separators stay 0: blocked
    for (let l = 0; l < layers; l += 1) {
      costs.set(data.subarray(l * floor * width, (l + 1) * floor * width), l * (floor + 1) * width);
    }
    return { width, height, costs };
  }

  function layer(width, height) {
    const canvas = document.createElement("canvas");
    canvas.width = width;
    canvas.height = height;
    return canvas;
  }

  // The map from its costs: blocked dark, walkable grey from the cheapest (light) to the
  // dearest, as the server's picture.
  function paintCosts(width, height, costs) {
    let low = Infinity;
    let high = -Infinity;
    for (const cost of costs) {
      if (cost > 0) {
        if (cost < low) low = cost;
        if (cost > high) high = cost;
      }
    }
    const span = high - low;
    const image = new ImageData(width, height);
    const pixels = image.data;
    const blocked = new Uint8Array(width * height);
    for (let i = 0; i < costs.length; i += 1) {
      const o = 4 * i;
      const cost = costs[i];
      if (cost > 0) {
        const share = span > 0 ? (cost - low) / span : 0;
        const grey = CHEAPEST - share * (CHEAPEST - DEAREST);
        pixels[o] = grey;
        pixels[o + 1] = grey;
        pixels[o + 2] = grey;
      } else {
        blocked[i] = 1;
        [pixels[o], pixels[o + 1], pixels[o + 2]] = BLOCKED;
      }
      pixels[o + 3] = 255;
    }
    const canvas = layer(width, height);
    canvas.getContext("2d").putImageData(image, 0, 0);
    return { canvas, blocked };
  }

  // The map from the server's picture (one pixel per cell); blocked cells by colour.
  async function paintPicture(width, height, blob) {
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
    return { canvas, blocked };
  }

  function revisionOf(response) {
    const tag = response.headers.get("ETag");
    return tag ? Number(tag.replaceAll('"', "")) : null;
  }

  // Fetch the map's current cells and draw them into `base`.
  async function loadCells(map) {
    const { id, width, height } = map;
    if (width * height <= viewer.exactCells) {
      const response = await api("GET", `/v1/maps/${id}/grid`);
      const grid = parseNpy(await response.arrayBuffer());
      const painted = paintCosts(grid.width, grid.height, grid.costs);
      return { ...painted, costs: grid.costs, source: "grid", revision: revisionOf(response) };
    }
    const response = await api("GET", `/v1/maps/${id}/image.png`);
    const painted = await paintPicture(width, height, await response.blob());
    return { ...painted, costs: null, source: "image", revision: revisionOf(response) };
  }

  // The terrain classes, one pixel per cell: the server's picture of them at scale 1,
  // whose map rows are drawn; the legend strip below them is left out (the page shows
  // its own legend).
  async function loadClasses(map) {
    const response = await api("GET", `/v1/maps/${map.id}/image.png?classes=true`);
    const bitmap = await createImageBitmap(await response.blob());
    const canvas = layer(map.width, map.height);
    canvas.getContext("2d").drawImage(bitmap, 0, 0);
    bitmap.close();
    return canvas;
  }

  // Everything drawn of a map: its cells, its classes and profiles, and the classes
  // layer when it is asked for and the map has classes.
  async function fetchMap(map) {
    const [cells, profiles, links] = await Promise.all([
      loadCells(map),
      api("GET", `/v1/maps/${map.id}/profiles`).then((response) => response.json()),
      api("GET", `/v1/maps/${map.id}/links`).then((response) => response.json()),
    ]);
    const wanted = $("classes").checked && profiles.class_names.length > 0;
    const classes = wanted ? await loadClasses(map) : null;
    return { cells, profiles, classes, links: links.links };
  }

  function applyMap({ cells, profiles, classes, links }) {
    applyCells(cells);
    applyProfiles(profiles);
    classesLayer = classes;
    viewer.links = links.map((link) => ({ ...link, from: fromApi(link.from), to: fromApi(link.to) }));
    showClassLegend();
  }

  // The picker: "default" (no profile sent), each named profile, "inline…" (the box).
  function applyProfiles(list) {
    viewer.classNames = list.class_names;
    viewer.profiles = list.profiles.map((profile) => profile.name);
    const select = $("profile");
    const keep = select.value;
    const fallback = new Option("default", "default");
    fallback.title = list.default ? JSON.stringify(list.default) : "the map's own costs";
    select.replaceChildren(fallback);
    for (const profile of list.profiles) {
      const option = new Option(profile.name, profile.name);
      option.title = JSON.stringify(profile.profile);
      select.add(option);
    }
    select.add(new Option("inline…", "inline"));
    select.value = Array.from(select.options).some((o) => o.value === keep) ? keep : "default";
    $("inline-box").hidden = select.value !== "inline";
    $("classes").disabled = list.class_names.length === 0;
    const count = list.class_names.length;
    text("class-info", count === 0 ? "none"
      : `${count} (${viewer.profiles.length} named profile${viewer.profiles.length === 1 ? "" : "s"})`);
  }

  function forgetProfiles() {
    applyProfiles({ class_names: [], default: null, profiles: [] });
    viewer.links = [];
    text("class-info", null);
    classesLayer = null;
    showClassLegend();
  }

  // The legend of the classes layer: a swatch and the name of each class, by id.
  function showClassLegend() {
    const legend = $("class-legend");
    viewer.classesShown = classesLayer !== null;
    if (!viewer.classesShown) {
      legend.replaceChildren();
      legend.hidden = true;
      return;
    }
    legend.replaceChildren(...viewer.classNames.map((name, id) => {
      const swatch = document.createElement("span");
      swatch.className = "swatch";
      swatch.dataset.classId = String(id);
      swatch.style.backgroundColor = css(CLASS_COLORS[id]);
      const label = document.createElement("span");
      label.className = "class-name";
      label.textContent = name;
      const entry = document.createElement("span");
      entry.className = "class-entry";
      entry.append(swatch, " ", label);
      return entry;
    }));
    legend.hidden = false;
  }

  async function toggleClasses() {
    const map = viewer.map;
    try {
      const wanted = map && $("classes").checked && viewer.classNames.length > 0;
      const classes = wanted ? await loadClasses(map) : null;
      if (viewer.map === map) classesLayer = classes;
    } catch (err) {
      if (viewer.map === map) classesLayer = null;
      showError(err);
    } finally {
      showClassLegend();
      draw();
      viewer.layers += 1;
    }
  }

  function applyCells(cells) {
    base = cells.canvas;
    viewer.blocked = cells.blocked;
    viewer.costs = cells.costs;
    viewer.source = cells.source;
    viewer.revision = cells.revision;
    $("revision").textContent = cells.revision ?? "-";
  }

  function fitScale(width, height) {
    const box = $("canvas-box");
    const left = box.getBoundingClientRect().left;
    const room = Math.max(200, document.documentElement.clientWidth - left - 24);
    const rows = Math.max(200, window.innerHeight * 0.8 - 4);
    const fit = Math.min(room / width, rows / height);
    if (fit >= 1) return Math.min(MAX_CELL_PIXELS, Math.floor(fit));
    if (width * height <= viewer.exactCells) return 1; // the box scrolls
    return fit; // coarse
  }

  async function loadMap(id) {
    const ticket = ++loadTicket;
    queryTicket += 1; // answers for the map before are dropped
    viewer.start = null;
    viewer.goal = null;
    clearAnswer();
    try {
      if (!id) {
        viewer.map = null;
        base = null;
        forgetProfiles();
        history.replaceState(null, "", location.pathname);
        return;
      }
      const map = stacked(await (await api("GET", `/v1/maps/${encodeURIComponent(id)}`)).json());
      const fetched = await fetchMap(map);
      if (ticket !== loadTicket) return;
      viewer.map = map; // (before applyMap: fromApi reads its floors)
      applyMap(fetched);
      viewer.scale = fitScale(map.width, map.height);
      history.replaceState(null, "", `#${map.id}`);
      clearError();
    } catch (err) {
      if (ticket !== loadTicket) return;
      viewer.map = null;
      base = null;
      forgetProfiles();
      showError(err);
    } finally {
      if (ticket === loadTicket) {
        $("delete").disabled = viewer.map === null;
        showMapInfo();
        draw();
        viewer.loads += 1;
      }
    }
  }

  function showMapInfo() {
    const map = viewer.map;
    $("map-info").textContent = map
      ? `${map.name ?? "(unnamed)"}: ${map.width}x${map.floorHeight}`
        + (map.layers > 1 ? ` x ${map.layers} layers` : "") + `, ${viewer.source}`
        + (viewer.scale < 1 ? " (coarse)" : "")
      : "-";
  }

  function paintTrace(expanded) {
    traceLayer = null;
    viewer.drawnTrace = [];
    const map = viewer.map;
    if (!map || !expanded || expanded.length === 0) return;
    const { width, height } = map;
    const image = new ImageData(width, height);
    const pixels = image.data;
    const last = Math.max(1, expanded.length - 1);
    const { early, late, traceAlpha } = COLORS;
    expanded.forEach(([x, y], i) => {
      if (x < 0 || y < 0 || x >= width || y >= height) return;
      const t = i / last;
      const o = 4 * (y * width + x);
      pixels[o] = early[0] + t * (late[0] - early[0]);
      pixels[o + 1] = early[1] + t * (late[1] - early[1]);
      pixels[o + 2] = early[2] + t * (late[2] - early[2]);
      pixels[o + 3] = traceAlpha;
    });
    traceLayer = layer(width, height);
    traceLayer.getContext("2d").putImageData(image, 0, 0);
    viewer.drawnTrace = expanded;
  }

  function marker(context, cell, colour) {
    if (!cell) return;
    const [cx, cy] = viewer.cellCenter(cell[0], cell[1]);
    const radius = Math.max(2.5, viewer.scale * 0.42);
    context.beginPath();
    context.arc(cx, cy, radius, 0, 2 * Math.PI);
    context.fillStyle = colour;
    context.fill();
    context.lineWidth = 1;
    context.strokeStyle = "#ffffff";
    context.stroke();
  }

  // Each link as an arrow between its ends' centres, a head at each end it leads to.
  function drawLinks(context, scale) {
    const head = Math.max(4, scale * 0.8);
    for (const link of viewer.links) {
      const [ax, ay] = viewer.cellCenter(link.from[0], link.from[1]);
      const [bx, by] = viewer.cellCenter(link.to[0], link.to[1]);
      const colour = css(link.enabled ? COLORS.link : COLORS.closedLink);
      context.beginPath();
      context.moveTo(ax, ay);
      context.lineTo(bx, by);
      context.lineWidth = Math.max(1, scale / 4);
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

  // Map, expansions (under), links, path, then the start and goal markers.
  function draw() {
    const canvas = $("map");
    const map = viewer.map;
    if (!map || !base) {
      canvas.width = 0;
      canvas.height = 0;
      canvas.dataset.mapId = "";
      return;
    }
    const scale = viewer.scale;
    const width = Math.max(1, Math.round(map.width * scale));
    const height = Math.max(1, Math.round(map.height * scale));
    if (canvas.width !== width) canvas.width = width;
    if (canvas.height !== height) canvas.height = height;
    canvas.style.width = `${width}px`;
    canvas.style.height = `${height}px`;
    const context = canvas.getContext("2d", { willReadFrequently: true });
    context.imageSmoothingEnabled = scale < 1; // cells stay crisp squares
    context.clearRect(0, 0, width, height);
    context.drawImage(base, 0, 0, width, height);
    if (classesLayer) context.drawImage(classesLayer, 0, 0, width, height);
    if (traceLayer) context.drawImage(traceLayer, 0, 0, width, height);
    drawLinks(context, scale);
    const path = viewer.drawnPath;
    if (path.length > 1) {
      context.beginPath();
      path.forEach(([x, y], i) => {
        const [cx, cy] = viewer.cellCenter(x, y);
        if (i === 0) context.moveTo(cx, cy);
        else context.lineTo(cx, cy);
      });
      context.lineWidth = Math.max(2, scale * 0.35);
      context.lineJoin = "round";
      context.lineCap = "round";
      context.strokeStyle = css(COLORS.path);
      context.stroke();
    }
    marker(context, viewer.start, css(COLORS.start));
    marker(context, viewer.goal, css(COLORS.goal));
    showCursor();
    Object.assign(canvas.dataset, {
      mapId: map.id,
      width: String(map.width),
      height: String(map.height),
      scale: String(scale),
      revision: String(viewer.revision),
      pathPoints: String(path.length),
      traceCells: String(viewer.drawnTrace.length),
      classes: String(classesLayer !== null),
      layers: String(map.layers),
      links: String(viewer.links.length),
    });
  }

  // -- queries ---------------------------------------------------------------------------

  const text = (id, value) => {
    $(id).textContent = value === null || value === undefined ? "-" : String(value);
  };
  const cellText = (cell) => (cell ? `(${toApi(cell).join(", ")})` : null);

  function clearAnswer() {
    viewer.lastAnswer = null;
    viewer.drawnPath = [];
    paintTrace(null);
    for (const id of ["status", "cost", "expanded", "algorithm-used", "heuristic-used",
      "length", "elapsed", "time", "trace-info", "profile-used"]) {
      text(id, null);
    }
    text("start", cellText(viewer.start));
    text("goal", cellText(viewer.goal));
  }

  // The picker's profile as the query's "profile"; undefined: the map's default.
  function profileChoice() {
    const choice = $("profile").value;
    if (choice === "default") return undefined;
    if (choice !== "inline") return choice; // a named profile
    const raw = $("inline-profile").value.trim();
    try {
      return JSON.parse(raw === "" ? "{}" : raw);
    } catch (err) {
      throw new ApiError("InvalidProfile", `the inline profile is not JSON: ${err.message}`, 0);
    }
  }

  function queryBody() {
    const body = {
      start: toApi(viewer.start),
      goal: toApi(viewer.goal),
      heuristic: $("heuristic").value,
      algorithm: $("algorithm").value,
      diagonal: $("diagonal").value,
      format: $("format").value,
    };
    const weight = $("weight").value.trim();
    if (weight !== "") body.weight = Number(weight);
    const budget = $("budget").value.trim();
    if (budget !== "") body.max_expansions = Number(budget);
    if ($("trace").checked) body.trace = true;
    const profile = profileChoice();
    if (profile !== undefined) body.profile = profile;
    return body;
  }

  function showAnswer(answer) {
    text("status", answer.partial_reason ? `${answer.status} (${answer.partial_reason})`
      : answer.status);
    text("cost", answer.cost);
    text("expanded", answer.expanded);
    text("algorithm-used", answer.algorithm_used);
    text("heuristic-used", answer.heuristic_used);
    text("profile-used", answer.profile_used);
    text("length", answer.length);
    text("elapsed", answer.elapsed_us === undefined ? null : `${answer.elapsed_us} us`);
    const trace = answer.trace;
    text("trace-info", trace
      ? `${trace.expanded.length} cells drawn, ${trace.reopened} reopened${trace.cut ? ", cut" : ""}`
      : null);
  }

  async function runQuery() {
    const map = viewer.map;
    if (!map || !viewer.start || !viewer.goal) return;
    const ticket = ++queryTicket;
    const began = performance.now();
    try {
      const body = queryBody(); // (an inline profile that is not JSON: shown as an error)
      viewer.lastRequest = body;
      const response = await api("POST", `/v1/maps/${map.id}/path`, JSON.stringify(body),
        "application/json");
      const answer = await response.json();
      const elapsed = performance.now() - began;
      if (ticket !== queryTicket) return;
      if (answer.revision !== viewer.revision) {
        // The map changed since it was drawn (another client's edit): draw what was searched.
        applyMap(await fetchMap(map));
        if (ticket !== queryTicket) return;
      }
      clearError();
      viewer.lastAnswer = answer;
      viewer.elapsedMs = elapsed;
      viewer.drawnPath = answer.path.map(fromApi);
      paintTrace(answer.trace ? answer.trace.expanded.map(fromApi) : null);
      showAnswer(answer);
      text("time", `${elapsed.toFixed(1)} ms`);
    } catch (err) {
      if (ticket !== queryTicket) return;
      viewer.lastAnswer = null;
      viewer.drawnPath = [];
      paintTrace(null);
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

  // -- the canvas: start, goal, walls ----------------------------------------------------------

  function cellAt(event) {
    const canvas = $("map");
    const map = viewer.map;
    if (!map || canvas.width === 0) return null;
    const rect = canvas.getBoundingClientRect();
    const px = ((event.clientX - rect.left) * canvas.width) / rect.width;
    const py = ((event.clientY - rect.top) * canvas.height) / rect.height;
    const x = Math.floor(px / viewer.scale);
    const y = Math.floor(py / viewer.scale);
    if (x < 0 || y < 0 || x >= map.width || y >= map.height || separator(map, y)) return null;
    return [x, y];
  }

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

  // Cells of the straight line from a to b (Bresenham), so a fast drag leaves no gaps.
  function line([x0, y0], [x1, y1]) {
    const cells = [];
    const dx = Math.abs(x1 - x0);
    const dy = -Math.abs(y1 - y0);
    const sx = x0 < x1 ? 1 : -1;
    const sy = y0 < y1 ? 1 : -1;
    let error = dx + dy;
    for (;;) {
      cells.push([x0, y0]);
      if (x0 === x1 && y0 === y1) return cells;
      const twice = 2 * error;
      if (twice >= dy) {
        error += dy;
        x0 += sx;
      }
      if (twice <= dx) {
        error += dx;
        y0 += sy;
      }
    }
  }

  function paintCell([x, y]) {
    if (separator(viewer.map, y)) return; // a drag across floors paints on them only
    const index = y * viewer.map.width + x;
    if (stroke.cells.has(index)) return;
    stroke.cells.set(index, [x, y]);
    const context = base.getContext("2d");
    context.fillStyle = stroke.cost === 0 ? css(BLOCKED) : css([CHEAPEST, CHEAPEST, CHEAPEST]);
    context.fillRect(x, y, 1, 1); // shown at once; the server's grid replaces it
    if (classesLayer && stroke.cost === 0) {
      const classes = classesLayer.getContext("2d");
      classes.fillStyle = css(BLOCKED);
      classes.fillRect(x, y, 1, 1);
    }
  }

  function beginStroke(cell) {
    const blocked = viewer.blocked[cell[1] * viewer.map.width + cell[0]] === 1;
    stroke = { cost: blocked ? CLEARED_COST : 0, cells: new Map(), last: cell };
    paintCell(cell);
    draw();
  }

  function extendStroke(cell) {
    for (const step of line(stroke.last, cell)) paintCell(step);
    stroke.last = cell;
    draw();
  }

  async function endStroke() {
    const done = stroke;
    stroke = null;
    const map = viewer.map;
    if (!done || !map) return;
    const body = { edits: [{ cells: [...done.cells.values()].map(toApi), cost: done.cost }] };
    try {
      await api("POST", `/v1/maps/${map.id}/edits`, JSON.stringify(body), "application/json");
      clearError();
    } catch (err) {
      showError(err);
    }
    try {
      if (viewer.map === map) applyMap(await fetchMap(map));
    } catch (err) {
      showError(err);
    }
    draw();
    viewer.edits += 1;
    if (viewer.map === map && viewer.start && viewer.goal && !viewer.lastError) runQuery();
  }

  function wallsMode() {
    return $("mode-walls").checked;
  }

  function onPointerDown(event) {
    if (event.button !== 0 || stroke) return;
    const cell = cellAt(event);
    if (!cell) return;
    event.preventDefault();
    if (wallsMode()) {
      $("map").setPointerCapture(event.pointerId);
      beginStroke(cell);
    } else {
      pickPoint(cell);
    }
  }

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

  function onPointerMove(event) {
    hover = cellAt(event);
    showCursor();
    if (hover && stroke && (event.buttons & 1) === 1) extendStroke(hover);
  }

  function onPointerUp() {
    if (stroke) endStroke();
  }

  // -- wiring ------------------------------------------------------------------------------

  // Each legend swatch names its colour in data-color: a key of COLORS.
  function paintLegend() {
    for (const swatch of document.querySelectorAll("#legend .swatch[data-color]")) {
      swatch.style.backgroundColor = css(COLORS[swatch.dataset.color]);
    }
  }

  function init() {
    paintLegend();
    const key = $("api-key");
    key.value = window.localStorage.getItem(KEY_STORE) ?? "";
    key.addEventListener("change", () => {
      const value = key.value.trim();
      if (value) window.localStorage.setItem(KEY_STORE, value);
      else window.localStorage.removeItem(KEY_STORE);
      refreshMaps().then(clearError, showError);
    });
    $("maps").addEventListener("change", () => loadMap($("maps").value));
    $("refresh").addEventListener("click", () => refreshMaps().then(clearError, showError));
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
      "trace"]) {
      $(id).addEventListener("change", runQuery);
    }
    $("clear-points").addEventListener("click", () => {
      queryTicket += 1;
      viewer.start = null;
      viewer.goal = null;
      clearAnswer();
      draw();
    });
    const canvas = $("map");
    canvas.addEventListener("pointerdown", onPointerDown);
    canvas.addEventListener("pointermove", onPointerMove);
    canvas.addEventListener("pointerup", onPointerUp);
    canvas.addEventListener("pointercancel", onPointerUp);
    canvas.addEventListener("pointerleave", () => {
      hover = null;
      showCursor();
    });
    let resizing = 0;
    window.addEventListener("resize", () => {
      window.clearTimeout(resizing);
      resizing = window.setTimeout(() => {
        if (!viewer.map) return;
        viewer.scale = fitScale(viewer.map.width, viewer.map.height);
        showMapInfo();
        draw();
      }, 150);
    });
    const wanted = decodeURIComponent(location.hash.slice(1));
    refreshMaps(wanted)
      .then((maps) => (maps.some((map) => map.id === wanted) ? loadMap(wanted) : null))
      .catch(showError)
      .finally(() => {
        document.body.dataset.ready = "true";
      });
  }

  init();
})();
