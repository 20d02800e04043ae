package cli

import (
	"strings"

	"fmt"

	"github.com/spf13/cobra"
)

// NoArgs rejects positional arguments with a usage error.
func NoArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return &UsageError{fmt.Errorf("%s takes no arguments, got %q", cmd.CommandPath(), args[0])}
	}
	return nil
}

// ExactArgs requires n positional arguments.
func ExactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return &UsageError{fmt.Errorf("%s takes %d argument(s), got %d", cmd.CommandPath(), n, len(args))}
		}
		return nil
	}
}

// MinArgs requires at least n positional arguments; what names them in the
// message ("FILE").
func MinArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < n {
			return &UsageError{fmt.Errorf("%s needs at least %d %s argument(s)", cmd.CommandPath(), n, what)}
		}
		return nil
	}
}

// CommaList splits the values of a repeatable flag that also takes
// comma-separated lists (--require gfx90a,gfx1100 --require gfx942),
// dropping empty items.
func CommaList(values []string) []string {
	var out []string
	for _, v := range values {
		for _, t := range strings.Split(v, ",") {
			if t = strings.TrimSpace(t); t != "" {
				out = append(out, t)
			}
		}
	}
	return out
}
