package root

import (
	"runtime/debug"
	"testing"
)

func TestVersionOf(t *testing.T) {
	vcs := func(rev, modified string) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}}
	}
	for _, c := range []struct {
		name, linked string
		bi           *debug.BuildInfo
		want         string
	}{
		{"linked", "v1.2.3", vcs("0123456789abcdef", "false"), "v1.2.3"},
		{"module tag", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.4.0"}}, "v0.4.0"},
		{"revision", "", vcs("0123456789abcdef0123", "false"), "devel-0123456789ab"},
		{"dirty", "", vcs("0123456789abcdef0123", "true"), "devel-0123456789ab-dirty"},
		{"nothing", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "(devel)"},
		{"no build info", "", nil, "(devel)"},
	} {
		if got := versionOf(c.linked, c.bi); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
