// Package modelzoo builds real ONNX graphs (LeNet-5, ResNet-18-style,
// VGG-style, MLP) with seeded random weights, for demos, tests and profiling.
// The weights are random: nothing here is pretrained.
//
// Build and BuildBytes return a model by name (Names lists them); equal
// names and seeds give byte-identical files. Every model has one FP32 input
// and one FP32 output whose dimension 0 is the dynamic batch ("N"), uses
// ONNX opset 17 and keeps its weights as initializers. WriteRepository
// writes a demo model repository (<dir>/<model>/config.yaml and
// <dir>/<model>/1/model.onnx) whose SLOs come from measured CPU latencies.
// The ONNX message types are in the onnxpb subpackage.
package modelzoo
