package forestwgpu

import (
	"embed"
	"strings"
)

// The WGSL kernels (wgsl/): bootstrap counts, histograms, the row
// partition and the prediction's traversal, each prefixed with the 64-bit
// helpers of u64.wgsl and, when it reads bin codes, codes.wgsl.
//
//go:embed wgsl/*.wgsl
var wgslFiles embed.FS

// shader returns the source of kernel name (a file of wgsl/ without its
// extension) with the helpers it uses.
func shader(name string) string {
	read := func(f string) string {
		b, err := wgslFiles.ReadFile("wgsl/" + f + ".wgsl")
		if err != nil {
			panic(err) // embedded: cannot happen
		}
		return string(b)
	}
	src := read(name)
	var sb strings.Builder
	sb.WriteString(read("u64"))
	if strings.Contains(src, "var<storage, read> codes") {
		sb.WriteString(read("codes"))
	}
	sb.WriteString(src)
	return sb.String()
}
