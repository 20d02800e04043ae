package check_test

import (
	"context"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/check"
	"github.com/rocmdoctor/rocmdoctor/finding"
	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
)

// TestPrecisionOnSystemTrees checks /usr/lib, /usr/lib/x86_64-linux-gnu and
// /usr/bin with the CI tier's packages and confirms every error with the
// real loader or an independent reader: a load failure (missing library,
// undefined symbol, version) by loading the file as its finding says it is
// used — a library with dlopen(RTLD_NOW), a program through the loader with
// LD_BIND_NOW and LD_WARN, as ldd -r does — failing and naming what the
// finding names; an executable stack, a build-directory RUNPATH and a
// missing interpreter by readelf; two unwinders by LD_DEBUG=bindings
// showing references bound to both. An error nothing confirms fails.
func TestPrecisionOnSystemTrees(t *testing.T) {
	testenv.Corpus(t)
	harness := testenv.DlopenHarness(t)
	readelf := testenv.Tool(t, "readelf", "binutils")
	for _, root := range []string{"/usr/lib", "/usr/lib/x86_64-linux-gnu", "/usr/bin"} {
		t.Run(strings.ReplaceAll(root, "/", "_"), func(t *testing.T) {
			rep, err := check.Run(context.Background(), []string{root}, check.Options{})
			if err != nil {
				t.Fatal(err)
			}
			byFile := map[string][]finding.Finding{}
			var files []string
			total := 0
			for _, f := range rep.Findings {
				if f.Severity != finding.SeverityError {
					continue
				}
				if len(byFile[f.File]) == 0 {
					files = append(files, f.File)
				}
				byFile[f.File] = append(byFile[f.File], f)
				total++
			}
			confirmed := 0
			for _, file := range files {
				fs := byFile[file]
				loadErr := ""
				loaded := false
				for _, f := range fs {
					ok, why := false, ""
					switch f.Rule {
					case finding.RuleMissingLibrary, finding.RuleUndefinedSymbol, finding.RuleVersionMismatch, finding.RuleMissingVersion:
						if !loaded {
							loadErr, loaded = loadFailure(t, harness, file), true
						}
						// The loader stops at the first failure: any name of the
						// file's load errors confirms them all.
						for _, g := range fs {
							for _, name := range []string{g.Library, g.Symbol} {
								if name != "" && loadErr != "" && strings.Contains(loadErr, name) {
									ok = true
								}
							}
						}
						why = "the loader: " + loadErr
					case finding.RuleExecStack:
						out, _ := exec.Command(readelf, "-lW", file).Output()
						ok = stackLine(string(out), "RWE")
						why = "readelf -l shows no RWE GNU_STACK"
					case finding.RuleBuildDirRunpath:
						out, _ := exec.Command(readelf, "-dW", file).Output()
						ok = buildDirEntry(string(out))
						why = "readelf -d shows no RUNPATH entry in a missing /build or a temporary directory"
					case finding.RuleMissingInterpreter:
						out, _ := exec.Command(readelf, "-lW", file).Output()
						interp := interpreterOf(string(out))
						_, serr := os.Stat(interp)
						ok = interp != "" && serr != nil
						why = "readelf -l: interpreter " + interp
					case finding.RuleMultipleUnwinders:
						ok = bindsToTwoUnwinders(t, harness, file)
						why = "LD_DEBUG=bindings shows one provider"
					default:
						why = "no oracle for this rule"
					}
					if ok {
						confirmed++
					} else {
						t.Errorf("unconfirmed %s %s %s%s: %s (%s)", f.ID, f.Rule, file, " "+f.Symbol+f.Library, f.Message, why)
					}
				}
			}
			t.Logf("precision: %d of %d errors confirmed (%d files checked)", confirmed, total, len(rep.Files))
			// Loaded alone these fail too, but that is not how they are
			// used: the classes the scan must tell apart, where present
			// (in /usr/lib, which holds systemd's program too).
			for _, used := range []string{
				"/usr/lib/x86_64-linux-gnu/libthread_db.so.1",                       // by design: gdb's proc_service
				"/usr/lib/gcc/x86_64-linux-gnu/12/plugin/libcc1plugin.so.0.0.0",     // cc1's plugin
				"/usr/lib/x86_64-linux-gnu/packagekit-backend/libpk_backend_apt.so", // a module
				"/usr/lib/x86_64-linux-gnu/libunwind-ptrace.so.0.0.0",               // underlinked
				"/usr/lib/x86_64-linux-gnu/systemd/libsystemd-core-252.so",          // systemd's RUNPATH
				"/usr/lib/jvm/java-17-openjdk-amd64/lib/libjava.so",                 // after libjli's dlopen of libjvm.so
			} {
				if root == "/usr/lib" && len(byFile[used]) > 0 {
					t.Errorf("%s: %d error(s), first %s: %s", used, len(byFile[used]), byFile[used][0].Rule, byFile[used][0].Message)
				}
			}
		})
	}
}

// loadFailure loads file as it is used: a program through the loader
// with LD_BIND_NOW and LD_WARN (what ldd -r does), anything else with the
// dlopen harness. It returns the loader's complaint, "" when it loads.
func loadFailure(t *testing.T, harness, file string) string {
	t.Helper()
	f, err := elf.Open(file)
	if err != nil {
		return err.Error()
	}
	program := false
	for _, p := range f.Progs {
		program = program || p.Type == elf.PT_INTERP
	}
	f.Close()
	var cmd *exec.Cmd
	if program && !strings.Contains(filepath.Base(file), ".so") {
		cmd = exec.Command("/lib64/ld-linux-x86-64.so.2", "--list", file)
		cmd.Env = append(os.Environ(), "LD_BIND_NOW=1", "LD_WARN=yes")
	} else {
		cmd = exec.Command(harness, file)
	}
	out, _ := cmd.CombinedOutput()
	s := string(out)
	if strings.Contains(s, "not found") || strings.Contains(s, "undefined symbol") || strings.Contains(s, "cannot open") || cmd.ProcessState.ExitCode() != 0 {
		return s
	}
	return ""
}

func stackLine(readelf, flags string) bool {
	for _, l := range strings.Split(readelf, "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == "GNU_STACK" && strings.Contains(l, " "+flags+" ") {
			return true
		}
	}
	return false
}

func buildDirEntry(readelf string) bool {
	for _, l := range strings.Split(readelf, "\n") {
		if !strings.Contains(l, "(RUNPATH)") && !strings.Contains(l, "(RPATH)") {
			continue
		}
		i, j := strings.Index(l, "["), strings.LastIndex(l, "]")
		if i < 0 || j < i {
			continue
		}
		for _, e := range strings.Split(l[i+1:j], ":") {
			_, err := os.Stat(e)
			if strings.HasPrefix(e, "/tmp/") || strings.HasPrefix(e, "/var/tmp/") || strings.HasPrefix(e, "/build/") && err != nil {
				return true
			}
		}
	}
	return false
}

func interpreterOf(readelf string) string {
	const tag = "[Requesting program interpreter: "
	if i := strings.Index(readelf, tag); i >= 0 {
		rest := readelf[i+len(tag):]
		if j := strings.Index(rest, "]"); j >= 0 {
			return rest[:j]
		}
	}
	return ""
}

// bindsToTwoUnwinders loads file with LD_DEBUG=bindings and reports
// whether its references to the unwinding ABI bind to two providers.
func bindsToTwoUnwinders(t *testing.T, harness, file string) bool {
	providers, _, _ := testenv.UnwindBindings(harness, file)
	return len(providers) > 1
}
