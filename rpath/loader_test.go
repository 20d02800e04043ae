package rpath_test

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
	"github.com/rocmdoctor/rocmdoctor/rpath"
)

// ReadLoaderSetup reads the trusted directories of this machine's glibc
// loaders as they print them (`ld.so --list-diagnostics`, glibc 2.33 and
// later: path.system_dirs[N]="…"): x86-64's, and i386's (gcc-multilib)
// and x32's where they are installed and the kernel runs them, whose
// lengths glibc stores apart from the strings. A library or a program is
// no loader.
func TestReadLoaderSetup(t *testing.T) {
	testenv.File(t, "/lib64/ld-linux-x86-64.so.2", "libc6")
	re := regexp.MustCompile(`(?m)^path\.system_dirs\[0x[0-9a-f]+\]="(.*)"$`)
	for _, ld := range []string{"/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux.so.2", "/libx32/ld-linux-x32.so.2"} {
		if _, err := os.Stat(ld); err != nil {
			continue
		}
		out, err := exec.Command(ld, "--list-diagnostics").Output()
		if err != nil {
			t.Logf("%s does not run here (%v): not compared", ld, err)
			continue
		}
		var want []string
		for _, m := range re.FindAllStringSubmatch(string(out), -1) {
			want = append(want, strings.TrimSuffix(m[1], "/"))
		}
		real, _ := filepath.EvalSymlinks(ld)
		s, ok := rpath.ReadLoaderSetup(real)
		if !ok || !slices.Equal(s.Dirs, want) || s.Cache != "/etc/ld.so.cache" {
			t.Errorf("%s: %v %q, cache %q; the loader says %q", ld, ok, s.Dirs, s.Cache, want)
		}
	}
	for _, p := range []string{"/usr/lib/x86_64-linux-gnu/libc.so.6", "/bin/true"} {
		if s, ok := rpath.ReadLoaderSetup(p); ok {
			t.Errorf("%s read as a loader: %+v", p, s)
		}
	}
}

// A program is resolved with its own loader's trusted directories and
// cache, not this machine's: a copy of the glibc loader whose second
// trusted directory is a directory of the test's and whose cache is a
// file that does not exist (as Nix's glibc reads its store path's
// etc/ld.so.cache) finds a library there by its trusted directories and
// libc.so.6 without a cache. The patched loader runs the program, and its
// LD_DEBUG output lists the same system search path. Resolved with this
// machine's directories and cache, the library was missing and libc came
// from the cache.
func TestProgramsOwnLoader(t *testing.T) {
	ld := testenv.File(t, "/lib64/ld-linux-x86-64.so.2", "libc6")
	real, _ := filepath.EvalSymlinks(ld)
	orig, err := os.ReadFile(real)
	if err != nil {
		t.Fatal(err)
	}
	const second, cache = "/usr/lib/x86_64-linux-gnu/\x00", "/etc/ld.so.cache\x00"
	if bytes.Count(orig, []byte(second)) == 0 || bytes.Count(orig, []byte(cache)) != 1 {
		t.Skipf("%s is not laid out as Debian's glibc 2.36 loader: not patched", real)
	}
	// A directory whose path has the length of the one it replaces, and a
	// cache path of the length of /etc/ld.so.cache that does not exist.
	b := make([]byte, 8)
	rand.Read(b)
	dir := "/tmp/rdl" + hex.EncodeToString(b) + "x"
	if len(dir)+1 != len(second)-1 {
		t.Fatalf("%q: %d bytes", dir, len(dir))
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("cannot make %s: %v", dir, err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	const noCache = "/tmp/ld.so.cache"
	if _, err := os.Stat(noCache); err == nil {
		t.Skipf("%s exists: the patched loader would read it", noCache)
	}
	patched := bytes.ReplaceAll(orig, []byte(second), []byte(dir+"/\x00"))
	patched = bytes.Replace(patched, []byte(cache), []byte(noCache+"\x00"), 1)
	loader := filepath.Join(dir, "ld.so")
	if err := os.WriteFile(loader, patched, 0o755); err != nil {
		t.Fatal(err)
	}
	tr := newTree(t)
	os.WriteFile(tr.path("f.c"), []byte("int f(void){return 3;}\n"), 0o644)
	tr.run("-shared", "-fPIC", "-o", filepath.Join(dir, "libownld.so"), tr.path("f.c"), "-Wl,-soname,libownld.so")
	prog := tr.exe("prog", `extern int f(void); int main(void){return f()==3?0:1;}`,
		"-L"+dir, "-lownld", "-Wl,--dynamic-linker="+loader)

	cmd := exec.Command(prog)
	cmd.Env = append(os.Environ(), "LD_DEBUG=libs")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the patched loader does not run the program: %v\n%s", err, out)
	}
	sys := regexp.MustCompile(`search path=(\S+)\s+\(system search path\)`).FindSubmatch(out)
	if sys == nil || !strings.Contains(string(sys[1]), dir+":") || !strings.Contains(string(out), "search cache="+noCache) || strings.Contains(string(out), "/etc/ld.so.cache") {
		t.Fatalf("the patched loader's search: %s", out)
	}

	s, ok := rpath.ReadLoaderSetup(loader)
	if want := []string{"/lib/x86_64-linux-gnu", dir, "/lib", "/usr/lib"}; !ok || !slices.Equal(s.Dirs, want) || s.Cache != noCache {
		t.Errorf("setup %v %+v, want %q and %s", ok, s, want, noCache)
	}
	res := resolve(t, rpath.Options{}, prog)
	if d := depOf(t, res, "libownld.so"); d.Rule != rpath.RuleDefault || d.Path != filepath.Join(dir, "libownld.so") {
		t.Errorf("libownld.so: %q by %s, want %s by default", d.Path, d.Rule, filepath.Join(dir, "libownld.so"))
	}
	if d := depOf(t, res, "libc.so.6"); d.Rule != rpath.RuleDefault {
		t.Errorf("libc.so.6: %q by %s, want a trusted directory (the loader has no cache)", d.Path, d.Rule)
	}
	// A program of this machine's loader still uses its cache.
	plain := tr.exe("plain", `int main(void){return 0;}`)
	if d := depOf(t, resolve(t, rpath.Options{}, plain), "libc.so.6"); d.Rule != rpath.RuleCache {
		t.Errorf("this machine's loader: libc.so.6 by %s, want the cache", d.Rule)
	}
}

// systemDirs on made-up .rodata: the lengths array before the strings, after
// them (aligned), or elsewhere; a single directory trusted from lengths
// elsewhere only when it is the loader's own (Nix's glibc: $out/lib/);
// 32-bit big-endian words.
func TestSystemDirsLayouts(t *testing.T) {
	le64 := func(ns ...uint64) []byte {
		var b []byte
		for _, n := range ns {
			b = binary.LittleEndian.AppendUint64(b, n)
		}
		return b
	}
	be32 := func(ns ...uint32) []byte {
		var b []byte
		for _, n := range ns {
			b = binary.BigEndian.AppendUint32(b, n)
		}
		return b
	}
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	nix := "/nix/store/0123456789abcdefghijklmnopqrstuv-glibc-2.39-52/lib/"
	pad := make([]byte, 64)
	for _, c := range []struct {
		name  string
		data  []byte
		word  int
		order binary.ByteOrder
		own   string
		want  []string
	}{
		{"before", cat(pad, le64(5, 9), []byte("/lib/\x00/usr/lib/\x00"), pad), 8, binary.LittleEndian, "/lib64", []string{"/lib", "/usr/lib"}},
		{"after", cat(pad, []byte("/xx/\x00/lib/\x00/usr/lib/\x00\x00\x00\x00"), le64(4, 5, 9), pad), 8, binary.LittleEndian, "", []string{"/xx", "/lib", "/usr/lib"}},
		{"elsewhere", cat(le64(5, 9), pad, []byte("/lib/\x00/usr/lib/\x00"), pad), 8, binary.LittleEndian, "", []string{"/lib", "/usr/lib"}},
		{"a store path, the loader's own", cat(le64(uint64(len(nix))), pad, []byte("\x00"+nix+"\x00"), pad), 8, binary.LittleEndian, strings.TrimSuffix(nix, "/"), []string{strings.TrimSuffix(nix, "/")}},
		{"one directory, not the loader's", cat(le64(uint64(len(nix))), pad, []byte("\x00"+nix+"\x00"), pad), 8, binary.LittleEndian, "/lib64", nil},
		{"32-bit big-endian", cat(pad, be32(5, 9), []byte("/lib/\x00/usr/lib/\x00"), pad), 4, binary.BigEndian, "", []string{"/lib", "/usr/lib"}},
		{"no lengths", cat(pad, []byte("/lib/\x00/usr/lib/\x00"), pad), 8, binary.LittleEndian, "", nil},
	} {
		if got := rpath.SystemDirs(c.data, c.word, c.order, c.own); !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// The glibc-hwcaps subdirectories are searched by the program's own
// loader's rules: its glibc version comes from the banner ld.so carries
// ("stable release version 2.36"), not from this machine's libc. A copy of
// the loader whose banner says 2.31 (before glibc-hwcaps) makes the
// resolver take the plain directory's library; the copy as it is, the
// x86-64-v2 one. (The patched copy still behaves as 2.36 when run: only
// what rocmdoctor reads is changed, so this is no loader oracle.)
func TestHWCapsFollowProgramsLoader(t *testing.T) {
	if !slices.Contains(rpath.HostHWCaps(), "x86-64-v2") {
		t.Skip("this CPU has no x86-64-v2")
	}
	ld := testenv.File(t, "/lib64/ld-linux-x86-64.so.2", "libc6")
	real, _ := filepath.EvalSymlinks(ld)
	orig, err := os.ReadFile(real)
	if err != nil {
		t.Fatal(err)
	}
	const banner = "stable release version 2.36."
	if !bytes.Contains(orig, []byte(banner)) {
		t.Skipf("%s is not glibc 2.36's loader: not patched", real)
	}
	tr := newTree(t)
	for _, sub := range []string{"lib/glibc-hwcaps/x86-64-v2", "lib"} {
		tr.lib(filepath.Join(sub, "libq.so"), "libq.so", "int q(void){return 0;}")
	}
	for _, c := range []struct{ name, version, want string }{
		{"ld-236.so", "2.36", "lib/glibc-hwcaps/x86-64-v2/libq.so"},
		{"ld-231.so", "2.31", "lib/libq.so"},
	} {
		loader := tr.path(c.name)
		patched := bytes.Replace(orig, []byte(banner), []byte("stable release version "+c.version+"."), 1)
		os.WriteFile(loader, patched, 0o755)
		prog := tr.exe("prog-"+c.version, `extern int q(void); int main(void){return q();}`,
			"-L"+tr.path("lib"), "-lq", "-Wl,--enable-new-dtags,-rpath,"+tr.path("lib"), "-Wl,--dynamic-linker="+loader)
		if d := depOf(t, resolve(t, rpath.Options{}, prog), "libq.so"); d.Path != tr.path(c.want) {
			t.Errorf("loader of glibc %s: %s, want %s", c.version, d.Path, tr.path(c.want))
		}
	}
}
