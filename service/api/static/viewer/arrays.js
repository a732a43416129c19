// numpy files as the API sends them: a .npy (GET /grid) and an uncompressed .npz
// (POST /field, which numpy's savez writes with every member stored as it is).

export class FormatError extends Error {
  constructor(message) {
    super(message);
    this.code = "BadArray";
  }
}

const TYPES = { "<f4": Float32Array, "<f8": Float64Array, "|i1": Int8Array, "<i4": Int32Array,
  "<i8": BigInt64Array };

// Bytes per element of a dtype such as "<f4", "|i1" or "<U12" (12 UCS-4 characters).
function itemSize(descr) {
  const parts = /^[<>|=]([a-zA-Z])(\d+)$/.exec(descr);
  if (!parts) return null;
  return (parts[1] === "U" ? 4 : 1) * Number(parts[2]);
}

// One .npy at `offset` of `buffer`: {shape, data, end (the byte after it)}. `data` is a
// typed array for the number types above, else the raw bytes.
export function readNpy(buffer, offset = 0) {
  const bytes = new Uint8Array(buffer, offset);
  const magic = String.fromCharCode(...bytes.subarray(1, 6));
  if (bytes[0] !== 0x93 || magic !== "NUMPY") throw new FormatError("not a .npy array");
  const view = new DataView(buffer, offset);
  const v1 = bytes[6] === 1;
  const start = v1 ? 10 : 12;
  const length = v1 ? view.getUint16(8, true) : view.getUint32(8, true);
  const header = new TextDecoder("latin1").decode(bytes.subarray(start, start + length));
  const descr = /'descr':\s*'([^']+)'/.exec(header);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header);
  const size = descr ? itemSize(descr[1]) : null;
  if (size === null || !shape || /'fortran_order':\s*True/.test(header)) {
    throw new FormatError(`unexpected .npy header ${header.trim()}`);
  }
  const dims = shape[1].split(",").filter((d) => d.trim() !== "").map(Number);
  const count = dims.reduce((a, b) => a * b, 1);
  const from = offset + start + length;
  const end = from + count * size;
  const Type = TYPES[descr[1]] ?? Uint8Array;
  return { shape: dims, data: new Type(buffer.slice(from, end)), end };
}

// The members of an uncompressed .npz by name ("cost" for cost.npy), each as readNpy.
export function readNpz(buffer) {
  const view = new DataView(buffer);
  const members = {};
  let at = 0;
  while (at + 30 <= buffer.byteLength && view.getUint32(at, true) === 0x04034b50) {
    if (view.getUint16(at + 8, true) !== 0) throw new FormatError("a compressed .npz member");
    const nameLength = view.getUint16(at + 26, true);
    const extraLength = view.getUint16(at + 28, true);
    const name = new TextDecoder().decode(new Uint8Array(buffer, at + 30, nameLength));
    const array = readNpy(buffer, at + 30 + nameLength + extraLength);
    members[name.replace(/\.npy$/, "")] = array;
    at = array.end;
    // (numpy writes sizes in the local header, so no data descriptor follows a member)
  }
  return members;
}

// A (height, width) array, or (layers, height, width) stacked as the page draws a map
// of several floors: layer 0 first, one row between two holding `fill`.
export function stackFloors({ shape, data }, fill = 0) {
  const layers = shape.length === 3 ? shape[0] : 1;
  const floor = shape[shape.length - 2];
  const width = shape[shape.length - 1];
  const height = layers * (floor + 1) - 1;
  if (layers === 1) return { width, height, values: data };
  const values = new data.constructor(width * height).fill(fill);
  for (let l = 0; l < layers; l += 1) {
    values.set(data.subarray(l * floor * width, (l + 1) * floor * width), l * (floor + 1) * width);
  }
  return { width, height, values };
}
