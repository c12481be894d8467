package repository

import (
	"strconv"
	"strings"

	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/kserve/tritonpb"
)

// TritonParameters gives c's own gpuletd settings as the parameters of a
// config.pbtxt that say them (slo, profile, profile_shapes, memory_mb,
// variant_of, accuracy; a stateful model's max_queue; a pipeline's
// min_accuracy and path_accuracy), so
// that a ModelConfig written out as a config.pbtxt serves the model the
// same way. Settings left at their zero value are left out, as a
// config.pbtxt without them reads (profile_shapes given empty is written
// empty).
func TritonParameters(c ModelConfig) map[string]*tritonpb.ModelParameter {
	params := map[string]*tritonpb.ModelParameter{}
	set := func(key, value string) {
		if value != "" {
			params[key] = &tritonpb.ModelParameter{StringValue: value}
		}
	}
	if c.SLO.D() > 0 {
		set(ParamSLO, c.SLO.D().String())
	}
	set(ParamProfile, c.Profile)
	if c.ProfileShapes != nil {
		// Empty, and not nil, is given empty: it keeps model_warmup's
		// dims from standing in for it.
		params[ParamProfileShapes] = &tritonpb.ModelParameter{StringValue: tensor.FormatShapes(c.ProfileShapes)}
	}
	if c.MemoryMB > 0 {
		set(ParamMemoryMB, strconv.FormatFloat(c.MemoryMB, 'g', -1, 64))
	}
	set(ParamVariant, c.VariantOf)
	if c.Accuracy > 0 {
		set(ParamAccuracy, strconv.FormatFloat(c.Accuracy, 'g', -1, 64))
	}
	if c.Ensemble != nil {
		set(ParamFanout, c.Ensemble.Fanout)
	}
	if c.Sequence != nil && c.MaxQueue > 0 { // a stateful model's, which sequence_batching cannot say
		set(ParamMaxQueue, strconv.Itoa(c.MaxQueue))
	}
	if c.MinAccuracy > 0 {
		set(ParamMinAccuracy, strconv.FormatFloat(c.MinAccuracy, 'g', -1, 64))
	}
	if len(c.PathAccuracy) > 0 {
		entries := make([]string, 0, len(c.PathAccuracy))
		for _, path := range sortedKeys(c.PathAccuracy) {
			entries = append(entries, path+"="+strconv.FormatFloat(c.PathAccuracy[path], 'g', -1, 64))
		}
		set(ParamPathAccuracy, strings.Join(entries, ", "))
	}
	return params
}
