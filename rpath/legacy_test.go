package rpath_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
	"github.com/rocmdoctor/rocmdoctor/rpath"
)

func flagSet(fs ...string) map[string]bool {
	m := map[string]bool{}
	for _, f := range fs {
		m[f] = true
	}
	return m
}

func TestLegacyHWCapDirs(t *testing.T) {
	haswell := []string{"avx2", "fma", "bmi1", "bmi2", "abm", "movbe", "popcnt"}
	avx512 := []string{"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"}
	for _, tt := range []struct {
		name   string
		vendor string
		flags  map[string]bool
		want   []string
	}{
		// AMD: only the x86_64 hwcap, whatever the features.
		{"amd", "AuthenticAMD", flagSet(append(haswell, avx512...)...), []string{"tls/x86_64", "tls", "x86_64"}},
		{"intel haswell", "GenuineIntel", flagSet(haswell...),
			[]string{"tls/haswell/x86_64", "tls/haswell", "tls/x86_64", "tls", "haswell/x86_64", "haswell", "x86_64"}},
		// What LD_DEBUG=libs shows on an AVX-512 Xeon with glibc 2.36.
		{"intel avx512", "GenuineIntel", flagSet(append(haswell, avx512...)...), []string{
			"tls/haswell/avx512_1/x86_64", "tls/haswell/avx512_1", "tls/haswell/x86_64", "tls/haswell",
			"tls/avx512_1/x86_64", "tls/avx512_1", "tls/x86_64", "tls",
			"haswell/avx512_1/x86_64", "haswell/avx512_1", "haswell/x86_64", "haswell",
			"avx512_1/x86_64", "avx512_1", "x86_64"}},
		// Knights Landing: the xeon_phi platform, neither avx512_1 nor haswell.
		{"xeon phi", "GenuineIntel", flagSet(append(append(haswell, avx512...), "avx512er", "avx512pf")...),
			[]string{"tls/xeon_phi/x86_64", "tls/xeon_phi", "tls/x86_64", "tls", "xeon_phi/x86_64", "xeon_phi", "x86_64"}},
		{"intel without lzcnt", "GenuineIntel", flagSet("avx2", "fma", "bmi1", "bmi2", "movbe", "popcnt"), []string{"tls/x86_64", "tls", "x86_64"}},
		// AVX512ER without PF: no xeon_phi, and glibc goes on to haswell.
		{"intel er without pf", "GenuineIntel", flagSet(append(append(haswell, avx512...), "avx512er")...),
			[]string{"tls/haswell/x86_64", "tls/haswell", "tls/x86_64", "tls", "haswell/x86_64", "haswell", "x86_64"}},
	} {
		if got := rpath.LegacyHWCapDirs(tt.vendor, tt.flags); !slices.Equal(got, tt.want) {
			t.Errorf("%s: %v\nwant %v", tt.name, got, tt.want)
		}
	}
}

// TestGlibcMinor reads the version from libc.so.6's banner; getconf is the
// oracle.
func TestGlibcMinor(t *testing.T) {
	getconf := testenv.Tool(t, "getconf", "libc-bin")
	out, err := exec.Command(getconf, "GNU_LIBC_VERSION").Output()
	if err != nil {
		t.Fatal(err)
	}
	_, v, _ := strings.Cut(strings.TrimSpace(string(out)), " 2.")
	want, _ := strconv.Atoi(v)
	libc := testenv.File(t, "/lib/x86_64-linux-gnu/libc.so.6", "libc6")
	if got := rpath.GlibcMinor(libc); got != want || got < 17 {
		t.Errorf("GlibcMinor(%s) = %d, getconf says 2.%d", libc, got, want)
	}
	tr := newTree(t)
	fake := fakeLibc(tr, "fake/libc.so.6", 31)
	if got := rpath.GlibcMinor(fake); got != 31 {
		t.Errorf("banner 2.31: %d", got)
	}
	plain := tr.lib("fake/libplain.so", "libplain.so", `const char msg[] = "no banner here";`)
	text := tr.path("fake/text")
	os.WriteFile(text, []byte("stable release version 2.31."), 0o644)
	for _, p := range []string{plain, text, tr.path("fake")} {
		if got := rpath.GlibcMinor(p); got != -1 {
			t.Errorf("%s: %d, want -1", p, got)
		}
	}
}

// TestGlibcMinorInPieces: read a few bytes at a time, so that the banner
// and its digits fall across every boundary, the version is the same.
func TestGlibcMinorInPieces(t *testing.T) {
	libc := testenv.File(t, "/lib/x86_64-linux-gnu/libc.so.6", "libc6")
	want := rpath.GlibcMinor(libc)
	tr := newTree(t)
	fake := fakeLibc(tr, "fake/libc.so.6", 1234)
	for _, n := range []int{1, 2, 3, 5, 17, 64, 4096} {
		if got := rpath.GlibcMinorIn(libc, n); got != want {
			t.Errorf("%d-byte pieces: %s is 2.%d, whole 2.%d", n, libc, got, want)
		}
		if got := rpath.GlibcMinorIn(fake, n); got != 1234 {
			t.Errorf("%d-byte pieces: banner 2.1234 read as %d", n, got)
		}
	}
}

// TestLegacyHWCapsRealLoader puts copies of a library in a directory's
// glibc-hwcaps and legacy hwcaps subdirectories and in the directory itself,
// and removes the one the real loader picked until only the plain one is
// left: each time rocmdoctor must pick the same copy (glibc before 2.37
// searches the legacy subdirectories; later ones do not, and neither must
// rocmdoctor then).
func TestLegacyHWCapsRealLoader(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("x86-64 hwcaps")
	}
	tr := newTree(t)
	d := tr.path("d")
	subs := []string{"glibc-hwcaps/x86-64-v2", "tls", "tls/x86_64", "haswell", "x86_64", "avx512_1/x86_64", "."}
	for i, s := range subs {
		tr.lib(filepath.Join("d", s, "libhw.so"), "libhw.so", "int hw(void) { return "+strconv.Itoa(i+1)+"; }")
	}
	exe := tr.exe("main", `#include <stdio.h>
extern int hw(void); int main(void) { printf("%d\n", hw()); return 0; }`, "-L"+d, "-lhw", "-Wl,--enable-new-dtags,-rpath,"+d)
	for left := len(subs); left > 0; left-- {
		out, err := exec.Command(exe).Output()
		if err != nil {
			t.Fatalf("%s: %v", exe, err)
		}
		n, _ := strconv.Atoi(strings.TrimSpace(string(out)))
		if n < 1 || n > len(subs) {
			t.Fatalf("the program printed %q", out)
		}
		loaded := filepath.Join(d, subs[n-1], "libhw.so")
		dep := depOf(t, resolve(t, rpath.Options{NoCache: true}, exe), "libhw.so")
		if dep.Path != loaded {
			t.Fatalf("ld.so loads %s, rocmdoctor resolves %s (hwcaps %q)", loaded, dep.Path, dep.HWCaps)
		}
		if legacy := subs[n-1] != "." && !strings.HasPrefix(subs[n-1], "glibc-hwcaps/"); dep.LegacyHWCaps != legacy ||
			(subs[n-1] != "." && !strings.HasSuffix(subs[n-1], dep.HWCaps)) {
			t.Errorf("%s: hwcaps %q, legacy %v", subs[n-1], dep.HWCaps, dep.LegacyHWCaps)
		}
		t.Logf("ld.so and rocmdoctor: %s", strings.TrimPrefix(loaded, d+"/"))
		if err := os.Remove(loaded); err != nil {
			t.Fatal(err)
		}
		if subs[n-1] == "." {
			break
		}
	}
}

// TestHWCapsFollowSysrootGlibc: the subdirectories searched depend on the
// glibc of the sysroot: 2.31 has no glibc-hwcaps, 2.36 has both kinds,
// 2.38 no legacy ones.
func TestHWCapsFollowSysrootGlibc(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("x86-64 hwcaps")
	}
	tr := newTree(t)
	root := tr.path("root")
	lib := filepath.Join("root", "usr", "lib", "x86_64-linux-gnu")
	for _, s := range []string{"glibc-hwcaps/x86-64-v2", "x86_64", "."} {
		tr.lib(filepath.Join(lib, s, "libq.so"), "libq.so", "int q(void) { return 0; }")
	}
	exe := tr.exe("root/bin/main", "extern int q(void); int main(void) { return q(); }", "-L"+tr.path(lib), "-lq")
	os.MkdirAll(filepath.Join(root, "lib", "x86_64-linux-gnu"), 0o755)
	v2 := slices.Contains(rpath.HostHWCaps(), "x86-64-v2")
	for _, tt := range []struct {
		minor         int
		hwcaps, plain string
	}{
		{31, "x86_64", "x86_64"},
		{36, "glibc-hwcaps/x86-64-v2", "x86_64"},
		{38, "glibc-hwcaps/x86-64-v2", "."},
	} {
		fakeLibc(tr, "root/lib/x86_64-linux-gnu/libc.so.6", tt.minor)
		want := tt.plain
		if v2 {
			want = tt.hwcaps
		}
		dep := depOf(t, resolve(t, rpath.Options{Root: root, NoCache: true}, exe), "libq.so")
		if dep.Path != filepath.Join(root, "usr", "lib", "x86_64-linux-gnu", want, "libq.so") {
			t.Errorf("glibc 2.%d: resolved %s, want %s/libq.so", tt.minor, dep.Path, want)
		}
	}
}

// TestLegacyCacheEntries: ldconfig records libraries in legacy hwcaps
// subdirectories with hwcap bits; a loader older than glibc 2.37 takes the
// first of a name's entries (in cache order) that the CPU can use, a newer
// one only the plain entry. (On this kind of machine the real loader was
// checked by hand against /etc/ld.so.cache: tls/ first, then haswell/ on
// an Intel CPU.)
func TestLegacyCacheEntries(t *testing.T) {
	ldconfig := testenv.Tool(t, "ldconfig", "libc-bin")
	tr := newTree(t)
	for _, s := range []string{"xeon_phi", "haswell", "avx512_1", "x86_64", "."} {
		tr.lib(filepath.Join("d", s, "libyy.so.1"), "libyy.so.1", "int y(void) { return 0; }")
	}
	tr.lib("d/tls/libzz.so.1", "libzz.so.1", "int z(void) { return 0; }")
	tr.lib("d/haswell/libzz.so.1", "libzz.so.1", "int z(void) { return 0; }")
	tr.lib("d/libzz.so.1", "libzz.so.1", "int z(void) { return 0; }")
	conf, cache := tr.path("ld.so.conf"), tr.path("ld.so.cache")
	os.WriteFile(conf, []byte(tr.path("d")+"\n"), 0o644)
	if out, err := exec.Command(ldconfig, "-X", "-C", cache, "-f", conf).CombinedOutput(); err != nil {
		t.Fatalf("ldconfig: %v\n%s", err, out)
	}
	c, err := rpath.ReadCache(cache)
	if err != nil {
		t.Fatal(err)
	}
	legacy := 0
	for _, e := range c.Entries {
		if e.Name == "libyy.so.1" && e.Legacy != 0 {
			legacy++
		}
	}
	if legacy != 4 {
		t.Fatalf("%d legacy entries for libyy.so.1, want 4: %+v", legacy, c.Entries)
	}
	haswell := []string{"avx2", "fma", "bmi1", "bmi2", "abm", "movbe", "popcnt"}
	avx512 := append([]string{"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"}, haswell...)
	for _, tt := range []struct {
		cpu          string
		vendor       string
		flags        []string
		glibc237     bool
		wantY, wantZ string
	}{
		{"newer glibc", "GenuineIntel", avx512, true, ".", "."},
		{"amd", "AuthenticAMD", avx512, false, "x86_64", "tls"},
		{"intel haswell", "GenuineIntel", haswell, false, "haswell", "tls"},
		{"intel avx512", "GenuineIntel", avx512, false, "haswell", "tls"},
		{"xeon phi", "GenuineIntel", append(avx512, "avx512er", "avx512pf"), false, "xeon_phi", "tls"},
	} {
		dirs := rpath.LegacyHWCapDirs(tt.vendor, flagSet(tt.flags...))
		if tt.glibc237 {
			dirs = []string{}
		}
		for name, want := range map[string]string{"libyy.so.1": tt.wantY, "libzz.so.1": tt.wantZ} {
			e, ok := c.Lookup(name, 0x0303, nil, 1, rpath.LegacyCapsOf(dirs))
			if w := filepath.Join(tr.path("d"), want, name); !ok || e.Path != w {
				t.Errorf("%s: %s → %s, want %s", tt.cpu, name, e.Path, w)
			}
		}
	}
}

// TestPlatformRealLoader: $PLATFORM in a RUNPATH expands to what ld.so
// sets for this CPU ("haswell" on most Intel CPUs, "x86_64" on AMD ones);
// copies of the library under both names tell which one the real loader
// used.
func TestPlatformRealLoader(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("x86-64 platforms")
	}
	tr := newTree(t)
	for i, p := range []string{"haswell", "xeon_phi", "x86_64"} {
		tr.lib(filepath.Join("p", p, "libplat.so"), "libplat.so", "int plat(void) { return "+strconv.Itoa(i+1)+"; }")
	}
	exe := tr.exe("main", `#include <stdio.h>
extern int plat(void); int main(void) { printf("%d\n", plat()); return 0; }`, "-L"+tr.path("p/x86_64"), "-lplat", "-Wl,--enable-new-dtags,-rpath,"+tr.path("p")+"/$PLATFORM")
	out, err := exec.Command(exe).Output()
	if err != nil {
		t.Fatalf("%s: %v", exe, err)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	want := filepath.Join(tr.path("p"), []string{"", "haswell", "xeon_phi", "x86_64"}[min(max(n, 0), 3)], "libplat.so")
	dep := depOf(t, resolve(t, rpath.Options{NoCache: true}, exe), "libplat.so")
	if dep.Path != want {
		t.Errorf("ld.so loads %s, rocmdoctor resolves %s", want, dep.Path)
	}
}

// fakeLibc builds a library whose .rodata holds glibc's version banner.
func fakeLibc(tr *tree, out string, minor int) string {
	return tr.lib(out, "libc.so.6", `const char banner[] = "GNU C Library (test) stable release version 2.`+strconv.Itoa(minor)+`.\n";`)
}
