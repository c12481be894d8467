// Package modelzoo builds real ONNX graphs (LeNet-5, ResNet-18-style,
// VGG-style, MLP) with seeded random weights, for demos, tests and profiling.
// The weights are random: nothing here is pretrained.
package modelzoo
