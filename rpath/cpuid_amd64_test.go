package rpath

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
)

// TestCPUIDAgreesWithProcCPUInfo: what readHostCPU asks the processor is
// what the kernel says in /proc/cpuinfo (vendor_id, flags) for every
// feature the loader's choices depend on. A kernel may leave a flag out of
// its list that the processor reports (Linux 6.18 under Firecracker prints
// no "abm" on an EPYC whose CPUID has LZCNT): there the loader decides —
// the glibc-hwcaps levels its --help calls supported must be the ones
// the CPUID flags give.
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
	var unlisted []string
	for _, n := range names {
		switch {
		case cpu.flags[n] && !flags[n]:
			unlisted = append(unlisted, n)
		case cpu.flags[n] != flags[n]:
			t.Errorf("%s: CPUID %v, /proc/cpuinfo %v", n, cpu.flags[n], flags[n])
		}
	}
	for n := range cpu.flags {
		if !slices.Contains(names, n) {
			t.Errorf("CPUID names %q, which nothing uses", n)
		}
	}
	levels := HWCapsForFlags(cpu.flags)
	t.Logf("%s, levels %v", vendor, levels)
	loader, ok := loaderHWCapsLevels(t)
	switch {
	case ok && !slices.Equal(levels, loader):
		t.Errorf("glibc-hwcaps levels from CPUID %v, the loader's supported ones %v", levels, loader)
	case !ok && len(unlisted) > 0:
		t.Errorf("CPUID has %v, which /proc/cpuinfo does not list, and there is no loader to decide", unlisted)
	case len(unlisted) > 0:
		t.Logf("/proc/cpuinfo leaves out %v, which CPUID has; the loader agrees with CPUID", unlisted)
	}
}

// loaderHWCapsLevels is the glibc-hwcaps levels the host's x86-64 loader
// says are supported (its --help, glibc 2.33 and later).
func loaderHWCapsLevels(t *testing.T) ([]string, bool) {
	out, err := exec.Command("/lib64/ld-linux-x86-64.so.2", "--help").Output()
	if err != nil {
		if testenv.RequireAll() {
			t.Errorf("the x86-64 loader's --help: %v", err)
		}
		return nil, false
	}
	_, list, ok := strings.Cut(string(out), "Subdirectories of glibc-hwcaps directories, in priority order:\n")
	if !ok {
		return nil, false
	}
	var levels []string
	for line := range strings.Lines(list) {
		if !strings.HasPrefix(line, "  ") {
			break
		}
		// An unsupported level is listed with no "(…)" after its name.
		name, state, _ := strings.Cut(strings.TrimSpace(line), " (")
		if strings.HasPrefix(state, "supported") {
			levels = append(levels, name)
		}
	}
	return levels, true
}
