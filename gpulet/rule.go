package gpulet

import "fmt"

// Rule is the latency check a planner holds every gpu-let to.
type Rule string

// Rules.
const (
	// RuleServing is gpuletd's own check (the default): the members of a
	// gpu-let run one batch each per duty cycle D, a member with batch
	// latency L serves ⌈rate·D⌉ requests per cycle, and a request waits at
	// most one cycle before its batch: D + L ≤ SLO. For one model at full
	// load that is 2·L ≤ SLO; at lower load the batch must also fill in
	// time, which the check counts.
	RuleServing Rule = "serving"
	// RuleParvaGPU is ParvaGPU's check (SC'24, its configurator): a batch
	// latency below 0.9 × SLO / 2, and a throughput of batch / latency.
	// Its reasoning is that a request waits at most one batch time; here
	// the cycle D of the members sharing a gpu-let plays that part, so D
	// and every member's L stay below ParvaGPU's bound and each member
	// serves ⌈rate·D⌉ per cycle. With one model per gpu-let, as ParvaGPU
	// places them, it is ParvaGPU's rule exactly; it never counts the time
	// a batch takes to fill at low load.
	RuleParvaGPU Rule = "parvagpu"
)

// parvaShare is the share of the SLO ParvaGPU's rule lets a batch take: 0.9
// × SLO / 2 (ParvaGPU_SC24 src/configurator.c).
const parvaShare = 0.45

// ParseRule reads a rule name; the empty string is RuleServing.
func ParseRule(s string) (Rule, error) {
	switch Rule(s) {
	case "", RuleServing:
		return RuleServing, nil
	case RuleParvaGPU:
		return RuleParvaGPU, nil
	}
	return "", fmt.Errorf("parse rule %q: %w: want serving or parvagpu", s, ErrBadInput)
}

// alone says whether a batch of latency l may run under m's SLO at all:
// back to back, one cycle of itself.
func (m *model) alone(l float64) bool {
	if m.rule == RuleParvaGPU {
		return l < parvaShare*m.slo
	}
	return 2*l <= m.slo
}

// cycleMax is the longest duty cycle a member of m whose batch takes l
// allows (below 0 when none).
func (m *model) cycleMax(l float64) float64 {
	if m.rule == RuleParvaGPU {
		if l >= parvaShare*m.slo {
			return -1
		}
		return parvaShare * m.slo
	}
	return m.slo - l
}

// cycleBound is the longest duty cycle any batch of m allows.
func (m *model) cycleBound() float64 {
	if m.rule == RuleParvaGPU {
		return parvaShare * m.slo
	}
	return m.slo
}

// ruleText states the rule for a model's unplaceable reason.
func (m *model) ruleText() string {
	if m.rule == RuleParvaGPU {
		return "needs L(1,p) < 0.45·SLO"
	}
	return "needs 2·L(1,p) ≤ SLO"
}
