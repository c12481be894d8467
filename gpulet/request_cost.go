package gpulet

import "math"

// WithRequestCost is the profile with ms more per request: a batch of b
// takes b·ms longer at every size, its 99th percentile too. It is how a
// device counts work its models' requests cost on it beyond the model's own
// run: on the CPU device the request path (reading, decoding, routing and
// answering each request) runs on the cores its gpu-lets hold, so the
// planner gives it room in their duty cycles. A size does not shorten it:
// it is one thread's work per request. ms ≤ 0 (or not finite) returns p.
func (p *Profile) WithRequestCost(ms float64) *Profile {
	if !(ms > 0) || math.IsInf(ms, 0) {
		return p
	}
	pts := p.Points()
	for i := range pts {
		extra := float64(pts[i].Batch) * ms
		pts[i].P50MS += extra
		if pts[i].P99MS > 0 {
			pts[i].P99MS += extra
		}
	}
	q, err := NewProfile(p.Model, p.DeviceType, p.MemoryMB, pts)
	if err != nil {
		return p // its points were valid, and stay valid with more time
	}
	return q
}
