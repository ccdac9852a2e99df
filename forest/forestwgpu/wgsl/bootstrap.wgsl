// Bootstrap counts of a batch of trees (core.BootstrapCounts): one
// invocation per (tree, draw); draw i of tree t0+t picks row
// rng.Below(rng.At(rng.Key(seed, t0+t, 1), i), n) and counts it.
struct Params { seedLo: u32, seedHi: u32, t0: u32, trees: u32, n: u32, draws: u32 }
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read_write> counts: array<atomic<u32>>;

const WG = 256u;
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nw: vec3u, @builtin(local_invocation_index) li: u32) {
  let idx = gidx(wid, nw, li, WG);
  if (idx >= P.trees * P.draws) { return; }
  let t = idx / P.draws;
  let i = idx - t * P.draws;
  let key = streamKey(vec2u(P.seedLo, P.seedHi), P.t0 + t, 1u);
  let r = streamAt(key, i);
  let row = mulWide(r.y, P.n).y; // rng.Below: ((r >> 32) · n) >> 32
  atomicAdd(&counts[t * P.n + row], 1u);
}
