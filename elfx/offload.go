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

/*
Clang offload bundles.

An uncompressed bundle (clang-offload-bundler, binary format) is

	"__CLANG_OFFLOAD_BUNDLE__"             24-byte magic
	uint64 n                               number of entries
	n × { uint64 offset, uint64 size,      offset relative to the bundle start
	      uint64 idlen, idlen bytes id }   e.g. "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-"

all little-endian. Host entries ("host-x86_64-unknown-linux") are usually
empty. A compressed bundle starts with "CCOB", a 2-byte version and a 2-byte
method (1 zlib, 2 zstd); version 2 adds a 4-byte and version 3 an 8-byte total
size, followed by the uncompressed size and a hash. Its entry table is inside
the compressed data.

HIP places one bundle per translation unit in the .hip_fatbin section, each
aligned to 4096 bytes; .hipFatBinSegment holds a {magic "HIPF", version,
pointer, reserved} wrapper per bundle.
*/

const (
	bundleMagic     = "__CLANG_OFFLOAD_BUNDLE__"
	compressedMagic = "CCOB"
	maxBundleIDLen  = 4096
	maxBundleEnts   = 1 << 16
)

// BundleEntry is one entry of an offload bundle.
type BundleEntry struct {
	ID       string // full entry id
	Kind     string // "hip", "hipv4", "openmp", "host", …
	Triple   string // "amdgcn-amd-amdhsa", "x86_64-unknown-linux"
	TargetID string // "gfx90a:xnack-", "" for host entries
	Offset   int64  // absolute offset of the entry's data in the input
	Size     int64
}

// OffloadBundle is a parsed clang offload bundle.
type OffloadBundle struct {
	Offset  int64 // absolute offset of the bundle
	Size    int64 // bytes from Offset to the end of the last entry (0 when unknown)
	Entries []BundleEntry
	// Compressed is set for "CCOB" bundles; Entries is then empty and
	// CompressionMethod says how the payload is compressed.
	Compressed        bool
	CompressionMethod string
}

// ErrNoBundle means no bundle magic was found at the given offset.
var ErrNoBundle = errors.New("no offload bundle at offset")

// ParseOffloadBundle parses the bundle at off in r; limit is the end of the
// region the bundle must lie in (a section end or the file size).
func ParseOffloadBundle(r io.ReaderAt, off, limit int64) (*OffloadBundle, error) {
	var magic [24]byte
	if limit-off < 8 {
		return nil, ErrNoBundle
	}
	n, _ := r.ReadAt(magic[:], off)
	if n >= 4 && string(magic[:4]) == compressedMagic {
		return parseCompressedBundle(r, off, limit, magic[:n])
	}
	if n < 24 || string(magic[:]) != bundleMagic {
		return nil, ErrNoBundle
	}
	b := &OffloadBundle{Offset: off}
	pos := off + 24
	rd := func(k int64) ([]byte, error) {
		buf, err := saferio.ReadAt(r, limit, pos, k, 0)
		if err != nil {
			return nil, fmt.Errorf("bundle at 0x%x: entry table at 0x%x: %w", off, pos, err)
		}
		pos += k
		return buf, nil
	}
	cnt, err := rd(8)
	if err != nil {
		return nil, err
	}
	count := binary.LittleEndian.Uint64(cnt)
	if count > maxBundleEnts || count > uint64(limit-pos)/24 {
		return nil, fmt.Errorf("bundle at 0x%x: entry count %d too large", off, count)
	}
	var end int64
	for i := uint64(0); i < count; i++ {
		h, err := rd(24)
		if err != nil {
			return nil, err
		}
		eo, es, il := binary.LittleEndian.Uint64(h), binary.LittleEndian.Uint64(h[8:]), binary.LittleEndian.Uint64(h[16:])
		if il > maxBundleIDLen {
			return nil, fmt.Errorf("bundle at 0x%x: entry %d id length %d too large", off, i, il)
		}
		id, err := rd(int64(il))
		if err != nil {
			return nil, err
		}
		region := uint64(limit - off)
		if eo > region || es > region-eo {
			return nil, fmt.Errorf("bundle at 0x%x: entry %d [0x%x,+0x%x) outside the region of %d bytes", off, i, eo, es, region)
		}
		e := BundleEntry{ID: string(id), Offset: off + int64(eo), Size: int64(es)}
		e.Kind, e.Triple, e.TargetID = SplitBundleID(e.ID)
		b.Entries = append(b.Entries, e)
		if x := int64(eo + es); x > end {
			end = x
		}
	}
	if hdr := pos - off; hdr > end {
		end = hdr
	}
	b.Size = end
	return b, nil
}

func parseCompressedBundle(r io.ReaderAt, off, limit int64, _ []byte) (*OffloadBundle, error) {
	h, err := saferio.ReadAt(r, limit, off, 16, 0)
	if err != nil {
		return nil, fmt.Errorf("compressed bundle at 0x%x: %w", off, err)
	}
	version := binary.LittleEndian.Uint16(h[4:])
	method := binary.LittleEndian.Uint16(h[6:])
	b := &OffloadBundle{Offset: off, Compressed: true}
	switch method {
	case 1:
		b.CompressionMethod = "zlib"
	case 2:
		b.CompressionMethod = "zstd"
	default:
		b.CompressionMethod = fmt.Sprintf("method %d", method)
	}
	switch version {
	case 2:
		b.Size = int64(binary.LittleEndian.Uint32(h[8:]))
	case 3:
		b.Size = int64(binary.LittleEndian.Uint64(h[8:]))
	}
	if b.Size < 0 || b.Size > limit-off {
		b.Size = 0
	}
	return b, nil
}

// SplitBundleID splits "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-" into kind
// "hipv4", triple "amdgcn-amd-amdhsa" and target ID "gfx90a:xnack-". The
// older three-part spelling "hip-amdgcn-amd-amdhsa-gfx906" is accepted too.
func SplitBundleID(id string) (kind, triple, target string) {
	kind, rest, ok := strings.Cut(id, "-")
	if !ok {
		return id, "", ""
	}
	parts := strings.SplitN(rest, "-", 5)
	switch {
	case len(parts) == 5:
		triple = strings.Join(parts[:4], "-")
		target = parts[4]
	case len(parts) == 4 && strings.HasPrefix(parts[3], "gfx"):
		triple = strings.Join(parts[:3], "-")
		target = parts[3]
	default:
		triple = rest
	}
	triple = strings.TrimSuffix(triple, "-")
	return kind, triple, target
}

// CodeObject is an AMDGPU code object found inside a file.
type CodeObject struct {
	// Container is "offload-bundle", "compressed-bundle", "raw-image" or "file".
	Container string
	Section   string // section holding it
	Offset    int64  // absolute file offset of the code object (of the bundle for compressed ones)
	Size      int64
	Bundle    int    // index of the bundle within the section, -1 for raw images
	BundleID  string // entry id for bundle entries
	Kind      string // bundle kind: "hip", "hipv4", "openmp"; "" for raw images
	// TargetID is the target the code object is for: from the bundle id, or
	// from the code object's own header for raw images.
	TargetID string
	// Target is decoded from the code object's ELF header; nil when the
	// entry is not an AMDGPU ELF (bitcode, compressed, unreadable).
	Target *AMDGPUTarget
	// Note explains anything unusual (compressed payload, header mismatch).
	Note string
}

// GPUCodeObjects lists the AMDGPU code objects the file carries: entries of
// offload bundles in .hip_fatbin (and __CLANG_OFFLOAD_BUNDLE__* sections),
// raw EM_AMDGPU images embedded in data sections, and the file itself when
// it is an AMDGPU code object. Only bundle headers, code-object ELF headers
// and the data sections scanned for raw images are read.
func (f *File) GPUCodeObjects() ([]CodeObject, error) {
	if f.AMDGPU != nil {
		return []CodeObject{{Container: "file", Offset: 0, Size: f.Size, Bundle: -1,
			TargetID: f.AMDGPU.TargetID(), Target: f.AMDGPU}}, nil
	}
	var out []CodeObject
	for _, s := range f.ef.Sections {
		if s.Type == elf.SHT_NOBITS || s.Size == 0 {
			continue
		}
		end := int64(s.Offset + s.Size)
		if int64(s.Offset) < 0 || end < int64(s.Offset) || end > f.Size {
			continue // debug/elf accepted it, but it lies outside the file
		}
		switch {
		case s.Name == ".hip_fatbin" || strings.HasPrefix(s.Name, "__CLANG_OFFLOAD_BUNDLE__"):
			objs, err := f.bundlesIn(s.Name, int64(s.Offset), end)
			if err != nil {
				return out, err
			}
			out = append(out, objs...)
		case s.Type == elf.SHT_PROGBITS && s.Flags&elf.SHF_EXECINSTR == 0 && isDataSection(s.Name):
			objs, err := f.rawImagesIn(s.Name, int64(s.Offset), end)
			if err != nil {
				return out, err
			}
			out = append(out, objs...)
		}
	}
	return out, nil
}

func isDataSection(name string) bool {
	switch {
	case name == ".rodata", name == ".data", name == ".data.rel.ro",
		strings.HasPrefix(name, ".rodata."), strings.HasPrefix(name, ".data."):
		return true
	}
	return false
}

func (f *File) bundlesIn(sec string, start, end int64) ([]CodeObject, error) {
	var out []CodeObject
	pos := start
	idx := 0
	for pos < end {
		next, ok, err := findMagic(f.r, pos, end, []string{bundleMagic, compressedMagic})
		if err != nil {
			return out, f.formatErr(pos, sec, err)
		}
		if !ok {
			break
		}
		b, err := ParseOffloadBundle(f.r, next, end)
		if err != nil {
			return out, f.formatErr(next, sec+" offload bundle", err)
		}
		if b.Compressed {
			out = append(out, CodeObject{Container: "compressed-bundle", Section: sec, Offset: b.Offset,
				Size: b.Size, Bundle: idx, Note: "compressed offload bundle (" + b.CompressionMethod + "); targets are inside the compressed payload"})
		}
		for _, e := range b.Entries {
			if e.Kind == "host" || e.Size == 0 && !strings.HasPrefix(e.Triple, "amdgcn") {
				continue
			}
			co := CodeObject{Container: "offload-bundle", Section: sec, Offset: e.Offset, Size: e.Size,
				Bundle: idx, BundleID: e.ID, Kind: e.Kind, TargetID: e.TargetID}
			if t, err := f.amdgpuHeaderAt(e.Offset, e.Offset+e.Size); err == nil {
				co.Target = &t
				if co.TargetID == "" {
					co.TargetID = t.TargetID()
				}
			} else {
				co.Note = err.Error()
			}
			out = append(out, co)
		}
		idx++
		adv := b.Size
		if adv < 24 {
			adv = 24
		}
		pos = next + adv
	}
	return out, nil
}

// findMagic returns the first offset in [pos,end) where one of magics starts,
// reading forward in chunks. The gaps between bundles are alignment padding,
// so this normally reads a few bytes.
func findMagic(r io.ReaderAt, pos, end int64, magics []string) (int64, bool, error) {
	const chunk = 64 << 10
	maxLen := 0
	for _, m := range magics {
		if len(m) > maxLen {
			maxLen = len(m)
		}
	}
	buf := make([]byte, chunk+maxLen)
	for pos < end {
		n := int64(len(buf))
		if end-pos < n {
			n = end - pos
		}
		got, err := r.ReadAt(buf[:n], pos)
		if got < int(n) {
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return 0, false, err
		}
		best := -1
		for _, m := range magics {
			if i := bytes.Index(buf[:n], []byte(m)); i >= 0 && (best < 0 || i < best) {
				best = i
			}
		}
		if best >= 0 {
			return pos + int64(best), true, nil
		}
		if n < int64(len(buf)) {
			break
		}
		pos += chunk
	}
	return 0, false, nil
}

// amdgpuHeaderAt decodes the ELF header at off if it is an AMDGPU ELF that
// fits before limit.
func (f *File) amdgpuHeaderAt(off, limit int64) (AMDGPUTarget, error) {
	t, _, err := readAMDGPUHeader(f.r, off, limit)
	return t, err
}

// readAMDGPUHeader reads an ELF64 little-endian EM_AMDGPU header at off and
// returns its target and the extent of the image (end of its section or
// program header tables, whichever is last).
func readAMDGPUHeader(r io.ReaderAt, off, limit int64) (AMDGPUTarget, int64, error) {
	h, err := saferio.ReadAt(r, limit, off, 64, 0)
	if err != nil {
		return AMDGPUTarget{}, 0, fmt.Errorf("code object header at 0x%x: %w", off, err)
	}
	if string(h[:4]) != elf.ELFMAG {
		if string(h[:4]) == "BC\xc0\xde" {
			return AMDGPUTarget{}, 0, fmt.Errorf("LLVM bitcode, not a code object")
		}
		return AMDGPUTarget{}, 0, fmt.Errorf("code object at 0x%x is not ELF", off)
	}
	if elf.Class(h[elf.EI_CLASS]) != elf.ELFCLASS64 || elf.Data(h[elf.EI_DATA]) != elf.ELFDATA2LSB {
		return AMDGPUTarget{}, 0, fmt.Errorf("code object at 0x%x is not ELF64 LSB", off)
	}
	bo := binary.LittleEndian
	if elf.Machine(bo.Uint16(h[18:])) != elf.EM_AMDGPU {
		return AMDGPUTarget{}, 0, fmt.Errorf("ELF at 0x%x is %s, not EM_AMDGPU", off, MachineName(elf.Machine(bo.Uint16(h[18:]))))
	}
	t := DecodeAMDGPU(bo.Uint32(h[48:]), elf.OSABI(h[elf.EI_OSABI]), h[elf.EI_ABIVERSION])
	phEnd := bo.Uint64(h[32:]) + uint64(bo.Uint16(h[54:]))*uint64(bo.Uint16(h[56:]))
	shEnd := bo.Uint64(h[40:]) + uint64(bo.Uint16(h[58:]))*uint64(bo.Uint16(h[60:]))
	ext := max(uint64(64), phEnd, shEnd)
	if ext > uint64(limit-off) {
		ext = uint64(limit - off)
	}
	return t, int64(ext), nil
}

// rawImagesIn scans a data section for embedded EM_AMDGPU ELF images.
func (f *File) rawImagesIn(sec string, start, end int64) ([]CodeObject, error) {
	var out []CodeObject
	pos := start
	for pos < end {
		at, ok, err := findMagic(f.r, pos, end, []string{elf.ELFMAG})
		if err != nil {
			return out, f.formatErr(pos, sec, err)
		}
		if !ok {
			break
		}
		t, size, err := readAMDGPUHeader(f.r, at, end)
		if err != nil {
			pos = at + 1
			continue
		}
		out = append(out, CodeObject{Container: "raw-image", Section: sec, Offset: at, Size: size,
			Bundle: -1, TargetID: t.TargetID(), Target: &t})
		pos = at + max(size, 64)
	}
	return out, nil
}
