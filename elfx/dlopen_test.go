package elfx_test

import (
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
)

// TestDlopenNotesFixture reads the check tree's two dlopen fixtures: two
// notes of one object each, and one whose priority the specification
// does not have (an error at the note's offset, as readelf -n places it).
func TestDlopenNotesFixture(t *testing.T) {
	f, err := elfx.Open(testenv.Testdata("checktree", "lib", "libdlopener.so"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	deps, err := f.DlopenNotes()
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(strip(deps))
	// In file order: gcc placed the second declaration first.
	want := "[{[libv.so.2 libv.so.1] v  recommended 0} {[libdlwanted.so.1] wanted the wanted backend required 0}]"
	if got != want {
		t.Errorf("notes %s, want %s", got, want)
	}
	if deps[0].Offset == deps[1].Offset || deps[0].Offset <= 0 {
		t.Errorf("offsets %d, %d: want the two notes' own", deps[0].Offset, deps[1].Offset)
	}
	names, err := f.DlopenNames()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"libdlname.so.3", "libv.so.1", "libdlopener.so"}; !slices.Equal(names, want) {
		t.Errorf("names %q, want %q", names, want)
	}

	bad, err := elfx.Open(testenv.Testdata("checktree", "lib", "libdlbadnote.so"))
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	deps, err = bad.DlopenNotes()
	var fe *elfx.FormatError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), `priority "mandatory"`) || !strings.Contains(err.Error(), "libdlbadnote.so") || len(deps) != 0 {
		t.Fatalf("bad note: %v, %v", deps, err)
	}
	// The offset is the note's: its header there says owner FDO, type 0x407c0c0a.
	raw, _ := os.ReadFile(bad.Path)
	if h := raw[fe.Offset:]; len(h) < 16 || string(h[12:16]) != "FDO\x00" || h[8] != 0x0a || h[11] != 0x40 {
		t.Errorf("offset 0x%x is not the note's header: % x", fe.Offset, raw[fe.Offset:fe.Offset+16])
	}
}

func strip(ds []elfx.DlopenDep) []elfx.DlopenDep {
	out := slices.Clone(ds)
	for i := range out {
		out[i].Offset = 0
	}
	return out
}

// TestParseDlopenNote: what the specification and package-notes'
// dlopen-notes.py accept, and what they do not.
func TestParseDlopenNote(t *testing.T) {
	for _, c := range []struct{ desc, want, err string }{
		{`[{"soname":["libfoo.so.1"]}]` + "\x00\x00\x00", "[{[libfoo.so.1]   recommended 0}]", ""},
		{`[{"feature":"f","description":"d","priority":"suggested","soname":["a.so.1","a.so.2"],"extra":{"x":1}}]`, "[{[a.so.1 a.so.2] f d suggested 0}]", ""},
		{`[{"soname":["a.so"],"priority":"required"},{"soname":["b.so"]}]`, "[{[a.so]   required 0} {[b.so]   recommended 0}]", ""},
		{`[]`, "[]", ""},
		{` [ {"soname" : ["x.so"] } ] `, "[{[x.so]   recommended 0}]", ""},
		{`{"soname":["libfoo.so.1"]}`, "", "a single object, not an array"},
		{`null`, "", "a null, not an array"},
		{`"libfoo.so.1"`, "", "a string, not an array"},
		{`[1]`, "", "array holding something other than objects"},
		{`[{"feature":"f"}]`, "", `object 0 has no "soname"`},
		{`[{"soname":"libfoo.so.1"}]`, "", `"soname" is "libfoo.so.1", not an array`},
		{`[{"soname":[]}]`, "", `"soname" is [], not an array`},
		{`[{"soname":[""]}]`, "", "empty name"},
		{`[{"soname":[1]}]`, "", "not an array of library names"},
		{`[{"soname":["a.so"]},{"soname":["b.so"],"priority":"optional"}]`, "[{[a.so]   recommended 0}]", `object 1: priority "optional"`},
		{`[{"soname":["a.so"],"feature":7}]`, "", `"feature" is 7, not a string`},
		{`[{"soname":["a.so"]}`, "", "not JSON"},
		{"[{\"soname\":[\"\xff.so\"]}]", "", "not UTF-8"},
		{"", "", "not JSON"},
	} {
		deps, err := elfx.ParseDlopenNote([]byte(c.desc))
		if got := fmt.Sprint(deps); c.want != "" && got != c.want && !(c.want == "[]" && len(deps) == 0) {
			t.Errorf("%q: %s, want %s", c.desc, got, c.want)
		}
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%q: %v", c.desc, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: error %v, want one saying %q", c.desc, err, c.err)
		}
	}
}

// TestDlopenNamesWindows: names across the boundaries of the reads are
// found once, as with one read of the whole section.
func TestDlopenNamesWindows(t *testing.T) {
	for _, p := range []string{testenv.Testdata("checktree", "lib", "libdlopener.so"), "/usr/lib/x86_64-linux-gnu/librhash.so.0", "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5"} {
		f, err := elfx.Open(p)
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			t.Fatal(err)
		}
		whole, err := f.DlopenNames()
		if err != nil || len(whole) == 0 {
			t.Fatalf("%s: %q, %v", p, whole, err)
		}
		for _, w := range []int64{1, 3, 7, 64, 4096} {
			f.SetDlopenWindow(w)
			got, err := f.DlopenNames()
			if err != nil || !slices.Equal(got, whole) {
				t.Errorf("%s, window %d: %q, %v; one read: %q", p, w, got, err, whole)
			}
		}
		f.Close()
	}
}

// TestDlopenNotesAgreeWithPyelftools builds libraries and objects with
// dlopen notes (several per section, several objects per note, beside a
// GNU build-id note, 32-bit, big-endian) and reads them as package-notes'
// dlopen-notes.py does, with pyelftools: the same libraries, priorities
// and features, in the same order.
func TestDlopenNotesAgreeWithPyelftools(t *testing.T) {
	gcc := testenv.Tool(t, "gcc", "gcc")
	py := testenv.Python(t, "elftools", "python3-pyelftools")
	dir := t.TempDir()
	src := filepath.Join(dir, "n.c")
	os.WriteFile(src, []byte(`#include "dlopen_note.h"
DLOPEN_NOTE(a, "[{\"feature\":\"fido2\",\"description\":\"Support fido2\",\"priority\":\"required\",\"soname\":[\"libfido2.so.1\"]}]");
DLOPEN_NOTE(b, "[{\"feature\":\"pcre2\",\"priority\":\"suggested\",\"soname\":[\"libpcre2-8.so.0\",\"libpcre2-8.so.1\"]}]");
DLOPEN_NOTE(c, "[{\"feature\":\"tpm\",\"soname\":[\"libtss2-mu.so.0\"]},{\"feature\":\"tpm\",\"priority\":\"recommended\",\"soname\":[\"libtss2-esys.so.0\"]}]");
DLOPEN_NOTE(d, "[{\"soname\":[\"libamd_comgr.so.2\"],\"description\":\"code objects \\u00e9\"}]");
int f(void) { return 0; }
`), 0o644)
	inc := "-I" + testenv.Testdata("src")
	builds := map[string][]string{
		"lib64.so": {gcc, inc, "-O1", "-fPIC", "-shared", "-Wl,--build-id", "-o", "", src},
		"obj64.o":  {gcc, inc, "-O1", "-c", "-o", "", src},
	}
	if gcc32 := testenv.GCC32(t); gcc32 != "" {
		builds["lib32.so"] = []string{gcc32, "-m32", inc, "-O1", "-fPIC", "-shared", "-o", "", src}
	}
	if clang, err := exec.LookPath("clang-15"); err == nil {
		builds["be64.o"] = []string{clang, "--target=powerpc64-linux-gnu", inc, "-O1", "-c", "-o", "", src}
	} else {
		testenv.Missing(t, "clang-15 (a big-endian object)", "apt-get install clang-15")
	}
	oracle := `import json, sys
from elftools.elf.elffile import ELFFile
from elftools.elf.sections import NoteSection
out = []
for sec in ELFFile(open(sys.argv[1], 'rb')).iter_sections():
    if not isinstance(sec, NoteSection) or sec.name != '.note.dlopen':
        continue
    for n in sec.iter_notes():
        if n['n_type'] != 0x407c0c0a or n['n_name'] != 'FDO':
            continue
        d = n['n_desc']
        text = (d if isinstance(d, str) else d.decode('utf-8')).rstrip('\0')
        for e in json.loads(text):
            out.append({'soname': e['soname'], 'feature': e.get('feature', ''), 'description': e.get('description', ''), 'priority': e.get('priority', 'recommended')})
print(json.dumps(out))
`
	for name, args := range builds {
		out := filepath.Join(dir, name)
		args[slices.Index(args, "")] = out
		if b, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, b)
		}
		b, err := exec.Command(py, "-c", oracle, out).Output()
		if err != nil {
			t.Fatalf("%s: pyelftools: %v", name, err)
		}
		var want []elfx.DlopenDep
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		f, err := elfx.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		got, err := f.DlopenNotes()
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(want) != 5 || !reflect.DeepEqual(strip(got), want) {
			t.Errorf("%s:\n got %v\nwant %v (pyelftools)", name, strip(got), want)
		}
	}
}

// TestDlopenNamesAgreeWithReadelf: over the libraries in the system
// directory that call dlopen(), the names DlopenNames finds are the
// lib….so[.N…] strings readelf -p prints from their read-only data
// sections (and such names after a '/' in them).
func TestDlopenNamesAgreeWithReadelf(t *testing.T) {
	testenv.Corpus(t)
	readelf := testenv.Tool(t, "readelf", "binutils")
	testenv.File(t, "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5", "libamdhip64-5")
	checked := 0
	for _, p := range testenv.DynamicFiles(t, "/usr/lib/x86_64-linux-gnu", elf.EM_X86_64) {
		f, err := elfx.Open(p)
		if err != nil {
			continue
		}
		tab, err := f.DynamicSymbolTable()
		if err != nil || !tab.CallsDlopen() {
			f.Close()
			continue
		}
		var secs []string
		for _, s := range f.ELF().Sections {
			if s.Type == elf.SHT_PROGBITS && s.Flags&elf.SHF_ALLOC != 0 && s.Flags&(elf.SHF_WRITE|elf.SHF_EXECINSTR) == 0 && s.Size > 0 {
				secs = append(secs, s.Name)
			}
		}
		got, err := f.DlopenNames()
		f.Close()
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		var want []string
		for _, s := range secs {
			out, err := exec.Command(readelf, "-W", "-p", s, p).Output()
			if err != nil {
				t.Fatalf("readelf -p %s %s: %v", s, p, err)
			}
			for line := range strings.Lines(string(out)) {
				_, str, ok := strings.Cut(line, "]  ")
				if !ok {
					continue
				}
				str = strings.TrimRight(str, "\n")
				if i := strings.LastIndexByte(str, '/'); i >= 0 && !(absPath(str) && len(str) <= 255) {
					str = str[i+1:]
				}
				if libName(str) && !slices.Contains(want, str) {
					want = append(want, str)
				}
			}
		}
		slices.Sort(want)
		got = slices.Clone(got)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: %q, readelf %q", p, got, want)
		}
		checked++
	}
	if checked < 5 {
		t.Fatalf("only %d libraries call dlopen()", checked)
	}
	t.Logf("%d libraries", checked)
}

// absPath: a '/' and then name characters and slashes, at most 255 bytes.
var absPath = regexp.MustCompile(`^/[A-Za-z0-9_+./-]*$`).MatchString

// libName: lib, name characters, .so, then .N parts (or a path to one).
func libName(s string) bool {
	if absPath(s) && len(s) <= 255 {
		s = s[strings.LastIndexByte(s, '/')+1:]
	}
	return libBase(s)
}

var libBase = regexp.MustCompile(`^lib[A-Za-z0-9_+.-]+\.so(\.[0-9]+)*$`).MatchString
