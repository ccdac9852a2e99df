// Batched traversal for prediction: one invocation per (row, tree) walks
// the tree from its root to a leaf and writes the leaf's index in its tree.
// nodes holds three words per node: left child (−1 at a leaf; the right
// child is the next node), feature, bin | missing-left << 8; roots each
// tree's first node. codes are the rows' bin codes (forest.Binner), packed.
struct Params { rows: u32, trees: u32, p: u32, maxDepth: u32 }
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> codes: array<u32>;
@group(0) @binding(2) var<storage, read> miss: array<u32>;
@group(0) @binding(3) var<storage, read> nodes: array<i32>;
@group(0) @binding(4) var<storage, read> roots: array<u32>;
@group(0) @binding(5) var<storage, read_write> leaf: array<u32>;

const WG = 256u;
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nw: vec3u, @builtin(local_invocation_index) li: u32) {
  let idx = gidx(wid, nw, li, WG);
  if (idx >= P.rows * P.trees) { return; }
  let row = idx / P.trees;
  let t = idx - row * P.trees;
  let root = roots[t];
  var node = 0u;
  for (var d = 0u; d <= P.maxDepth; d++) {
    let b = 3u * (root + node);
    let left = nodes[b];
    if (left < 0) { break; }
    let f = u32(nodes[b + 1u]);
    let code = codeAt(row * P.p + f);
    let bm = u32(nodes[b + 2u]);
    let goLeft = code <= (bm & 0xffu) || (code == miss[f] && (bm >> 8u) != 0u);
    node = u32(left) + select(1u, 0u, goLeft);
  }
  leaf[idx] = node;
}
