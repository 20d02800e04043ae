package elfx_test

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
)

func open(t *testing.T, name string) *elfx.File {
	t.Helper()
	f, err := elfx.Open(testenv.Testdata(name))
	if err != nil {
		t.Fatalf("Open(%s): %v", name, err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestHeaders(t *testing.T) {
	tests := []struct {
		file                         string
		class, data, typ, machine    string
		osabi                        string
		interp, soname, rpath, runpa string
		needed                       []string
		target                       string
		cov                          int
		dynamic                      bool
	}{
		{file: "libfoo.so.1", class: "ELF64", data: "LSB", typ: "ET_DYN", machine: "EM_X86_64", osabi: "ELFOSABI_NONE",
			soname: "libfoo.so.1", runpa: "$ORIGIN/../lib", needed: []string{"libm.so.6"}, dynamic: true},
		{file: "hello", class: "ELF64", data: "LSB", typ: "ET_DYN", machine: "EM_X86_64", osabi: "ELFOSABI_NONE",
			interp: "/lib64/ld-linux-x86-64.so.2", rpath: "$ORIGIN", needed: []string{"libfoo.so.1", "libc.so.6"}, dynamic: true},
		{file: "i386.o", class: "ELF32", data: "LSB", typ: "ET_REL", machine: "EM_386", osabi: "ELFOSABI_NONE"},
		{file: "libi386.so", class: "ELF32", data: "LSB", typ: "ET_DYN", machine: "EM_386", osabi: "ELFOSABI_NONE",
			soname: "libi386.so", needed: []string{"libm.so.6"}, dynamic: true},
		{file: "be.o", class: "ELF64", data: "MSB", typ: "ET_REL", machine: "EM_PPC64", osabi: "ELFOSABI_NONE"},
		{file: "libbe.so", class: "ELF64", data: "MSB", typ: "ET_DYN", machine: "EM_PPC64", osabi: "ELFOSABI_NONE",
			soname: "libbe.so", dynamic: true},
		{file: "k-gfx803.o", class: "ELF64", data: "LSB", typ: "ET_REL", machine: "EM_AMDGPU", osabi: "ELFOSABI_AMDGPU_HSA",
			target: "gfx803", cov: 4},
		{file: "k-gfx90a_xnackoff.co", class: "ELF64", data: "LSB", typ: "ET_DYN", machine: "EM_AMDGPU", osabi: "ELFOSABI_AMDGPU_HSA",
			target: "gfx90a:xnack-", cov: 4, dynamic: true},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			f := open(t, tt.file)
			got := []string{f.ClassName(), f.DataName(), f.TypeName(), f.MachineName(), f.OSABIName()}
			want := []string{tt.class, tt.data, tt.typ, tt.machine, tt.osabi}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("header = %v, want %v", got, want)
			}
			interp, err := f.Interp()
			if err != nil || interp != tt.interp {
				t.Errorf("Interp() = %q, %v; want %q", interp, err, tt.interp)
			}
			if tt.target != "" {
				if f.AMDGPU == nil || f.AMDGPU.TargetID() != tt.target || f.AMDGPU.CodeObjectVersion != tt.cov {
					t.Errorf("AMDGPU = %+v, want %s v%d", f.AMDGPU, tt.target, tt.cov)
				}
			} else if f.AMDGPU != nil {
				t.Errorf("AMDGPU = %+v on a non-AMDGPU file", f.AMDGPU)
			}
			d, err := f.Dynamic()
			if !tt.dynamic {
				if !errors.Is(err, elfx.ErrNoDynamic) {
					t.Errorf("Dynamic() error = %v, want ErrNoDynamic", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Dynamic(): %v", err)
			}
			if d.Soname != tt.soname || d.RPath != tt.rpath || d.RunPath != tt.runpa {
				t.Errorf("soname/rpath/runpath = %q/%q/%q, want %q/%q/%q", d.Soname, d.RPath, d.RunPath, tt.soname, tt.rpath, tt.runpa)
			}
			if len(d.Needed) != len(tt.needed) || (len(tt.needed) > 0 && !reflect.DeepEqual(d.Needed, tt.needed)) {
				t.Errorf("Needed = %q, want %q", d.Needed, tt.needed)
			}
		})
	}
}

func TestSymbolVersions(t *testing.T) {
	for _, name := range []string{"libfoo.so.1", "libi386.so"} {
		t.Run(name, func(t *testing.T) {
			f := open(t, name)
			syms, err := f.DynamicSymbols()
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]elfx.Symbol{}
			for _, s := range syms {
				got[s.VersionedName()] = s
			}
			for _, want := range []string{"foo_api@@FOO_2", "foo_api@FOO_1", "foo_sqrt@@FOO_1", "foo_counter@@FOO_1", "foo_call_hook@@FOO_2"} {
				s, ok := got[want]
				if !ok {
					t.Errorf("missing %s in %v", want, keys(got))
					continue
				}
				if !s.Defined() {
					t.Errorf("%s is undefined", want)
				}
			}
			if s := got["foo_api@FOO_1"]; !s.HiddenVersion || s.DefaultVersion() {
				t.Errorf("foo_api@FOO_1: hidden=%v default=%v, want hidden", s.HiddenVersion, s.DefaultVersion())
			}
			sq, ok := got["sqrt@GLIBC_2.2.5"]
			if name == "libi386.so" {
				sq, ok = got["sqrt@GLIBC_2.0"]
			}
			if !ok || sq.Defined() || sq.Library != "libm.so.6" || sq.Type != elf.STT_FUNC {
				t.Errorf("sqrt reference = %+v (found %v), want undefined FUNC from libm.so.6", sq, ok)
			}
			hook, ok := got["optional_hook"]
			if !ok || hook.Defined() || !hook.Weak() || hook.Version != "" {
				t.Errorf("optional_hook = %+v, want unversioned weak undefined", hook)
			}
			if c := got["foo_counter@@FOO_1"]; c.Type != elf.STT_OBJECT || c.Bind != elf.STB_GLOBAL || c.Visibility != elf.STV_DEFAULT {
				t.Errorf("foo_counter = %+v, want global default OBJECT", c)
			}
		})
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestVersionTables(t *testing.T) {
	f := open(t, "libfoo.so.1")
	defs, err := f.VersionDefs()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range defs {
		names = append(names, d.Name)
		if d.Name == "FOO_2" && !reflect.DeepEqual(d.Deps, []string{"FOO_1"}) {
			t.Errorf("FOO_2 deps = %v, want [FOO_1]", d.Deps)
		}
		if d.Name == "libfoo.so.1" && !d.Base {
			t.Errorf("base version not flagged VER_FLG_BASE")
		}
	}
	if !reflect.DeepEqual(names, []string{"libfoo.so.1", "FOO_1", "FOO_2"}) {
		t.Errorf("version definitions = %v", names)
	}
	needs, err := f.VersionNeeds()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]string{}
	for _, n := range needs {
		for _, v := range n.Versions {
			files[n.File] = append(files[n.File], v.Name)
		}
	}
	if !reflect.DeepEqual(files, map[string][]string{"libm.so.6": {"GLIBC_2.2.5"}}) {
		t.Errorf("version requirements = %v", files)
	}
}

func TestFlagsStackTextrel(t *testing.T) {
	f := open(t, "libexecstack.so")
	if st := f.GNUStack(); !st.Present || !st.Executable {
		t.Errorf("GNUStack = %+v, want present and executable", st)
	}
	d, err := f.Dynamic()
	if err != nil {
		t.Fatal(err)
	}
	if !d.TextRel {
		t.Errorf("TextRel = false, want true")
	}
	g := open(t, "libfoo.so.1")
	if st := g.GNUStack(); !st.Present || st.Executable {
		t.Errorf("libfoo GNUStack = %+v, want RW", st)
	}
	gd, _ := g.Dynamic()
	if gd.TextRel {
		t.Errorf("libfoo TextRel = true")
	}
}

func TestArchives(t *testing.T) {
	wantMembers := []string{"archive_a.o", "archive_member_with_a_long_name.o"}
	for _, tt := range []struct {
		file string
		kind elfx.ArchiveKind
	}{{"libgnu.a", elfx.ArchiveGNU}, {"libthin.a", elfx.ArchiveThin}, {"libbsd.a", elfx.ArchiveBSD}} {
		t.Run(tt.file, func(t *testing.T) {
			a, err := elfx.OpenArchive(testenv.Testdata(tt.file))
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			if a.Kind != tt.kind {
				t.Errorf("Kind = %v, want %v", a.Kind, tt.kind)
			}
			var names []string
			for _, m := range a.Members {
				base := m.Name[strings.LastIndex(m.Name, "/")+1:]
				names = append(names, base)
			}
			if !reflect.DeepEqual(names, wantMembers) {
				t.Fatalf("members = %v, want %v", names, wantMembers)
			}
			idx := map[string]string{}
			for _, s := range a.Symbols {
				if s.Member < 0 {
					t.Errorf("index symbol %s points at no member", s.Name)
					continue
				}
				idx[s.Name] = a.Members[s.Member].Name
			}
			if !strings.HasSuffix(idx["a_func"], "archive_a.o") || !strings.HasSuffix(idx["b_func"], "long_name.o") || !strings.HasSuffix(idx["long_named_data"], "long_name.o") {
				t.Errorf("index = %v", idx)
			}
			for i := range a.Members {
				f, err := a.OpenELF(i)
				if err != nil {
					t.Fatalf("member %d: %v", i, err)
				}
				syms, err := f.Symbols()
				if err != nil {
					t.Fatal(err)
				}
				var defined []string
				for _, s := range syms {
					if s.Defined() && s.Bind == elf.STB_GLOBAL {
						defined = append(defined, s.Name)
					}
				}
				sort.Strings(defined)
				want := []string{"a_func"}
				if i == 1 {
					want = []string{"b_func", "long_named_data"}
				}
				if !reflect.DeepEqual(defined, want) {
					t.Errorf("member %d defines %v, want %v", i, defined, want)
				}
			}
		})
	}
}

func TestGPUCodeObjects(t *testing.T) {
	tests := []struct {
		file      string
		container string
		want      []string
	}{
		{"libgpu.so", "offload-bundle", []string{"gfx1030", "gfx906:sramecc+:xnack-", "gfx90a:xnack-"}},
		{"libraw.so", "raw-image", []string{"gfx1030"}},
		{"k-gfx90a_xnackoff.co", "file", []string{"gfx90a:xnack-"}},
		// Code object v2 without a processor in e_flags: from its note.
		{"k-gfx803-v2.co", "file", []string{"gfx803"}},
		{"libraw-v2.so", "raw-image", []string{"gfx803"}},
		{"libfoo.so.1", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			f := open(t, tt.file)
			cos, err := f.GPUCodeObjects()
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range cos {
				got = append(got, c.TargetID)
				if c.Container != tt.container {
					t.Errorf("%s container = %s, want %s", c.TargetID, c.Container, tt.container)
				}
				if c.Target == nil || c.Target.TargetID() != c.TargetID {
					t.Errorf("%s: header target %v disagrees with %s", c.TargetID, c.Target, c.TargetID)
				}
			}
			sort.Strings(got)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("targets = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestParseOffloadBundle(t *testing.T) {
	b, err := os.ReadFile(testenv.Testdata("bundle.hipfb"))
	if err != nil {
		t.Fatal(err)
	}
	bundle, err := elfx.ParseOffloadBundle(strings.NewReader(string(b)), 0, int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range bundle.Entries {
		ids = append(ids, e.Kind+"|"+e.Triple+"|"+e.TargetID)
	}
	want := []string{
		"host|x86_64-unknown-linux|",
		"hipv4|amdgcn-amd-amdhsa|gfx90a:xnack-",
		"hipv4|amdgcn-amd-amdhsa|gfx1030",
		"hipv4|amdgcn-amd-amdhsa|gfx906:sramecc+:xnack-",
	}
	if !reflect.DeepEqual(ids, want) {
		t.Errorf("entries = %q, want %q", ids, want)
	}
	if bundle.Size != int64(len(b)) {
		t.Errorf("Size = %d, want %d", bundle.Size, len(b))
	}
}

func TestSplitBundleID(t *testing.T) {
	for _, tt := range []struct{ id, kind, triple, target string }{
		{"hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-", "hipv4", "amdgcn-amd-amdhsa", "gfx90a:xnack-"},
		{"hip-amdgcn-amd-amdhsa-gfx906", "hip", "amdgcn-amd-amdhsa", "gfx906"},
		{"hipv4-amdgcn-amd-amdhsa--gfx10-3-generic", "hipv4", "amdgcn-amd-amdhsa", "gfx10-3-generic"},
		{"host-x86_64-unknown-linux", "host", "x86_64-unknown-linux", ""},
		{"host-x86_64-unknown-linux-gnu", "host", "x86_64-unknown-linux-gnu", ""},
		{"openmp-amdgcn-amd-amdhsa--gfx1030", "openmp", "amdgcn-amd-amdhsa", "gfx1030"},
		{"weird", "weird", "", ""},
	} {
		t.Run(tt.id, func(t *testing.T) {
			k, tr, tg := elfx.SplitBundleID(tt.id)
			if k != tt.kind || tr != tt.triple || tg != tt.target {
				t.Errorf("got %q %q %q, want %q %q %q", k, tr, tg, tt.kind, tt.triple, tt.target)
			}
		})
	}
}

func TestDecodeAMDGPU(t *testing.T) {
	for _, tt := range []struct {
		flags uint32
		abi   uint8
		want  string
		cov   int
	}{
		{0x2a, 2, "gfx803", 4},
		{0x3f | 0x200, 2, "gfx90a:xnack-", 4},
		{0x3f | 0x300, 3, "gfx90a:xnack+", 5},
		{0x3f | 0x100 | 0x400, 2, "gfx90a", 4},                 // any/any
		{0x2f | 0x200 | 0xc00, 2, "gfx906:sramecc+:xnack-", 4}, // sorted features
		{0x30 | 0x100, 1, "gfx908:sramecc-:xnack+", 3},         // v3 bits
		{0x36, 1, "gfx1030", 3},                                // v3, no features
		{0x53 | 1<<24, 4, "gfx10-3-generic", 6},                // v6 generic
		{0x4c | 0x300 | 0xc00, 3, "gfx942:sramecc+:xnack+", 5}, // MI300
		{0x80, 2, "unknown-0x80", 4},                           // unknown mach
		{0x00, 0, "none", 2},                                   // v2, ISA in a note
		{0x2c | 0x100, 0, "gfx900:xnack+", 2},                  // v2 as LLVM 7+ writes it: v3 bits
		{0x2c, 0, "gfx900:xnack-", 2},
		{0x41, 2, "gfx1100", 4},
	} {
		t.Run(tt.want, func(t *testing.T) {
			got := elfx.DecodeAMDGPU(tt.flags, elfx.ELFOSABI_AMDGPU_HSA, tt.abi)
			if got.TargetID() != tt.want || got.CodeObjectVersion != tt.cov {
				t.Errorf("DecodeAMDGPU(0x%x, v%d) = %s v%d, want %s v%d", tt.flags, tt.abi, got.TargetID(), got.CodeObjectVersion, tt.want, tt.cov)
			}
		})
	}
	if g := elfx.DecodeAMDGPU(0x53|1<<24, elfx.ELFOSABI_AMDGPU_HSA, 4); g.GenericVersion != 1 {
		t.Errorf("generic version = %d, want 1", g.GenericVersion)
	}
}

func TestParseTargetID(t *testing.T) {
	for _, s := range []string{"gfx90a", "gfx90a:xnack-", "gfx906:sramecc+:xnack-", "gfx1030"} {
		id, err := elfx.ParseTargetID(s)
		if err != nil || id.String() != s {
			t.Errorf("ParseTargetID(%q) = %v, %v", s, id, err)
		}
	}
	// Features are printed in canonical (sorted) order.
	if id, _ := elfx.ParseTargetID("gfx906:xnack-:sramecc+"); id.String() != "gfx906:sramecc+:xnack-" {
		t.Errorf("canonical order: %s", id)
	}
	for _, bad := range []string{"", "gfx90a:xnack", "gfx90a:foo+", "gfx90a:+"} {
		if _, err := elfx.ParseTargetID(bad); err == nil {
			t.Errorf("ParseTargetID(%q) succeeded", bad)
		}
	}
}

func TestSniffAndErrors(t *testing.T) {
	if _, err := elfx.Open(testenv.Testdata("src", "foo.c")); !errors.Is(err, elfx.ErrNotELF) || strings.Contains(err.Error(), "archive") {
		t.Errorf("Open(foo.c) = %v, want ErrNotELF", err)
	}
	// An archive given where an ELF file is read is named as what it is.
	for name, want := range map[string]string{"libgnu.a": "an ar archive", "libthin.a": "a thin ar archive"} {
		p := testenv.Testdata(name)
		if _, err := elfx.Open(p); !errors.Is(err, elfx.ErrNotELF) || err.Error() != p+": not an ELF file but "+want+" (a static library)" {
			t.Errorf("Open(%s) = %v", name, err)
		}
	}
	if _, err := elfx.OpenArchive(testenv.Testdata("libfoo.so.1")); !errors.Is(err, elfx.ErrNotArchive) {
		t.Errorf("OpenArchive(libfoo) = %v, want ErrNotArchive", err)
	}
	if _, err := elfx.Open(testenv.Testdata("src")); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("Open(dir) = %v", err)
	}
}

// TestEachIndexNameWindows: a GNU index larger than the read window, with
// names across the window's edges (the first read's too) and one name
// longer than the window, yields every name in order; an unterminated last
// name is an error.
func TestEachIndexNameWindows(t *testing.T) {
	var names []string
	for i := 0; i < 9000; i++ {
		names = append(names, fmt.Sprintf("_ZN4rocm%dsymbolE%s", i, strings.Repeat("x", i%37)))
	}
	names[4000] = strings.Repeat("_ZN4llvm", 20000) // 160 KB
	names[1] = strings.Repeat("_ZN4mlir", 750)      // 6 KB: across the short first read
	// index makes an archive whose index has count entries and names.
	index := func(names []string, count int, terminate bool) []byte {
		var body bytes.Buffer
		binary.Write(&body, binary.BigEndian, uint32(count))
		for range count {
			binary.Write(&body, binary.BigEndian, uint32(0))
		}
		for i, n := range names {
			body.WriteString(n)
			if terminate || i < len(names)-1 {
				body.WriteByte(0)
			}
		}
		hdr := fmt.Sprintf("%-16s%-12s%-6s%-6s%-8s%-10d`\n", "/", "0", "0", "0", "0", body.Len())
		return append([]byte("!<arch>\n"+hdr), body.Bytes()...)
	}
	b := index(names, len(names), true)
	var got []string
	ok, err := elfx.EachIndexName(bytes.NewReader(b), int64(len(b)), "big.a", func(n []byte) bool { got = append(got, string(n)); return true })
	if !ok || err != nil || !reflect.DeepEqual(got, names) {
		t.Fatalf("ok %v, err %v, %d names (want %d)", ok, err, len(got), len(names))
	}
	// In runs: whole names, each with its NUL, in order.
	var runs bytes.Buffer
	ok, err = elfx.EachIndexNames(bytes.NewReader(b), int64(len(b)), "big.a", func(run []byte) bool {
		if len(run) == 0 || run[len(run)-1] != 0 {
			t.Fatalf("a run of %d bytes does not end with a NUL", len(run))
		}
		runs.Write(run)
		return true
	})
	if want := strings.Join(names, "\x00") + "\x00"; !ok || err != nil || runs.String() != want {
		t.Fatalf("runs: ok %v, err %v, %d bytes (want %d)", ok, err, runs.Len(), len(want))
	}
	// Names past the index's count are not the index's.
	short := index(names, len(names)-3, true)
	got = got[:0]
	runs.Reset()
	elfx.EachIndexName(bytes.NewReader(short), int64(len(short)), "big.a", func(n []byte) bool { got = append(got, string(n)); return true })
	elfx.EachIndexNames(bytes.NewReader(short), int64(len(short)), "big.a", func(run []byte) bool { runs.Write(run); return true })
	if want := strings.Join(names[:len(names)-3], "\x00") + "\x00"; !reflect.DeepEqual(got, names[:len(names)-3]) || runs.String() != want {
		t.Fatalf("count %d: %d names, %d bytes of runs (want %d)", len(names)-3, len(got), runs.Len(), len(want))
	}
	b = index(names, len(names), false)
	if _, err := elfx.EachIndexName(bytes.NewReader(b), int64(len(b)), "big.a", func([]byte) bool { return true }); err == nil || !strings.Contains(err.Error(), "not terminated") {
		t.Fatalf("an unterminated last name: %v", err)
	}
}

// TestEachIndexName: the index-only reader sees the same names, in the
// same order, as OpenArchive's index, stops when asked, and leaves BSD
// archives to OpenArchive.
func TestEachIndexName(t *testing.T) {
	for _, tt := range []struct {
		file string
		ok   bool
	}{{"libgnu.a", true}, {"libthin.a", true}, {"librockCompiler.a", true}, {"libbsd.a", false}} {
		t.Run(tt.file, func(t *testing.T) {
			path := testenv.Testdata(tt.file)
			a, err := elfx.OpenArchive(path)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			var want, got []string
			for _, s := range a.Symbols {
				want = append(want, s.Name)
			}
			fh, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer fh.Close()
			st, _ := fh.Stat()
			each := func(fn func([]byte) bool) (bool, error) { return elfx.EachIndexName(fh, st.Size(), path, fn) }
			ok, err := each(func(n []byte) bool { got = append(got, string(n)); return true })
			if err != nil || ok != tt.ok {
				t.Fatalf("ok, err = %v, %v; want %v", ok, err, tt.ok)
			}
			if !ok {
				if len(got) != 0 {
					t.Errorf("names without an index: %v", got)
				}
				return
			}
			if len(want) == 0 || !reflect.DeepEqual(got, want) {
				t.Errorf("names = %v, want %v", got, want)
			}
			calls := 0
			each(func([]byte) bool { calls++; return false })
			if calls != 1 {
				t.Errorf("fn called %d times after returning false", calls)
			}
		})
	}
	be, err := os.ReadFile(testenv.Testdata("libbe.so"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := elfx.EachIndexName(bytes.NewReader(be), int64(len(be)), "libbe.so", func([]byte) bool { return true }); !errors.Is(err, elfx.ErrNotArchive) {
		t.Errorf("an ELF file: err = %v, want ErrNotArchive", err)
	}
}

// TestDynamicDetached: the detached copy keeps the decoded values and
// nothing that reads the file.
func TestDynamicDetached(t *testing.T) {
	f, err := elfx.Open(testenv.Testdata("hello"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := f.Dynamic()
	if err != nil {
		t.Fatal(err)
	}
	c := d.Detached()
	if c == d || !reflect.DeepEqual(c.Needed, d.Needed) || c.RunPath != d.RunPath || c.RPath != d.RPath || c.HasRPath != d.HasRPath ||
		c.Soname != d.Soname || c.Flags1 != d.Flags1 || c.TextRel != d.TextRel || c.Offset != d.Offset || c.StrTab != d.StrTab {
		t.Errorf("detached %+v, from %+v", c, d)
	}
	if c.Entries != nil || len(d.Entries) == 0 {
		t.Errorf("entries: %d detached, %d original", len(c.Entries), len(d.Entries))
	}
	if s, ok := c.String(1); ok || s != "" {
		t.Errorf("a detached section read a string: %q", s)
	}
	if _, ok := d.String(1); !ok {
		t.Error("the original no longer reads strings")
	}
}

// TestArchiveMemberReads reads every member of each kind of archive, and
// of one whose members are shorter than the ELF header, at every offset
// and length around the start the parse keeps: the bytes must be the
// member's bytes in the file, and reads past the member's end short.
func TestArchiveMemberReads(t *testing.T) {
	tiny := []byte("!<arch>\n")
	for _, body := range []string{"x", "0123456789abcdef", strings.Repeat("z", 70)} {
		tiny = fmt.Appendf(tiny, "%-16s%-12d%-6d%-6d%-8o%-10d`\n%s", "m.o/", 0, 0, 0, 0o644, len(body), body)
		if len(body)%2 == 1 {
			tiny = append(tiny, '\n')
		}
	}
	tinyPath := filepath.Join(t.TempDir(), "tiny.a")
	if err := os.WriteFile(tinyPath, tiny, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{testenv.Testdata("libgnu.a"), testenv.Testdata("libbsd.a"), testenv.Testdata("libthin.a"), tinyPath} {
		for _, members := range []bool{false, true} {
			var a *elfx.Archive
			var err error
			if members {
				var p *elfx.Probe
				if p, err = elfx.OpenProbe(path); err == nil {
					a, err = p.ArchiveMembers()
				}
			} else {
				a, err = elfx.OpenArchive(path)
			}
			if err != nil {
				t.Fatal(err)
			}
			for i, m := range a.Members {
				var want []byte
				if m.External != "" {
					want, err = os.ReadFile(m.External)
				} else {
					var all []byte
					all, err = os.ReadFile(path)
					want = all[m.Offset : m.Offset+m.Size]
				}
				if err != nil {
					t.Fatal(err)
				}
				sr, err := a.Open(i)
				if err != nil {
					t.Fatal(err)
				}
				oracle := io.NewSectionReader(bytes.NewReader(want), 0, int64(len(want)))
				for off := 0; off <= 80; off++ {
					for n := 0; n <= 80; n++ {
						got, exp := make([]byte, n), make([]byte, n)
						k, err := sr.ReadAt(got, int64(off))
						ek, eerr := oracle.ReadAt(exp, int64(off))
						if !bytes.Equal(got[:k], exp[:ek]) || (err == nil) != (eerr == nil) {
							t.Fatalf("%s member %d (%d bytes) ReadAt(%d bytes, %d) = %q, %v; want %q, %v", filepath.Base(path), i, len(want), n, off, got[:k], err, exp[:ek], eerr)
						}
					}
				}
			}
			a.Close()
		}
	}
}

// TestCodeObjectV2Note: a code object v2 whose e_flags name no processor
// (EF_AMDGPU_MACH_NONE, as LLVM before 7 and the HSA runtime's finalizer
// wrote them; libhsa-runtime64 embeds three) is named by its
// NT_AMD_HSA_ISA_VERSION note, found through the section headers or, when
// they are gone, the PT_NOTE segment, and its version by
// NT_AMD_HSA_CODE_OBJECT_VERSION; without the notes it stays "none".
func TestCodeObjectV2Note(t *testing.T) {
	b := readFixture(t, "k-gfx803-v2.co")
	noNotes := slices.Clone(b)
	if i := bytes.Index(noNotes, []byte("AMD\x00")); i < 0 {
		t.Fatal("no AMD note in the fixture")
	} else {
		for j := i; j+4 <= len(noNotes); j++ {
			if string(noNotes[j:j+4]) == "AMD\x00" {
				copy(noNotes[j:], "XYZ\x00") // another owner's notes
			}
		}
	}
	for _, tt := range []struct {
		name    string
		b       []byte
		want    string
		version int
	}{
		{"section headers", b, "gfx803", 2},
		{"program headers only", testenv.StripSectionHeaders(slices.Clone(b)), "gfx803", 2},
		{"no AMD notes", noNotes, "none", 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, err := elfx.NewFileSize(bytes.NewReader(tt.b), int64(len(tt.b)), "k-gfx803-v2.co")
			if err != nil {
				t.Fatal(err)
			}
			if f.AMDGPU == nil || f.AMDGPU.Processor != tt.want || f.AMDGPU.CodeObjectVersion != tt.version {
				t.Fatalf("target %+v, want %s (code object v%d)", f.AMDGPU, tt.want, tt.version)
			}
		})
	}
}

// A separate debug file (objcopy --only-keep-debug) keeps the program's
// headers with a PT_DYNAMIC that has no bytes in the file, at an offset
// that for a small program lies past the end of the smaller file. It has
// no dynamic section (readelf: "There is no dynamic section in this
// file"), not a malformed one: check reported such files as malformed,
// failing a gate over a tree with a -dbg package's /usr/lib/debug.
func TestDebugFileHasNoDynamic(t *testing.T) {
	objcopy := testenv.Tool(t, "objcopy", "binutils")
	for _, name := range []string{"hello", "libfoo.so.1"} {
		p := filepath.Join(t.TempDir(), name+".debug")
		if out, err := exec.Command(objcopy, "--only-keep-debug", testenv.Testdata(name), p).CombinedOutput(); err != nil {
			t.Fatalf("objcopy: %v\n%s", err, out)
		}
		f, err := elfx.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.Dynamic()
		f.Close()
		if !errors.Is(err, elfx.ErrNoDynamic) {
			t.Errorf("%s: Dynamic() = %v, want ErrNoDynamic", name, err)
		}
	}
}
