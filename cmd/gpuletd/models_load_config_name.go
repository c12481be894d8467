package main

import "context"

// daemonConfigName is the model_config_name of the daemon d reaches, so that
// a model folder sent with a load (models load --from) serves the file the
// daemon's own folders would; the command's configuration's where the daemon
// does not say (a Triton server, a gpuletd of a release before it said).
func (g *globalFlags) daemonConfigName(ctx context.Context, d *daemonAPI) string {
	var s struct {
		ModelConfigName *string `json:"model_config_name"`
	}
	if err := adminFetch(ctx, d, "/api/v1/status", &s); err == nil && s.ModelConfigName != nil {
		return *s.ModelConfigName
	}
	if l, err := g.loadConfig(); err == nil {
		return l.Config.ModelConfigName
	}
	return ""
}
