// Package onnxrt finds and loads the ONNX Runtime shared library once per
// process and reads models' inputs and outputs through it.
//
// ONNX Runtime's environment is process-wide (onnxruntime_go keeps it in a
// package variable), so Init is the only place that creates it; every other
// function here and every session elsewhere needs Init to have succeeded.
package onnxrt
