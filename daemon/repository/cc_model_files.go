package repository

import (
	"cmp"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// ccKey is a CUDA compute capability as cc_model_filenames keys it: major
// and minor, "8.0", "9.0".
var ccKey = regexp.MustCompile(`^[0-9]{1,2}\.[0-9]{1,2}$`)

// IsComputeCapability says whether s is a compute capability as
// cc_model_filenames keys it.
func IsComputeCapability(s string) bool { return ccKey.MatchString(s) }

// tritonModelFileName checks a file name a config.pbtxt gives for a version
// folder's model (field names where), which must name a file inside it.
func tritonModelFileName(field, name string, bad func(string, ...any)) bool {
	if name == "" || strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
		bad("%s: %q must be a file name inside the version folder", field, name)
		return false
	}
	return true
}

// tritonCCModelFiles reads cc_model_filenames: by compute capability, the
// model file's name in each version folder for GPUs of it.
func tritonCCModelFiles(files map[string]string, bad func(string, ...any)) map[string]string {
	var out map[string]string
	for _, cc := range slices.Sorted(maps.Keys(files)) {
		if !IsComputeCapability(cc) {
			bad("cc_model_filenames: key %q is not a compute capability; key each file by major.minor, as NVIDIA lists them (\"8.0\" for an A100, \"9.0\" for an H100)", cc)
			continue
		}
		if !tritonModelFileName(fmt.Sprintf("cc_model_filenames[%q]", cc), files[cc], bad) {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[cc] = files[cc]
	}
	return out
}

// modelFileName is the name of the file a version folder's model is read
// from on a node whose NVIDIA GPUs are of the compute capabilities ccs
// (distinct; none on the CPU and emulated GPUs): a cc_model_filenames entry
// where every GPU's capability names the same file, else the default
// (default_model_filename; "" for the platform's). field names the
// configuration field it came from ("" for none), and note, where
// cc_model_filenames is set, says which file is served and why.
func (c ModelConfig) modelFileName(ccs []string) (name, field, note string) {
	name, field = c.ModelFilename, ""
	if name != "" {
		field = "default_model_filename"
	}
	if len(c.CCModelFilenames) == 0 {
		return name, field, ""
	}
	def := "the default model file (" + cmp.Or(c.ModelFilename, "the platform's: model.onnx or model.pt") + ")"
	switch {
	case len(ccs) == 0:
		return name, field, "cc_model_filenames: no NVIDIA GPU serves here: " + def + " is served"
	case len(ccs) > 1:
		files := map[string]bool{}
		for _, cc := range ccs {
			files[c.CCModelFilenames[cc]] = true
		}
		if f := c.CCModelFilenames[ccs[0]]; len(files) == 1 && f != "" {
			return f, fmt.Sprintf("cc_model_filenames[%q]", ccs[0]), fmt.Sprintf("cc_model_filenames: the GPUs here are of compute capabilities %s, all given %s: it is served", strings.Join(ccs, ", "), f)
		}
		return name, field, fmt.Sprintf("cc_model_filenames: the GPUs here are of compute capabilities %s, not all given the same file, and gpuletd serves a model from one file on every gpu-let: %s is served", strings.Join(ccs, ", "), def)
	}
	f, ok := c.CCModelFilenames[ccs[0]]
	if !ok {
		return name, field, fmt.Sprintf("cc_model_filenames has no file for compute capability %s, the GPUs' here: %s is served", ccs[0], def)
	}
	return f, fmt.Sprintf("cc_model_filenames[%q]", ccs[0]), fmt.Sprintf("cc_model_filenames: the GPUs here are of compute capability %s: %s is served", ccs[0], f)
}
