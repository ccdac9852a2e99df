package transformer

import (
	"fmt"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// checkArch verifies the architecture a read from ctx's metadata against
// the weights ctx holds: a valid architecture whose every weight is there
// with the shape it gives it. A checkpoint whose metadata disagrees with
// its weights is refused before anything is sized by the metadata (the
// sampler's key/value cache, its graph).
func checkArch(ctx *context.Context, a Arch) error {
	if err := a.Validate(); err != nil {
		return fmt.Errorf("%s/arch: %w", MetaScope, err)
	}
	a = a.withDefaults()
	// Every block has more than two variables: more blocks than that cannot
	// be there (and are not looked for one by one).
	if n := ctx.NumVariables(); a.Layers > n/2 {
		return fmt.Errorf("%s/arch: %d layers, but the model has only %d variables", MetaScope, a.Layers, n)
	}
	check := func(scope, name string, dims ...int) error {
		v := ctx.GetVariableByScopeAndName(scope, name)
		if v == nil {
			return fmt.Errorf("%s/arch: the model (%s) has no %s/%s variable", MetaScope, describe(a), scope, name)
		}
		if want := shapes.Make(dtypes.Float32, dims...); !v.Shape().Equal(want) {
			return fmt.Errorf("%s/arch: the model (%s) gives %s/%s the shape %s, but it is %s", MetaScope, describe(a), scope, name, want, v.Shape())
		}
		return nil
	}
	d, f := a.Width, a.Hidden
	type want struct {
		scope, name string
		dims        []int
	}
	norm := func(scope string) []want {
		w := []want{{scope, "gain", []int{d}}}
		if a.Norm == NormLayer {
			w = append(w, want{scope, "bias", []int{d}})
		}
		return w
	}
	wants := []want{{Scope, "token_embedding", []int{a.Vocab, d}}, {Scope, "position_embedding", []int{a.Context, d}}}
	wants = append(wants, norm(Scope+"/norm_final")...)
	for l := range a.Layers {
		b := fmt.Sprintf("%s/block_%d", Scope, l)
		for _, n := range []string{"wq", "wk", "wv", "wo"} {
			wants = append(wants, want{b + "/attention", n, []int{d, d}})
		}
		wants = append(wants, want{b + "/ffn", "w1", []int{d, f}}, want{b + "/ffn", "w3", []int{d, f}}, want{b + "/ffn", "w2", []int{f, d}})
		if a.FFN == FFNRichards {
			wants = append(wants, want{b + "/ffn", "beta_raw", []int{f}}, want{b + "/ffn", "nu_raw", []int{f}})
		}
		wants = append(wants, norm(b+"/norm_1")...)
		wants = append(wants, norm(b+"/norm_2")...)
	}
	for _, w := range wants {
		if err := check(w.scope, w.name, w.dims...); err != nil {
			return err
		}
	}
	return nil
}
