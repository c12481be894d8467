package interference

import (
	"errors"
	"fmt"
	"math"
)

// ErrBadSpec is returned for a model specification that cannot be fitted.
var ErrBadSpec = errors.New("bad model spec")

// Target is what a model's regression predicts.
type Target string

const (
	// TargetFactor regresses the slowdown factor itself (the gpu-let paper's
	// form).
	TargetFactor Target = "factor"
	// TargetLogFactor regresses ln(factor): a multiplicative model whose
	// squared error is close to the squared relative error of the latency.
	TargetLogFactor Target = "log_factor"
	// TargetLogSlowdown regresses ln(factor − 1): the slowdown itself is
	// multiplicative in the features, so "how sensitive the model is" and
	// "how hard its neighbour presses" multiply instead of adding. Factors at
	// or below 1 are floored at minSlowdown before the logarithm.
	TargetLogSlowdown Target = "log_slowdown"
)

// minSlowdown floors factor − 1 for TargetLogSlowdown.
const minSlowdown = 1e-3

// Spec names a candidate model: its features, its target and its ridge
// penalty.
type Spec struct {
	Name     string   `json:"name"`
	Features []string `json:"features"`
	Target   Target   `json:"target"`
	// Ridge is the L2 penalty λ on the coefficients of the standardised
	// features (the intercept is not penalised); the penalty term is
	// λ·n·‖β‖² for n training samples, so λ does not depend on n.
	Ridge float64 `json:"ridge"`
}

func (s Spec) validate() error {
	switch {
	case s.Name == "":
		return fmt.Errorf("check spec: %w: empty name", ErrBadSpec)
	case s.Target != TargetFactor && s.Target != TargetLogFactor && s.Target != TargetLogSlowdown:
		return fmt.Errorf("check spec %s: %w: target %q", s.Name, ErrBadSpec, s.Target)
	case s.Ridge < 0 || math.IsNaN(s.Ridge) || math.IsInf(s.Ridge, 0):
		return fmt.Errorf("check spec %s: %w: ridge %v", s.Name, ErrBadSpec, s.Ridge)
	}
	_, err := newFeaturizer(s.Features)
	if err != nil {
		return fmt.Errorf("check spec %s: %w", s.Name, err)
	}
	return nil
}

// PaperName is the name of the gpu-let paper's model.
const PaperName = "paper"

// Paper is the gpu-let paper's linear model (section 4.4, seed
// 003_e70036d3681c5c75.txt): factor = c1·l2₁ + c2·l2₂ + c3·dram₁ + c4·dram₂ +
// c5, where 1 is the model whose slowdown is predicted and 2 its neighbour,
// utilisations measured solo at their gpu-let sizes, fitted by ordinary least
// squares.
func Paper() Spec {
	return Spec{
		Name:     PaperName,
		Features: []string{"l2_self", "l2_other", "dram_self", "dram_other", Const},
		Target:   TargetFactor,
	}
}
