package train

import (
	stdcontext "context"
	"os"
	"os/signal"
	"syscall"
)

// NotifyContext returns a copy of parent that is cancelled on the first
// SIGINT or SIGTERM, for Harness.RunContext: the run then checkpoints at
// the end of the optimizer step in progress and returns. Call stop to
// release the signal handler; a second signal after stop gets the default
// behaviour (the process exits).
func NotifyContext(parent stdcontext.Context) (ctx stdcontext.Context, stop stdcontext.CancelFunc) {
	return signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
}
