// 64-bit unsigned integers as vec2u(low word, high word): WGSL has no
// 64-bit integers. Additions and multiplications wrap modulo 2^64, as
// Go's uint64 (and int64, in two's complement) do.

// mulWide is the full 64-bit product of two 32-bit words, from their
// 16-bit halves.
fn mulWide(a: u32, b: u32) -> vec2u {
  let a0 = a & 0xffffu;
  let a1 = a >> 16u;
  let b0 = b & 0xffffu;
  let b1 = b >> 16u;
  let p00 = a0 * b0;
  let p01 = a0 * b1;
  let p10 = a1 * b0;
  let p11 = a1 * b1;
  let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
  return vec2u((p00 & 0xffffu) | (mid << 16u), p11 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u));
}

fn add64(a: vec2u, b: vec2u) -> vec2u {
  let lo = a.x + b.x;
  return vec2u(lo, a.y + b.y + select(0u, 1u, lo < a.x));
}

fn mul64(a: vec2u, b: vec2u) -> vec2u {
  let p = mulWide(a.x, b.x);
  return vec2u(p.x, p.y + a.x * b.y + a.y * b.x);
}

// shr64 shifts right by k, 0 < k < 32.
fn shr64(a: vec2u, k: u32) -> vec2u {
  return vec2u((a.x >> k) | (a.y << (32u - k)), a.y >> k);
}

// GOLDEN is rng.Golden, 0x9E3779B97F4A7C15.
const GOLDEN = vec2u(0x7F4A7C15u, 0x9E3779B9u);

// mix64 is rng.Mix, SplitMix64's finalizer.
fn mix64(z0: vec2u) -> vec2u {
  var z = z0;
  z = z ^ shr64(z, 30u);
  z = mul64(z, vec2u(0x1ce4e5b9u, 0xbf58476du));
  z = z ^ shr64(z, 27u);
  z = mul64(z, vec2u(0x133111ebu, 0x94d049bbu));
  z = z ^ shr64(z, 31u);
  return z;
}

// streamKey is rng.Key(seed, index, purpose):
// Mix(Mix(seed ^ Golden) + index·Golden + purpose).
fn streamKey(seed: vec2u, index: u32, purpose: u32) -> vec2u {
  return mix64(add64(add64(mix64(seed ^ GOLDEN), mul64(vec2u(index, 0u), GOLDEN)), vec2u(purpose, 0u)));
}

// streamAt is rng.At(key, counter) = Mix(key + (counter+1)·Golden), for
// counters below 2^32 − 1.
fn streamAt(key: vec2u, counter: u32) -> vec2u {
  return mix64(add64(key, mul64(vec2u(counter + 1u, 0u), GOLDEN)));
}

// thread is the invocation's index over a 2-D grid of workgroups of WG
// invocations (webgpu.Groups).
fn gidx(wid: vec3u, nw: vec3u, li: u32, wg: u32) -> u32 {
  return (wid.y * nw.x + wid.x) * wg + li;
}
