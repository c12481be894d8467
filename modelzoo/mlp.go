package modelzoo

// mlp builds a multilayer perceptron 784-512-256-10 with Relu between the
// layers, on flattened 28x28 images [N,784].
func mlp(g *graph, x string) string {
	x = g.gemm("fc1", x, 784, 512, true)
	x = g.relu("relu1", x)
	x = g.gemm("fc2", x, 512, 256, true)
	x = g.relu("relu2", x)
	return g.gemm("fc3", x, 256, 10, false)
}
