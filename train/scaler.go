package train

import "math"

// Defaults of the dynamic loss scaler used with --precision 16-mixed.
const (
	DefaultInitialScale   = 65536.0 // 2^16
	DefaultGrowthFactor   = 2.0
	DefaultBackoffFactor  = 0.5
	DefaultGrowthInterval = 2000
	minLossScale          = 1.0
	maxLossScale          = 1 << 24
)

// LossScaler is the dynamic loss scaling of float16 training, as a pure
// state machine: multiply the loss by Scale before computing gradients,
// divide the gradients by Scale, and call Update with whether every gradient
// was finite. A step with a non-finite gradient must be skipped; Update
// halves the scale then. After GrowthInterval clean steps in a row the scale
// grows by GrowthFactor. The exported fields are the whole state.
type LossScaler struct {
	// Scale is the current loss scale.
	Scale float64 `json:"scale"`
	// GrowthFactor multiplies Scale after GrowthInterval clean steps.
	GrowthFactor float64 `json:"growth_factor"`
	// BackoffFactor multiplies Scale after a step with non-finite gradients.
	BackoffFactor float64 `json:"backoff_factor"`
	// GrowthInterval is the number of clean steps in a row before growing.
	GrowthInterval int `json:"growth_interval"`
	// CleanSteps counts clean steps since the last change of Scale.
	CleanSteps int `json:"clean_steps"`
	// Skipped counts the steps skipped so far.
	Skipped int64 `json:"skipped"`
}

// NewLossScaler returns a scaler with the defaults: scale 2^16, growth 2.0
// every 2000 clean steps, backoff 0.5.
func NewLossScaler() *LossScaler {
	return &LossScaler{
		Scale:          DefaultInitialScale,
		GrowthFactor:   DefaultGrowthFactor,
		BackoffFactor:  DefaultBackoffFactor,
		GrowthInterval: DefaultGrowthInterval,
	}
}

// ScalerEvent says what Update did.
type ScalerEvent struct {
	// Skip tells the caller to drop this step's update.
	Skip bool
	// OldScale and NewScale are the scale before and after Update.
	OldScale, NewScale float64
}

// Update advances the scaler after a step whose gradients were all finite
// (finite true) or not.
func (s *LossScaler) Update(finite bool) ScalerEvent {
	ev := ScalerEvent{OldScale: s.Scale}
	if !finite {
		s.Skipped++
		s.CleanSteps = 0
		s.Scale = math.Max(s.Scale*s.BackoffFactor, minLossScale)
		ev.Skip = true
	} else {
		s.CleanSteps++
		if s.CleanSteps >= s.GrowthInterval {
			s.CleanSteps = 0
			s.Scale = math.Min(s.Scale*s.GrowthFactor, maxLossScale)
		}
	}
	ev.NewScale = s.Scale
	return ev
}

// AllFinite tells whether every value is finite (host-side helper for
// gradients copied back from the device).
func AllFinite(values ...float64) bool {
	for _, v := range values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}
