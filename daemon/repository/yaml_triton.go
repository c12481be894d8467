package repository

import (
	"fmt"
	"strconv"

	"google.golang.org/protobuf/proto"

	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/kserve/tritonpb"
)

// YAMLOverTriton writes the settings of a model folder's config.yaml (data)
// into pc, Triton's ModelConfig of the folder's config.pbtxt, or an empty
// one for a folder with only a config.yaml, so that pc says what the
// daemon reads from the folder: config.yaml wins for the fields it sets
// (overlay), and gpuletd's own settings go in as the parameters a
// config.pbtxt gives them in. A repository load request carries the
// configuration as Triton's ModelConfig only (models load --from).
//
// max_batch_size is always set: with a config.yaml the daemon does not
// take it from the model file, as it does for a config.pbtxt alone that
// leaves it out.
func YAMLOverTriton(pc *tritonpb.ModelConfig, data []byte) error {
	c, err := ParseModelConfig(data)
	if err != nil {
		return fmt.Errorf("read %s: %w", YAMLConfigFile, err)
	}
	set := yamlKeys(data)
	param := func(key, value string) {
		if pc.Parameters == nil {
			pc.Parameters = map[string]*tritonpb.ModelParameter{}
		}
		pc.Parameters[key] = &tritonpb.ModelParameter{StringValue: value}
	}
	if set["slo"] && c.SLO.D() > 0 {
		param(ParamSLO, c.SLO.D().String())
	}
	mb := pc.GetMaxBatchSize()
	if set["max_batch_size"] {
		mb = int32(c.MaxBatchSize)
	}
	pc.MaxBatchSize = proto.Int32(mb)
	if set["platform"] {
		pc.Platform, pc.Backend = "", TritonBackend(c.Platform)
	}
	if set["profile"] {
		param(ParamProfile, c.Profile)
	}
	if set["profile_shapes"] {
		if len(c.ProfileShapes) > 0 {
			param(ParamProfileShapes, tensor.FormatShapes(c.ProfileShapes))
		} else {
			delete(pc.Parameters, ParamProfileShapes)
		}
	}
	if set["memory_mb"] {
		param(ParamMemoryMB, strconv.FormatFloat(c.MemoryMB, 'g', -1, 64))
	}
	switch {
	case !set["max_queue"] || pc.GetEnsembleScheduling() != nil:
	case pc.GetSequenceBatching() != nil: // no queue bound of its own to hold it
		if c.MaxQueue > 0 {
			param(ParamMaxQueue, strconv.Itoa(c.MaxQueue))
		} else {
			delete(pc.Parameters, ParamMaxQueue)
		}
	default:
		db := pc.GetDynamicBatching()
		if db == nil && c.MaxQueue > 0 {
			db = &tritonpb.ModelDynamicBatching{}
			pc.SchedulingChoice = &tritonpb.ModelConfig_DynamicBatching{DynamicBatching: db}
		}
		if db != nil {
			if db.DefaultQueuePolicy == nil {
				db.DefaultQueuePolicy = &tritonpb.ModelQueuePolicy{}
			}
			db.DefaultQueuePolicy.MaxQueueSize = uint32(c.MaxQueue)
		}
	}
	if (set["priority_levels"] || set["default_priority_level"]) && pc.GetEnsembleScheduling() == nil && pc.GetSequenceBatching() == nil {
		db := pc.GetDynamicBatching()
		if db == nil {
			db = &tritonpb.ModelDynamicBatching{}
			pc.SchedulingChoice = &tritonpb.ModelConfig_DynamicBatching{DynamicBatching: db}
		}
		db.PriorityLevels, db.DefaultPriorityLevel = uint64(c.PriorityLevels), uint64(c.DefaultPriority)
	}
	if set["inputs"] {
		pc.Input = nil
		for _, t := range c.Inputs {
			pc.Input = append(pc.Input, &tritonpb.ModelInput{Name: t.Name, DataType: TritonDataType(t.DataType), Dims: t.Dims})
		}
	}
	if set["outputs"] {
		labels := map[string]string{}
		for _, o := range pc.Output {
			labels[o.Name] = o.LabelFilename
		}
		pc.Output = nil
		for _, t := range c.Outputs {
			pc.Output = append(pc.Output, &tritonpb.ModelOutput{Name: t.Name, DataType: TritonDataType(t.DataType), Dims: t.Dims,
				LabelFilename: labels[t.Name]})
		}
	}
	if set["variant_of"] {
		param(ParamVariant, c.VariantOf)
	}
	if set["accuracy"] {
		if c.Accuracy > 0 {
			param(ParamAccuracy, strconv.FormatFloat(c.Accuracy, 'g', -1, 64))
		} else {
			delete(pc.Parameters, ParamAccuracy) // 0: not given, as if the key were absent
		}
	}
	if set["response_cache"] {
		pc.ResponseCache = &tritonpb.ModelResponseCache{Enable: c.ResponseCache}
	}
	return nil
}
