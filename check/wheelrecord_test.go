package check_test

import (
	"archive/zip"
	"context"
	"crypto/sha512"
	"encoding/base64"
	"hash/crc32"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/check"
	"github.com/rocmdoctor/rocmdoctor/finding"
	"github.com/rocmdoctor/rocmdoctor/internal/record"
	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
)

// recordWheel writes a wheel at path holding members (name, content) in
// order, with a RECORD member rec when rec is not "-" (RECORD's own member
// name is given by the caller, so that a test can misplace it).
func recordWheel(t *testing.T, path string, members [][2]string, recName, rec string) {
	t.Helper()
	fh, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	zw := zip.NewWriter(fh)
	for _, m := range members {
		method := zip.Deflate
		if strings.HasSuffix(m[0], "/") {
			method = zip.Store
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: m[0], Method: method})
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(m[1]))
	}
	if rec != "-" {
		w, _ := zw.Create(recName)
		w.Write([]byte(rec))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
}

// recordCase is a wheel and the RD1501 findings check has for it.
type recordCase struct {
	name, file   string // file: the wheel's name ("" for the usual one)
	members      [][2]string
	recName, rec string
	want         []string // "severity member-or-wheel: words", sorted
}

// recordCases are TestCheckWheelRecord's wheels.
func recordCases(t *testing.T) []recordCase {
	lib, err := os.ReadFile(testenv.Testdata("libfoo.so.1"))
	if err != nil {
		t.Fatal(err)
	}
	co, err := os.ReadFile(testenv.Testdata("k-gfx90a_xnackoff.co"))
	if err != nil {
		t.Fatal(err)
	}
	const rec = "pkg-1.0.dist-info/RECORD"
	base := [][2]string{
		{"pkg/", ""},
		{"pkg/__init__.py", "from .core import *\n"},
		{"pkg/core.py", strings.Repeat("# the pure-Python part of the package\n", 8)},
		{"pkg/libfoo.so.1", string(lib)},
		{"pkg/lib/library/Kernels.so-000-gfx90a.hsaco", string(co)},
		{"pkg-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n"},
	}
	// with returns base with member name's content replaced (or, when
	// name is new, added).
	with := func(name, content string) [][2]string {
		out := slices.Clone(base)
		for i := range out {
			if out[i][0] == name {
				out[i][1] = content
				return out
			}
		}
		return append(out, [2]string{name, content})
	}
	flip := func(s string, at int) string { b := []byte(s); b[at] ^= 1; return string(b) }
	good := testenv.RecordOf(base, rec)
	sha512Line := func(name, data string) string {
		sum := sha512.Sum512([]byte(data))
		return name + ",sha512=" + base64.RawURLEncoding.EncodeToString(sum[:]) + "," + strconv.Itoa(len(data))
	}
	replaceLine := func(name, line string) string {
		var out []string
		for _, l := range strings.Split(strings.TrimSuffix(good, "\n"), "\n") {
			if strings.HasPrefix(l, name+",") {
				if line == "" {
					continue
				}
				l = line
			}
			out = append(out, l)
		}
		return strings.Join(out, "\n") + "\n"
	}
	return []recordCase{
		{"a correct wheel", "", base, rec, good, nil},
		{"sha512, and the signatures unlisted", "", append(with("pkg-1.0.dist-info/RECORD.jws", "{}"), [2]string{"pkg-1.0.dist-info/RECORD.p7s", "x"}), rec,
			replaceLine("pkg/core.py", sha512Line("pkg/core.py", base[2][1])), nil},
		{"a library patched after RECORD was written", "", with("pkg/libfoo.so.1", string(lib)+strings.Repeat("\x00", 16)), rec, good,
			[]string{"error pkg/libfoo.so.1: it is " + strconv.Itoa(len(lib)+16) + " bytes, RECORD says " + strconv.Itoa(len(lib))}},
		{"a library changed at the same size", "", with("pkg/libfoo.so.1", flip(string(lib), len(lib)-9)), rec, good,
			[]string{"error pkg/libfoo.so.1: its sha256 is"}},
		{"a short member changed", "", with("pkg/__init__.py", flip(base[1][1], 3)), rec, good,
			[]string{"error pkg/__init__.py: its sha256 is"}},
		{"a text member changed", "", with("pkg/core.py", flip(base[2][1], 100)), rec, good,
			[]string{"error pkg/core.py: its sha256 is"}},
		{"a device code object changed", "", with("pkg/lib/library/Kernels.so-000-gfx90a.hsaco", flip(string(co), len(co)-1)), rec, good,
			[]string{"error pkg/lib/library/Kernels.so-000-gfx90a.hsaco: its sha256 is"}},
		{"a member RECORD does not list", "", with("pkg/extra.py", "x = 1\n"), rec, good,
			[]string{"error pkg/extra.py: pkg/extra.py is not listed in " + rec}},
		{"a member listed without a hash", "", base, rec, replaceLine("pkg/core.py", "pkg/core.py,,"),
			[]string{"error pkg/core.py: pkg/core.py has no hash in RECORD"}},
		{"md5", "", base, rec, replaceLine("pkg/core.py", "pkg/core.py,md5=1B2M2Y8AsgTpgAmY7PhCfg,304"),
			[]string{"error pkg/core.py: pkg/core.py is hashed with md5 in RECORD, which wheels may not use"}},
		{"an algorithm rocmdoctor does not compute", "", base, rec, replaceLine("pkg/core.py", "pkg/core.py,blake2b=AAAA,304"),
			[]string{"warning pkg/core.py: pkg/core.py is hashed with \"blake2b\""}},
		{"a digest that is not base64", "", base, rec, replaceLine("pkg/core.py", "pkg/core.py,sha256=!!,304"),
			[]string{"error pkg/core.py: pkg/core.py has a malformed sha256 digest"}},
		{"a padded digest", "", base, rec, replaceLine("pkg/core.py", "pkg/core.py,"+record.Hash([]byte(base[2][1]))+"=,304"),
			[]string{"error pkg/core.py: pkg/core.py has a sha256 digest padded with '='"}},
		{"a size that is not a number", "", base, rec, replaceLine("pkg/core.py", "pkg/core.py,"+record.Hash([]byte(base[2][1]))+",big"),
			[]string{"error pkg/core.py: RECORD gives its size as \"big\""}},
		{"a file RECORD lists that is not there", "", base, rec, good + "pkg/gone.py,sha256=abc,3\n",
			[]string{"warning pkg/gone.py: " + rec + " lists pkg/gone.py, which the wheel does not have"}},
		{"no RECORD", "", base, rec, "-",
			[]string{"error WHEEL: the wheel has no " + rec}},
		{"RECORD in the wrong directory", "", base, "pkg/RECORD", good,
			[]string{"error WHEEL: the wheel has no " + rec}},
		{"no .dist-info", "", base[:5], "RECORD", testenv.RecordOf(base[:5], "RECORD"),
			[]string{"error WHEEL: the wheel has no .dist-info directory"}},
		{"two .dist-info directories, one the file name's", "", append(with("other-2.0.dist-info/METADATA", "Name: other\n"), [2]string{"pkg/extra.py", "x\n"}), rec,
			testenv.RecordOf(with("other-2.0.dist-info/METADATA", "Name: other\n"), rec),
			[]string{"error WHEEL: the wheel has 2 .dist-info directories (other-2.0.dist-info, pkg-1.0.dist-info)", "error pkg/extra.py: pkg/extra.py is not listed"}},
		{"one .dist-info, not the file name's", "Pkg-1.0-py3-none-any.whl", base, rec, good, nil},
	}
}

// TestCheckWheelRecord: check verifies a wheel's members against its
// RECORD as installers that follow PEP 427 do. Each case fails when the
// comparison it needs is missing: a library changed after RECORD was
// written (the vendor-wheel case: patchelf on an unpacked wheel, zipped again),
// in memory or through a temporary file; content changed at the same size
// in a short member, a text file and a device code object (none of which
// check otherwise reads whole); members RECORD does not list or lists
// without a usable hash; what RECORD lists that is not there; no RECORD,
// no .dist-info, two of them.
func TestCheckWheelRecord(t *testing.T) {
	for _, c := range recordCases(t) {
		t.Run(c.name, func(t *testing.T) {
			file := c.file
			if file == "" {
				file = "pkg-1.0-py3-none-linux_x86_64.whl"
			}
			p := filepath.Join(t.TempDir(), file)
			recordWheel(t, p, c.members, c.recName, c.rec)
			// The library read into memory, and through a temporary
			// file: the same findings.
			for _, limit := range []uint64{32 << 20, 0} {
				rep := checkMembersIn(t, p, limit)
				if len(rep.Errors) != 0 {
					t.Fatalf("errors %+v", rep.Errors)
				}
				var got []string
				for _, f := range rep.Findings {
					if f.ID != "RD1501" {
						continue
					}
					where := strings.TrimPrefix(f.File, p+"!/")
					if f.File == p {
						where = "WHEEL"
					}
					got = append(got, string(f.Severity)+" "+where+": "+f.Message)
					if f.Fix == "" || f.Rule != finding.RuleWheelRecord {
						t.Errorf("finding %+v", f)
					}
				}
				slices.Sort(got)
				ok := len(got) == len(c.want)
				for i := 0; ok && i < len(got); i++ {
					head, words, _ := strings.Cut(c.want[i], ": ")
					ok = strings.HasPrefix(got[i], head+": ") && strings.Contains(got[i], words)
				}
				if !ok {
					t.Errorf("in-memory limit %d: RD1501 findings\n%s\nwant\n%s", limit, strings.Join(got, "\n"), strings.Join(c.want, "\n"))
				}
			}
		})
	}
}

// pythonWheel finds a python3 that has the wheel package (Debian's
// python3-wheel), whose WheelFile checks every member it reads against
// RECORD, as `wheel unpack` does.
func pythonWheel(t *testing.T) string { return testenv.Python(t, "wheel.wheelfile", "python3-wheel") }

// TestWheelRecordAgreesWithWheelUnpack: over TestCheckWheelRecord's wheels,
// check fails (an RD1501 error) exactly those `python -m wheel unpack`
// refuses, but where the two knowingly differ.
func TestWheelRecordAgreesWithWheelUnpack(t *testing.T) {
	py := pythonWheel(t)
	differs := map[string]string{
		// wheel reads no sizes; installer (RecordEntry) refuses the line.
		"a size that is not a number": "wheel accepts",
		// wheel computes blake2b and finds the made-up digest wrong.
		"an algorithm rocmdoctor does not compute": "wheel refuses",
		// wheel takes the directory from the file name alone, and the
		// file name has another case; pip takes the one there is.
		"one .dist-info, not the file name's": "wheel refuses",
	}
	for _, c := range recordCases(t) {
		t.Run(c.name, func(t *testing.T) {
			file := c.file
			if file == "" {
				file = "pkg-1.0-py3-none-linux_x86_64.whl"
			}
			dir := t.TempDir()
			p := filepath.Join(dir, file)
			recordWheel(t, p, c.members, c.recName, c.rec)
			rep, err := check.Run(context.Background(), []string{p}, check.Options{})
			if err != nil {
				t.Fatal(err)
			}
			ours := false
			for _, f := range rep.Findings {
				ours = ours || f.ID == "RD1501" && f.Severity == finding.SeverityError
			}
			out, err := exec.Command(py, "-m", "wheel", "unpack", "-d", filepath.Join(dir, "out"), p).CombinedOutput()
			theirs := err != nil
			switch why := differs[c.name]; {
			case why == "" && ours != theirs:
				t.Errorf("check fails it: %v; wheel unpack refuses it: %v (%s)", ours, theirs, strings.TrimSpace(string(out)))
			case why != "" && ours == theirs:
				t.Errorf("expected to differ from wheel unpack (%s), but both say %v: %s", why, ours, strings.TrimSpace(string(out)))
			}
		})
	}
}

// A member read only for its hash (data, device code) whose data does not
// match its CRC-32 is the wheel's error, naming it; with two bad members
// the first in the wheel's order is the one named, whichever is read
// first.
func TestCheckWheelRecordHashErrors(t *testing.T) {
	data := strings.Repeat("kernel data ", 100)
	for _, order := range [][]string{{"pkg/a.dat", "pkg/libz.so"}, {"pkg/libz.so", "pkg/a.dat"}} {
		p := filepath.Join(t.TempDir(), "pkg-1.0-py3-none-linux_x86_64.whl")
		fh, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		zw := zip.NewWriter(fh)
		var members [][2]string
		for _, name := range order {
			content := data
			if strings.HasSuffix(name, ".so") {
				b, _ := os.ReadFile(testenv.Testdata("libfoo.so.1"))
				content = string(b)
			}
			members = append(members, [2]string{name, content})
			h := &zip.FileHeader{Name: name, Method: zip.Store, CRC32: crc32.ChecksumIEEE([]byte(content)) + 1,
				CompressedSize64: uint64(len(content)), UncompressedSize64: uint64(len(content))}
			w, _ := zw.CreateRaw(h)
			w.Write([]byte(content))
		}
		w, _ := zw.Create("pkg-1.0.dist-info/RECORD")
		w.Write([]byte(testenv.RecordOf(members, "pkg-1.0.dist-info/RECORD")))
		zw.Close()
		fh.Close()
		rep, err := check.Run(context.Background(), []string{p}, check.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Errors) != 1 || !strings.HasPrefix(rep.Errors[0].Error, p+"!/"+order[0]+": ") || !strings.Contains(rep.Errors[0].Error, "checksum") {
			t.Errorf("order %q: errors %+v", order, rep.Errors)
		}
	}
}

// Debian's own wheels (python3-pip-whl: pip and setuptools, rebuilt by
// Debian) pass check and `wheel unpack` alike; one of them with a Python
// file edited and zipped again, RECORD left as it was, fails both, and
// check names the file.
func TestRealWheelsRecord(t *testing.T) {
	testenv.File(t, "/usr/share/python-wheels", "python3-pip-whl")
	py := pythonWheel(t)
	wheels, _ := filepath.Glob("/usr/share/python-wheels/*.whl")
	if len(wheels) == 0 {
		testenv.Missing(t, "wheels in /usr/share/python-wheels", "apt-get install python3-pip-whl")
	}
	unpacks := func(p string) bool {
		return exec.Command(py, "-m", "wheel", "unpack", "-d", t.TempDir(), p).Run() == nil
	}
	rd1501 := func(p string) []finding.Finding {
		rep, err := check.Run(context.Background(), []string{p}, check.Options{})
		if err != nil || len(rep.Errors) != 0 {
			t.Fatalf("%s: %v %+v", p, err, rep.Errors)
		}
		var out []finding.Finding
		for _, f := range rep.Findings {
			if f.ID == "RD1501" {
				out = append(out, f)
			}
		}
		return out
	}
	for _, w := range wheels {
		if fs := rd1501(w); len(fs) != 0 || !unpacks(w) {
			t.Errorf("%s: RD1501 %+v; wheel unpack accepts it: %v", w, fs, unpacks(w))
		}
	}
	// The first wheel again, its first Python file edited.
	zr, err := zip.OpenReader(wheels[0])
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	edited := filepath.Join(t.TempDir(), filepath.Base(wheels[0]))
	fh, err := os.Create(edited)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(fh)
	changed := ""
	for _, zf := range zr.File {
		rc, err := zf.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		if changed == "" && strings.HasSuffix(zf.Name, ".py") {
			changed, b = zf.Name, append(b, "# edited by hand\n"...)
		}
		w, _ := zw.CreateHeader(&zip.FileHeader{Name: zf.Name, Method: zip.Deflate})
		w.Write(b)
	}
	zw.Close()
	fh.Close()
	fs := rd1501(edited)
	if len(fs) != 1 || fs[0].File != edited+"!/"+changed || fs[0].Severity != finding.SeverityError || unpacks(edited) {
		t.Errorf("%s with %s edited: RD1501 %+v; wheel unpack accepts it: %v", edited, changed, fs, unpacks(edited))
	}
}

// However many wheels a scan checks at once (two per core), no more
// members are hashed at a time than there are cores: each extraction
// holds a decoder's buffers.
func TestWheelHashingBounded(t *testing.T) {
	dir := t.TempDir()
	var members [][2]string
	for i := range 12 {
		members = append(members, [2]string{"pkg/data" + strconv.Itoa(i) + ".bin", strings.Repeat("rocm data "+strconv.Itoa(i), 40000)})
	}
	for i := range 8 {
		recordWheel(t, filepath.Join(dir, "pkg"+strconv.Itoa(i)+"-1.0-py3-none-any.whl"), members, "pkg"+strconv.Itoa(i)+"-1.0.dist-info/RECORD",
			strings.ReplaceAll(testenv.RecordOf(members, "pkg-1.0.dist-info/RECORD"), "pkg-1.0.dist-info", "pkg"+strconv.Itoa(i)+"-1.0.dist-info"))
	}
	peak := check.WatchHashing()
	rep, err := check.Run(context.Background(), []string{dir}, check.Options{Workers: 8})
	most := peak()
	if err != nil || len(rep.Errors) != 0 || len(rep.Findings) != 0 {
		t.Fatalf("%v %+v %+v", err, rep.Errors, rep.Findings)
	}
	if most < 1 || most > runtime.GOMAXPROCS(0) {
		t.Errorf("%d members hashed at once, %d cores", most, runtime.GOMAXPROCS(0))
	}
}
