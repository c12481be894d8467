package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/internal/version"
	"github.com/spf13/cobra"
	"go.uber.org/zap"
)

// globalFlags are the flags every subcommand shares.
type globalFlags struct {
	configFile string
	logLevel   string
	logFormat  string
	// installed is where the service's configuration is looked for
	// (installedConfig), to say when it differs from the command's own.
	installed string
	// overrides are set over the configuration after the environment and
	// before validation, at every load (a reload too): the fields
	// tritonserver's flags give.
	overrides []configOverride
	// notes are said with the configuration's warnings: the flags of
	// tritonserver's that gpuletd takes and ignores.
	notes []string
}

// configOverride is a field set from the command line: its dotted path,
// its value (a list as YAML flow) and the flag that gave it.
type configOverride struct {
	path, value, flag string
}

func newRootCmd() *cobra.Command {
	g := &globalFlags{installed: installedConfig}
	root := &cobra.Command{
		Use:   "gpuletd",
		Short: "Serve many DNN models with latency SLOs on one multi-GPU server",
		Long: `gpuletd cuts GPUs into gpu-lets (MPS partitions or MIG instances), places models
on them by elastic partitioning with an interference model, batches requests
with a deferred batch scheduler in every gpu-let, and serves the KServe v2 API.`,
		Version:       version.String(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("{{.Version}}\n")
	pf := root.PersistentFlags()
	pf.StringVar(&g.configFile, "config", "", "configuration file (default $"+config.EnvConfigFile+", else built-in defaults)")
	pf.StringVar(&g.logLevel, "log-level", "", "log level: debug, info, warn or error (overrides log.level)")
	pf.StringVar(&g.logFormat, "log-format", "", "log format: auto, json, console or journal (overrides log.format)")

	root.AddCommand(
		newServeCmd(g),
		newTritonServerCmd(g),
		newExecutorCmd(g),
		newProfileCmd(g),
		newPlanCmd(g),
		newSimulateCmd(g),
		newBenchCmd(g),
		newModelsCmd(g),
		newStatusCmd(g),
		newEventsCmd(g),
		newBackupCmd(g),
		newRestoreCmd(g),
		newLoadCmd(g),
		newInferCmd(g),
		newTraceCmd(g),
		newConfigCmd(g),
		newVersionCmd(),
		newProbeCmd(),
		newOpenModelCmd(),
		newDoctorCmd(g),
	)
	return root
}

// loadConfig reads the configuration named by --config or GPULETD_CONFIG,
// applies the environment and the log flags.
func (g *globalFlags) loadConfig() (*config.Loaded, error) {
	path := g.configFile
	if path == "" {
		path = os.Getenv(config.EnvConfigFile)
	}
	l, err := config.Load(path, os.Environ())
	if err != nil {
		return nil, err
	}
	if g.logLevel != "" {
		l.Config.Log.Level = g.logLevel
		l.Sources["log.level"] = config.Source{Kind: "flag", Detail: "--log-level"}
	}
	if g.logFormat != "" {
		l.Config.Log.Format = g.logFormat
		l.Sources["log.format"] = config.Source{Kind: "flag", Detail: "--log-format"}
	}
	for _, o := range g.overrides {
		if err := l.Set(o.path, o.value, config.Source{Kind: "flag", Detail: o.flag}); err != nil {
			return nil, fmt.Errorf("%s: %w", o.flag, err)
		}
	}
	l.Warnings = append(l.Warnings, g.notes...)
	if err := l.Config.Validate(); err != nil {
		return nil, err
	}
	return l, nil
}

// logger builds the one logger of this process from the configuration and
// reports the configuration's warnings through it.
func (g *globalFlags) logger(l *config.Loaded) (*zap.Logger, error) {
	log, err := newLogger(l.Config.Log, os.Stderr)
	if err != nil {
		return nil, err
	}
	for _, w := range l.Warnings {
		log.Warn(w)
	}
	return log, nil
}

func isUsageError(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "accepts ", "requires ", "invalid argument \"", "flag needs an argument", "required flag"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// commandGroup makes cmd, which only holds subcommands, refuse an unknown
// one as the root does (a usage error, with the names it resembles) instead
// of printing its help and succeeding; given none, it prints its help.
func commandGroup(cmd *cobra.Command) *cobra.Command {
	cmd.Args = cobra.ArbitraryArgs
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return c.Help()
		}
		msg := fmt.Sprintf("unknown command %q for %q", args[0], c.CommandPath())
		if near := nearCommands(c, args[0]); len(near) > 0 {
			msg += "; did you mean " + strings.Join(near, " or ") + "?"
		}
		return errors.New(msg)
	}
	return cmd
}

// nearCommands are the subcommands of c whose names typed resembles, as the
// root suggests them for an unknown command.
func nearCommands(c *cobra.Command, typed string) []string {
	if c.SuggestionsMinimumDistance <= 0 {
		c.SuggestionsMinimumDistance = 2 // the root's own
	}
	return c.SuggestionsFor(typed)
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cmd.Println(version.String())
			return nil
		},
	}
}
