package main

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/prototext"

	"github.com/gpulet/gpuletd/kserve/tritonpb"
)

// uploadBody builds the load request that carries the Triton model folder
// dir (models load --from): its config.pbtxt as the config parameter, in
// JSON, and every other file, in the version folders and beside them, as
// a file override.
func uploadBody(dir string) ([]byte, error) {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("--from %s: not a model folder", dir)
	}
	pbtxt, err := os.ReadFile(filepath.Join(dir, "config.pbtxt"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("--from %s: no config.pbtxt: the folder's configuration travels as Triton's ModelConfig, which a config.yaml is not", dir)
	}
	if err != nil {
		return nil, fmt.Errorf("--from %s: %w", dir, err)
	}
	var mc tritonpb.ModelConfig
	if err := prototext.Unmarshal(pbtxt, &mc); err != nil {
		return nil, fmt.Errorf("--from %s: config.pbtxt: %w", dir, err)
	}
	config, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(&mc)
	if err != nil {
		return nil, fmt.Errorf("--from %s: config.pbtxt: %w", dir, err)
	}
	params := map[string]string{"config": string(config)}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if rel == "config.pbtxt" || rel == "config.yaml" || !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		params["file:"+filepath.ToSlash(rel)] = base64.StdEncoding.EncodeToString(data)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("--from %s: %w", dir, err)
	}
	if len(params) == 1 {
		return nil, fmt.Errorf("--from %s: no model files beside config.pbtxt", dir)
	}
	return json.Marshal(map[string]any{"parameters": params})
}
