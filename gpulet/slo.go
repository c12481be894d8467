package gpulet

// PaperSLOBatch is the batch size of the SLO rule PaperSLO.
const PaperSLOBatch = 32

// PaperSLO is the SLO the gpu-let paper gives its models: twice the solo
// latency of a batch of 32 on a whole GPU (section 6.1, Table 4: the SLO is
// set "by doubling the solo execution latency", at batch 32;
// ../shared/data/papers/gpulet-evaluation.yaml). gpuletd applies it to a
// model whose source states no SLO. With the 2·L ≤ SLO budget it is exactly
// the SLO at which a whole GPU can run batches of 32. For iGniter's V100
// profiles L(32,100) is a filled point (refset's "amdahl" fill, tested on
// held-out sizes), not a measured one. ok is false when the profile has no
// L(32,100).
func PaperSLO(p *Profile) (ms float64, ok bool) {
	if p == nil {
		return 0, false
	}
	l, found := p.Latency(PaperSLOBatch, 100)
	if !found {
		return 0, false
	}
	return 2 * l, true
}
