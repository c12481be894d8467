package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpulet/gpuletd/daemon"
	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/profiler/store"
	"github.com/gpulet/gpuletd/sim/loadgen"
)

// completionTimeout bounds the call a shell's completion makes to the
// daemon: a completion that hangs is worse than none.
const completionTimeout = 2 * time.Second

// repositoryModels are the names in the running daemon's repository index
// (at the command's --url, or where the daemon is found without it) with each
// one's state, and why it does not serve, as completions; none when no
// daemon answers.
func (g *globalFlags) repositoryModels(cmd *cobra.Command) []cobra.Completion {
	url, _ := cmd.Flags().GetString("url")
	d, err := g.daemon(io.Discard, url)
	if err != nil || applyClientTLS(cmd.Flags(), d) != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), completionTimeout)
	defer cancel()
	defer d.client.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.base+"/v2/repository/index", strings.NewReader("{}"))
	if err != nil {
		return nil
	}
	req.Header.Set("Content-Type", "application/json")
	code, body, _, err := loadgen.Call(ctx, d.client, req, 16<<20)
	if err != nil || code != http.StatusOK {
		return nil
	}
	var index []struct {
		Name   string `json:"name"`
		State  string `json:"state"`
		Reason string `json:"reason"`
	}
	if json.Unmarshal(body, &index) != nil {
		return nil
	}
	out := make([]cobra.Completion, 0, len(index))
	for _, e := range index {
		desc := strings.ToLower(e.State)
		if e.Reason != "" {
			desc += ": " + e.Reason
		}
		out = append(out, cobra.CompletionWithDesc(e.Name, desc))
	}
	return out
}

// completeModelArg completes a command's one argument, a model's name,
// from the daemon's repository (repositoryModels).
func (g *globalFlags) completeModelArg(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return g.repositoryModels(cmd), cobra.ShellCompDirectiveNoFileComp
}

// completeModelFlag completes a flag whose value is a model's name.
func (g *globalFlags) completeModelFlag(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return g.repositoryModels(cmd), cobra.ShellCompDirectiveNoFileComp
}

// completeModelList completes the last of a flag's comma-separated models
// (load's --model a=100,b), keeping what comes before it.
func (g *globalFlags) completeModelList(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return withListPrefix(g.repositoryModels(cmd), toComplete), cobra.ShellCompDirectiveNoFileComp
}

// completeModelRates completes plan's --rate MODEL=REQ/S (a, b=3,c) up to
// the "=" after the model's name; the rate is the user's to type.
func (g *globalFlags) completeModelRates(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	last := toComplete[strings.LastIndexByte(toComplete, ',')+1:]
	if strings.Contains(last, "=") {
		return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
	var names []cobra.Completion
	for _, c := range g.repositoryModels(cmd) {
		name, _, _ := strings.Cut(c, "\t")
		names = append(names, name+"=")
	}
	return withListPrefix(names, toComplete), cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// completeAlgos completes a planner's name.
func completeAlgos(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return gpulet.AlgoNames(), cobra.ShellCompDirectiveNoFileComp
}

// withListPrefix puts what toComplete holds up to its last comma before
// each completion, for a flag that takes a comma-separated list. Such
// completions go without their descriptions: bash's completion script
// matches a described completion against what was typed only after quoting
// it, which puts a backslash before the comma ("a=100\,b"), so that none
// would ever match; undescribed ones it matches unquoted.
func withListPrefix(cs []cobra.Completion, toComplete string) []cobra.Completion {
	i := strings.LastIndexByte(toComplete, ',')
	if i < 0 {
		return cs
	}
	out := make([]cobra.Completion, len(cs))
	for j, c := range cs {
		name, _, _ := strings.Cut(c, "\t")
		out[j] = toComplete[:i+1] + name
	}
	return out
}

// completeEventKinds completes events' --kind from the kinds the daemon
// records.
func completeEventKinds(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return withListPrefix(daemon.EventKinds(), toComplete), cobra.ShellCompDirectiveNoFileComp
}

// completeSeverities completes events' --severity.
func completeSeverities(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var out []cobra.Completion
	for _, s := range store.Severities() {
		out = append(out, string(s))
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
