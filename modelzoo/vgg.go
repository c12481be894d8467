package modelzoo

import "fmt"

// vggLayers is the feature extractor of vgg: output channels of each 3x3
// Conv+Relu, 0 for a 2x2/2 MaxPool. It is VGG-16's layout at half width.
var vggLayers = []int{32, 32, 0, 64, 64, 0, 128, 128, 128, 0, 256, 256, 256, 0, 256, 256, 256, 0}

// vgg builds a VGG-16-style network on [N,3,224,224]: thirteen 3x3
// Conv+Relu layers in five MaxPool-separated stacks, then three fully
// connected layers 12544-256-256-1000. It is narrower than VGG-16 (half the
// channels, 256-wide instead of 4096-wide classifier) so the file stays
// near 29 MB instead of VGG-16's 553 MB; the layer structure, and so the mix of
// compute-bound convolutions and one large memory-bound Gemm, is VGG's.
func vgg(g *graph, x string) string {
	cin, conv, pool := 3, 0, 0
	for _, c := range vggLayers {
		if c == 0 {
			pool++
			x = g.maxPool(fmt.Sprintf("pool%d", pool), x, 2, 2, 0)
			continue
		}
		conv++
		x = g.conv(fmt.Sprintf("conv%d", conv), x, cin, c, 3, 1, 1, true)
		x = g.relu(fmt.Sprintf("relu%d", conv), x)
		cin = c
	}
	x = g.flatten("flatten", x) // [N,256*7*7]
	x = g.gemm("fc1", x, cin*7*7, 256, true)
	x = g.relu("fc1.relu", x)
	x = g.gemm("fc2", x, 256, 256, true)
	x = g.relu("fc2.relu", x)
	return g.gemm("fc3", x, 256, 1000, false)
}
