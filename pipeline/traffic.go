package pipeline

import (
	"fmt"
	"time"
)

// Loki's traffic-analysis pipeline (seed 004_86fc025dfe1323f1.txt, §6.1): a
// YOLOv5 detector finds the objects of a camera frame and every car it finds
// goes to an EfficientNet car classifier; SLO 250 ms end to end.
//
// The numbers are Loki's (UMass-LIDS/Loki, commit 431d9d7):
//   - accuracies, normalised by each family's most accurate member, from
//     src/simulator/traces/model_variants/traffic_analysis/object_detection
//     and …/car_classification (EfficientNet-B7, the 100 there, has no
//     profile here, so the most accurate classifier is B6 at 0.9964);
//   - fanouts from profiling/profiled/branching.csv: objects per frame
//     (mult_factor) times the share of them that are cars
//     (car_classification), measured on the Bellevue traffic frames.
//
// Loki's planner takes a path's accuracy as the product of its variants'
// (its pipeline-accuracy table is not used there); so does this one unless
// a PathAccuracy table is given.
var (
	trafficDetectors = []struct {
		name          string
		accuracy      float64
		objects, cars float64
	}{
		{"yolov5n", 0.5522682446, 2.5842696629213500, 0.7680944305343670},
		{"yolov5s", 0.8954635108, 5.4637640449438200, 0.9320890630030230},
		{"yolov5m", 0.7376725838, 14.372752808988800, 0.9584700482918560},
		{"yolov5l", 0.9664694280, 18.20702247191010, 0.9594310837171900},
		{"yolov5x", 1.0, 18.894241573033700, 0.9428860414404000},
	}
	trafficClassifiers = []struct {
		name     string
		accuracy float64
	}{
		{"efficientnet-b0", 0.9145907473}, {"efficientnet-b1", 0.9383155397}, {"efficientnet-b2", 0.9501779359},
		{"efficientnet-b3", 0.9679715302}, {"efficientnet-b4", 0.9833926453}, {"efficientnet-b5", 0.9916963227},
		{"efficientnet-b6", 0.9964412811},
	}
)

// TrafficSLO is the traffic pipeline's end-to-end SLO (Loki §6.2).
const TrafficSLO = 250 * time.Millisecond

// ProfileFunc gives a model's latency function on one worker and its
// largest batch; ok false when the model has no profile.
type ProfileFunc func(model string) (lat LatencyFunc, maxBatch int, ok bool)

// TrafficAnalysis builds Loki's traffic-analysis pipeline (detector then car
// classifier) with the variants' batch times from profile.
func TrafficAnalysis(profile ProfileFunc) (*Pipeline, error) {
	p := &Pipeline{Name: "traffic-analysis", SLO: TrafficSLO,
		Tasks: []Task{{Name: "object-detection"}, {Name: "car-classification"}}}
	for _, d := range trafficDetectors {
		lat, mb, ok := profile(d.name)
		if !ok {
			return nil, fmt.Errorf("build traffic pipeline: no profile for %s", d.name)
		}
		p.Tasks[0].Variants = append(p.Tasks[0].Variants, Variant{Name: d.name, Accuracy: d.accuracy, Fanout: d.objects * d.cars, Latency: lat, MaxBatch: mb})
	}
	for _, c := range trafficClassifiers {
		lat, mb, ok := profile(c.name)
		if !ok {
			return nil, fmt.Errorf("build traffic pipeline: no profile for %s", c.name)
		}
		p.Tasks[1].Variants = append(p.Tasks[1].Variants, Variant{Name: c.name, Accuracy: c.accuracy, Latency: lat, MaxBatch: mb})
	}
	return p, p.Validate()
}
