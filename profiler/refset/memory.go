package refset

// Memory footprint estimate.
//
// None of the sources measured GPU memory, so a model's footprint is
// estimated from its parameter count P (millions):
//
//	footprint_MB = 2 · 4 B · P·10⁶ / 2²⁰ + 512
//
// fp32 weights (4 B each) counted twice (the runtime's optimised copy and
// pre-packed/workspace buffers the engines keep beside it) plus 512 MB for
// activations at batch 32 of an ImageNet-sized CNN and allocator slack. It is
// an estimate, deliberately on the high side, not a measurement; the CUDA
// context of the executor process (about 300-500 MB) is per gpu-let, not per
// model, and is not included.
//
// Parameter counts: the Keras Applications table (keras.io/api/applications)
// for the Keras models Symphony profiled; torchvision's model documentation
// for the PyTorch Hub models SHEPHERD used and for AlexNet; the ResNeSt paper
// for ResNeSt; BERT-base's 110 M; MobileNetV3's paper (Large 5.4 M, Small
// 2.5 M). Two are assumptions: iGniter's "ssd" is taken as SSD300-VGG16
// (torchvision, 35.6 M) and SSD-MobileNet as SSD-MobileNet-v1 (about 6.8 M).
// Where Keras and torchvision differ for one name (ResNet101 44.7 vs 44.5 M)
// the difference is under 1% and the Keras figure is used.

// DefaultFootprintMB is the footprint given to a model whose parameter count
// is not in the table.
const DefaultFootprintMB = 1024

// paramsM are parameter counts in millions by canonical model name.
var paramsM = map[string]float64{
	// iGniter
	"alexnet": 61.1, "ssd": 35.6,
	// Keras Applications
	"xception": 22.9, "vgg16": 138.4, "vgg19": 143.7,
	"resnet50": 25.6, "resnet50v2": 25.6, "resnet101": 44.7, "resnet101v2": 44.7,
	"resnet152": 60.4, "resnet152v2": 60.4, "inceptionv3": 23.9, "inceptionresnetv2": 55.9,
	"mobilenet": 4.3, "mobilenetv2": 3.5, "mobilenetv3large": 5.4, "mobilenetv3small": 2.5,
	"densenet121": 8.1, "densenet169": 14.3, "densenet201": 20.2,
	"nasnetmobile": 5.3, "nasnetlarge": 88.9,
	"efficientnetb0": 5.3, "efficientnetb1": 7.9, "efficientnetb2": 9.2, "efficientnetb3": 12.3,
	"efficientnetb4": 19.5, "efficientnetb5": 30.6, "efficientnetb6": 43.3, "efficientnetb7": 66.7,
	"efficientnetv2b0": 7.2, "efficientnetv2b1": 8.2, "efficientnetv2b2": 10.2, "efficientnetv2b3": 14.5,
	"efficientnetv2s": 21.6, "efficientnetv2m": 54.4, "efficientnetv2l": 119.0,
	"ssdmobilenet": 6.8, "bert": 110,
	// torchvision / PyTorch Hub (SHEPHERD)
	"resnet18": 11.7, "resnet34": 21.8, "densenet161": 28.7, "googlenet": 6.6,
	"inception-v3": 27.2, "r-cnn": 41.8,
	// the H100 campaign's exports (scripts/gpu/export-models.py): torchvision's
	// documentation for mobilenet_v2 and ssd300_vgg16; LeNet-5 as modelzoo
	// builds it (about 62 thousand).
	"mobilenet_v2": 3.5, "ssd300": 35.6, "lenet5": 0.062,
	// Loki's traffic pipeline: YOLOv5 n/s/m/l/x as Ultralytics' YOLOv5
	// README lists them; its EfficientNets are the Keras figures above.
	"yolov5n": 1.9, "yolov5s": 7.2, "yolov5m": 21.2, "yolov5l": 46.5, "yolov5x": 86.7,
	"efficientnet-b0": 5.3, "efficientnet-b1": 7.9, "efficientnet-b2": 9.2, "efficientnet-b3": 12.3,
	"efficientnet-b4": 19.5, "efficientnet-b5": 30.6, "efficientnet-b6": 43.3,
	"resnest50": 27.5, "resnest101": 48.3, "resnest200": 70.2, "resnest269": 110.9,
}

// FootprintMB returns the estimated GPU memory footprint of one loaded
// instance of the model (see the method above) and whether the model's
// parameter count is known; unknown models get DefaultFootprintMB.
func FootprintMB(model string) (mb float64, known bool) {
	p, ok := paramsM[model]
	if !ok {
		return DefaultFootprintMB, false
	}
	return 2*4*p*1e6/(1<<20) + 512, true
}
