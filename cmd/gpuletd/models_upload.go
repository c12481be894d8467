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

	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/kserve/tritonpb"
)

// uploadBody builds the load request that carries the model folder dir
// (models load --from): its configuration as the config parameter, Triton's
// ModelConfig in JSON, and every other file, in the version folders and
// beside them, as a file override. The configuration is the folder's
// config.pbtxt (configs/<configName>.pbtxt where configName is given and
// the folder has it) with its config.yaml's settings over it (either may
// be missing), as the daemon reads the folder in its repository.
func uploadBody(dir, configName string) ([]byte, error) {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("--from %s: not a model folder", dir)
	}
	var mc tritonpb.ModelConfig
	pbName, pbtxt, err := repository.ReadTritonConfig(dir, configName)
	switch {
	case err == nil:
		if err := prototext.Unmarshal(pbtxt, &mc); err != nil {
			return nil, fmt.Errorf("--from %s: %s: %w", dir, pbName, err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("--from %s: %w", dir, err)
	}
	yml, err := os.ReadFile(filepath.Join(dir, repository.YAMLConfigFile))
	switch {
	case err == nil:
		if err := repository.YAMLOverTriton(&mc, yml); err != nil {
			return nil, fmt.Errorf("--from %s: %w", dir, err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("--from %s: %w", dir, err)
	}
	config, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(&mc)
	if err != nil {
		return nil, fmt.Errorf("--from %s: configuration: %w", dir, err)
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
		if rel == repository.TritonConfigFile || rel == repository.YAMLConfigFile || repository.IsCustomConfig(rel) || !d.Type().IsRegular() {
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
		return nil, fmt.Errorf("--from %s: no model files in the folder", dir)
	}
	return json.Marshal(map[string]any{"parameters": params})
}
