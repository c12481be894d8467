package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/internal/fsperm"
	"github.com/gpulet/gpuletd/kserve/inferencepb"
	"github.com/gpulet/gpuletd/profiler/store"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

// serviceUser is the user the shipped unit runs the daemon as
// (systemd/gpuletd.service, User=).
const serviceUser = "gpuletd"

// FolderCheck is one folder or address serve needs, checked as serve's
// start checks would: for the user doctor runs as and, run as root, the
// state folder for the service's user too.
type FolderCheck struct {
	// Field is the configuration's name for it (state_dir, runtime_dir,
	// model_repository, listen, grpc_listen).
	Field string `json:"field"`
	Path  string `json:"path"`
	// For is the user the check is for.
	For string `json:"for"`
	// Problem says why that user could not use it and what to run; empty
	// when it can.
	Problem string `json:"problem,omitempty"`
	// Serving names the gpuletd that answers on an address in use (the
	// service, say): no problem for the check, but serve beside it needs
	// another address.
	Serving string `json:"serving,omitempty"`
}

// folderChecks checks the folders and addresses of cfg as this user, and
// the state folder as the service's user when this is root and that user
// exists.
func folderChecks(cfg config.Config) []FolderCheck {
	me := "uid " + strconv.Itoa(os.Geteuid())
	if u, err := user.Current(); err == nil {
		me = u.Username
	}
	problem := func(err error) string {
		if err == nil {
			return ""
		}
		return err.Error()
	}
	db := store.Files(filepath.Join(cfg.StateDir, store.FileName))
	var checks []FolderCheck
	for i, root := range cfg.ModelRepositories() {
		checks = append(checks, FolderCheck{Field: config.RepositoryField(i), Path: root, For: me, Problem: problem(checkRepository(i, root))})
	}
	checks = append(checks, []FolderCheck{
		{Field: "state_dir", Path: cfg.StateDir, For: me, Problem: problem(folderProblem(cfg.StateDir, db...))},
		{Field: "runtime_dir", Path: cfg.RuntimeDir, For: me, Problem: problem(folderProblem(cfg.RuntimeDir))},
	}...)
	if os.Geteuid() == 0 {
		if u, err := user.Lookup(serviceUser); err == nil {
			if _, serr := os.Stat(cfg.StateDir); serr == nil {
				checks = append(checks, FolderCheck{Field: "state_dir", Path: cfg.StateDir, For: serviceUser + " (the service)",
					Problem: problem(fsperm.WhyNotWritableBy(u, cfg.StateDir, db...))})
			}
		}
	}
	header := cfg.Auth.RestrictionHeaders() // what lets a probe through auth.restricted_apis
	for _, l := range []struct {
		field, addr, env string
		probe            func(addr string, header map[string]string) string
	}{
		{"listen", cfg.Listen, "GPULETD_LISTEN", gpuletdAt}, {"grpc_listen", cfg.GRPCListen, "GPULETD_GRPC_LISTEN", gpuletdAtGRPC},
		{"metrics.listen", cfg.Metrics.Listen, "GPULETD_METRICS_LISTEN", gpuletdMetricsAt},
	} {
		if l.addr == "" {
			continue
		}
		c := FolderCheck{Field: l.field, Path: l.addr, For: me}
		if ln, err := net.Listen("tcp", l.addr); err == nil {
			_ = ln.Close()
		} else if c.Serving = l.probe(l.addr, header); c.Serving == "" {
			c.Problem = err.Error() + inUseHint(err, l.addr, l.field, l.env)
		}
		checks = append(checks, c)
	}
	return checks
}

// folderProblem says why this process could not make or write dir and the
// files in it, or nil.
func folderProblem(dir string, files ...string) error {
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return fsperm.WhyNoMkdir(dir)
	}
	return fsperm.WhyNotWritable(dir, files...)
}

// probeHTTP GETs path at addr over plain HTTP with the headers given, at
// most limit bytes of a 200 answer; nil when nothing answers so.
func probeHTTP(addr, path string, header map[string]string, limit int64) []byte {
	c := http.Client{Timeout: 500 * time.Millisecond}
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		return nil
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil
	}
	return body
}

// gpuletdAt is "gpuletd VERSION" when a gpuletd answers plain HTTP at addr
// (its server metadata), else empty.
func gpuletdAt(addr string, header map[string]string) string {
	var md struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	if body := probeHTTP(addr, "/v2", header, 1<<16); body == nil || json.Unmarshal(body, &md) != nil || md.Name != "gpuletd" {
		return ""
	}
	return "gpuletd " + md.Version
}

// gpuletdMetricsAt is "gpuletd VERSION" when a gpuletd's metrics listener
// answers GET /metrics at addr (its gpuletd_build_info), else empty.
func gpuletdMetricsAt(addr string, _ map[string]string) string {
	m := buildInfo.FindSubmatch(probeHTTP(addr, "/metrics", nil, 1<<20))
	if m == nil {
		return ""
	}
	return "gpuletd " + string(m[1])
}

// buildInfo finds the version in gpuletd_build_info's sample.
var buildInfo = regexp.MustCompile(`\ngpuletd_build_info\{[^}]*\bversion="([^"]*)"`)

// gpuletdAtGRPC is "gpuletd VERSION" when a gpuletd answers ServerMetadata
// over plain gRPC at addr (the headers given as metadata), else empty.
func gpuletdAtGRPC(addr string, header map[string]string) string {
	conn, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return ""
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	for k, v := range header {
		ctx = metadata.AppendToOutgoingContext(ctx, strings.ToLower(k), v)
	}
	md, err := inferencepb.NewGRPCInferenceServiceClient(conn).ServerMetadata(ctx, &inferencepb.ServerMetadataRequest{})
	if err != nil || md.GetName() != "gpuletd" {
		return ""
	}
	return "gpuletd " + md.GetVersion()
}
