// Painting on the map: a stroke collects the cells a drag crosses, and the undo stack
// keeps what each edit replaced, so the last one can be put back exactly.

// How many edits the page can undo, newest first.
const UNDO_DEPTH = 50;

// Cells of the straight line from a to b (Bresenham), so a fast drag leaves no gaps.
export function line([x0, y0], [x1, y1]) {
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

// The cells one drag paints with one cost, and the cost each had before (null when the
// page does not hold the map's exact costs).
export class Stroke {
  constructor(cost, width) {
    this.cost = cost;
    this.width = width;
    this.cells = new Map(); // index -> [x, row]
    this.before = new Map(); // index -> the cost it had
    this.last = null;
  }

  // Whether the cell is new to the stroke (so it is to be painted).
  add(cell, previous) {
    const index = cell[1] * this.width + cell[0];
    this.last = cell;
    if (this.cells.has(index)) return false;
    this.cells.set(index, cell);
    this.before.set(index, previous);
    return true;
  }

  // The edit request's items: every cell at the stroke's cost.
  edits(toApi) {
    return [{ cells: [...this.cells.values()].map(toApi), cost: this.cost }];
  }

  // Items that put the cells back: one per cost they had (null when one is unknown).
  reverse(toApi) {
    const byCost = new Map();
    for (const [index, cell] of this.cells) {
      const cost = this.before.get(index);
      if (cost === null || cost === undefined) return null;
      if (!byCost.has(cost)) byCost.set(cost, []);
      byCost.get(cost).push(toApi(cell));
    }
    return [...byCost].map(([cost, cells]) => ({ cells, cost }));
  }
}

// Edits the page made, newest last: {mapId, revision (the map's after it), undo (the
// request's items), cells}.
export class UndoStack {
  constructor() {
    this.entries = [];
  }

  push(entry) {
    this.entries.push(entry);
    if (this.entries.length > UNDO_DEPTH) this.entries.shift();
  }

  // The newest edit of this map, or null.
  last(mapId) {
    const entry = this.entries[this.entries.length - 1];
    return entry && entry.mapId === mapId ? entry : null;
  }

  // Drop the newest edit, undone: the map is again as the edit before left it, now at
  // `revision`, which that edit's undo will name.
  pop(revision) {
    this.entries.pop();
    const below = this.entries[this.entries.length - 1];
    if (below) below.revision = revision;
  }

  get size() {
    return this.entries.length;
  }
}
