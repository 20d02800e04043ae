package rpath

func cpuid(leaf, sub uint32) (eax, ebx, ecx, edx uint32)

// xgetbv0 is the low half of XCR0, the register states the kernel
// enabled (call only when CPUID says OSXSAVE).
func xgetbv0() (eax uint32)

// readHostCPU asks the processor itself (CPUID, and XGETBV for what the
// kernel enabled) the way glibc's cpu-features.c does, and names the
// features as /proc/cpuinfo does: a feature that needs register state the
// kernel did not enable (AVX without YMM, AVX-512 without ZMM and opmask
// state) is left out, as glibc leaves it out of the usable set and the
// kernel out of /proc/cpuinfo. (Reading /proc/cpuinfo instead costs every
// resolving command: the kernel formats it, per CPU.)
func readHostCPU() (cpuID, bool) {
	maxLeaf, b, c, d := cpuid(0, 0)
	cpu := cpuID{vendor: string(le32(b)) + string(le32(d)) + string(le32(c)), flags: map[string]bool{}}
	set := func(name string, reg uint32, bit uint) {
		if reg&(1<<bit) != 0 {
			cpu.flags[name] = true
		}
	}
	if maxLeaf < 1 {
		return cpu, true
	}
	_, _, c1, _ := cpuid(1, 0)
	for _, f := range []struct {
		name string
		bit  uint
	}{{"pni", 0}, {"ssse3", 9}, {"cx16", 13}, {"sse4_1", 19}, {"sse4_2", 20}, {"movbe", 22}, {"popcnt", 23}, {"xsave", 26}} {
		set(f.name, c1, f.bit)
	}
	// Register state the kernel enabled: XMM and YMM (bits 1, 2) for
	// AVX; opmask, ZMM_Hi256 and Hi16_ZMM (bits 5-7) for AVX-512.
	var ymm, zmm bool
	if c1&(1<<27) != 0 { // OSXSAVE
		xcr0 := xgetbv0()
		ymm = xcr0&0x6 == 0x6
		zmm = ymm && xcr0&0xe0 == 0xe0
	}
	if ymm {
		set("avx", c1, 28)
		set("fma", c1, 12)
		set("f16c", c1, 29)
	}
	if maxLeaf >= 7 {
		_, b7, _, _ := cpuid(7, 0)
		set("bmi1", b7, 3)
		set("bmi2", b7, 8)
		if cpu.flags["avx"] {
			set("avx2", b7, 5)
		}
		if zmm && b7&(1<<16) != 0 {
			for _, f := range []struct {
				name string
				bit  uint
			}{{"avx512f", 16}, {"avx512dq", 17}, {"avx512pf", 26}, {"avx512er", 27}, {"avx512cd", 28}, {"avx512bw", 30}, {"avx512vl", 31}} {
				set(f.name, b7, f.bit)
			}
		}
	}
	if maxExt, _, _, _ := cpuid(0x80000000, 0); maxExt >= 0x80000001 {
		_, _, c81, _ := cpuid(0x80000001, 0)
		set("lahf_lm", c81, 0)
		set("abm", c81, 5) // LZCNT
	}
	return cpu, true
}

func le32(v uint32) []byte { return []byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)} }
