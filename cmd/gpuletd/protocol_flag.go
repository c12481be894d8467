package main

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gpulet/gpuletd/internal/listenfile"
)

// protocolUsage is --protocol's usage in infer and load.
const protocolUsage = "http or grpc, as perf_analyzer's -i: grpc sends to the gRPC listener of the daemon --url reaches, where it says it listens (its grpc_listen), unless --grpc names an address"

// grpcTarget is where a command sends over gRPC: grpcFlag when given,
// else, with protocol grpc, the gRPC listener of the daemon d reaches, as
// its status says; "" to send over REST.
func grpcTarget(ctx context.Context, d *daemonAPI, protocol, grpcFlag string) (string, error) {
	switch strings.ToLower(protocol) {
	case "":
		return grpcFlag, nil
	case "http":
		if grpcFlag != "" {
			return "", &exitError{code: 2, msg: "--protocol http sends over REST: leave out --grpc, or give --protocol grpc"}
		}
		return "", nil
	case "grpc":
		if grpcFlag != "" {
			return grpcFlag, nil
		}
	default:
		return "", &exitError{code: 2, msg: fmt.Sprintf("--protocol %q: give http or grpc", protocol)}
	}
	var s struct {
		GRPCListen *string `json:"grpc_listen"`
	}
	if err := adminFetch(ctx, d, "/api/v1/status", &s); err != nil {
		return "", d.fail(err)
	}
	switch {
	case s.GRPCListen == nil:
		return "", &exitError{code: 1, msg: fmt.Sprintf("gpuletd at %s does not say where it serves gRPC: give --grpc HOST:PORT", d.base)}
	case *s.GRPCListen == "":
		return "", &exitError{code: 1, msg: fmt.Sprintf("gpuletd at %s serves no gRPC (its grpc_listen is empty): set grpc_listen, or send over REST", d.base)}
	}
	return grpcDialAddr(d.base, *s.GRPCListen)
}

// grpcDialAddr is where a client reaches a gRPC listener at listen, seen
// from the daemon's base URL: listen itself, or, when its host is a
// wildcard (0.0.0.0, ::, none), its port on the host base reaches.
func grpcDialAddr(base, listen string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || u.Hostname() == "" {
		return "", fmt.Errorf("read the daemon's address %q: no host in it", base)
	}
	addr, err := listenfile.DialableAt(listen, u.Hostname())
	if err != nil {
		return "", fmt.Errorf("read the daemon's grpc_listen %q: %w", listen, err)
	}
	return addr, nil
}

// registerProtocolFlag adds --protocol (-i) to cmd, its values completed.
func registerProtocolFlag(cmd *cobra.Command, protocol *string) {
	cmd.Flags().StringVarP(protocol, "protocol", "i", "", protocolUsage)
	_ = cmd.RegisterFlagCompletionFunc("protocol", cobra.FixedCompletions([]string{"http", "grpc"}, cobra.ShellCompDirectiveNoFileComp))
}
