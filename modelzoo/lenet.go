package modelzoo

// lenet5 builds LeNet-5 on [N,1,28,28]: two Conv/Relu/MaxPool stages (6 and
// 16 channels, 5x5 kernels; the first padded so 28x28 plays the classic
// 32x32 input) and three fully connected layers 400-120-84-10.
func lenet5(g *graph, x string) string {
	x = g.conv("conv1", x, 1, 6, 5, 1, 2, true)
	x = g.relu("relu1", x)
	x = g.maxPool("pool1", x, 2, 2, 0) // [N,6,14,14]
	x = g.conv("conv2", x, 6, 16, 5, 1, 0, true)
	x = g.relu("relu2", x)
	x = g.maxPool("pool2", x, 2, 2, 0) // [N,16,5,5]
	x = g.flatten("flatten", x)
	x = g.gemm("fc1", x, 16*5*5, 120, true)
	x = g.relu("relu3", x)
	x = g.gemm("fc2", x, 120, 84, true)
	x = g.relu("relu4", x)
	return g.gemm("fc3", x, 84, 10, false)
}
