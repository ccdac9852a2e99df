package charlstm

import (
	"fmt"

	"github.com/gotrain/gotrain/internal/readlimit"
	"github.com/gotrain/gotrain/models/text"
)

// loadCorpus reads the corpus opts.Path names, at most opts.MaxBytes of it
// (text.LoadTextMax); an error about the cap names Options.MaxBytes. An
// empty Path is set to the default corpus (text.DefaultCorpusPath).
func loadCorpus(opts *Options) (string, error) {
	if opts.Path == "" {
		p, err := text.DefaultCorpusPath()
		if err != nil {
			return "", fmt.Errorf("charlstm: no corpus given, and %w", err)
		}
		opts.Path = p
	}
	s, err := text.LoadTextMax(opts.Path, opts.MaxBytes)
	return s, readlimit.Rename(err, "Options.MaxBytes")
}
