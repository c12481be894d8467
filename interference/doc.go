// Package interference models how much two models slow each other down when
// they run on two gpu-lets of one GPU: fitting (least squares), prediction and
// held-out evaluation. It is pure math and does no I/O.
//
// A Sample is one side of a measured co-location: the model whose slowdown is
// predicted (Self), its neighbour (Other), both as they behave alone at their
// gpu-let sizes, and the measured co-located latency. A Spec names features
// (features.go), a target (the factor, its logarithm, or the logarithm of the
// slowdown) and a ridge penalty; Fit turns it into a Model whose Predict
// returns a clamped factor and which serialises to JSON for the store.
// Paper is the gpu-let paper's linear L2/DRAM model; Candidates adds richer
// ones; Select, Train and Bench choose among them by held-out error under a
// seeded random 70/30 split and leave-one-model-out (split.go), never by
// training error.
package interference
