package rpath

import (
	"os"
	"runtime"
	"strings"
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
// on a recent x86-64 CPU). It reads /proc/cpuinfo and returns nil elsewhere.
func HostHWCaps() []string {
	if runtime.GOARCH != "amd64" {
		return nil
	}
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return nil
	}
	return HWCapsForFlags(cpuFlags(string(b)))
}

func cpuFlags(cpuinfo string) map[string]bool {
	flags := map[string]bool{}
	for _, line := range strings.Split(cpuinfo, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(k) == "flags" {
			for _, f := range strings.Fields(v) {
				flags[f] = true
			}
			break
		}
	}
	return flags
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
