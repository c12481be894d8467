package modelzoo

import (
	"strconv"

	"github.com/gpulet/gpuletd/modelzoo/onnxpb"
)

// ExternalDataFile is the file WithExternalData keeps the weights in,
// beside model.onnx, as PyTorch's ONNX exporter names it.
const ExternalDataFile = "model.onnx.data"

// externalThreshold is the smallest initializer SplitExternalData moves out
// of the model file: the default size threshold of ONNX's own external-data
// conversion, so that small tensors stay inline as in exported models.
const externalThreshold = 1024

// SplitExternalData moves the data of m's initializers of at least 1 KiB
// out of m and returns it as one file's bytes, each tensor's at the offset
// and length its external_data entries give, in a file at location
// (relative to the model file's folder).
func SplitExternalData(m *onnxpb.ModelProto, location string) []byte {
	var data []byte
	for _, t := range m.GetGraph().GetInitializer() {
		if len(t.RawData) < externalThreshold {
			continue
		}
		off := len(data)
		data = append(data, t.RawData...)
		keepOutside(t, location, off, len(t.RawData))
	}
	return data
}

// ExternalTensor is a tensor named name whose data is bytes [offset,
// offset+length) of the file at location, as ONNX's external data gives it.
func ExternalTensor(name, location string, offset, length int) *onnxpb.TensorProto {
	t := &onnxpb.TensorProto{Name: name}
	keepOutside(t, location, offset, length)
	return t
}

// keepOutside points t's data at bytes [offset, offset+length) of the file
// at location and drops its own.
func keepOutside(t *onnxpb.TensorProto, location string, offset, length int) {
	t.RawData = nil
	t.DataLocation = onnxpb.TensorProto_EXTERNAL
	t.ExternalData = []*onnxpb.StringStringEntryProto{
		{Key: "location", Value: location},
		{Key: "offset", Value: strconv.Itoa(offset)},
		{Key: "length", Value: strconv.Itoa(length)},
	}
}
