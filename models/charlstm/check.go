package charlstm

import (
	"fmt"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// checkArch verifies the architecture a and sequence length seqLen read
// from ctx's metadata against the weights ctx holds: a valid architecture
// whose every layer's weights are there with the shapes it gives them.
// A checkpoint whose metadata disagrees with its weights is refused before
// anything is sized by the metadata (the sampler's states, its graph).
func checkArch(ctx *context.Context, a Arch, seqLen int) error {
	if err := a.Validate(); err != nil {
		return fmt.Errorf("%s/arch: %w", MetaScope, err)
	}
	if seqLen < 1 {
		return fmt.Errorf("%s/arch: sequence length %d: want >= 1", MetaScope, seqLen)
	}
	// Every layer has two variables: more layers than that cannot be there
	// (and are not looked for one by one).
	if n := ctx.NumVariables(); a.Layers > n/2 {
		return fmt.Errorf("%s/arch: %d layers, but the model has only %d variables", MetaScope, a.Layers, n)
	}
	check := func(scope, name string, dims ...int) error {
		v := ctx.GetVariableByScopeAndName(scope, name)
		if v == nil {
			return fmt.Errorf("%s/arch: %d layers of %d, but there is no %s/%s variable", MetaScope, a.Layers, a.Hidden, scope, name)
		}
		if want := shapes.Make(dtypes.Float32, dims...); !v.Shape().Equal(want) {
			return fmt.Errorf("%s/arch: %d layers of %d and a vocabulary of %d give %s/%s the shape %s, but it is %s",
				MetaScope, a.Layers, a.Hidden, a.Vocab, scope, name, want, v.Shape())
		}
		return nil
	}
	for l := range a.Layers + 1 {
		scope, in, out := fmt.Sprintf("%s/lstm_%d", Scope, l), a.Hidden+a.Hidden, 4*a.Hidden
		switch {
		case l == a.Layers:
			scope, in, out = Scope+"/output", a.Hidden, a.Vocab
		case l == 0:
			in = a.Vocab + a.Hidden
		}
		if err := check(scope, "w", in, out); err != nil {
			return err
		}
		if err := check(scope, "b", out); err != nil {
			return err
		}
	}
	return nil
}
