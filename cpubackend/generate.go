package cpubackend

// Generated files. Every gen_*.go file of this package (other than
// gen_vecops.go, which is a generator program itself) is written by one of
// the commands below, this repository's copies of simplego's generators
// (internal/cmd/..., forks of github.com/gomlx/gomlx@v0.26.0
// internal/cmd/...; see UPSTREAM.md). They are committed, so building needs
// no generation; to check that they are up to date:
//
//	go generate ./cpubackend/... && git diff --exit-code cpubackend
//
// gen_vecops.go writes vecops_amd64.s (see its go:generate line in
// vecops_amd64.go).

// gen_exec_binary.go: the binary operators (Add, Mul, ..., comparisons).
//go:generate go run ./internal/cmd/simplego_generator

// gen_register_dtypes.go: the registrations of the generic functions' dtype instances.
//go:generate go run ./internal/cmd/simplego_dispatcher

// gen_convgeneral_exec_{bf16,full,full_bf16}.go: the variants of convgeneral_exec.go's execConv* functions.
//go:generate go run ./internal/cmd/alternates_generator -base=convgeneral_exec.go -tags=bf16,full,full_bf16
