package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	neturl "net/url"

	"github.com/spf13/cobra"
)

// newModelsUnquarantineCmd lifts a model's quarantine in a running daemon.
func newModelsUnquarantineCmd(g *globalFlags) *cobra.Command {
	var url, token string
	cmd := &cobra.Command{
		Use:   "unquarantine MODEL",
		Short: "Let a model's quarantined and suspect requests run again",
		Long: `Forget a running daemon's quarantined, suspect and hanging requests of MODEL
(DELETE /api/v1/models/MODEL/quarantine): a request quarantined for crashing
or hanging its executor, or faulting its GPU, in a run of its own is refused
for an hour (reason crashes_executor), or until the model is loaded anew.
Lift it once what it found is fixed, or when it was quarantined for a fault
not its own (a GPU that faulted by itself); the requests then run as any
other, and a request that crashes again becomes a suspect again. An info
event (kind request_quarantined) records it.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: g.completeModelArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := g.daemonOf(cmd, url)
			if err != nil {
				return err
			}
			code, answer, msg, err := adminCall(cmd.Context(), d, http.MethodDelete, "/api/v1/models/"+neturl.PathEscape(args[0])+"/quarantine", adminToken(g, token), nil)
			if err != nil {
				return err
			}
			if code != http.StatusOK {
				return &exitError{code: 1, msg: "gpuletd: " + msg}
			}
			var got struct {
				Model                          string
				Quarantined, Suspects, Hanging int
			}
			if err := json.Unmarshal(answer, &got); err != nil {
				return fmt.Errorf("read the daemon's answer: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: quarantine lifted: %d quarantined, %d suspect and %d hanging requests run again as any other\n",
				got.Model, got.Quarantined, got.Suspects, got.Hanging)
			return nil
		},
	}
	addURLFlag(cmd.Flags(), &url)
	cmd.Flags().StringVar(&token, "token", "", tokenUsage)
	return cmd
}
