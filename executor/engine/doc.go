// Package engine runs batches of one model on one gpu-let, behind one
// interface with two implementations:
//
//   - onnxruntime (NewORT): one ONNX Runtime session per loaded model, on the
//     CPU, CUDA or TensorRT execution provider;
//   - emulated (NewEmulated): no model runs; a batch takes the time the
//     gpu-let's latency profile gives (times a contention factor and a seeded
//     jitter) on an injected Sleeper, and answers zero-filled outputs.
//
// Batching is the engine's job: Run takes the input tensors of every request
// in a batch, joins them along dimension 0, runs once and splits the outputs
// back per request. Requests are validated against the model's tensor specs
// before anything runs, and a bad request is reported alone (InputError,
// wrapping ErrInvalidInput, naming the request, the tensor and the problem)
// so that its batch-mates can be run again without it.
//
// Tensor specs are per request. For a model that batches (MaxBatchSize > 0)
// they leave out the batch dimension: a request carries [rows, spec...] with
// 1 ≤ rows ≤ MaxBatchSize. For a model that does not batch (MaxBatchSize 0)
// a request's tensors match the specs exactly and requests run one by one.
//
// Requests whose inputs differ in a non-batch dim the model leaves open
// cannot be joined; Run joins those that agree and runs each such group
// once (RunInfo.Runs counts the runs). A cancelled context stops a run:
// the onnxruntime engine sets the run's terminate flag, which ONNX Runtime
// checks between graph nodes; the emulated engine's sleep returns. Either
// way Run returns ErrCancelled wrapping the context's cause.
//
// RunInfo.Overhead is a Run's wall time outside the model (validation,
// joining, runtime values, splitting); Warmup reports the largest it saw
// as the per-batch dispatch overhead the scheduler adds to ℓ(b).
//
// The emulated engine fills every output dim a spec leaves open (-1),
// other than the batch dimension, with 1. The onnxruntime engine serves
// tensors of any rank, scalars included, and every protocol data type
// ONNX Runtime has (BYTES as ONNX strings, which cannot hold a zero byte).
//
// Tensor data is little-endian (the KServe v2 binary layout) and is handed
// to ONNX Runtime without conversion, so the onnxruntime engine needs a
// little-endian host.
package engine
