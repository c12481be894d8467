// Package interference models how much two models slow each other down when
// they run on two gpu-lets of one GPU: fitting (least squares), prediction and
// held-out evaluation. It is pure math and does no I/O.
package interference
