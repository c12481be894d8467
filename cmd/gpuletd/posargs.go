package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// A command's arguments where a new user first puts them.
//
// `gpuletd infer MODEL` takes its model as an argument, so `gpuletd load
// lenet5` and `gpuletd simulate w.yaml` are what a user tries next; with
// cobra.NoArgs both answered `unknown command "lenet5" for "gpuletd
// load"`, which reads as a missing subcommand.

// argsForFlag lets a command take as arguments what one of its flags
// names: each argument is given to the flag as --flag would be. A list
// flag collects them all, beside any --flag given; a flag of one value
// given both ways is refused, naming both. At most max arguments (0: any
// number).
func argsForFlag(flag string, max int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		if max > 0 && len(args) > max {
			return usageErrorf("%s takes at most %d argument (the --%s), not %d: %s", subcommand(cmd), max, flag, len(args), strings.Join(args, " "))
		}
		fl := cmd.Flags().Lookup(flag)
		if _, list := fl.Value.(pflag.SliceValue); fl.Changed && !list {
			return usageErrorf("%s: %s and --%s %s name the same thing: give one of them", subcommand(cmd), strings.Join(args, " "), flag, fl.Value)
		}
		for _, a := range args {
			if err := cmd.Flags().Set(flag, a); err != nil {
				return usageErrorf("%s: argument %q as --%s: %v", subcommand(cmd), a, flag, err)
			}
		}
		return nil
	}
}

// noArgsBut refuses arguments as cobra.NoArgs does, with what the user
// likely wanted instead, which hint says from the arguments.
func noArgsBut(hint func(cmd *cobra.Command, args []string) string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		return usageErrorf("%s takes no arguments, not %q: %s", subcommand(cmd), strings.Join(args, " "), hint(cmd, args))
	}
}

// usageErrorf is a usage error: the message after "gpuletd: ", exit
// status 2, as cobra's own usage errors have (isUsageError).
func usageErrorf(format string, args ...any) error {
	return &exitError{code: 2, msg: "gpuletd: " + fmt.Sprintf(format, args...)}
}

// subcommand is cmd's path without the root's name, which every error
// is printed after already ("gpuletd: trace takes no arguments …").
func subcommand(cmd *cobra.Command) string {
	return strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
}
