// Fetching what the page draws of a map: its cells (exact costs, or the server's
// picture for a big map), its terrain classes layer, profiles and links.

import { postJson } from "./api.js";
import { readNpy, readNpz, stackFloors } from "./arrays.js";
import { layer, paintCosts, paintPicture } from "./painting.js";

// The map revision an answer is of (its ETag).
export function revisionOf(response) {
  const tag = response.headers.get("ETag");
  return tag ? Number(tag.replaceAll('"', "")) : null;
}

// The map's current cells, one pixel per cell: from its costs when it has at most
// `exactCells` cells, else from the server's picture.
async function loadCells(api, map, exactCells) {
  const { id, width, height } = map;
  if (width * height <= exactCells) {
    const response = await api("GET", `/v1/maps/${id}/grid`);
    const grid = stackFloors(readNpy(await response.arrayBuffer()));
    const painted = paintCosts(grid.width, grid.height, grid.values);
    return { ...painted, costs: grid.values, source: "grid", revision: revisionOf(response) };
  }
  const response = await api("GET", `/v1/maps/${id}/image.png`);
  const painted = await paintPicture(width, height, await response.blob());
  return { ...painted, costs: null, source: "image", revision: revisionOf(response) };
}

// The terrain classes, one pixel per cell: the server's picture of them at scale 1,
// whose map rows are drawn (the page shows its own legend).
export async function loadClasses(api, map) {
  const response = await api("GET", `/v1/maps/${map.id}/image.png?classes=true`);
  const bitmap = await createImageBitmap(await response.blob());
  const canvas = layer(map.width, map.height);
  canvas.getContext("2d").drawImage(bitmap, 0, 0);
  bitmap.close();
  return canvas;
}

// Everything drawn of a map: {cells, profiles, classes (a layer, or null unless
// `withClasses` and the map has classes), links}.
export async function fetchMap(api, map, { exactCells, withClasses }) {
  const [cells, profiles, links] = await Promise.all([
    loadCells(api, map, exactCells),
    api("GET", `/v1/maps/${map.id}/profiles`).then((response) => response.json()),
    api("GET", `/v1/maps/${map.id}/links`).then((response) => response.json()),
  ]);
  const wanted = withClasses && profiles.class_names.length > 0;
  const classes = wanted ? await loadClasses(api, map) : null;
  return { cells, profiles, classes, links: links.links };
}

// A field's costs (POST /field, .npz) as the page's stacked cells (NaN between floors,
// Infinity where not reached), and the revision it is of.
export async function loadField(api, map, body) {
  const response = await postJson(api, `/v1/maps/${map.id}/field`, body);
  const members = readNpz(await response.arrayBuffer());
  return { costs: stackFloors(members.cost, NaN).values, revision: revisionOf(response) };
}
