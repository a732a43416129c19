// What the viewer draws with, as [r, g, b]. The map's colours are the server's picture
// colours (service/engine/pictures.py and the path.png route), so the page and the PNGs
// look alike; the legend's swatches are painted from these same values (paintLegend),
// so the two cannot disagree.

export const BLOCKED = [28, 28, 32];
// Walkable cells are grey, from the cheapest (light) to the dearest.
export const CHEAPEST = 236;
export const DEAREST = 120;

export const COLORS = {
  path: [31, 119, 180],
  start: [44, 160, 44],
  goal: [214, 39, 40],
  early: [255, 236, 160], // first expansion
  late: [232, 106, 24], // last expansion
  traceAlpha: 160, // of 255: the map shows through
  link: [255, 127, 14], // the LINK_COLOUR of service/api/routes/pictures.py
  closedLink: [150, 150, 156],
  region: [227, 119, 194], // the goal region's cells, tinted
  regionAlpha: 90,
  near: [253, 231, 37], // the field overlay: the goal's own cost
  far: [68, 1, 84], // the field overlay: the dearest cell reached
  fieldAlpha: 170,
};

// The terrain classes' colours by class id: service/engine/pictures.py's CLASS_PALETTE,
// which the classes layer (image.png?classes=true) is drawn with.
export const CLASS_COLORS = [
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

export const css = ([r, g, b]) => `rgb(${r},${g},${b})`;

// The colour a share t (0 to 1) of the way from a to b.
export function blend(a, b, t) {
  return [a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1]), a[2] + t * (b[2] - a[2])];
}

// The grey of a walkable cell of this cost, on a map whose walkable costs span low..high.
export function groundGrey(cost, low, high) {
  const span = high - low;
  const share = span > 0 ? (cost - low) / span : 0;
  return CHEAPEST - share * (CHEAPEST - DEAREST);
}
