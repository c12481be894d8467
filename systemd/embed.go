package systemd

import _ "embed"

// DefaultConfig is systemd/gpuletd.yaml, the documented default configuration.
//
//go:embed gpuletd.yaml
var DefaultConfig []byte
