package rpath

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// TestCPUIDAgreesWithProcCPUInfo: what readHostCPU asks the processor is
// what the kernel says in /proc/cpuinfo (vendor_id, flags) for every
// feature the loader's choices depend on.
func TestCPUIDAgreesWithProcCPUInfo(t *testing.T) {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Skipf("no /proc/cpuinfo to compare with: %v", err)
	}
	var vendor string
	flags := map[string]bool{}
	for line := range strings.Lines(string(b)) {
		k, v, ok := strings.Cut(line, ":")
		switch k = strings.TrimSpace(k); {
		case !ok:
		case k == "vendor_id" && vendor == "":
			vendor = strings.TrimSpace(v)
		case k == "flags" && len(flags) == 0:
			for _, f := range strings.Fields(v) {
				flags[f] = true
			}
		}
	}
	cpu, ok := readHostCPU()
	if !ok {
		t.Fatal("readHostCPU refused on amd64")
	}
	if cpu.vendor != vendor {
		t.Errorf("vendor %q, /proc/cpuinfo %q", cpu.vendor, vendor)
	}
	names := []string{"avx512er", "avx512pf"}
	for _, l := range x86Levels {
		names = append(names, l.flags...)
	}
	for _, n := range names {
		if cpu.flags[n] != flags[n] {
			t.Errorf("%s: CPUID %v, /proc/cpuinfo %v", n, cpu.flags[n], flags[n])
		}
	}
	for n := range cpu.flags {
		if !slices.Contains(names, n) {
			t.Errorf("CPUID names %q, which nothing uses", n)
		}
	}
	t.Logf("%s, levels %v", vendor, HWCapsForFlags(cpu.flags))
}
