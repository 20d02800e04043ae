package cli

import (
	"errors"
	"testing"

	"github.com/spf13/cobra"
)

func TestResolverFlagsLegacyHWCaps(t *testing.T) {
	for _, tt := range []struct {
		arg      string
		wantNil  bool
		wantErr  bool
		wantNone bool
	}{
		{arg: "auto", wantNil: true},
		{arg: "none", wantNone: true},
		{arg: "sometimes", wantErr: true},
	} {
		var rf ResolverFlags
		cmd := &cobra.Command{Use: "x"}
		rf.Register(cmd.Flags())
		if err := cmd.Flags().Parse([]string{"--legacy-hwcaps", tt.arg}); err != nil {
			t.Fatal(err)
		}
		ro, err := rf.Options(cmd, &IOStreams{})
		var ue *UsageError
		switch {
		case tt.wantErr:
			if !errors.As(err, &ue) {
				t.Errorf("%s: error %v, want a usage error", tt.arg, err)
			}
		case err != nil:
			t.Errorf("%s: %v", tt.arg, err)
		case tt.wantNil && ro.LegacyHWCaps != nil:
			t.Errorf("%s: %v, want nil (automatic)", tt.arg, ro.LegacyHWCaps)
		case tt.wantNone && (ro.LegacyHWCaps == nil || len(ro.LegacyHWCaps) != 0):
			t.Errorf("%s: %#v, want an empty list", tt.arg, ro.LegacyHWCaps)
		}
	}
}
