package modelzoo

import "fmt"

// resnet18 builds a ResNet-18-style network on [N,3,224,224]: a 7x7/2 stem
// with BatchNormalization, Relu and a 3x3/2 MaxPool, four stages of two
// basic blocks (64, 128, 256, 512 channels; stages 2-4 halve the spatial
// size in their first block), GlobalAveragePool, Flatten and a 1000-way
// Gemm.
func resnet18(g *graph, x string) string {
	x = g.conv("conv1", x, 3, 64, 7, 2, 3, false)
	x = g.batchNorm("bn1", x, 64, 1)
	x = g.relu("relu", x)
	x = g.maxPool("maxpool", x, 3, 2, 1) // [N,64,56,56]
	cin := 64
	for stage, cout := range []int{64, 128, 256, 512} {
		for block := range 2 {
			stride := 1
			if stage > 0 && block == 0 {
				stride = 2
			}
			x = basicBlock(g, fmt.Sprintf("layer%d.%d", stage+1, block), x, cin, cout, stride)
			cin = cout
		}
	}
	x = g.globalAveragePool("avgpool", x) // [N,512,1,1]
	x = g.flatten("flatten", x)
	return g.gemm("fc", x, 512, 1000, false)
}

// basicBlock adds two 3x3 Conv+BatchNormalization layers and a residual Add,
// with a 1x1 Conv+BatchNormalization projection on the shortcut when the
// channel count or stride changes. The second BatchNormalization's scale is
// drawn around 0.5 so the residual sum grows slowly through the eight
// blocks.
func basicBlock(g *graph, name, x string, cin, cout, stride int) string {
	y := g.conv(name+".conv1", x, cin, cout, 3, stride, 1, false)
	y = g.batchNorm(name+".bn1", y, cout, 1)
	y = g.relu(name+".relu1", y)
	y = g.conv(name+".conv2", y, cout, cout, 3, 1, 1, false)
	y = g.batchNorm(name+".bn2", y, cout, 0.5)
	shortcut := x
	if stride != 1 || cin != cout {
		shortcut = g.conv(name+".downsample.conv", x, cin, cout, 1, stride, 0, false)
		shortcut = g.batchNorm(name+".downsample.bn", shortcut, cout, 1)
	}
	y = g.add(name+".add", y, shortcut)
	return g.relu(name+".relu2", y)
}
