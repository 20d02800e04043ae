package checkcmd_test

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/rocmdoctor/rocmdoctor/check"
	"github.com/rocmdoctor/rocmdoctor/cmd/internal/cli"
	"github.com/rocmdoctor/rocmdoctor/cmd/internal/clitest"
	"github.com/rocmdoctor/rocmdoctor/cmd/internal/root"
	"github.com/rocmdoctor/rocmdoctor/finding"
	"github.com/rocmdoctor/rocmdoctor/internal/golden"
	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
)

const tree = "../../../testdata/checktree"

func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	// The same on every machine: no interpreter from PATH unless a test
	// names one.
	if len(args) > 0 && args[0] == "check" && !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--python") }) {
		args = append([]string{"check", "--python="}, args[1:]...)
	}
	io, _, out, errOut := cli.Test()
	code := root.Run(io, args)
	return code, normalize(out.String()), errOut.String()
}

// normalize replaces the checkout's absolute path, which differs between
// clones, so golden files are portable.
func normalize(s string) string {
	abs, _ := filepath.Abs("../../../testdata")
	return strings.ReplaceAll(s, abs, "$TESTDATA")
}

func TestCheckGoldenEveryFormat(t *testing.T) {
	for _, format := range []string{"plain", "json", "sarif", "junit"} {
		t.Run(format, func(t *testing.T) {
			code, out, errOut := run(t, "check", "--workers", "2", "--format", format, tree)
			if code != cli.ExitFindings {
				t.Errorf("exit %d, want 3 (stderr %q)", code, errOut)
			}
			golden.Assert(t, "check."+format, []byte(out))
		})
	}
}

func TestCheckEveryRuleFires(t *testing.T) {
	_, out, _ := run(t, "check", "--json", tree)
	var rep check.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range rep.Findings {
		seen[f.ID] = true
		if f.ID == "" || f.Message == "" || f.Fix == "" || f.Severity == "" || f.RelPath == "" {
			t.Errorf("incomplete finding %+v", f)
		}
	}
	for _, r := range finding.Rules {
		if !seen[r.ID] {
			t.Errorf("the fixture tree has no instance of %s %s", r.ID, r.Name)
		}
	}
	// Deterministic across runs.
	_, again, _ := run(t, "check", "--json", "--workers", "1", tree)
	if again != out {
		t.Errorf("two runs differ")
	}
}

func TestCheckSARIFAndJUnitParseBack(t *testing.T) {
	_, out, _ := run(t, "check", "--format", "sarif", tree)
	var log struct {
		Version string `json:"version"`
		Runs    []struct {
			Tool struct {
				Driver struct {
					Rules []struct{ ID string }
				}
			}
			Results []struct {
				RuleID    string `json:"ruleId"`
				Level     string `json:"level"`
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI string }
					}
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &log); err != nil {
		t.Fatal(err)
	}
	if log.Version != "2.1.0" || len(log.Runs) != 1 || len(log.Runs[0].Tool.Driver.Rules) != len(finding.Rules) || len(log.Runs[0].Results) < len(finding.Rules) {
		t.Errorf("sarif: version %s, %d runs", log.Version, len(log.Runs))
	}
	for _, r := range log.Runs[0].Results {
		if r.RuleID == "" || r.Level == "" || len(r.Locations) != 1 || strings.HasPrefix(r.Locations[0].PhysicalLocation.ArtifactLocation.URI, "/") {
			t.Errorf("result %+v", r)
		}
	}
	_, out, _ = run(t, "check", "--format", "junit", tree)
	var suites check.JUnitSuites
	if err := xml.Unmarshal([]byte(out), &suites); err != nil {
		t.Fatal(err)
	}
	s := suites.Suites[0]
	if s.Tests < 19 || s.Failures < 10 || s.Tests != len(s.Cases) {
		t.Errorf("junit: %d tests, %d failures", s.Tests, s.Failures)
	}
}

// TestJUnitNamesPathsNotChecked: a path that cannot be checked is a test
// case with an error (it was in no output but stderr).
func TestJUnitNamesPathsNotChecked(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nowhere.so")
	_, out, _ := run(t, "check", "--format", "junit", tree, missing)
	var suites check.JUnitSuites
	if err := xml.Unmarshal([]byte(out), &suites); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range suites.Suites[0].Cases {
		found = found || c.Name == missing && c.Error != nil && c.Error.Message == missing+": no such file or directory"
	}
	if !found || suites.Suites[0].Errors != 1 {
		t.Errorf("JUnit: errors=%d, the missing path has no error case:\n%s", suites.Suites[0].Errors, out)
	}
}

// TestSARIFValidates validates the SARIF output against the 2.1.0 schema
// with python3-jsonschema (the CI tier installs it).
func TestSARIFValidates(t *testing.T) {
	py := testenv.Tool(t, "python3", "python3")
	if exec.Command(py, "-c", "import jsonschema").Run() != nil {
		testenv.Missing(t, "python3 module jsonschema", "apt-get install python3-jsonschema")
	}
	// With a path that cannot be checked too: it is a notification of
	// the run's invocation (it was in no output but stderr).
	missing := filepath.Join(t.TempDir(), "nowhere.so")
	_, out, _ := run(t, "check", "--format", "sarif", tree, missing)
	f := filepath.Join(t.TempDir(), "out.sarif")
	os.WriteFile(f, []byte(out), 0o644)
	script := `import json,sys,jsonschema
schema=json.load(open(sys.argv[1])); doc=json.load(open(sys.argv[2]))
jsonschema.Draft4Validator(schema).validate(doc)
inv=doc["runs"][0]["invocations"][0]; n=inv["toolExecutionNotifications"]
assert inv["executionSuccessful"] and len(n)==1 and n[0]["level"]=="error" and n[0]["message"]["text"]==sys.argv[3]+": no such file or directory", inv`
	if o, err := exec.Command(py, "-c", script, "../../../testdata/sarif/sarif-2.1.0-rtm.5.json", f, missing).CombinedOutput(); err != nil {
		t.Errorf("SARIF does not validate: %v\n%s", err, o)
	}
	// A warning (a damaged ld.so.cache) is a notification without a
	// location.
	sys, _, cache := clitest.DamagedCacheSysroot(t, "libfoo.so.1", "lib/libfoo.so.1")
	_, out, _ = run(t, "check", "--format", "sarif", "--root", sys, "--fail-on", "never", filepath.Join(sys, "lib"))
	os.WriteFile(f, []byte(out), 0o644)
	script = `import json,sys,jsonschema
schema=json.load(open(sys.argv[1])); doc=json.load(open(sys.argv[2]))
jsonschema.Draft4Validator(schema).validate(doc)
n=doc["runs"][0]["invocations"][0]["toolExecutionNotifications"]
assert len(n)==1 and n[0]["level"]=="warning" and n[0]["message"]["text"].startswith(sys.argv[3]+": "), n`
	if o, err := exec.Command(py, "-c", script, "../../../testdata/sarif/sarif-2.1.0-rtm.5.json", f, cache).CombinedOutput(); err != nil {
		t.Errorf("SARIF with a warning does not validate: %v\n%s", err, o)
	}
}

// TestCheckDamagedCacheReported: what the scan worked around is in the
// JSON report (once, however many workers met it), in SARIF as a warning
// notification, and on stderr; the findings are those of the scan
// without a cache, and a report without warnings has no such field.
func TestCheckDamagedCacheReported(t *testing.T) {
	sys, _, cache := clitest.DamagedCacheSysroot(t, "libfoo.so.1", "lib/libfoo.so.1")
	lib := filepath.Join(sys, "lib")
	code, out, errOut := run(t, "check", "--json", "--root", sys, lib)
	var rep check.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Warnings) != 1 || !strings.HasPrefix(rep.Warnings[0], cache+": ") || code != cli.ExitFindings {
		t.Errorf("exit %d, warnings %q; want one about %s", code, rep.Warnings, cache)
	}
	if strings.Count(errOut, "rocmdoctor: warning: "+cache+": ") != 1 {
		t.Errorf("stderr %q", errOut)
	}
	os.Remove(cache)
	_, clean, _ := run(t, "check", "--json", "--root", sys, lib)
	if strings.Contains(clean, `"warnings"`) {
		t.Errorf("a report without warnings has the field:\n%s", clean)
	}
	var without check.Report
	if err := json.Unmarshal([]byte(clean), &without); err != nil || !reflect.DeepEqual(without.Findings, rep.Findings) {
		t.Errorf("findings differ with the damaged cache:\n%+v\nwithout a cache:\n%+v", rep.Findings, without.Findings)
	}
}

func TestCheckConfigIgnoreSeverityBaseline(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "gate.toml")
	for name, text := range map[string]string{"gate.toml": `glibc = "2.40"
glibcxx = "3.4.40"
[severity]
textrel = "off"
RD1205 = "error"
[[ignore]]
rules = ["RD1001", "RD1005"]
symbol = "LLVMInitialize*"
[[ignore]]
path = "lib/libbuilddir.so"
`, "gate.yaml": `glibc: 2.40
glibcxx: 3.4.40
severity:
  textrel: off
  RD1205: error
ignore:
  - rules: [RD1001, RD1005]
    symbol: "LLVMInitialize*"
  - path: lib/libbuilddir.so
`} {
		f := filepath.Join(dir, name)
		os.WriteFile(f, []byte(text), 0o644)
		_, out, errOut := run(t, "check", "--json", "--config", f, tree)
		var rep check.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%s: %v %s", name, err, errOut)
		}
		for _, f := range rep.Findings {
			switch {
			case f.ID == "RD1207", f.ID == "RD1201", f.ID == "RD1208", f.ID == "RD1209", f.ID == "RD1204":
				t.Errorf("%s: %s should be off or ignored: %+v", name, f.ID, f)
			case f.ID == "RD1005", f.ID == "RD1001" && strings.HasPrefix(f.Symbol, "LLVMInitialize"):
				t.Errorf("%s: ignored symbol reported: %+v", name, f)
			case f.ID == "RD1205" && f.Severity != "error":
				t.Errorf("%s: severity override not applied: %+v", name, f)
			}
		}
		if rep.Ignored == 0 {
			t.Errorf("%s: nothing counted as ignored", name)
		}
	}
	// Baseline: record, then the same tree passes.
	base := filepath.Join(dir, "baseline.json")
	if code, _, _ := run(t, "check", "--write-baseline", base, tree); code != 0 {
		t.Errorf("--write-baseline exit %d", code)
	}
	code, out, _ := run(t, "check", "--baseline", base, tree)
	if code != 0 || !strings.Contains(out, "0 error(s), 0 warning(s), 0 note(s)") {
		t.Errorf("with the baseline: exit %d\n%s", code, out)
	}
	// A bad config names the file and line.
	os.WriteFile(cfg, []byte("[severity]\nRD9999 = \"off\"\n"), 0o644)
	if code, _, errOut := run(t, "check", "--config", cfg, tree); code != cli.ExitError || !strings.Contains(errOut, "gate.toml") || !strings.Contains(errOut, "RD9999") {
		t.Errorf("bad config: exit %d %q", code, errOut)
	}
}

func TestCheckListRulesAndUsage(t *testing.T) {
	code, out, _ := run(t, "check", "--list-rules")
	if code != 0 || !strings.Contains(out, "RD1001\tundefined-symbol\terror") || !strings.Contains(out, "RD1209") {
		t.Errorf("--list-rules: exit %d\n%s", code, out)
	}
	t.Setenv("ROCM_PATH", filepath.Join(t.TempDir(), "nonexistent"))
	if _, err := os.Stat("/opt/rocm"); err != nil {
		if code, _, errOut := run(t, "check"); code != cli.ExitUsage || !strings.Contains(errOut, "ROCM_PATH") {
			t.Errorf("no path: exit %d %q", code, errOut)
		}
	}
	if code, _, _ := run(t, "check", "--format", "xml", tree); code != cli.ExitUsage {
		t.Errorf("--format xml: exit %d", code)
	}
}

func TestRulesDocCurrent(t *testing.T) {
	b, err := os.ReadFile("../../../docs/rules.md")
	if err != nil || string(b) != finding.RulesMarkdown() {
		t.Errorf("docs/rules.md is stale: run go run ./cmd/gendocs docs")
	}
}

// With --root, PATH arguments and the $ROCM_PATH default are inside the
// sysroot.
func TestCheckPathsInRoot(t *testing.T) {
	sys, inside := clitest.InSysroot(t, "checktree/lib/libmissing.so", "opt/rocm-x/lib/libmissing.so")
	for _, args := range [][]string{{"/opt/rocm-x"}, {}} {
		t.Setenv("ROCM_PATH", "/opt/rocm-x")
		code, out, errOut := run(t, append([]string{"check", "--root", sys, "--fail-on", "never", "--json"}, args...)...)
		var rep struct{ Files []string }
		json.Unmarshal([]byte(out), &rep)
		if code != 0 || len(rep.Files) != 1 || rep.Files[0] != inside {
			t.Errorf("%v: exit %d, files %v, stderr %q; want %s", args, code, rep.Files, errOut, inside)
		}
	}
	t.Setenv("ROCM_PATH", "/opt/nowhere")
	if code, _, errOut := run(t, "check", "--root", sys); code != cli.ExitUsage || !strings.Contains(errOut, "in "+sys) {
		t.Errorf("no prefix in the root: exit %d, %q", code, errOut)
	}
}

// TestCheckFilesThatCannotBeChecked: a named file check cannot read is
// listed on stderr once with its path (not twice) and counted in the
// summary line, and the exit status is 1 though no finding is an error.
func TestCheckFilesThatCannotBeChecked(t *testing.T) {
	dir := t.TempDir()
	empty, trunc := filepath.Join(dir, "empty.so"), filepath.Join(dir, "trunc.so")
	os.WriteFile(empty, nil, 0o644)
	b, err := os.ReadFile(filepath.Join("../../../testdata", "libfoo.so.1"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(trunc, b[:100], 0o644)
	code, out, errOut := run(t, "check", "--format", "plain", empty, trunc)
	if code != 1 || !strings.Contains(out, "checked 2 file(s): 0 error(s), 0 warning(s), 0 note(s); 2 path(s) could not be checked") {
		t.Errorf("exit %d, stdout %q", code, out)
	}
	for _, want := range []string{"rocmdoctor: " + empty + ": not an ELF file", "rocmdoctor: " + trunc + ": malformed file at offset 0x40: program header table: 8 entries of 56 bytes end at 0x200, past the end of the file (100 bytes): the file is truncated"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr %q lacks %q", errOut, want)
		}
	}
	if strings.Contains(errOut, trunc+": "+trunc) {
		t.Errorf("a path is repeated: %q", errOut)
	}
	// A path that does not exist is one of those too: the other paths
	// are still checked and reported (it stopped the whole check, with
	// nothing on stdout).
	good, missing := filepath.Join(dir, "libfoo.so.1"), filepath.Join(dir, "nowhere.so")
	os.WriteFile(good, b, 0o644)
	code, out, errOut = run(t, "check", "--format", "plain", missing, good)
	if code != 1 || !strings.Contains(out, "checked 1 file(s): 0 error(s), 0 warning(s), 0 note(s); 1 path(s) could not be checked") ||
		!strings.Contains(errOut, "rocmdoctor: "+missing+": no such file or directory\n") {
		t.Errorf("missing path: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// A wheel member's error names the member under the wheel's path once.
	whl := filepath.Join(dir, "pkg-1.0-py3-none-linux_x86_64.whl")
	os.WriteFile(whl, testenv.WheelMember("pkg-1.0", "pkg/libbz.so", b, 12), 0o644)
	code, _, errOut = run(t, "check", "--format", "plain", whl)
	if want := "rocmdoctor: " + whl + "!/pkg/libbz.so: compressed with bzip2 (method 12)"; code != 1 || !strings.Contains(errOut, want) {
		t.Errorf("bzip2 member: exit %d, stderr %q, want %q", code, errOut, want)
	}
}

// TestCheckEmptyTree: a tree with nothing to check fails the gate with a
// line saying so, unless --allow-empty.
func TestCheckEmptyTree(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := run(t, "check", "--format", "plain", dir)
	if code != cli.ExitError || errOut != "rocmdoctor: "+dir+": nothing to check under it (no ELF file, archive, wheel or composable_kernelConfig.cmake); give the install prefix, or --allow-empty\n" ||
		!strings.Contains(out, "checked 0 file(s)") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if code, _, errOut := run(t, "check", "--allow-empty", dir); code != 0 || errOut != "" {
		t.Errorf("--allow-empty: exit %d, stderr %q", code, errOut)
	}
}

// TestCheckCollapsesNotes: a module's many undefined symbols (notes) are
// one row of the text output, so errors are not lost among them; JSON
// keeps each.
func TestCheckCollapsesNotes(t *testing.T) {
	gcc := testenv.Tool(t, "gcc", "gcc")
	dir := t.TempDir()
	src := filepath.Join(dir, "p.c")
	os.WriteFile(src, []byte("extern int h1(void), h2(void), h3(void), h4(void), h5(void);\nint f(void){return h1()+h2()+h3()+h4()+h5();}\n"), 0o644)
	if out, err := exec.Command(gcc, "-shared", "-fPIC", "-o", filepath.Join(dir, "plugin.so"), src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	os.Remove(src)
	_, out, _ := run(t, "check", "--format", "plain", dir)
	rows := 0
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "RD1006\t") {
			rows++
			if !strings.Contains(l, "undefined symbol: h1 ") || !strings.Contains(l, "(and 4 more RD1006 notes on this file; --format json lists them)") {
				t.Errorf("row %q", l)
			}
		}
	}
	if rows != 1 || !strings.Contains(out, "5 note(s)") {
		t.Errorf("%d RD1006 rows:\n%s", rows, out)
	}
	_, out, _ = run(t, "check", "--json", dir)
	if n := strings.Count(out, `"rule": "module-undefined-symbol"`); n != 5 {
		t.Errorf("JSON has %d module notes, want 5", n)
	}
}

// --gpu-targets takes comma-separated lists, overrides the tree's
// gpu_targets, and a bad target ID is a usage error.
func TestCheckGPUTargetsFlag(t *testing.T) {
	ids := func(args ...string) map[string]int {
		t.Helper()
		_, out, errOut := run(t, append([]string{"check", "--json"}, args...)...)
		var rep check.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%v: %v (stderr %q)", args, err, errOut)
		}
		n := map[string]int{}
		for _, f := range rep.Findings {
			n[f.ID]++
		}
		return n
	}
	// The tree asks for gfx90a and gfx1100: five files lack gfx1100
	// (libgpukernels.so and the four CK device archives), and rocBLAS's
	// Tensile kernels do too.
	if n := ids(tree); n["RD1401"] != 5 || n["RD1402"] != 1 {
		t.Errorf("from the tree's config: %v", n)
	}
	if n := ids("--gpu-targets", "gfx90a", tree); n["RD1401"] != 0 || n["RD1402"] != 0 {
		t.Errorf("--gpu-targets gfx90a: %v", n)
	}
	if n := ids("--gpu-targets", "gfx90a,gfx942", "--gpu-targets", "gfx1030", tree); n["RD1401"] != 5 || n["RD1402"] != 2 {
		t.Errorf("--gpu-targets gfx90a,gfx942 --gpu-targets gfx1030: %v", n)
	}
	if code, _, errOut := run(t, "check", "--gpu-targets", "gfx90a:foo", tree); code != cli.ExitUsage || !strings.Contains(errOut, `"gfx90a:foo"`) {
		t.Errorf("a bad target: exit %d, stderr %q", code, errOut)
	}
}

// TestCheckTableFitsTheTerminal: on a terminal the findings table is as
// wide as the terminal, not as its longest message (925 columns over the
// fixture tree, which a 100-column terminal folded into a wall of box
// characters), and every finding's ID, file and words are still there.
func TestCheckTableFitsTheTerminal(t *testing.T) {
	io, _, out, _ := cli.Test()
	io.SetTerminal(true)
	io.SetWidth(100)
	if code := root.Run(io, []string{"check", "--color", "never", tree}); code != cli.ExitFindings {
		t.Fatalf("exit %d", code)
	}
	table := out.String()
	for _, l := range strings.Split(strings.TrimRight(table, "\n"), "\n") {
		if n := utf8.RuneCountInString(l); n > 100 {
			t.Errorf("a line of %d columns: %q", n, l)
		}
	}
	// The JSON with the same paths (not normalized: where a path wraps
	// depends on the checkout's).
	jio, _, jout, _ := cli.Test()
	root.Run(jio, []string{"check", "--json", tree})
	var rep check.Report
	if err := json.Unmarshal(jout.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	// The table read back: a row starts where the ID column is not empty,
	// and each column's lines are joined (a line broken at a space lost
	// it, so white space is not compared).
	squeeze := func(s string) string { return strings.Join(strings.Fields(s), "") }
	var rows [][5]string
	for _, l := range strings.Split(table, "\n") {
		cells := strings.Split(l, "│")
		if len(cells) != 7 || strings.TrimSpace(cells[1]) == "ID" {
			continue
		}
		if strings.TrimSpace(cells[1]) != "" {
			rows = append(rows, [5]string{})
		}
		for i := range 5 {
			rows[len(rows)-1][i] += squeeze(cells[i+1])
		}
	}
	seen := map[string]bool{}
	for _, r := range rows {
		seen[r[0]+" "+r[2]+" "+r[3]] = true
	}
	found := 0
	for _, f := range rep.Findings {
		if seen[f.ID+" "+squeeze(f.RelPath)+" "+squeeze(f.Message)] {
			found++
		} else {
			t.Errorf("not in the table as it is in the JSON: %s %s %q", f.ID, f.RelPath, f.Message)
		}
	}
	// (The fixture tree has no file with more than three notes of one
	// rule, which the table would fold into one row.)
	if found != len(rep.Findings) || len(rows) != len(rep.Findings) {
		t.Errorf("%d rows, %d findings, %d found word for word", len(rows), len(rep.Findings), found)
	}
}

// TestCheckProgressOnATerminal: with stderr on a terminal, check draws one
// progress line per file over the previous one, none wider than the
// terminal, and clears it before the report; not on a pipe.
func TestCheckProgressOnATerminal(t *testing.T) {
	var out, errOut strings.Builder
	io := cli.NewStreams(nil, &out, &errOut, false, true)
	io.SetErrWidth(40)
	start := time.Now()
	if code := root.Run(io, []string{"check", "--workers", "1", tree}); code != cli.ExitFindings {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	elapsed := time.Since(start)
	io.Flush()
	lines := strings.Split(errOut.String(), "\r\x1b[K")
	drawn := 0
	for _, l := range lines {
		if strings.HasPrefix(l, "[") {
			drawn++
			if n := utf8.RuneCountInString(l); n > 39 {
				t.Errorf("a progress line of %d columns: %q", n, l)
			}
		}
	}
	// At most ten redraws a second (the first file is always drawn), each
	// with the count and a percentage; the end clears the line.
	if most := int(elapsed/(100*time.Millisecond)) + 1; drawn < 1 || drawn > most || !strings.Contains(errOut.String(), "%] ") ||
		!strings.HasSuffix(errOut.String(), "\r\x1b[K") && !strings.Contains(errOut.String(), "\r\x1b[Krocmdoctor:") {
		t.Errorf("%d progress lines in %v (at most %d), stderr %q", drawn, elapsed, most, errOut.String())
	}
	// --quiet draws none.
	errOut.Reset()
	root.Run(io, []string{"check", "--quiet", tree})
	io.Flush()
	if strings.Contains(errOut.String(), "\x1b[K") {
		t.Errorf("--quiet drew progress: %q", errOut.String())
	}
	if strings.Contains(out.String(), "\x1b[K") {
		t.Errorf("progress on stdout")
	}
	io, _, _, errBuf := cli.Test() // stderr not a terminal
	root.Run(io, []string{"check", tree})
	if strings.Contains(errBuf.String(), "\x1b[K") {
		t.Errorf("progress drawn on a pipe: %q", errBuf.String())
	}
}

// TestCheckFormatTableOnAPipe: --format table draws the table where stdout
// is not a terminal (it printed the plain lines), fitted to $COLUMNS when
// set, without colour unless asked for.
func TestCheckFormatTableOnAPipe(t *testing.T) {
	t.Setenv("COLUMNS", "")
	_, out, _ := run(t, "check", "--format", "table", tree)
	if !strings.Contains(out, "│ RD1001 │") || strings.Contains(out, "\x1b[") {
		t.Errorf("--format table on a pipe:\n%s", out)
	}
	widest := 0
	for _, l := range strings.Split(out, "\n") {
		widest = max(widest, utf8.RuneCountInString(l))
	}
	if widest < 200 {
		t.Errorf("without $COLUMNS the table was narrowed to %d", widest)
	}
	t.Setenv("COLUMNS", "120")
	_, out, _ = run(t, "check", "--format", "table", tree)
	for _, l := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(l); n > 120 {
			t.Fatalf("COLUMNS=120: a line of %d: %q", n, l)
		}
	}
}

// SARIF rules link their row in docs/rules.md (an anchor that exists), and
// every relative location names its base, SRCROOT, which the run maps to
// the scan root: joined, they name a file that exists.
func TestSARIFHelpURIsAndBase(t *testing.T) {
	_, out, _ := run(t, "check", "--format", "sarif", "--fail-on", "never", tree)
	var log struct {
		Runs []struct {
			Tool struct {
				Driver struct {
					Rules []struct{ ID, HelpURI string } `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Bases   map[string]struct{ URI string } `json:"originalUriBaseIds"`
			Results []struct {
				Locations []struct {
					Physical struct {
						Artifact struct{ URI, URIBaseID string } `json:"artifactLocation"`
					} `json:"physicalLocation"`
				} `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &log); err != nil || len(log.Runs) != 1 {
		t.Fatalf("%v\n%s", err, out)
	}
	doc, err := os.ReadFile("../../../docs/rules.md")
	if err != nil {
		t.Fatal(err)
	}
	r := log.Runs[0]
	for _, rule := range r.Tool.Driver.Rules {
		anchor := strings.ToLower(rule.ID)
		if rule.HelpURI != finding.RuleURL(rule.ID) || !strings.HasSuffix(rule.HelpURI, "#"+anchor) || !strings.Contains(string(doc), `<a id="`+anchor+`"></a>`+rule.ID+" |") {
			t.Errorf("%s: helpUri %q has no anchor in docs/rules.md", rule.ID, rule.HelpURI)
		}
	}
	abs, _ := filepath.Abs(tree)
	// (run shows the test data directory as $TESTDATA.)
	if got := r.Bases["SRCROOT"].URI; got != "file://"+abs+"/" && got != "file://$TESTDATA/checktree/" {
		t.Fatalf("SRCROOT = %q, want file://%s/", got, abs)
	}
	if len(r.Results) == 0 {
		t.Fatal("no results")
	}
	for _, res := range r.Results {
		a := res.Locations[0].Physical.Artifact
		if filepath.IsAbs(a.URI) {
			continue
		}
		file, _, _ := strings.Cut(a.URI, "!/") // a wheel member: the wheel
		if _, err := os.Stat(filepath.Join(abs, file)); a.URIBaseID != "SRCROOT" || err != nil {
			t.Errorf("%q: base %q, %v", a.URI, a.URIBaseID, err)
		}
	}
}

// JUnit: one test case per finding, grouped by file through the
// classname, with one failure each; valid against the Ant/Jenkins format's
// schema (lxml; the report had several <failure> in one case); counts
// agree with the cases.
func TestJUnitOneFailurePerCase(t *testing.T) {
	_, out, _ := run(t, "check", "--format", "junit", tree)
	var suites check.JUnitSuites
	if err := xml.Unmarshal([]byte(out), &suites); err != nil {
		t.Fatal(err)
	}
	s := suites.Suites[0]
	failures, perFile := 0, map[string]int{}
	for _, c := range s.Cases {
		if c.Failure != nil {
			failures++
			perFile[c.Classname]++
		}
	}
	if failures != s.Failures || len(s.Cases) != s.Tests || failures < 30 {
		t.Errorf("%d failing cases, suite says %d; %d cases, suite says %d", failures, s.Failures, len(s.Cases), s.Tests)
	}
	if n := perFile["lib/libundef.so"] + perFile[tree+"/lib/libundef.so"]; n == 0 {
		t.Errorf("no case for lib/libundef.so's findings: %v", perFile)
	}
	py := testenv.Python(t, "lxml", "python3-lxml")
	f := filepath.Join(t.TempDir(), "report.xml")
	os.WriteFile(f, []byte(out), 0o644)
	script := `import sys
from lxml import etree
schema = etree.XMLSchema(etree.parse(sys.argv[1]))
doc = etree.parse(sys.argv[2])
schema.assertValid(doc)`
	if o, err := exec.Command(py, "-c", script, "../../../testdata/junit/ant-junit.xsd", f).CombinedOutput(); err != nil {
		t.Errorf("the JUnit report does not validate: %v\n%s", err, o)
	}
	// The schema is not a formality: two failures in one case fail it.
	bad := strings.Replace(out, "</failure>", "</failure>\n      <failure message=\"x\" type=\"y\">z</failure>", 1)
	os.WriteFile(f, []byte(bad), 0o644)
	if o, err := exec.Command(py, "-c", script, "../../../testdata/junit/ant-junit.xsd", f).CombinedOutput(); err == nil {
		t.Errorf("two failures in one case validate:\n%s", o)
	}
}

// --for names a program outside the scan: libpccore's missing libpcshared
// is an RD1012 note naming it; a --for that is no program is exit 1.
func TestCheckFor(t *testing.T) {
	code, out, _ := run(t, "check", "--format", "plain", "--fail-on", "never", tree+"/lib/pc")
	if code != 0 || !strings.Contains(out, "RD1004\terror\tlibpccore.so") {
		t.Fatalf("without --for: %d\n%s", code, out)
	}
	code, out, _ = run(t, "check", "--format", "plain", "--fail-on", "never", "--for", tree+"/bin/pcapp", tree+"/lib/pc")
	if code != 0 || !strings.Contains(out, "RD1012\tnote\tlibpccore.so") || strings.Contains(out, "pcapp\t") {
		t.Fatalf("with --for: %d\n%s", code, out)
	}
	code, _, errOut := run(t, "check", "--for", tree+"/lib/pc/libpcshared.so", tree+"/lib/pc")
	if code != 1 || !strings.Contains(errOut, "--for "+tree+"/lib/pc/libpcshared.so: not a dynamically linked program") {
		t.Fatalf("a library as --for: %d %s", code, errOut)
	}
}

// --python binds a Python extension in the interpreter: the fixture's
// _native.abi3.so takes PyLong_FromLong from it, and its RD1006 note is
// gone; without one, the note stays.
func TestCheckPython(t *testing.T) {
	py := testenv.File(t, "/usr/bin/python3.11", "python3.11")
	ext := tree + "/lib/_native.abi3.so"
	_, out, _ := run(t, "check", "--format", "plain", "--fail-on", "never", "--python", "", ext)
	if !strings.Contains(out, "RD1006\tnote") || !strings.Contains(out, "PyLong_FromLong") {
		t.Fatalf("without an interpreter:\n%s", out)
	}
	_, out, _ = run(t, "check", "--format", "plain", "--fail-on", "never", "--python", py, ext)
	if strings.Contains(out, "PyLong_FromLong") {
		t.Fatalf("bound in %s:\n%s", py, out)
	}
}
