package main

import (
	"archive/zip"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rocmdoctor/rocmdoctor/internal/record"
	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
	"github.com/rocmdoctor/rocmdoctor/patchelf"
)

// The test binary is rocmdoctor itself when this is set (main, with its
// signal handling).
const asMain = "ROCMDOCTOR_TEST_AS_MAIN"

// rocmdoctorCmd runs this test binary as rocmdoctor with args (no
// argument may hold a space) and env added to the environment.
func rocmdoctorCmd(args []string, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(append(os.Environ(), asMain+"=1", "ROCMDOCTOR_TEST_ARGS="+strings.Join(args, " ")), env...)
	return cmd
}

func TestMain(m *testing.M) {
	if os.Getenv(asMain) == "1" {
		// The arguments come from the environment (or, when it has none,
		// the command line, as for a link named patchelf).
		if args := strings.Fields(os.Getenv("ROCMDOCTOR_TEST_ARGS")); len(args) > 0 {
			os.Args = append(os.Args[:1], args...)
		}
		main()
	}
	os.Exit(m.Run())
}

// A growing edit of Debian's libLLVM-15 (117 MB), replacing the file and
// in place, is interrupted at random moments by SIGKILL, SIGTERM and
// SIGINT. Afterwards (for SIGKILL, once the next run has rolled back what
// the killed one left) the file is the original or the complete edit, and
// nothing else is left: no temporary, no journal.
func TestInterruptedEditsLeaveOriginalOrEdit(t *testing.T) {
	lib := testenv.File(t, "/usr/lib/x86_64-linux-gnu/libLLVM-15.so.1", "libllvm15")
	py := testenv.Python(t, "ctypes", "python3")
	dir, state := t.TempDir(), t.TempDir()
	target := filepath.Join(dir, "libLLVM-15.so.1")
	orig, err := os.ReadFile(lib)
	if err != nil {
		t.Fatal(err)
	}
	put := func() {
		t.Helper()
		if err := os.WriteFile(target, orig, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rocmdoctor := func(args ...string) *exec.Cmd { return rocmdoctorCmd(args, "XDG_STATE_HOME="+state) }
	edit := []string{"patchelf", "--set-rpath", "/opt/rocm-6.2.2/lib:" + strings.Repeat("/grow", 100)}
	var ref []byte
	full := map[string]time.Duration{}
	for _, mode := range []string{"replace", "in-place"} {
		// Timed twice, the faster kept: a first run with a cold cache
		// stretched the delays past the edit, and every interruption
		// then found it done.
		for range 2 {
			put()
			start := time.Now()
			if out, err := rocmdoctor(append(modeArgs(edit, mode), target)...).CombinedOutput(); err != nil {
				t.Fatalf("the edit: %v\n%s", err, out)
			}
			if d := time.Since(start); full[mode] == 0 || d < full[mode] {
				full[mode] = d
			}
		}
		got, _ := os.ReadFile(target)
		if ref != nil && !bytes.Equal(got, ref) {
			t.Fatalf("the in-place edit differs from the replacing one")
		}
		ref = got
	}
	if len(ref) <= len(orig) {
		t.Fatalf("the edit did not grow the file")
	}
	if out, err := exec.Command(py, "-c", "import ctypes, sys; ctypes.CDLL(sys.argv[1])", target).CombinedOutput(); err != nil {
		t.Fatalf("the real loader does not load the edited library: %v\n%s", err, out)
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 46))
	outcomes := map[string]int{}
	for _, mode := range []string{"replace", "in-place"} {
		args := modeArgs(edit, mode)
		for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM, syscall.SIGINT} {
			for i := range 8 {
				put()
				cmd := rocmdoctor(append(args, target)...)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				delay := time.Duration(rng.Int64N(int64(full[mode]) * 5 / 4))
				time.Sleep(delay)
				cmd.Process.Signal(sig)
				werr := cmd.Wait()
				what := fmt.Sprintf("%s, %v after %v (run %d, %v)", mode, sig, delay, i, werr)
				// Killed between the writes, the file is neither: the next
				// run must roll it back (patchelf/inplace_test.go tests
				// which of those states the loader loads).
				mid, _ := os.ReadFile(target)
				torn := !bytes.Equal(mid, orig) && !bytes.Equal(mid, ref)
				if torn {
					outcomes["interrupted between writes"]++
				}
				if sig == syscall.SIGKILL {
					out, err := rocmdoctor("patchelf", "--print-soname", target).CombinedOutput()
					if err != nil {
						t.Fatalf("%s: the next run: %v\n%s", what, err, out)
					}
					if bytes.Contains(out, []byte("restored")) {
						outcomes["rolled back by the next run"]++
					} else if torn {
						t.Errorf("%s: the next run did not roll back the torn file:\n%s", what, out)
					}
				} else if torn {
					t.Errorf("%s: a signal the program handles left a torn file", what)
				} else if werr != nil && sig == syscall.SIGINT && !strings.Contains(stderr.String(), "interrupt") && stderr.Len() > 0 {
					t.Errorf("%s: %s", what, stderr.String())
				}
				got, _ := os.ReadFile(target)
				switch {
				case bytes.Equal(got, orig):
					outcomes["original"]++
				case bytes.Equal(got, ref):
					outcomes["edited"]++
				default:
					t.Fatalf("%s: the file is neither the original nor the edit (%d bytes)\n%s", what, len(got), stderr.String())
				}
				if n, _ := os.ReadDir(dir); len(n) != 1 {
					t.Errorf("%s: left %d entries beside the library", what, len(n)-1)
				}
				if j, _ := filepath.Glob(filepath.Join(state, "rocmdoctor", "*")); len(j) != 0 {
					t.Errorf("%s: left %v", what, j)
				}
			}
		}
	}
	t.Logf("full edit %v; outcomes %v", full, outcomes)
	if outcomes["original"] == 0 || outcomes["edited"] == 0 {
		t.Errorf("every interruption had the same outcome (%v): the delays do not span the edit", outcomes)
	}
}

func modeArgs(edit []string, mode string) []string {
	if mode == "in-place" {
		return append([]string{edit[0], "--in-place"}, edit[1:]...)
	}
	return edit
}

// gpus, check and wheel relink on a wheel holding libLLVM-15 (extracted
// to a temporary file to be read, staged to be bound), interrupted at
// random moments: nothing is left in $TMPDIR or the output directory — for
// SIGKILL of check or relink once the next run has removed the work
// directory the killed one left, and said so.
func TestInterruptedWheelRunsLeaveNothing(t *testing.T) {
	lib := testenv.File(t, "/usr/lib/x86_64-linux-gnu/libLLVM-15.so.1", "libllvm15")
	dir := t.TempDir()
	whl := filepath.Join(dir, "llvm-1.0-cp311-cp311-linux_x86_64.whl")
	writeStoredWheel(t, whl, lib)
	tmp, out := filepath.Join(dir, "tmp"), filepath.Join(dir, "out")
	os.Mkdir(tmp, 0o755)
	rocmdoctor := func(args ...string) *exec.Cmd { return rocmdoctorCmd(args, "TMPDIR="+tmp) }
	relink := []string{"wheel", "relink", "--lib-dir", "/usr/lib/x86_64-linux-gnu", "-o", out, whl}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 47))
	swept := 0
	for _, args := range [][]string{{"gpus", whl}, {"check", whl}, relink} {
		start := time.Now()
		if o, err := rocmdoctor(args...).CombinedOutput(); err != nil && args[0] == "wheel" {
			t.Fatalf("%v: %v\n%s", args, err, o)
		}
		full := time.Since(start)
		for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM, syscall.SIGINT} {
			for i := range 4 {
				os.RemoveAll(out)
				cmd := rocmdoctor(args...)
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				delay := time.Duration(rng.Int64N(int64(full)))
				time.Sleep(delay)
				cmd.Process.Signal(sig)
				cmd.Wait()
				what := fmt.Sprintf("%s, %v after %v (run %d)", args[0], sig, delay, i)
				// A killed relink leaves its work directory, and a killed
				// check the directory it stages the wheel's libraries in
				// to bind them: the next run removes it, and says so.
				if sig == syscall.SIGKILL && args[0] != "gpus" {
					next := relink
					if args[0] == "check" {
						next = args
					}
					o, err := rocmdoctor(next...).CombinedOutput()
					if err != nil && args[0] == "wheel" {
						t.Fatalf("%s: the next relink: %v\n%s", what, err, o)
					}
					if bytes.Contains(o, []byte("left by a run that was killed")) {
						swept++
					}
				}
				if left, _ := os.ReadDir(tmp); len(left) != 0 {
					t.Errorf("%s: left %s in $TMPDIR", what, left[0].Name())
					os.RemoveAll(tmp)
					os.Mkdir(tmp, 0o755)
				}
				if left, _ := os.ReadDir(out); len(left) > 1 || len(left) == 1 && left[0].Name() != filepath.Base(whl) {
					t.Errorf("%s: left %v in the output directory", what, left)
				}
			}
		}
	}
	t.Logf("work directories of killed checks and relinks removed by the next run: %d", swept)
}

// writeStoredWheel writes a wheel whose extension module is lib, stored.
func writeStoredWheel(t *testing.T, whl, lib string) {
	t.Helper()
	b, err := os.ReadFile(lib)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(whl)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zw := zip.NewWriter(f)
	files := []struct {
		name string
		data []byte
	}{
		{"llvm/__init__.py", nil},
		{"llvm/_llvm.cpython-311-x86_64-linux-gnu.so", b},
		{"llvm-1.0.dist-info/METADATA", []byte("Metadata-Version: 2.1\nName: llvm\nVersion: 1.0\n")},
		{"llvm-1.0.dist-info/WHEEL", []byte("Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp311-cp311-linux_x86_64\n")},
	}
	var rec strings.Builder
	for _, fl := range files {
		w, _ := zw.CreateHeader(&zip.FileHeader{Name: fl.name, Method: zip.Store})
		w.Write(fl.data)
		rec.WriteString(record.Line(fl.name, record.Hash(fl.data), int64(len(fl.data))) + "\n")
	}
	rec.WriteString("llvm-1.0.dist-info/RECORD,,\n")
	w, _ := zw.Create("llvm-1.0.dist-info/RECORD")
	w.Write([]byte(rec.String()))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
}

// Under --root, deps, symbols, unwind and check open and stat nothing of
// this machine's for the input: every path the process touches (recorded
// by strace) lies inside the root, or is the root's own ancestors, the
// process's own loading (its loader cache and libraries, /proc, /sys) or
// check's configuration files. A decoy library lies where a relative
// NEEDED entry leads from the working directory and where a RUNPATH's
// '..' leads when cleaned as a string: it is never touched.
func TestSysrootReadsNothingOutside(t *testing.T) {
	strace := testenv.Tool(t, "strace", "strace")
	gcc := testenv.Tool(t, "gcc", "gcc")
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	decoyDir := filepath.Join(dir, "decoy")
	os.MkdirAll(filepath.Join(root, "opt/app/lib"), 0o755)
	os.MkdirAll(decoyDir, 0o755)
	cc := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
			t.Fatalf("gcc %v: %v\n%s", args, err, out)
		}
	}
	src := filepath.Join(dir, "d.c")
	os.WriteFile(src, []byte("int decoy(void){return 1;}\n"), 0o644)
	decoy := filepath.Join(decoyDir, "libdecoy.so")
	cc("-shared", "-fPIC", "-o", decoy, src, "-Wl,-soname,libdecoy.so")
	main := filepath.Join(dir, "m.c")
	os.WriteFile(main, []byte("int main(void){return 0;}\n"), 0o644)
	app := filepath.Join(root, "opt/app/app")
	climb := "$ORIGIN/" + strings.Repeat("../", 16) + strings.TrimPrefix(decoyDir, "/")
	cc("-o", app, main, "-Wl,--no-as-needed", decoy, "-Wl,--enable-new-dtags,-rpath,"+climb)
	// From the working directory (dir/work), "../decoy/libdecoy.so" is the decoy.
	work := filepath.Join(dir, "work")
	os.Mkdir(work, 0o755)
	rel := "../decoy/libdecoy.so"
	if out, err := rocmdoctorCmd([]string{"patchelf", "--replace-needed", "libdecoy.so", rel, app}).CombinedOutput(); err != nil {
		t.Fatalf("patchelf: %v\n%s", err, out)
	}
	// What the binary's own loading reads.
	own := map[string]bool{"/etc/ld.so.cache": true, "/etc/ld.so.preload": true, os.Args[0]: true}
	if out, err := exec.Command("ldd", os.Args[0]).Output(); err == nil {
		for _, f := range strings.Fields(string(out)) {
			if strings.HasPrefix(f, "/") {
				own[f] = true
				if real, err := filepath.EvalSymlinks(f); err == nil {
					own[real] = true
				}
			}
		}
	}
	allowed := func(p string) bool {
		if !filepath.IsAbs(p) {
			p = filepath.Join(work, p)
		}
		c := filepath.Clean(p)
		switch {
		case own[p], own[c], c == "/", strings.HasPrefix(c, "/proc/"), strings.HasPrefix(c, "/sys/"):
			return true
		case c == work:
			return true // os.Getwd
		case strings.HasPrefix(strings.TrimPrefix(p, root), "/") && strings.HasPrefix(p, root):
			// Inside the root as a string; whatever '..' follows is
			// resolved inside it (RealInRoot), as the kernel would in a
			// chroot: the decoy check below catches a lookup that is not.
			return !strings.HasPrefix(c, decoyDir)
		case strings.HasPrefix(root, c+"/"), c == root:
			return true // the root's own ancestors
		case strings.HasPrefix(filepath.Base(c), ".rocmdoctor."):
			return true // check's configuration, found from the working directory
		}
		return false
	}
	quoted := regexp.MustCompile(`"((?:[^"\\]|\\.)*)"`)
	for _, args := range [][]string{
		{"deps", "--root", root, "/opt/app/app"},
		{"symbols", "--root", root, "/opt/app/app"},
		{"unwind", "--root", root, "/opt/app/app"},
		{"check", "--root", root, "--fail-on", "never", root},
	} {
		t.Run(args[0], func(t *testing.T) {
			log := filepath.Join(dir, args[0]+".strace")
			cmd := exec.Command(strace, "-f", "-e", "trace=%file", "-o", log, os.Args[0])
			cmd.Dir = work
			cmd.Env = append(os.Environ(), asMain+"=1", "ROCMDOCTOR_TEST_ARGS="+strings.Join(args, " "), "PWD="+work)
			out, _ := cmd.CombinedOutput()
			b, err := os.ReadFile(log)
			if err != nil {
				t.Fatalf("strace wrote no log: %v\n%s", err, out)
			}
			touched := 0
			for _, line := range strings.Split(string(b), "\n") {
				if strings.Contains(line, "execve(") {
					continue
				}
				for _, m := range quoted.FindAllStringSubmatch(line, -1) {
					p := m[1]
					if p == "" || !strings.Contains(p, "/") && !strings.HasPrefix(p, ".") {
						continue
					}
					touched++
					if strings.Contains(filepath.Clean(filepath.Join(work, p)), decoyDir) && !strings.HasPrefix(p, root) || !allowed(p) {
						t.Errorf("touched %s: %s", p, strings.TrimSpace(line))
					}
				}
			}
			if touched < 5 {
				t.Errorf("strace recorded only %d paths: %s", touched, out)
			}
		})
	}
}

// Names read from a file (SONAME, RUNPATH, NEEDED) that carry terminal
// escapes and newlines are printed escaped: no command's output holds a
// raw ESC, BEL or a line the file made up.
func TestHostileNamesPrintEscaped(t *testing.T) {
	lib := filepath.Join(t.TempDir(), "libhostile.so")
	src, _ := os.ReadFile(testenv.Testdata("libfoo.so.1"))
	os.WriteFile(lib, src, 0o755)
	edits := []patchelf.Edit{
		{Kind: patchelf.KindSetSoname, Arg: "libx.so\x1b]0;owned\x07\nRD1001\terror\tfake"},
		{Kind: patchelf.KindSetRPath, Arg: "/opt/\x1b[2Jrocm/lib"},
		{Kind: patchelf.KindAddNeeded, Arg: "libgone\x1b[8m.so\r"},
	}
	if _, err := patchelf.EditFile(lib, edits, patchelf.Options{}, patchelf.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"inspect", lib},
		{"deps", lib},
		{"deps", "--flat", lib},
		{"check", "--fail-on", "never", lib},
		{"symbols", lib},
	} {
		out, _ := rocmdoctorCmd(args).CombinedOutput()
		if bytes.ContainsAny(out, "\x1b\x07\r") {
			t.Errorf("%v printed a raw control character:\n%q", args, out)
		}
		if bytes.Contains(out, []byte("\nRD1001\terror\tfake")) {
			t.Errorf("%v printed the SONAME's made-up line:\n%s", args, out)
		}
		if args[0] != "symbols" && !bytes.Contains(out, []byte(`\x1b`)) {
			t.Errorf("%v does not show the escapes:\n%s", args, out)
		}
	}
}
