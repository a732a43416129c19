// The page's controls read as the API's options, and the panels written from what
// the API answers: the map list, the profile picker and the legends.

import { ApiError } from "./api.js";
import { CLASS_COLORS, COLORS, css } from "./colors.js";

const $ = (id) => document.getElementById(id);

// An element's text: the value, or "-" for none.
export const text = (id, value) => {
  $(id).textContent = value === null || value === undefined ? "-" : String(value);
};

// The unit's side in cells (agent_size), 1 unless a whole number above 1 is given.
export function agentSize() {
  const size = Number($("agent-size").value);
  return Number.isInteger(size) && size > 1 ? size : 1;
}

// The goal region's radius in cells; 0: the goal cell alone.
export function regionRadius() {
  const radius = Number($("region-radius").value);
  return Number.isFinite(radius) && radius > 0 ? radius : 0;
}

// The cost the "paint cost" tool paints.
export function paintCost() {
  const cost = Number($("paint-cost").value);
  return Number.isFinite(cost) && cost > 0 ? cost : 1;
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

// What a unit is: its size, profile, move policy and whether it snaps; the path and
// the field both send these.
export function unitOptions() {
  const options = { diagonal: $("diagonal").value };
  if (agentSize() > 1) options.agent_size = agentSize();
  const profile = profileChoice();
  if (profile !== undefined) options.profile = profile;
  if ($("snap").checked) options.snap = true;
  return options;
}

// The path query's body from start to goal (API cells), with every option set.
export function queryBody(start, goal) {
  const body = {
    start,
    heuristic: $("heuristic").value,
    algorithm: $("algorithm").value,
    format: $("format").value,
    ...unitOptions(),
  };
  const radius = regionRadius();
  if (radius > 0) body.goal_region = { center: goal, radius };
  else body.goal = goal;
  const weight = $("weight").value.trim();
  if (weight !== "") body.weight = Number(weight);
  const budget = $("budget").value.trim();
  if (budget !== "") body.max_expansions = Number(budget);
  if ($("nearest").checked) body.unreachable = "nearest";
  if ($("trace").checked) body.trace = true;
  return body;
}

// The map list from GET /v1/maps, keeping `selected` (default: the one selected)
// when it is still there. The maps listed.
export async function refreshMaps(api, selected) {
  const { maps } = await (await api("GET", "/v1/maps")).json();
  const select = $("maps");
  const keep = selected === undefined ? select.value : selected;
  select.replaceChildren(new Option("(none)", ""));
  for (const map of maps) {
    const floors = (map.layers ?? 1) > 1 ? `x${map.layers}` : "";
    const label = `${map.name ?? "(unnamed)"} - ${map.width}x${map.height}${floors} (${map.id})`;
    select.add(new Option(label, map.id));
  }
  select.value = maps.some((map) => map.id === keep) ? keep : "";
  return maps;
}

// The upload's Content-Type, from the file's name.
export function uploadType(fileName) {
  const lower = fileName.toLowerCase();
  if (lower.endsWith(".npy")) return "application/x-npy";
  if (lower.endsWith(".json")) return "application/json";
  return "text/plain"; // Moving AI .map
}

// The picker from GET /profiles: "default" (no profile sent), each named profile,
// "inline…" (the box). The profiles' names.
export function showProfiles(list) {
  const names = list.profiles.map((profile) => profile.name);
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
  $("class-info").textContent = count === 0 ? "none"
    : `${count} (${names.length} named profile${names.length === 1 ? "" : "s"})`;
  return names;
}

// The legend of the classes layer: a swatch and the name of each class, by id; hidden
// when the layer is not drawn.
export function showClassLegend(classNames, shown) {
  const legend = $("class-legend");
  if (!shown) {
    legend.replaceChildren();
    legend.hidden = true;
    return;
  }
  legend.replaceChildren(...classNames.map((name, id) => {
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

// Each legend swatch names its colour in data-color: a key of COLORS, which the canvas
// draws with.
export function paintLegend() {
  for (const swatch of document.querySelectorAll("#legend .swatch[data-color]")) {
    swatch.style.backgroundColor = css(COLORS[swatch.dataset.color]);
  }
}

// The answer's figures in the table (status "error": all but the status blank).
export function showAnswer(answer) {
  text("status", answer.partial_reason ? `${answer.status} (${answer.partial_reason})`
    : answer.status);
  text("cost", answer.cost);
  text("expanded", answer.expanded);
  text("algorithm-used", answer.algorithm_used);
  text("heuristic-used", answer.heuristic_used);
  text("profile-used", answer.profile_used);
  text("length", answer.length);
  text("optimal", answer.optimal);
  const snapped = answer.snapped
    ? Object.entries(answer.snapped).map(([end, cell]) => `${end} (${cell.join(", ")})`).join(", ")
    : null;
  text("snapped", snapped ?? (answer.status === "error" ? null : "no"));
  text("elapsed", answer.elapsed_us === undefined ? null : `${answer.elapsed_us} us`);
  const trace = answer.trace;
  text("trace-info", trace
    ? `${trace.expanded.length} cells drawn, ${trace.reopened} reopened${trace.cut ? ", cut" : ""}`
    : null);
}

// What each tool does, as the badge over the map says it.
const TOOLS = {
  points: () => "Pick: start, then goal (drag to pan)",
  wall: () => "Paint: wall (drag)",
  clear: () => "Paint: clear, cost 1 (drag)",
  cost: () => `Paint: cost ${paintCost()} (drag)`,
};

// The tool in use, on the badge and as the canvas's cursor.
export function showTool(tool) {
  $("tool-badge").textContent = TOOLS[tool]();
  $("tool-badge").dataset.tool = tool;
  $("map").dataset.tool = tool;
}

// The undo button for the newest edit of the map shown (`entry`, or null), and how
// many edits the page holds.
export function showUndoable(entry, size) {
  const button = $("undo");
  button.disabled = !entry || !entry.undo;
  if (entry && !entry.undo) {
    button.title = "The page does not hold this map's exact costs (it is drawn from the "
      + "server's picture), so it cannot put them back.";
  } else {
    button.title = entry ? `Put back the ${entry.cells} cells of the last edit (revision `
      + `${entry.revision})` : "Nothing to undo";
  }
  text("undo-info", size > 0 ? `${size} to undo` : null);
}

// The map shown: its name, size, floors and where its cells came from ("grid", "image").
export function showMapInfo(map, source) {
  $("map-info").textContent = map
    ? `${map.name ?? "(unnamed)"}: ${map.width}x${map.floorHeight}`
      + (map.layers > 1 ? ` x ${map.layers} layers` : "") + `, ${source}`
    : "-";
}

// The zoom in pixels per cell (null: no map shown).
export function showZoom(scale) {
  text("zoom-info", scale === null ? null
    : `${scale >= 10 ? scale.toFixed(0) : scale.toFixed(2)} px per cell`);
}
