package text

import (
	"fmt"
	"io"
)

// SampleReport is a text a language model generated, with how: the
// report of `gotrain lm lstm sample` and `gotrain lm transformer sample`
// (its JSON is their --json report).
type SampleReport struct {
	// Device names the device that ran the model; Model is the checkpoint
	// read and Step its training step.
	Device string `json:"device"`
	Model  string `json:"model"`
	Step   int64  `json:"step"`
	// Prompt is the text read before generating; Text what was generated
	// after it, Length runes long.
	Prompt string `json:"prompt"`
	Text   string `json:"text"`
	Length int    `json:"length"`
	// Temperature divides the logits (0: the most likely rune); TopK, when
	// the model offers it, draws among the K most likely (0: all).
	Temperature float64 `json:"temperature"`
	TopK        *int    `json:"top_k,omitempty"`
	// Seed is the sampling seed: the same seed gives the same text.
	Seed uint64 `json:"seed"`
}

// WriteText writes the prompt and the text generated after it, on one
// line.
func (r *SampleReport) WriteText(w io.Writer) error {
	_, err := fmt.Fprintln(w, r.Prompt+r.Text)
	return err
}
