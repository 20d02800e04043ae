package ck_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/cmd/internal/cli"
	"github.com/rocmdoctor/rocmdoctor/cmd/internal/clitest"
)

const td = clitest.Testdata

func TestCKCommand(t *testing.T) {
	code, out, _ := clitest.Run("ck", "--for", "miopen-6.2", td+"ck")
	if code != 0 || !strings.Contains(out, "device_conv_operations\tok") {
		t.Errorf("complete install: exit %d\n%s", code, out)
	}
	code, out, _ = clitest.Run("ck", "--json", "--consumer", td+"checktree/ck/lib/libconsumer.so", td+"checktree/ck")
	var rep struct {
		SchemaVersion int `json:"schema_version"`
		Findings      []struct{ Rule, Library string }
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	rules := map[string]bool{}
	for _, f := range rep.Findings {
		rules[f.Rule] = true
	}
	for _, r := range []string{"ck-component-missing", "ck-bad-imported-location", "ck-no-instances", "ck-missing-link-target", "ck-missing-instance"} {
		if !rules[r] {
			t.Errorf("damaged install: no %s in %+v", r, rep.Findings)
		}
	}
	if code != cli.ExitFindings {
		t.Errorf("exit %d, want 3", code)
	}
	if code, _, errOut := clitest.Run("ck", td+"src"); code != cli.ExitError || !strings.Contains(errOut, "no composable_kernel install under") {
		t.Errorf("no install: exit %d %q", code, errOut)
	}
	if code, _, _ := clitest.Run("ck", "--for", "miopen-9.9", td+"ck"); code != cli.ExitUsage {
		t.Errorf("bad preset: exit %d", code)
	}
}
