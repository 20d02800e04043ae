package elfx

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/rocmdoctor/rocmdoctor/internal/saferio"
)

// AMDGPU e_flags fields (LLVM's BinaryFormat/ELF.h).
const (
	EF_AMDGPU_MACH                   = 0x0ff
	EF_AMDGPU_FEATURE_XNACK_V3       = 0x100
	EF_AMDGPU_FEATURE_SRAMECC_V3     = 0x200
	EF_AMDGPU_FEATURE_XNACK_V4       = 0x300
	EF_AMDGPU_FEATURE_SRAMECC_V4     = 0xc00
	EF_AMDGPU_GENERIC_VERSION        = 0xff000000
	EF_AMDGPU_GENERIC_VERSION_OFFSET = 24
)

// amdgpuMach maps EF_AMDGPU_MACH values to processor names.
var amdgpuMach = map[uint8]string{
	0x01: "r600", 0x02: "r630", 0x03: "rs880", 0x04: "rv670", 0x05: "rv710",
	0x06: "rv730", 0x07: "rv770", 0x08: "cedar", 0x09: "cypress", 0x0a: "juniper",
	0x0b: "redwood", 0x0c: "sumo", 0x0d: "barts", 0x0e: "caicos", 0x0f: "cayman",
	0x10: "turks",
	0x20: "gfx600", 0x21: "gfx601", 0x22: "gfx700", 0x23: "gfx701", 0x24: "gfx702",
	0x25: "gfx703", 0x26: "gfx704", 0x28: "gfx801", 0x29: "gfx802", 0x2a: "gfx803",
	0x2b: "gfx810", 0x2c: "gfx900", 0x2d: "gfx902", 0x2e: "gfx904", 0x2f: "gfx906",
	0x30: "gfx908", 0x31: "gfx909", 0x32: "gfx90c", 0x33: "gfx1010", 0x34: "gfx1011",
	0x35: "gfx1012", 0x36: "gfx1030", 0x37: "gfx1031", 0x38: "gfx1032", 0x39: "gfx1033",
	0x3a: "gfx602", 0x3b: "gfx705", 0x3c: "gfx805", 0x3d: "gfx1035", 0x3e: "gfx1034",
	0x3f: "gfx90a", 0x40: "gfx940", 0x41: "gfx1100", 0x42: "gfx1013", 0x43: "gfx1150",
	0x44: "gfx1103", 0x45: "gfx1036", 0x46: "gfx1101", 0x47: "gfx1102", 0x48: "gfx1200",
	0x49: "gfx1250", 0x4a: "gfx1151", 0x4b: "gfx941", 0x4c: "gfx942", 0x4e: "gfx1201",
	0x4f: "gfx950", 0x50: "gfx1310", 0x51: "gfx9-generic", 0x52: "gfx10-1-generic",
	0x53: "gfx10-3-generic", 0x54: "gfx11-generic", 0x55: "gfx1152", 0x57: "gfx1154",
	0x58: "gfx1153", 0x59: "gfx12-generic", 0x5a: "gfx1251", 0x5b: "gfx12-5-generic",
	0x5c: "gfx1172", 0x5d: "gfx1170", 0x5e: "gfx1171", 0x5f: "gfx9-4-generic",
	0x62: "gfx11-7-generic", 0x63: "gfx13-generic",
}

// Processors that support the xnack and sramecc target features
// (AMDGPUUsage, "AMDGPU Processors").
var (
	xnackProcs = set("gfx801", "gfx810", "gfx900", "gfx902", "gfx904", "gfx906", "gfx908",
		"gfx909", "gfx90a", "gfx90c", "gfx940", "gfx941", "gfx942", "gfx950", "gfx1010",
		"gfx1011", "gfx1012", "gfx1013", "gfx9-generic", "gfx9-4-generic", "gfx10-1-generic")
	srameccProcs = set("gfx906", "gfx908", "gfx90a", "gfx940", "gfx941", "gfx942", "gfx950",
		"gfx9-4-generic")
)

func set(xs ...string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// Feature is the setting of a target feature (xnack, sramecc) in a code object.
type Feature uint8

const (
	FeatureUnsupported Feature = iota // the processor has no such feature
	FeatureAny                        // built to run in either mode
	FeatureOff                        // "feature-"
	FeatureOn                         // "feature+"
)

func (f Feature) String() string {
	return [...]string{"unsupported", "any", "off", "on"}[f&3]
}

// suffix is the target-ID spelling: "+", "-" or "" for any/unsupported.
func (f Feature) suffix() string {
	switch f {
	case FeatureOn:
		return "+"
	case FeatureOff:
		return "-"
	}
	return ""
}

// AMDGPUTarget is what an AMDGPU code object's header says about its target.
type AMDGPUTarget struct {
	Mach      uint8  // EF_AMDGPU_MACH
	Processor string // "gfx90a"; "unknown-0xNN" for values not in the table
	Xnack     Feature
	SRAMECC   Feature
	// CodeObjectVersion is 2…6 for ELFOSABI_AMDGPU_HSA (1 for the HSA
	// finalizer's v1 objects, which say so in a note), 0 when unknown.
	CodeObjectVersion int
	// GenericVersion is the generic-target version (code object v6), 0 otherwise.
	GenericVersion int
}

// DecodeAMDGPU decodes e_flags of an EM_AMDGPU file.
func DecodeAMDGPU(flags uint32, osabi elf.OSABI, abiVersion uint8) AMDGPUTarget {
	t := AMDGPUTarget{Mach: uint8(flags & EF_AMDGPU_MACH)}
	if name, ok := amdgpuMach[t.Mach]; ok {
		t.Processor = name
	} else if t.Mach == 0 {
		// EF_AMDGPU_MACH_NONE: code objects v1 and v2 name their ISA in a
		// note (readNotes).
		t.Processor = "none"
	} else {
		t.Processor = fmt.Sprintf("unknown-0x%02x", t.Mach)
	}
	if osabi == ELFOSABI_AMDGPU_HSA {
		// ELFABIVERSION_AMDGPU_HSA_V2 = 0 … V6 = 4.
		if abiVersion <= 4 {
			t.CodeObjectVersion = int(abiVersion) + 2
		}
	}
	switch {
	case t.CodeObjectVersion >= 4:
		t.Xnack = Feature((flags & EF_AMDGPU_FEATURE_XNACK_V4) >> 8)
		t.SRAMECC = Feature((flags & EF_AMDGPU_FEATURE_SRAMECC_V4) >> 10)
	case t.CodeObjectVersion == 2 && t.Mach != 0, t.CodeObjectVersion == 3:
		// v3 has only on/off bits; a clear bit means "off" where the processor
		// supports the feature. LLVM 7 and later write v2 the same way (as
		// llvm-readobj reads it); before, e_flags recorded neither the
		// processor nor the features.
		t.Xnack = v3Feature(flags&EF_AMDGPU_FEATURE_XNACK_V3 != 0, xnackProcs[t.Processor])
		t.SRAMECC = v3Feature(flags&EF_AMDGPU_FEATURE_SRAMECC_V3 != 0, srameccProcs[t.Processor])
	}
	if t.CodeObjectVersion >= 6 {
		t.GenericVersion = int(flags >> EF_AMDGPU_GENERIC_VERSION_OFFSET)
	}
	return t
}

func v3Feature(on, supported bool) Feature {
	switch {
	case on:
		return FeatureOn
	case supported:
		return FeatureOff
	}
	return FeatureUnsupported
}

// TargetID is the LLVM target ID: processor followed by the explicitly set
// features in alphabetical order, e.g. "gfx90a:sramecc+:xnack-".
func (t AMDGPUTarget) TargetID() string {
	id := t.Processor
	if s := t.SRAMECC.suffix(); s != "" {
		id += ":sramecc" + s
	}
	if s := t.Xnack.suffix(); s != "" {
		id += ":xnack" + s
	}
	return id
}

func (t AMDGPUTarget) String() string {
	s := t.TargetID()
	if t.CodeObjectVersion > 0 {
		s += fmt.Sprintf(" (code object v%d)", t.CodeObjectVersion)
	}
	return s
}

// TargetID is a parsed target ID such as "gfx90a:xnack-".
type TargetID struct {
	Processor string
	Xnack     Feature // FeatureAny when not given
	SRAMECC   Feature
}

// ErrBadTargetID is wrapped by ParseTargetID's errors.
var ErrBadTargetID = errors.New("bad target ID")

// ParseTargetID parses "gfx90a", "gfx90a:xnack-", "gfx906:sramecc+:xnack-".
func ParseTargetID(s string) (TargetID, error) {
	parts := strings.Split(s, ":")
	t := TargetID{Processor: parts[0], Xnack: FeatureAny, SRAMECC: FeatureAny}
	if t.Processor == "" {
		return t, fmt.Errorf("%w: empty", ErrBadTargetID)
	}
	for _, p := range parts[1:] {
		if len(p) < 2 {
			return t, fmt.Errorf("%w %q: bad feature %q", ErrBadTargetID, s, p)
		}
		var v Feature
		switch p[len(p)-1] {
		case '+':
			v = FeatureOn
		case '-':
			v = FeatureOff
		default:
			return t, fmt.Errorf("%w %q: feature %q must end in + or -", ErrBadTargetID, s, p)
		}
		switch p[:len(p)-1] {
		case "xnack":
			t.Xnack = v
		case "sramecc":
			t.SRAMECC = v
		default:
			return t, fmt.Errorf("%w %q: unknown feature %q", ErrBadTargetID, s, p[:len(p)-1])
		}
	}
	return t, nil
}

func (t TargetID) String() string {
	id := t.Processor
	if s := t.SRAMECC.suffix(); s != "" {
		id += ":sramecc" + s
	}
	if s := t.Xnack.suffix(); s != "" {
		id += ":xnack" + s
	}
	return id
}

// Notes of AMDGPU code objects v1 and v2 (owner "AMD"), whose e_flags
// carry no processor (EF_AMDGPU_MACH_NONE).
const (
	ntAMDHSACodeObjectVersion = 1 // major, minor (uint32 each)
	ntAMDHSAISAVersion        = 3 // name sizes (uint16 each), major, minor, stepping (uint32 each), names
)

// maxHSANotes bounds what is read of a code object's notes (the v1/v2
// ones are a few hundred bytes), and maxHSASections its section headers.
const (
	maxHSANotes    = 64 << 10
	maxHSASections = 256
)

// readNotes names the processor of a code object v1/v2 (EF_AMDGPU_MACH_NONE)
// from its notes (see hsaNoteTarget), and takes its code object version
// from them; t is left as it is for other objects or without such notes.
func (t *AMDGPUTarget) readNotes(r io.ReaderAt, base, limit int64, h []byte) {
	if t.Mach != 0 || len(h) < 64 || elf.Class(h[elf.EI_CLASS]) != elf.ELFCLASS64 || elf.Data(h[elf.EI_DATA]) != elf.ELFDATA2LSB {
		return
	}
	if proc, cov, ok := hsaNoteTarget(r, base, limit, h); ok {
		t.Processor = proc
		if cov != 0 {
			t.CodeObjectVersion = cov
		}
	}
}

// hsaNoteTarget reads the processor and code object version of a v1/v2
// AMDGPU code object from its notes: gfx followed by the ISA version's
// major, minor and stepping (as LLVM names them: 9.0.10 is gfx90a). (The
// NT_AMD_HSA_ISA_NAME note came with LLVM 7, which also set e_flags.) h is the code object's ELF64 LSB
// header, at base in r, the object ending by limit. ok is false when no
// AMD ISA note is found.
func hsaNoteTarget(r io.ReaderAt, base, limit int64, h []byte) (proc string, cov int, ok bool) {
	bo := binary.LittleEndian
	var spans [][2]uint64 // note offsets and sizes, relative to base
	shoff, shent, shnum := bo.Uint64(h[40:]), uint64(bo.Uint16(h[58:])), uint64(bo.Uint16(h[60:]))
	size := uint64(limit - base)
	if shoff != 0 && shoff < size && shent == 64 && shnum > 0 && shnum <= maxHSASections {
		if sh, err := saferio.ReadAt(r, limit, base+int64(shoff), int64(shnum*64), 0); err == nil {
			for i := uint64(0); i < shnum; i++ {
				s := sh[i*64:]
				if elf.SectionType(bo.Uint32(s[4:])) == elf.SHT_NOTE {
					spans = append(spans, [2]uint64{bo.Uint64(s[24:]), bo.Uint64(s[32:])})
				}
			}
		}
	}
	phoff, phent, phnum := bo.Uint64(h[32:]), uint64(bo.Uint16(h[54:])), uint64(bo.Uint16(h[56:]))
	if len(spans) == 0 && phoff != 0 && phoff < size && phent == 56 && phnum > 0 && phnum <= maxHSASections {
		if ph, err := saferio.ReadAt(r, limit, base+int64(phoff), int64(phnum*56), 0); err == nil {
			for i := uint64(0); i < phnum; i++ {
				p := ph[i*56:]
				if elf.ProgType(bo.Uint32(p)) == elf.PT_NOTE {
					spans = append(spans, [2]uint64{bo.Uint64(p[8:]), bo.Uint64(p[32:])})
				}
			}
		}
	}
	for _, sp := range spans {
		if sp[0] >= size || sp[1] == 0 {
			continue
		}
		b, err := saferio.ReadAt(r, limit, base+int64(sp[0]), int64(min(sp[1], maxHSANotes, size-sp[0])), 0)
		if err != nil {
			continue
		}
		for len(b) >= 12 {
			namesz, descsz, typ := uint64(bo.Uint32(b)), uint64(bo.Uint32(b[4:])), bo.Uint32(b[8:])
			nameEnd := 12 + (namesz+3)&^3
			descEnd := nameEnd + (descsz+3)&^3
			if namesz > uint64(len(b)) || descsz > uint64(len(b)) || descEnd > uint64(len(b)) {
				break
			}
			owner, desc := string(bytes.TrimRight(b[12:12+namesz], "\x00")), b[nameEnd:nameEnd+descsz]
			b = b[descEnd:]
			if owner != "AMD" {
				continue
			}
			switch typ {
			case ntAMDHSACodeObjectVersion:
				if len(desc) >= 8 {
					if v := bo.Uint32(desc); v >= 1 && v <= 2 {
						cov = int(v)
					}
				}
			case ntAMDHSAISAVersion:
				if len(desc) >= 16 && proc == "" {
					major, minor, step := bo.Uint32(desc[4:]), bo.Uint32(desc[8:]), bo.Uint32(desc[12:])
					if major >= 6 && major <= 99 && minor <= 9 && step <= 15 {
						proc = fmt.Sprintf("gfx%d%d%x", major, minor, step)
					}
				}
			}
		}
	}
	return proc, cov, proc != ""
}
