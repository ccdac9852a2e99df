// The row partition: one invocation per (tree, row). A row in frontier
// slot s moves to the slot of the child its code of the split feature
// sends it to (codes <= bin go left, missing values as the node says), or
// leaves the frontier (−1) when that child is a leaf or s was not split.
// dec holds four words per slot: feature (−1: not split), bin |
// missing-left << 8, left slot, right slot.
struct Params { rows: u32, n: u32, p: u32 }
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> codes: array<u32>;
@group(0) @binding(2) var<storage, read> offsets: array<u32>;
@group(0) @binding(3) var<storage, read> dec: array<i32>;
@group(0) @binding(4) var<storage, read_write> slot: array<i32>;

const WG = 256u;
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nw: vec3u, @builtin(local_invocation_index) li: u32) {
  let r = gidx(wid, nw, li, WG);
  if (r >= P.rows) { return; }
  let s = slot[r];
  if (s < 0) { return; }
  let f = dec[4 * s];
  if (f < 0) {
    slot[r] = -1;
    return;
  }
  let fj = u32(f);
  let code = codeAt((r % P.n) * P.p + fj);
  let bm = u32(dec[4 * s + 1]);
  let miss = offsets[fj + 1u] - offsets[fj] - 1u;
  let left = code <= (bm & 0xffu) || (code == miss && (bm >> 8u) != 0u);
  slot[r] = select(dec[4 * s + 3], dec[4 * s + 2], left);
}
