package charlstm

import (
	"github.com/gotrain/gotrain/internal/readlimit"
	"github.com/gotrain/gotrain/models/text"
)

// loadCorpus reads the corpus opts.Path names, at most opts.MaxBytes of it
// (text.LoadTextMax); an error about the cap names Options.MaxBytes.
func loadCorpus(opts Options) (string, error) {
	s, err := text.LoadTextMax(opts.Path, opts.MaxBytes)
	return s, readlimit.Rename(err, "Options.MaxBytes")
}
