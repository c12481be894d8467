package httpbench

import (
	"fmt"
	"os"
	"regexp"
	"time"
)

// sloLine is the slo setting of a model's config.yaml.
var sloLine = regexp.MustCompile(`(?m)^slo:[^#\n]*`)

// SetSLO rewrites the slo of a model's config.yaml.
func SetSLO(path string, slo time.Duration) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("set slo: %w", err)
	}
	if !sloLine.Match(b) {
		return fmt.Errorf("set slo: %s has no slo line", path)
	}
	b = sloLine.ReplaceAll(b, []byte("slo: "+slo.String()+" "))
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("set slo: %w", err)
	}
	return nil
}
