// The floors of a map of several layers, as the page draws them: stacked top to
// bottom, layer 0 first, one blocked row between two (as the server's grid stacks them).
// The page works in stacked [x, row]; the API names cells [x, y, layer].

// The map as the page draws it: `height` the rows of its floors stacked, `floorHeight`
// one floor's.
export function stacked(map) {
  const floors = map.layers ?? 1;
  return { ...map, layers: floors, floorHeight: map.height, height: floors * (map.height + 1) - 1 };
}

// A stacked [x, row] as the API names it: [x, y, layer] on a layered map.
export function toApi(map, cell) {
  if (!cell || !map || map.layers === 1) return cell;
  const band = map.floorHeight + 1;
  return [cell[0], cell[1] % band, Math.floor(cell[1] / band)];
}

// An API cell ([x, y] or [x, y, layer]) as the page's stacked [x, row].
export function fromApi(map, cell) {
  if (!cell || cell.length < 3 || !map) return cell;
  return [cell[0], cell[2] * (map.floorHeight + 1) + cell[1]];
}

// Whether a stacked row is the blocked row between two floors.
export function separator(map, row) {
  return map.layers > 1 && row % (map.floorHeight + 1) === map.floorHeight;
}

// The stacked rows [top, bottom] of the floor holding this row.
export function floorRows(map, row) {
  const band = map.floorHeight + 1;
  const top = Math.floor(row / band) * band;
  return [top, top + map.floorHeight - 1];
}
