package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestATextModelIsProfiledAtItsProfileShapes serves the text-like tokens
// model, whose ids have a sequence dimension of any length, on the CPU: it
// is profiled at the length its profile_shapes gives (32), gpuletd infer
// sends that length unless --shape says another, and a configuration that
// gives another length, loaded again, has it measured again there.
func TestATextModelIsProfiledAtItsProfileShapes(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	env, repo, _ := profileEnv(t, "tokens")
	addr, logs := startDaemon(t, append(env, "GPULETD_DEVICES=cpu"))
	base := "http://" + addr
	require.Eventually(t, func() bool { return do(t, "GET", base+"/v2/models/tokens/ready", nil, nil).code == 200 },
		2*time.Minute, 250*time.Millisecond, "logs:\n%s", logs)
	inputsAt := func() string {
		var prof struct {
			Profiles []struct {
				InputsAt string `json:"inputs_at"`
			} `json:"profiles"`
		}
		require.NoError(t, json.Unmarshal(do(t, "GET", base+"/api/v1/models/tokens/profile", nil, nil).body, &prof))
		require.Len(t, prof.Profiles, 1)
		return prof.Profiles[0].InputsAt
	}
	require.Equal(t, "ids:32", inputsAt())

	code, out, stderr := runCLI(t, "infer", "tokens", "--url", base)
	require.Zero(t, code, stderr)
	require.Regexp(t, `embedded\s+FP32 \[1 32 4\]`, out, "the length the model is planned for")
	code, out, stderr = runCLI(t, "infer", "tokens", "--url", base, "--shape", "ids:5")
	require.Zero(t, code, stderr)
	require.Regexp(t, `embedded\s+FP32 \[1 5 4\]`, out)
	code, _, stderr = runCLI(t, "infer", "tokens", "--url", base, "--shape", "ids:1,5")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, `shape [1 5] of input "ids" does not fit its dims [-1]`)

	// Token ids past the model's vocabulary of 16 fail its run, and the
	// run of any request batched with them: those are run again apart, so
	// that only the bad requests are refused, as bad input.
	body := func(id int) []byte {
		return []byte(fmt.Sprintf(`{"inputs":[{"name":"ids","shape":[1,4],"datatype":"INT64","data":[1,2,3,%d]}]}`, id))
	}
	codes := make([]int, 24)
	answers := make([]string, len(codes))
	var wg sync.WaitGroup
	for i := range codes {
		wg.Go(func() {
			id := 4
			if i%3 == 0 {
				id = 99
			}
			resp, err := http.Post(base+"/v2/models/tokens/infer", "application/json", bytes.NewReader(body(id)))
			if err != nil {
				answers[i] = err.Error()
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			codes[i], answers[i] = resp.StatusCode, string(b)
		})
	}
	wg.Wait()
	for i, code := range codes {
		if i%3 == 0 {
			require.Equal(t, 400, code, answers[i])
			require.Contains(t, answers[i], "out of data bounds")
			continue
		}
		require.Equal(t, 200, code, "a good request batched with bad ones is answered: %s", answers[i])
	}

	// gpuletd load sends a request file as it is (perf_analyzer's
	// --input-data): one of bad ids is refused as bad input every time.
	loadReport := func(args ...string) (failed map[string]int64, ok int64) {
		t.Helper()
		code, out, stderr := runCLI(t, append([]string{"load", "--model", "tokens", "--url", base, "--rate", "40", "--duration", "1s", "--json"}, args...)...)
		require.Zero(t, code, stderr)
		var load struct {
			Report struct {
				OK     int64            `json:"ok"`
				Failed map[string]int64 `json:"failed"`
			} `json:"report"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &load), out)
		return load.Report.Failed, load.Report.OK
	}
	badFile := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(badFile, body(99), 0o644))
	failed, ok := loadReport("--input-data", badFile)
	require.Zero(t, ok)
	require.Positive(t, failed["400 bad_request"], "%v", failed)
	failed, ok = loadReport("--input-data", "zero")
	require.Empty(t, failed)
	require.Positive(t, ok)

	cfg := filepath.Join(repo, "tokens", "config.yaml")
	data, err := os.ReadFile(cfg)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(cfg, []byte(strings.Replace(string(data), "ids: [32]", "ids: [8]", 1)), 0o644))
	code, out, stderr = runCLI(t, "models", "load", "tokens", "--url", base)
	require.Zero(t, code, "stdout:\n%s\nstderr:\n%s", out, stderr)
	require.Eventually(t, func() bool { return inputsAt() == "ids:8" }, 2*time.Minute, 250*time.Millisecond,
		"events:\n%s", eventMessages(t, base))
	require.Contains(t, eventMessages(t, base), "measured again: its inputs were measured at ids:32, and profile_shapes gives ids:8 now")
	require.Equal(t, 200, do(t, "GET", base+"/v2/models/tokens/ready", nil, nil).code, "served all along")
}
