// Bin codes, packed 4 a word (little-endian), in the buffer codes.

// codeAt is byte k of a buffer of packed bytes (4 a word, little-endian).
fn codeAt(k: u32) -> u32 {
  return (codes[k >> 2u] >> ((k & 3u) * 8u)) & 0xffu;
}
