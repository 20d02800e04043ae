package rpath_test

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
	"github.com/rocmdoctor/rocmdoctor/rpath"
)

type entry struct {
	name, path string
	flags      uint32
	hwcap      int // index into hwcaps names, -1 for none
	isa        uint32
}

// writeNewCache builds a glibc-ld.so.cache1.1 image with an optional
// glibc-hwcaps extension, following dl-cache.h.
func writeNewCache(entries []entry, hwcaps []string) []byte {
	var strs bytes.Buffer
	hdr := 48
	ents := 24 * len(entries)
	base := hdr + ents
	offsets := map[string]uint32{}
	add := func(s string) uint32 {
		if o, ok := offsets[s]; ok {
			return o
		}
		o := uint32(base + strs.Len())
		strs.WriteString(s)
		strs.WriteByte(0)
		offsets[s] = o
		return o
	}
	var body bytes.Buffer
	for _, e := range entries {
		var b [24]byte
		binary.LittleEndian.PutUint32(b[0:], e.flags)
		binary.LittleEndian.PutUint32(b[4:], add(e.name))
		binary.LittleEndian.PutUint32(b[8:], add(e.path))
		if e.hwcap >= 0 {
			binary.LittleEndian.PutUint64(b[16:], uint64(1)<<62|uint64(e.isa)<<32|uint64(e.hwcap))
		}
		body.Write(b[:])
	}
	var hwOffs []uint32
	for _, h := range hwcaps {
		hwOffs = append(hwOffs, add(h))
	}
	for strs.Len()%4 != 0 {
		strs.WriteByte(0)
	}
	extOff := uint32(base + strs.Len())
	var ext bytes.Buffer
	if len(hwcaps) > 0 {
		binary.Write(&ext, binary.LittleEndian, uint32(0xEAA42174))
		binary.Write(&ext, binary.LittleEndian, uint32(1))
		arrOff := extOff + 8 + 16
		binary.Write(&ext, binary.LittleEndian, []uint32{1, 0, arrOff, uint32(4 * len(hwOffs))})
		binary.Write(&ext, binary.LittleEndian, hwOffs)
	} else {
		extOff = 0
	}
	var out bytes.Buffer
	out.WriteString("glibc-ld.so.cache1.1")
	binary.Write(&out, binary.LittleEndian, uint32(len(entries)))
	binary.Write(&out, binary.LittleEndian, uint32(strs.Len()))
	out.Write([]byte{2, 0, 0, 0})
	binary.Write(&out, binary.LittleEndian, extOff)
	out.Write(make([]byte, 12))
	out.Write(body.Bytes())
	out.Write(strs.Bytes())
	out.Write(ext.Bytes())
	return out.Bytes()
}

func writeOldCache(entries []entry) []byte {
	var strs bytes.Buffer
	var body bytes.Buffer
	for _, e := range entries {
		k := uint32(strs.Len())
		strs.WriteString(e.name + "\x00")
		v := uint32(strs.Len())
		strs.WriteString(e.path + "\x00")
		binary.Write(&body, binary.LittleEndian, []uint32{e.flags, k, v})
	}
	var out bytes.Buffer
	out.WriteString("ld.so-1.7.0\x00")
	binary.Write(&out, binary.LittleEndian, uint32(len(entries)))
	out.Write(body.Bytes())
	out.Write(strs.Bytes())
	return out.Bytes()
}

func TestParseCacheNewWithHWCaps(t *testing.T) {
	img := writeNewCache([]entry{
		{"libx.so.1", "/usr/lib/glibc-hwcaps/x86-64-v3/libx.so.1", 0x0303, 1, 4},
		{"libx.so.1", "/usr/lib/glibc-hwcaps/x86-64-v2/libx.so.1", 0x0303, 0, 2},
		{"libx.so.1", "/usr/lib32/libx.so.1", 0x0003, -1, 0}, // i386: wrong flags for x86-64
		{"libx.so.1", "/usr/lib/libx.so.1", 0x0303, -1, 0},
	}, []string{"x86-64-v2", "x86-64-v3"})
	c, err := rpath.ParseCache(img)
	if err != nil {
		t.Fatal(err)
	}
	if c.Format != "new" || len(c.Entries) != 4 || c.Entries[0].HWCaps != "x86-64-v3" {
		t.Fatalf("parsed %+v", c)
	}
	for _, tt := range []struct {
		active []string
		isa    uint32
		want   string
	}{
		{[]string{"x86-64-v3", "x86-64-v2"}, 1 | 2 | 4, "/usr/lib/glibc-hwcaps/x86-64-v3/libx.so.1"},
		{[]string{"x86-64-v2"}, 1 | 2, "/usr/lib/glibc-hwcaps/x86-64-v2/libx.so.1"},
		{nil, 1, "/usr/lib/libx.so.1"},
	} {
		e, ok := c.Lookup("libx.so.1", 0x0303, tt.active, tt.isa, rpath.LegacyCaps{})
		if !ok || e.Path != tt.want {
			t.Errorf("Lookup with %v = %q, want %q", tt.active, e.Path, tt.want)
		}
	}
	if e, ok := c.Lookup("libx.so.1", 0x0003, nil, 1, rpath.LegacyCaps{}); !ok || e.Path != "/usr/lib32/libx.so.1" {
		t.Errorf("i386 lookup = %q", e.Path)
	}
	if _, ok := c.Lookup("liby.so", 0x0303, nil, 1, rpath.LegacyCaps{}); ok {
		t.Errorf("found a name that is not there")
	}
}

func TestParseCacheOld(t *testing.T) {
	c, err := rpath.ParseCache(writeOldCache([]entry{{"libold.so.2", "/lib/libold.so.2", 0x0303, -1, 0}}))
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := c.Lookup("libold.so.2", 0x0303, nil, 1, rpath.LegacyCaps{}); c.Format != "old" || !ok || e.Path != "/lib/libold.so.2" {
		t.Errorf("old cache: format %s, %+v", c.Format, e)
	}
}

func TestParseCacheMalformed(t *testing.T) {
	good := writeNewCache([]entry{{"libx.so.1", "/x", 0x0303, 0, 0}}, []string{"x86-64-v2"})
	for _, tt := range []struct {
		name string
		mut  func([]byte) []byte
	}{
		{"bad magic", func(b []byte) []byte { b[0] = 'X'; return b }},
		{"huge count", func(b []byte) []byte { binary.LittleEndian.PutUint32(b[20:], 1<<30); return b }},
		{"string outside", func(b []byte) []byte { binary.LittleEndian.PutUint32(b[48+4:], 1<<30); return b }},
		{"hwcaps index outside", func(b []byte) []byte { b[48+16] = 9; return b }},
		{"truncated", func(b []byte) []byte { return b[:30] }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := rpath.ParseCache(tt.mut(append([]byte(nil), good...))); err == nil {
				t.Errorf("no error")
			}
		})
	}
	for n := 0; n < len(good); n++ {
		rpath.ParseCache(good[:n]) // must not panic
	}
}

func TestSystemCacheParses(t *testing.T) {
	path := testenv.File(t, "/etc/ld.so.cache", "libc-bin")
	c, err := rpath.ReadCache(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Lookup("libc.so.6", 0x0303, nil, 1, rpath.LegacyCaps{}); !ok {
		t.Errorf("libc.so.6 not in %s (%d entries)", path, len(c.Entries))
	}
	// ReadCache's strings view the image it read, ParseCache's a copy of
	// the caller's: the same entries, and ParseCache's stay what they
	// were when the caller's bytes change.
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := rpath.ParseCache(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p.Entries, c.Entries) {
		t.Errorf("ReadCache and ParseCache disagree on %s", path)
	}
	clear(b)
	if !reflect.DeepEqual(p.Entries, c.Entries) {
		t.Errorf("ParseCache's entries changed with the bytes it was given")
	}
}

// TestLdconfigOracle builds a sysroot, lets the real ldconfig write its
// cache (with a glibc-hwcaps subdirectory), and checks that the resolver
// picks the hwcaps copy exactly when the CPU level allows.
func TestLdconfigOracle(t *testing.T) {
	ldconfig := testenv.Tool(t, "ldconfig", "libc-bin")
	if os.Geteuid() != 0 {
		testenv.Missing(t, "root privileges for ldconfig -r", "run as root")
	}
	tr := newTree(t)
	root := tr.path("root")
	tr.lib("root/usr/lib/x86_64-linux-gnu/libhw.so.1", "libhw.so.1", `int hw(void){return 1;}`)
	tr.lib("root/usr/lib/x86_64-linux-gnu/glibc-hwcaps/x86-64-v2/libhw.so.1", "libhw.so.1", `int hw(void){return 2;}`)
	tr.lib("root/opt/rocm/lib/libamdhip64.so.6", "libamdhip64.so.6", `int hip(void){return 6;}`)
	user := tr.lib("root/opt/app/libuser.so", "libuser.so", `extern int hw(void); extern int hip(void); int u(void){return hw()+hip();}`,
		"-L"+tr.path("root/usr/lib/x86_64-linux-gnu"), "-l:libhw.so.1", "-L"+tr.path("root/opt/rocm/lib"), "-l:libamdhip64.so.6")
	os.MkdirAll(filepath.Join(root, "etc/ld.so.conf.d"), 0o755)
	os.WriteFile(filepath.Join(root, "etc/ld.so.conf"), []byte("include /etc/ld.so.conf.d/*.conf\n"), 0o644)
	os.WriteFile(filepath.Join(root, "etc/ld.so.conf.d/rocm.conf"), []byte("/opt/rocm/lib\n/usr/lib/x86_64-linux-gnu\n"), 0o644)
	if out, err := exec.Command(ldconfig, "-r", root).CombinedOutput(); err != nil {
		t.Fatalf("ldconfig -r: %v\n%s", err, out)
	}
	c, err := rpath.ReadCache(filepath.Join(root, "etc/ld.so.cache"))
	if err != nil {
		t.Fatal(err)
	}
	hasHW := false
	for _, e := range c.Entries {
		hasHW = hasHW || e.HWCaps == "x86-64-v2"
	}
	if !hasHW {
		t.Fatalf("ldconfig wrote no glibc-hwcaps entry: %+v", c.Entries)
	}
	for _, tt := range []struct {
		level, want string
	}{
		{"x86-64-v2", "/usr/lib/x86_64-linux-gnu/glibc-hwcaps/x86-64-v2/libhw.so.1"},
		{"none", "/usr/lib/x86_64-linux-gnu/libhw.so.1"},
	} {
		hw, _ := rpath.ParseHWCapsLevel(tt.level)
		res := resolve(t, rpath.Options{Root: root, HWCaps: hw}, user)
		d := depOf(t, res, "libhw.so.1")
		if d.Path != filepath.Join(root, tt.want) || d.Rule != rpath.RuleCache {
			t.Errorf("hwcaps %s: %s by %s, want %s from the cache", tt.level, d.Path, d.Rule, tt.want)
		}
		if h := depOf(t, res, "libamdhip64.so.6"); h.Path != filepath.Join(root, "opt/rocm/lib/libamdhip64.so.6") {
			t.Errorf("libamdhip64 inside the root: %s by %s", h.Path, h.Rule)
		}
	}
	// Without a cache, ld.so.conf (with its include) stands in.
	os.Remove(filepath.Join(root, "etc/ld.so.cache"))
	res := resolve(t, rpath.Options{Root: root, HWCaps: []string{}}, user)
	if h := depOf(t, res, "libamdhip64.so.6"); h.Path != filepath.Join(root, "opt/rocm/lib/libamdhip64.so.6") {
		t.Errorf("without cache, ld.so.conf: %s by %s", h.Path, h.Rule)
	}
}

func TestHWCapsLevels(t *testing.T) {
	all := map[string]bool{}
	for _, f := range []string{"cx16", "lahf_lm", "popcnt", "pni", "sse4_1", "sse4_2", "ssse3", "avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"} {
		all[f] = true
	}
	if got := rpath.HWCapsForFlags(all); len(got) != 2 || got[0] != "x86-64-v3" {
		t.Errorf("v3 CPU: %v", got)
	}
	delete(all, "sse4_2")
	if got := rpath.HWCapsForFlags(all); len(got) != 0 {
		t.Errorf("no SSE4.2 must mean baseline: %v", got)
	}
	if got, ok := rpath.ParseHWCapsLevel("x86-64-v3"); !ok || len(got) != 2 || got[1] != "x86-64-v2" {
		t.Errorf("ParseHWCapsLevel = %v", got)
	}
}

// FuzzParseCache: any bytes either fail to parse or give a cache whose
// lookups work; never a panic.
func FuzzParseCache(f *testing.F) {
	f.Add(writeNewCache([]entry{{"libx.so.1", "/x", 0x0303, 0, 0}, {"libx.so.1", "/y", 0x0303, -1, 0}}, []string{"x86-64-v2"}))
	f.Add(writeOldCache([]entry{{"libx.so.1", "/x", 0x0303, -1, 0}}))
	if b, err := os.ReadFile("/etc/ld.so.cache"); err == nil && len(b) < 1<<20 {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := rpath.ParseCache(b)
		if err != nil {
			return
		}
		for _, e := range c.Entries {
			for _, flags := range []uint32{0x0303, e.Flags} {
				got, ok := c.Lookup(e.Name, flags, []string{"x86-64-v3", "x86-64-v2", e.HWCaps}, ^uint32(0), rpath.LegacyCaps{Enabled: true, HWCap: ^uint64(0)})
				if ok && got.Name != e.Name {
					t.Fatalf("Lookup(%q) = entry for %q", e.Name, got.Name)
				}
			}
		}
	})
}

// TestReadConf: ld.so.conf as ldconfig reads it (glibc elf/ldconfig.c
// parse_conf, parse_conf_include, add_dir_1).
func TestReadConf(t *testing.T) {
	root := t.TempDir()
	put := func(rel, text string) {
		p := filepath.Join(root, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(text), 0o644)
	}
	put("etc/ld.so.conf", "  # comment\n"+
		"include /etc/ld.so.conf.d/*.conf /etc/extra.conf\n"+ // two patterns on one line
		"/opt/rocm/lib/  \n"+ // trailing slash and blanks
		"/usr/libc5=libc5\n"+ // the old type suffix
		"HWCAP 1 nosegneg\n"+ // ignored, any case
		"hwcapdir\n"+ // a directory named like the directive
		"/opt/rocm/lib\n"+ // listed again: kept where it first appears
		"include\tlocal/*.conf\n"+ // relative to this file's directory
		"/\n") // only slashes: nothing
	put("etc/ld.so.conf.d/a.conf", "/a # trailing comment\n")
	put("etc/ld.so.conf.d/b.conf", "/b\n")
	put("etc/extra.conf", "/extra\n")
	put("etc/local/l.conf", "/local\n")
	got := rpath.ReadConf(filepath.Join(root, "etc/ld.so.conf"), root)
	want := []string{"/a", "/b", "/extra", "/opt/rocm/lib", "/usr/libc5", "hwcapdir", "/local"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ReadConf = %q\nwant       %q", got, want)
	}
}

// Entries of a name are tried in cache order even when other names'
// entries lie between them: the first plain one that matches wins.
func TestCacheLookupOrderAcrossNames(t *testing.T) {
	img := writeNewCache([]entry{
		{"liba.so.1", "/lib/first/liba.so.1", 0x0303, -1, 0},
		{"libb.so.1", "/lib/first/libb.so.1", 0x0303, -1, 0},
		{"liba.so.1", "/lib/second/liba.so.1", 0x0303, -1, 0},
		{"libc.so.6", "/lib/libc.so.6", 0x0303, -1, 0},
		{"libb.so.1", "/lib/second/libb.so.1", 0x0003, -1, 0},
		{"libb.so.1", "/lib/third/libb.so.1", 0x0003, -1, 0},
	}, nil)
	c, err := rpath.ParseCache(img)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		flags uint32
		want  string
	}{
		{"liba.so.1", 0x0303, "/lib/first/liba.so.1"},
		{"libb.so.1", 0x0303, "/lib/first/libb.so.1"},
		{"libb.so.1", 0x0003, "/lib/second/libb.so.1"},
		{"libc.so.6", 0x0303, "/lib/libc.so.6"},
	} {
		if e, ok := c.Lookup(tt.name, tt.flags, nil, 1, rpath.LegacyCaps{}); !ok || e.Path != tt.want {
			t.Errorf("Lookup(%s, %#x) = %q, want %q", tt.name, tt.flags, e.Path, tt.want)
		}
	}
}
