package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestProtocolCompletes: the shell completes --protocol's two values.
func TestProtocolCompletes(t *testing.T) {
	for _, command := range []string{"infer", "load"} {
		code, out, _ := runCLI(t, "__complete", command, "m", "--protocol", "")
		require.Equal(t, 0, code)
		require.True(t, strings.HasPrefix(out, "http\ngrpc\n:4\n"), "%s: %q", command, out)
	}
}

func TestGRPCDialAddr(t *testing.T) {
	for _, tc := range []struct {
		name, base, listen, want, err string
	}{
		{name: "a host of its own", base: "http://127.0.0.1:8700", listen: "10.0.0.5:8701", want: "10.0.0.5:8701"},
		{name: "every IPv4 address: the host base reaches", base: "https://node7.example:8700", listen: "0.0.0.0:8701", want: "node7.example:8701"},
		{name: "every IPv6 address", base: "http://[::1]:8700", listen: "[::]:9001", want: "[::1]:9001"},
		{name: "no host", base: "http://127.0.0.1:18000", listen: ":18001", want: "127.0.0.1:18001"},
		{name: "not an address", base: "http://127.0.0.1:8700", listen: "8701", err: `read the daemon's grpc_listen "8701"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := grpcDialAddr(tc.base, tc.listen)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

// TestGRPCTarget: --protocol grpc asks the daemon where its gRPC listener
// is, --grpc given wins, and what cannot be sent over gRPC is one clear
// error.
func TestGRPCTarget(t *testing.T) {
	var answer atomic.Pointer[string]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/status" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(*answer.Load()))
	}))
	t.Cleanup(srv.Close)
	d := plainAPI(srv.URL)
	ctx := context.Background()

	for _, tc := range []struct {
		name, answer, protocol, flag, want, err string
	}{
		{name: "REST by default", protocol: "", want: ""},
		{name: "--grpc alone", protocol: "", flag: "h:1", want: "h:1"},
		{name: "the daemon's listener, on the host --url reaches", answer: `{"grpc_listen": "0.0.0.0:18001"}`, protocol: "grpc", want: "127.0.0.1:18001"},
		{name: "perf_analyzer's spelling", answer: `{"grpc_listen": "127.0.0.1:18005"}`, protocol: "GRPC", want: "127.0.0.1:18005"},
		{name: "--grpc wins", answer: `{"grpc_listen": "127.0.0.1:18005"}`, protocol: "grpc", flag: "h:2", want: "h:2"},
		{name: "gRPC off", answer: `{"grpc_listen": ""}`, protocol: "grpc", err: "serves no gRPC (its grpc_listen is empty)"},
		{name: "a daemon that does not say", answer: `{}`, protocol: "grpc", err: "does not say where it serves gRPC: give --grpc HOST:PORT"},
		{name: "http with --grpc", protocol: "http", flag: "h:1", err: "--protocol http sends over REST"},
		{name: "neither", protocol: "udp", err: `--protocol "udp": give http or grpc`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			answer.Store(&tc.answer)
			got, err := grpcTarget(ctx, d, tc.protocol, tc.flag)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}
