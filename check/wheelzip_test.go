package check_test

import (
	"archive/zip"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/check"
	"github.com/rocmdoctor/rocmdoctor/gpu"
	"github.com/rocmdoctor/rocmdoctor/internal/record"
	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
)

// A wheel whose extension module's local header is damaged (an
// extra-field length of 0xffff, the member near the end of the file) is
// an error naming the member in check and gpus, walked or named; they
// passed over the member as if it were empty.
func TestWheelDamagedLocalHeader(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "pkg-1.0-cp311-cp311-linux_x86_64.whl")
	lib, _ := os.ReadFile(testenv.Testdata("libgpu.so"))
	members := [][2]string{{"pkg/__init__.py", ""}, {"pkg/_ext.so", string(lib)}}
	recordWheel(t, p, members, "pkg-1.0.dist-info/RECORD", testenv.RecordOf(members, "pkg-1.0.dist-info/RECORD"))
	b, _ := os.ReadFile(p)
	i := strings.Index(string(b), "PK\x03\x04\x14\x00\x08\x00\x08\x00")
	for ; i >= 0; i++ {
		if string(b[i:i+4]) == "PK\x03\x04" && string(b[i+30:i+30+len("pkg/_ext.so")]) == "pkg/_ext.so" {
			break
		}
	}
	binary.LittleEndian.PutUint16(b[i+28:], 0xffff)
	os.WriteFile(p, b, 0o644)
	want := p + "!/pkg/_ext.so: zip: not a valid zip file: its data"
	for _, path := range []string{p, dir} {
		rep, err := check.Run(context.Background(), []string{path}, check.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0].Error, want) {
			t.Errorf("check %s: errors %+v, want one saying %q", path, rep.Errors, want)
		}
		g, err := gpu.Check(context.Background(), []string{path}, gpu.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(g.Errors) != 1 || !strings.Contains(g.Errors[0].Error, want) {
			t.Errorf("gpus %s: errors %+v, want one saying %q", path, g.Errors, want)
		}
	}
}

// RD1502: member names pip refuses to install (errors) or installs as
// something else (warnings); pip in a venv is the oracle for each.
func TestWheelMemberNames(t *testing.T) {
	cases := []struct {
		name     string
		header   zip.FileHeader
		severity string
		// pipFails: pip install fails saying this; else installed: the
		// file pip makes for the member, relative to site-packages.
		pipFails, installed string
	}{
		{"dot-dot", zip.FileHeader{Name: "pkg/../../evil.py"}, "error", "trying to install outside the target directory", ""},
		{"absolute", zip.FileHeader{Name: "/tmp/evil.py"}, "error", "trying to install outside the target directory", ""},
		{"backslash", zip.FileHeader{Name: `pkg\mod.py`}, "warning", "", `pkg\mod.py`},
		{"symbolic link", zip.FileHeader{Name: "pkg/libx.so", CreatorVersion: 3 << 8, ExternalAttrs: 0o120777 << 16}, "warning", "", "pkg/libx.so"},
		{"dot-dot inside", zip.FileHeader{Name: "pkg/sub/../ok.py"}, "", "", "pkg/ok.py"},
	}
	var venv string
	venvDir := t.TempDir()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "pkg-1.0-py3-none-any.whl")
			nameWheel(t, p, c.header)
			rep, err := check.Run(context.Background(), []string{p}, check.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range rep.Findings {
				got = append(got, f.ID+" "+string(f.Severity)+" "+f.File)
			}
			want := []string{}
			if c.severity != "" {
				want = []string{"RD1502 " + c.severity + " " + p + "!/" + c.header.Name}
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("findings %q, want %q", got, want)
			}
			// The oracle.
			if venv == "" {
				venv = filepath.Join(venvDir, "venv")
				py := testenv.Python(t, "venv", "python3-venv")
				if out, err := exec.Command(py, "-m", "venv", venv).CombinedOutput(); err != nil {
					testenv.Missing(t, "python3 venv ("+strings.TrimSpace(string(out))+")", "apt-get install python3-venv")
				}
			}
			out, err := exec.Command(filepath.Join(venv, "bin", "pip"), "install", "--no-index", "--force-reinstall", "--disable-pip-version-check", p).CombinedOutput()
			if c.pipFails != "" {
				if err == nil || !strings.Contains(string(out), c.pipFails) {
					t.Errorf("pip install: %v, want a failure saying %q\n%s", err, c.pipFails, out)
				}
				return
			}
			if err != nil {
				t.Fatalf("pip install: %v\n%s", err, out)
			}
			site, _ := filepath.Glob(filepath.Join(venv, "lib", "python3*", "site-packages"))
			st, err := os.Lstat(filepath.Join(site[0], c.installed))
			if err != nil || !st.Mode().IsRegular() {
				t.Errorf("pip did not install %s as a regular file: %v", c.installed, err)
			}
			exec.Command(filepath.Join(venv, "bin", "pip"), "uninstall", "-y", "pkg").Run()
		})
	}
}

// nameWheel writes a pure wheel with one member for h (holding "x",
// listed in RECORD) besides its metadata.
func nameWheel(t *testing.T, p string, h zip.FileHeader) {
	t.Helper()
	members := [][2]string{
		{"pkg/__init__.py", ""},
		{"pkg-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n"},
		{"pkg-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
	}
	rec := testenv.RecordOf(members, "pkg-1.0.dist-info/RECORD")
	rec = record.Line(h.Name, record.Hash([]byte("x")), 1) + "\n" + rec
	fh, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	zw := zip.NewWriter(fh)
	w, err := zw.CreateHeader(&h)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("x"))
	for _, m := range members {
		w, _ := zw.Create(m[0])
		w.Write([]byte(m[1]))
	}
	w, _ = zw.Create("pkg-1.0.dist-info/RECORD")
	w.Write([]byte(rec))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
}

// A RECORD bomb: 20 MiB of short lines, deflated, is refused from its
// declared size; 2 MiB of them (listing files the wheel does not have) is
// read with bounded memory and reported in 101 findings, not 260,000.
func TestWheelRecordBomb(t *testing.T) {
	for _, c := range []struct {
		name  string
		lines int
		want  string
	}{
		{"declared too large", 20 << 20 / 8, "more than rocmdoctor reads for a RECORD"},
		{"many made-up lines", 2 << 20 / 8, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "pkg-1.0-py3-none-any.whl")
			members := [][2]string{{"pkg/__init__.py", ""}}
			var b strings.Builder
			b.WriteString(testenv.RecordOf(members, "pkg-1.0.dist-info/RECORD"))
			for i := 0; b.Len() < c.lines*8; i++ {
				fmt.Fprintf(&b, "x/%d,,\n", i)
			}
			rec := b.String()
			recordWheel(t, p, members, "pkg-1.0.dist-info/RECORD", rec)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			rep, err := check.Run(context.Background(), []string{p}, check.Options{})
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			if got := after.TotalAlloc - before.TotalAlloc; got > 512<<20 {
				t.Errorf("checking it allocated %d MiB", got>>20)
			}
			if c.want != "" {
				if len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0].Error, c.want) {
					t.Errorf("errors %+v, want %q", rep.Errors, c.want)
				}
				return
			}
			rest := 0
			for _, f := range rep.Findings {
				if strings.Contains(f.Message, "more files the wheel does not have") {
					rest++
				}
			}
			if len(rep.Findings) != 101 || rest != 1 {
				t.Errorf("%d findings (%d for the rest), want 100 and one for the rest", len(rep.Findings), rest)
			}
		})
	}
}
