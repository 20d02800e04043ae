package rpath

import (
	"bytes"
	"debug/elf"
	"strconv"
	"strings"
	"sync"

	"github.com/rocmdoctor/rocmdoctor/elfx"
)

// x86-64 micro-architecture levels and the /proc/cpuinfo flags each needs
// (glibc sysdeps/x86/get-isa-level.h; LZCNT is "abm").
var x86Levels = []struct {
	name  string
	flags []string
}{
	{"x86-64-v2", []string{"cx16", "lahf_lm", "popcnt", "pni", "sse4_1", "sse4_2", "ssse3"}},
	{"x86-64-v3", []string{"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"}},
	{"x86-64-v4", []string{"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"}},
}

// HostHWCaps returns the glibc-hwcaps subdirectories the running CPU
// supports, highest priority first (["x86-64-v4", "x86-64-v3", "x86-64-v2"]
// on a recent x86-64 CPU), asking the CPU (CPUID); nil elsewhere.
func HostHWCaps() []string {
	cpu, ok := hostCPU()
	if !ok {
		return nil
	}
	return HWCapsForFlags(cpu.flags)
}

// hostCPU is the vendor and the features of the running x86-64 CPU, read
// once (readHostCPU); ok is false on other architectures.
var hostCPU = sync.OnceValues(readHostCPU)

// cpuID is a CPU's vendor (CPUID's, as /proc/cpuinfo's vendor_id) and
// the features among those glibc's loader looks at, named as in
// /proc/cpuinfo's flags.
type cpuID struct {
	vendor string
	flags  map[string]bool
}

// LegacyHWCapDirs returns the legacy hwcaps subdirectories that ld.so of
// glibc before 2.37 searches, for an x86-64 process, in every search
// directory after its glibc-hwcaps subdirectories and before the directory
// itself, highest priority first. The names (glibc sysdeps/x86
// cpu-features.c) are the hwcap "x86_64", always; on Intel CPUs "avx512_1"
// (AVX512CD, BW, DQ and VL without AVX512ER) and the platform "xeon_phi"
// (AVX512CD, ER and PF) or else "haswell" (AVX2, FMA, BMI1, BMI2, LZCNT,
// MOVBE, POPCNT); and "tls". Every combination is searched, as
// _dl_important_hwcaps builds them: with the names numbered in that order,
// the subsets by descending bit mask, each written from its highest
// number down (tls/haswell/avx512_1/x86_64, tls/haswell/avx512_1, …,
// avx512_1, x86_64). vendor is the CPUID vendor string (/proc/cpuinfo's vendor_id).
func LegacyHWCapDirs(vendor string, flags map[string]bool) []string {
	names := []string{"x86_64"}
	if vendor == "GenuineIntel" && flags["avx512cd"] && !flags["avx512er"] && flags["avx512bw"] && flags["avx512dq"] && flags["avx512vl"] {
		names = append(names, "avx512_1")
	}
	if platform := X86Platform(vendor, flags); platform != "" {
		names = append(names, platform)
	}
	names = append(names, "tls")
	var out []string
	for mask := 1<<len(names) - 1; mask > 0; mask-- {
		var parts []string
		for i := len(names) - 1; i >= 0; i-- {
			if mask&(1<<i) != 0 {
				parts = append(parts, names[i])
			}
		}
		out = append(out, strings.Join(parts, "/"))
	}
	return out
}

// hostLegacyCaps is the cache's view of hostLegacy.
var hostLegacyCaps = sync.OnceValue(func() LegacyCaps { return LegacyCapsOf(hostLegacy()) })

// X86Platform is the platform glibc's ld.so sets for an x86-64 CPU
// (cpu-features.c, every glibc since 2.26): "xeon_phi" for Intel CPUs
// with AVX512CD, ER and PF, "haswell" for other Intel CPUs with AVX2, FMA,
// BMI1, BMI2, LZCNT, MOVBE and POPCNT, "" otherwise (then the kernel's
// "x86_64" stays). It names a legacy hwcaps subdirectory and is what
// $PLATFORM expands to.
func X86Platform(vendor string, flags map[string]bool) string {
	if vendor != "GenuineIntel" {
		return ""
	}
	if flags["avx512cd"] && flags["avx512er"] && flags["avx512pf"] {
		return "xeon_phi"
	}
	if flags["avx2"] && flags["fma"] && flags["bmi1"] && flags["bmi2"] && flags["abm"] && flags["movbe"] && flags["popcnt"] {
		return "haswell"
	}
	return ""
}

// hostPlatform is $PLATFORM for an x86-64 process on the running CPU.
var hostPlatform = sync.OnceValue(func() string {
	if cpu, ok := hostCPU(); ok {
		if p := X86Platform(cpu.vendor, cpu.flags); p != "" {
			return p
		}
	}
	return "x86_64"
})

// hostLegacy is LegacyHWCapDirs for the running CPU (nil on other
// architectures than amd64).
var hostLegacy = sync.OnceValue(func() []string {
	cpu, ok := hostCPU()
	if !ok {
		return nil
	}
	return LegacyHWCapDirs(cpu.vendor, cpu.flags)
})

// LegacyCapsOf is the LegacyCaps of a loader that searches the legacy
// hwcaps subdirectories dirs (LegacyHWCapDirs): the names in them are the
// CPU's hwcaps and platform.
func LegacyCapsOf(dirs []string) LegacyCaps {
	l := LegacyCaps{Enabled: len(dirs) > 0}
	for _, d := range dirs {
		for _, n := range strings.Split(d, "/") {
			switch n {
			case "x86_64":
				l.HWCap |= 1 << 1
			case "avx512_1":
				l.HWCap |= 1 << 2
			case "haswell":
				l.Platform = 1 << 50
			case "xeon_phi":
				l.Platform = 1 << 51
			}
		}
	}
	return l
}

// GlibcMinor returns N for the C library at path (libc.so.6), read from
// its "release version 2.N" banner in .rodata, or -1 when path is not such
// a file.
func GlibcMinor(path string) int { return glibcMinorIn(path, bannerChunk) }

// glibcMinorIn is GlibcMinor reading .rodata chunk bytes at a time.
func glibcMinorIn(path string, chunk int) int {
	f, err := elfx.Open(path)
	if err != nil {
		return -1
	}
	defer f.Close()
	s := f.ELF().Section(".rodata")
	if s == nil || s.Type == elf.SHT_NOBITS || s.Size > 64<<20 {
		return -1
	}
	// .rodata is read a piece at a time into one small buffer (the
	// banner lies 80% into libc 2.36's 150 KB, and every resolving
	// command looks for it); the end of a piece is kept for the next, so
	// a banner across the boundary is found whole.
	const banner = "release version 2."
	keep := len(banner) + 4 // the banner and up to four digits
	buf := make([]byte, 0, chunk+keep)
	for off := uint64(0); off < s.Size; {
		n := min(uint64(chunk), s.Size-off)
		at := len(buf)
		buf = buf[:at+int(n)]
		if _, err := s.ReadAt(buf[at:], int64(off)); err != nil {
			return -1
		}
		off += n
		last := off == s.Size
		if i := bytes.Index(buf, []byte(banner)); i >= 0 && (last || i+keep <= len(buf)) {
			return bannerMinor(buf[i+len(banner):])
		}
		if len(buf) > keep {
			buf = append(buf[:0], buf[len(buf)-keep:]...)
		}
	}
	return -1
}

// bannerChunk is how much of .rodata GlibcMinor reads at a time.
const bannerChunk = 16 << 10

// bannerMinor is the number (up to four digits) at the start of rest, or
// -1.
func bannerMinor(rest []byte) int {
	n := 0
	for n < len(rest) && n < 4 && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	v, err := strconv.Atoi(string(rest[:n]))
	if err != nil {
		return -1
	}
	return v
}

// HWCapsForFlags returns the x86-64 levels satisfied by a set of cpuinfo
// flags, highest first. Each level requires the ones below it.
func HWCapsForFlags(flags map[string]bool) []string {
	var ok []string
	for _, l := range x86Levels {
		for _, f := range l.flags {
			if !flags[f] {
				return reverse(ok)
			}
		}
		ok = append(ok, l.name)
	}
	return reverse(ok)
}

func reverse(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[len(xs)-1-i] = x
	}
	return out
}

// isaLevelBits maps selected levels to GNU_PROPERTY_X86_ISA_1_* bits
// (baseline 1, v2 2, v3 4, v4 8) for ld.so.cache ISA-level checks.
func isaLevelBits(hwcaps []string) uint32 {
	bits := uint32(1)
	for _, h := range hwcaps {
		switch h {
		case "x86-64-v2":
			bits |= 2
		case "x86-64-v3":
			bits |= 4
		case "x86-64-v4":
			bits |= 8
		}
	}
	return bits
}

// ParseHWCapsLevel turns a --hwcaps value into the subdirectory list:
// "none", "x86-64-v2", "x86-64-v3" or "x86-64-v4" (each includes the lower
// levels), or "auto" for the running CPU.
func ParseHWCapsLevel(s string) ([]string, bool) {
	switch s {
	case "", "auto":
		return nil, true
	case "none", "baseline", "x86-64":
		return []string{}, true
	}
	for i, l := range x86Levels {
		if l.name == s || strings.TrimPrefix(l.name, "x86-64-") == s {
			var out []string
			for j := i; j >= 0; j-- {
				out = append(out, x86Levels[j].name)
			}
			return out, true
		}
	}
	return nil, false
}
