// Histograms of frontier nodes: one invocation per ((tree, row), feature).
// A row in frontier slot s whose scatter index hmap[s] is in [lo, hi)
// adds its statistics to entry offsets[j] + code of that node's block:
// n (1), w (its weight in the tree) and the sum (w·yq, or w in its
// class's column). Each statistic is 64 bits in two u32 words, added with
// 32-bit atomics and an explicit carry: the low word's atomicAdd returns
// the value before it, so a wrap is seen exactly once and carried into the
// high word. The totals are the exact int64 sums modulo 2^64 (two's
// complement for the signed target sums), whatever the order of the adds.
struct Params { rows: u32, n: u32, p: u32, entries: u32, q: u32, lo: u32, hi: u32, classify: u32 }
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> codes: array<u32>;
@group(0) @binding(2) var<storage, read> offsets: array<u32>;
@group(0) @binding(3) var<storage, read> tgt: array<u32>;
@group(0) @binding(4) var<storage, read> weight: array<u32>;
@group(0) @binding(5) var<storage, read> slot: array<i32>;
@group(0) @binding(6) var<storage, read> hmap: array<i32>;
@group(0) @binding(7) var<storage, read_write> hist: array<atomic<u32>>;

fn addStat(a: u32, v: vec2u) {
  let old = atomicAdd(&hist[a], v.x);
  let hi = v.y + select(0u, 1u, old + v.x < old);
  if (hi != 0u) {
    atomicAdd(&hist[a + 1u], hi);
  }
}

const WG = 256u;
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nw: vec3u, @builtin(local_invocation_index) li: u32) {
  let idx = gidx(wid, nw, li, WG);
  if (idx >= P.rows * P.p) { return; }
  let r = idx / P.p;
  let j = idx - r * P.p;
  let s = slot[r];
  if (s < 0) { return; }
  let hs = hmap[s];
  if (hs < i32(P.lo) || hs >= i32(P.hi)) { return; }
  let i = r % P.n;
  let entry = offsets[j] + codeAt(i * P.p + j);
  let base = ((u32(hs) - P.lo) * P.entries + entry) * P.q * 2u;
  let w = weight[r];
  addStat(base, vec2u(1u, 0u));
  addStat(base + 2u, vec2u(w, 0u));
  if (P.classify != 0u) {
    addStat(base + 2u * (2u + tgt[i]), vec2u(w, 0u));
  } else {
    addStat(base + 4u, mul64(vec2u(tgt[2u * i], tgt[2u * i + 1u]), vec2u(w, 0u)));
  }
}
