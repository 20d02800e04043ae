package check_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/check"
	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
)

// A hostile composable_kernel config is a finding of that file (RD1306 at
// FILE:LINE: an error where cmake fails too, a warning at rocmdoctor's own
// bounds) and the rest of the scan goes on; check died of a stack
// overflow (1 GB) or ran out of memory on these.
func TestCheckHostileCKConfig(t *testing.T) {
	for _, c := range []struct {
		name, src, severity, where string
		cmake                      bool
	}{
		{"recursion", "function(f)\n  f()\nendfunction()\nf()\n", "error", ":2: Maximum recursion depth of 1000 exceeded", true},
		{"doubling", "set(x a)\nforeach(i RANGE 100)\n  set(x \"${x}${x}\")\nendforeach()\n", "warning", ":3: a value grows past 16 MiB", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			cfg := filepath.Join(root, "ck", "lib", "cmake", "composable_kernel", "composable_kernelConfig.cmake")
			os.MkdirAll(filepath.Dir(cfg), 0o755)
			os.WriteFile(cfg, []byte(c.src), 0o644)
			testenv.CopyFile(t, testenv.Testdata("libexecstack.so"), filepath.Join(root, "lib", "libexecstack.so"))
			rep, err := check.Run(context.Background(), []string{root}, check.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Errors) != 0 {
				t.Fatalf("errors %+v", rep.Errors)
			}
			var ck, others int
			for _, f := range rep.Findings {
				switch {
				case f.ID == "RD1306":
					ck++
					if f.File != cfg || string(f.Severity) != c.severity || !strings.Contains(f.Message, cfg+c.where) {
						t.Errorf("finding %+v, want %s at %s%s", f, c.severity, cfg, c.where)
					}
				case strings.HasSuffix(f.File, "libexecstack.so"):
					others++
				}
			}
			if ck != 1 || others == 0 {
				t.Errorf("%d RD1306 findings, %d of the other file: the scan did not go on", ck, others)
			}
			if c.cmake {
				cm := testenv.Tool(t, "cmake", "cmake")
				out, _ := exec.Command(cm, "-P", cfg).CombinedOutput()
				if !strings.Contains(string(out), "Maximum recursion depth of 1000 exceeded") {
					t.Errorf("cmake does not fail the same way:\n%s", out)
				}
			}
		})
	}
}
