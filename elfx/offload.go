package elfx

import (
	"bytes"
	"compress/zlib"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/rocmdoctor/rocmdoctor/internal/saferio"
	"github.com/rocmdoctor/rocmdoctor/internal/zstd"
)

/*
Clang offload bundles.

An uncompressed bundle (clang-offload-bundler, binary format) is

	"__CLANG_OFFLOAD_BUNDLE__"             24-byte magic
	uint64 n                               number of entries
	n × { uint64 offset, uint64 size,      offset relative to the bundle start
	      uint64 idlen, idlen bytes id }   e.g. "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-"

all little-endian. Host entries ("host-x86_64-unknown-linux") are usually
empty. A compressed bundle (clang-offload-bundler --compress, LLVM 17+) is

	"CCOB" uint16 version uint16 method    method: llvm::compression::Format, 0 zlib, 1 zstd
	v1: uint32 uncompressed size, uint64 hash                      (20-byte header)
	v2: uint32 total size, uint32 uncompressed size, uint64 hash   (24 bytes)
	v3: uint64 total size, uint64 uncompressed size, uint64 hash   (32 bytes)

followed by the compressed payload, an uncompressed bundle (the hash is the
low half of its MD5). Its entry table is inside the payload.

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
	// Offset is the absolute offset of the entry's data in the input; for
	// a compressed bundle, its offset in the decompressed payload.
	Offset int64
	Size   int64
	// Head holds the first bytes (up to 64, the ELF header) of an entry of
	// a compressed bundle, read while decompressing; nil otherwise.
	Head []byte
}

// OffloadBundle is a parsed clang offload bundle.
type OffloadBundle struct {
	Offset  int64 // absolute offset of the bundle
	Size    int64 // bytes from Offset to the end of the bundle (0 when unknown)
	Entries []BundleEntry
	// Compressed is set for "CCOB" bundles; their entries are read from
	// the zlib or zstd payload, streamed. Another method leaves Entries
	// empty and Note says why.
	Compressed        bool
	CompressionMethod string // "zlib", "zstd" or "method N"
	FormatVersion     int    // CCOB header version (1–3)
	UncompressedSize  int64
	Note              string
}

// ErrNoBundle means no bundle magic was found at the given offset.
var ErrNoBundle = errors.New("no offload bundle at offset")

// maxPayload bounds how much of a compressed bundle is decompressed.
const maxPayload = 1 << 32

// ParseOffloadBundle parses the bundle at off in r; limit is the end of the
// region the bundle must lie in (a section end or the file size).
func ParseOffloadBundle(r io.ReaderAt, off, limit int64) (*OffloadBundle, error) {
	var magic [24]byte
	if limit-off < 8 {
		return nil, ErrNoBundle
	}
	n, _ := r.ReadAt(magic[:], off)
	if n >= 4 && string(magic[:4]) == compressedMagic {
		return parseCompressedBundle(r, off, limit)
	}
	if n < 24 || string(magic[:]) != bundleMagic {
		return nil, ErrNoBundle
	}
	pos := off
	b, err := parseBundleTable(off, limit-off, func(k int64) ([]byte, error) {
		buf, err := saferio.ReadAt(r, limit, pos, k, 0)
		if err != nil {
			return nil, fmt.Errorf("entry table at 0x%x: %w", pos, err)
		}
		pos += k
		return buf, nil
	})
	if err != nil {
		return nil, fmt.Errorf("bundle at 0x%x: %w", off, err)
	}
	return b, nil
}

// parseBundleTable reads an uncompressed bundle's magic and entry table
// through next (which returns the following k bytes) and checks every entry
// against the region of size bytes; base is added to entry offsets.
func parseBundleTable(base, size int64, next func(k int64) ([]byte, error)) (*OffloadBundle, error) {
	b := &OffloadBundle{Offset: base}
	hdr, err := next(int64(len(bundleMagic)) + 8)
	if err != nil {
		return nil, err
	}
	if string(hdr[:len(bundleMagic)]) != bundleMagic {
		return nil, ErrNoBundle
	}
	read := int64(len(hdr))
	count := binary.LittleEndian.Uint64(hdr[len(bundleMagic):])
	if count > maxBundleEnts || count > uint64(size-read)/24 {
		return nil, fmt.Errorf("entry count %d too large", count)
	}
	var end int64
	for i := uint64(0); i < count; i++ {
		h, err := next(24)
		if err != nil {
			return nil, err
		}
		eo, es, il := binary.LittleEndian.Uint64(h), binary.LittleEndian.Uint64(h[8:]), binary.LittleEndian.Uint64(h[16:])
		if il > maxBundleIDLen {
			return nil, fmt.Errorf("entry %d id length %d too large", i, il)
		}
		id, err := next(int64(il))
		if err != nil {
			return nil, err
		}
		read += 24 + int64(il)
		if eo > uint64(size) || es > uint64(size)-eo {
			return nil, fmt.Errorf("entry %d [0x%x,+0x%x) outside the region of %d bytes", i, eo, es, size)
		}
		e := BundleEntry{ID: string(id), Offset: base + int64(eo), Size: int64(es)}
		e.Kind, e.Triple, e.TargetID = SplitBundleID(e.ID)
		b.Entries = append(b.Entries, e)
		end = max(end, int64(eo+es))
	}
	b.Size = max(end, read)
	return b, nil
}

func parseCompressedBundle(r io.ReaderAt, off, limit int64) (*OffloadBundle, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("compressed bundle at 0x%x: %s", off, fmt.Sprintf(format, a...))
	}
	h, err := saferio.ReadAt(r, limit, off, min(32, limit-off), 0)
	if err != nil || len(h) < 8 {
		return nil, bad("header truncated")
	}
	le := binary.LittleEndian
	b := &OffloadBundle{Offset: off, Compressed: true, FormatVersion: int(le.Uint16(h[4:]))}
	method := le.Uint16(h[6:])
	switch method {
	case 0:
		b.CompressionMethod = "zlib"
	case 1:
		b.CompressionMethod = "zstd"
	default:
		b.CompressionMethod = fmt.Sprintf("method %d", method)
	}
	var hb [32]byte // the longest header; fields past a short read stay zero until checked
	copy(hb[:], h)
	var hdrLen int
	var total, usize uint64
	switch b.FormatVersion {
	case 1:
		hdrLen, usize = 20, uint64(le.Uint32(hb[8:]))
	case 2:
		hdrLen, total, usize = 24, uint64(le.Uint32(hb[8:])), uint64(le.Uint32(hb[12:]))
	case 3:
		hdrLen, total, usize = 32, le.Uint64(hb[8:]), le.Uint64(hb[16:])
	default:
		return nil, bad("unknown format version %d", b.FormatVersion)
	}
	if len(h) < hdrLen {
		return nil, bad("version %d header needs %d bytes, %d left", b.FormatVersion, hdrLen, len(h))
	}
	if total != 0 && (total < uint64(hdrLen) || total > uint64(limit-off)) {
		return nil, bad("total size %d outside the %d bytes available", total, limit-off)
	}
	if usize > maxPayload {
		return nil, bad("uncompressed size %d too large", usize)
	}
	b.Size, b.UncompressedSize = int64(total), int64(usize)
	end := limit
	if b.Size != 0 {
		end = off + b.Size
	}
	src := io.NewSectionReader(r, off+int64(hdrLen), end-off-int64(hdrLen))
	var dec io.Reader
	switch method {
	case 0:
		zr, err := zlib.NewReader(src)
		if err != nil {
			return nil, bad("zlib payload: %v", err)
		}
		dec = zr
	case 1:
		zr := zstd.NewReader(src)
		defer zr.Close()
		dec = zr
	default:
		b.Note = fmt.Sprintf("offload bundle compressed with %s (format %d, %d bytes uncompressed): unknown to rocmdoctor; list its targets with clang-offload-bundler --list",
			b.CompressionMethod, b.FormatVersion, b.UncompressedSize)
		return b, nil
	}
	payload := io.LimitReader(dec, b.UncompressedSize)
	var pos int64 // position in the decompressed payload
	inner, err := parseBundleTable(0, b.UncompressedSize, func(k int64) ([]byte, error) {
		buf := make([]byte, k)
		if _, err := io.ReadFull(payload, buf); err != nil {
			return nil, fmt.Errorf("payload truncated at %d of %d bytes: %w", pos, b.UncompressedSize, err)
		}
		pos += k
		return buf, nil
	})
	if err != nil {
		return nil, bad("%s payload: %v", b.CompressionMethod, err)
	}
	b.Entries = inner.Entries
	// Read each entry's header on the way through the payload; entries are
	// stored in offset order, anything else is listed without a header.
	order := make([]int, len(b.Entries))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(x, y int) bool { return b.Entries[order[x]].Offset < b.Entries[order[y]].Offset })
	for _, i := range order {
		e := &b.Entries[i]
		if e.Size == 0 || e.Offset < pos {
			continue
		}
		if _, err := io.CopyN(io.Discard, payload, e.Offset-pos); err != nil {
			return nil, bad("%s payload truncated before entry %q: %v", b.CompressionMethod, e.ID, err)
		}
		pos = e.Offset
		e.Head = make([]byte, min(64, e.Size))
		if _, err := io.ReadFull(payload, e.Head); err != nil {
			return nil, bad("%s payload truncated in entry %q: %v", b.CompressionMethod, e.ID, err)
		}
		pos += int64(len(e.Head))
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
	if len(f.ef.Sections) == 0 {
		return f.gpuCodeInSegments()
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
		case isBundleSection(s.Name):
			objs, err := f.bundlesIn(s.Name, int64(s.Offset), end, false)
			if err != nil {
				return out, err
			}
			if len(objs) == 0 && !f.holdsBundle(int64(s.Offset), end) {
				// The section exists to carry one: its device code is
				// unreadable, not absent.
				return out, f.formatErr(int64(s.Offset), s.Name, fmt.Errorf("%d bytes without an offload bundle in them", s.Size))
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

// isBundleSection says whether a section of that name holds offload
// bundles (HIP's fat binary, or clang's bundles in an object file).
func isBundleSection(name string) bool {
	return name == ".hip_fatbin" || strings.HasPrefix(name, "__CLANG_OFFLOAD_BUNDLE__")
}

func isDataSection(name string) bool {
	switch {
	case name == ".rodata", name == ".data", name == ".data.rel.ro",
		strings.HasPrefix(name, ".rodata."), strings.HasPrefix(name, ".data."):
		return true
	}
	return false
}

// gpuCodeInSegments is GPUCodeObjects for a file stripped of its section
// headers: every loadable segment is searched for offload bundles and raw
// code objects, as the sections would have been. A bundle magic that does
// not begin a bundle (the string itself, in a toolchain library) is passed
// over, and a raw image that is an entry of a bundle found is not listed
// twice.
func (f *File) gpuCodeInSegments() ([]CodeObject, error) {
	var out []CodeObject
	for _, p := range f.ef.Progs {
		end := int64(p.Off + p.Filesz)
		if p.Type != elf.PT_LOAD || p.Filesz == 0 || int64(p.Off) < 0 || end < int64(p.Off) || end > f.Size {
			continue
		}
		name := fmt.Sprintf("PT_LOAD@0x%x", p.Off)
		bundles, err := f.bundlesIn(name, int64(p.Off), end, true)
		if err != nil {
			return out, err
		}
		out = append(out, bundles...)
		raw, err := f.rawImagesIn(name, int64(p.Off), end)
		if err != nil {
			return out, err
		}
		for _, r := range raw {
			dup := false
			for _, b := range bundles {
				dup = dup || b.Offset == r.Offset
			}
			if !dup {
				out = append(out, r)
			}
		}
	}
	return out, nil
}

// bundlesIn lists the code objects of the offload bundles in [start,
// end). lenient passes over a magic that does not begin a valid bundle
// instead of reporting it.
func (f *File) bundlesIn(sec string, start, end int64, lenient bool) ([]CodeObject, error) {
	var out []CodeObject
	pos := start
	idx := 0
	scan := newMagicScanner(f.r, start, end, bundleMagic, compressedMagic)
	defer scan.release()
	for pos < end {
		next, ok, err := scan.next(pos)
		if err != nil {
			return out, f.formatErr(pos, sec, err)
		}
		if !ok {
			break
		}
		b, err := ParseOffloadBundle(f.r, next, end)
		if err != nil && lenient {
			pos = next + 1
			continue
		}
		if err != nil {
			return out, f.formatErr(next, sec+" offload bundle", err)
		}
		if b.Compressed && len(b.Entries) == 0 {
			out = append(out, CodeObject{Container: "compressed-bundle", Section: sec, Offset: b.Offset,
				Size: b.Size, Bundle: idx, Note: b.Note})
		}
		for _, e := range b.Entries {
			if e.Kind == "host" || e.Size == 0 && !strings.HasPrefix(e.Triple, "amdgcn") {
				continue
			}
			co := CodeObject{Container: "offload-bundle", Section: sec, Offset: e.Offset, Size: e.Size,
				Bundle: idx, BundleID: e.ID, Kind: e.Kind, TargetID: e.TargetID}
			var t AMDGPUTarget
			var err error
			if b.Compressed {
				// The code object is inside the payload: report the bundle's
				// place in the file, and decode the header read with it.
				co.Container, co.Offset = "compressed-bundle", b.Offset
				t, _, err = readAMDGPUHeader(bytes.NewReader(e.Head), 0, int64(len(e.Head)))
			} else {
				t, err = f.amdgpuHeaderAt(e.Offset, e.Offset+e.Size)
			}
			if err == nil {
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
			adv = 24 // a v1 compressed bundle does not say how long it is
		}
		pos = next + adv
	}
	return out, nil
}

// holdsBundle reports whether an offload bundle begins anywhere in [start,
// end) (one that holds only host code gives bundlesIn no code objects).
func (f *File) holdsBundle(start, end int64) bool {
	scan := newMagicScanner(f.r, start, end, bundleMagic, compressedMagic)
	defer scan.release()
	_, ok, err := scan.next(start)
	return ok && err == nil
}

// magicScanner finds where magic strings begin in [pos, end) of r,
// reading forward in chunks through one buffer that it keeps between
// calls, so a section holding thousands of code objects is read once with
// one buffer of at most the section's size. (A fresh 64 KiB buffer per
// search, mostly for the few-byte .rodata.* sections of archive members,
// cost gpus over /usr/lib/x86_64-linux-gnu 1.1 GB of allocations and 480
// collections.)
// The gaps between bundles are alignment padding, so a search normally
// ends within the bytes already read.
type magicScanner struct {
	r      io.ReaderAt
	end    int64
	magics [][]byte
	maxLen int
	buf    []byte
	at     int64 // offset of buf[0] in r
	n      int   // bytes of buf read
}

// magicChunk is how much a magicScanner reads at a time (a variable for
// tests).
var magicChunk = 64 << 10

// newMagicScanner scans [start, end) of r. Its buffer is no larger than
// the range: the data sections of an archive's members are often a few
// bytes each.
func newMagicScanner(r io.ReaderAt, start, end int64, magics ...string) *magicScanner {
	s := &magicScanner{r: r, end: end, at: -1}
	for _, m := range magics {
		s.magics = append(s.magics, []byte(m))
		s.maxLen = max(s.maxLen, len(m))
	}
	n := min(int64(magicChunk), max(0, end-start)) + int64(s.maxLen)
	if b, ok := scanBufs.Get().(*[]byte); ok && int64(cap(*b)) >= n {
		s.buf = (*b)[:n]
	} else {
		s.buf = make([]byte, n)
	}
	return s
}

// scanBufs keeps a released scanner's buffer for the next section or file
// (inspect and gpus over a directory scan thousands of data sections).
var scanBufs sync.Pool

// release gives the buffer back; the scanner must not be used again.
func (s *magicScanner) release() {
	b := s.buf[:0]
	s.buf = nil
	scanBufs.Put(&b)
}

// next returns the first offset at or after pos where a magic begins and
// ends before end.
func (s *magicScanner) next(pos int64) (int64, bool, error) {
	for pos < s.end {
		if pos < s.at || pos >= s.at+int64(s.n) {
			if err := s.fill(pos); err != nil {
				return 0, false, err
			}
		}
		window := s.buf[pos-s.at : s.n]
		best := -1
		for _, m := range s.magics {
			if i := bytes.Index(window, m); i >= 0 && (best < 0 || i < best) {
				best = i
			}
		}
		if best >= 0 {
			return pos + int64(best), true, nil
		}
		stop := s.at + int64(s.n)
		if stop >= s.end {
			break
		}
		// A magic may begin in the last maxLen-1 bytes read.
		pos = max(pos+1, stop-int64(s.maxLen-1))
		if err := s.fill(pos); err != nil {
			return 0, false, err
		}
	}
	return 0, false, nil
}

// fill reads the buffer's worth of bytes from pos (fewer before end).
func (s *magicScanner) fill(pos int64) error {
	n := int(min(int64(len(s.buf)), s.end-pos))
	got, err := s.r.ReadAt(s.buf[:n], pos)
	if got < n {
		s.at, s.n = -1, 0
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	s.at, s.n = pos, n
	return nil
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
	t.readNotes(r, off, limit, h)
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
	scan := newMagicScanner(f.r, start, end, elf.ELFMAG)
	defer scan.release()
	for pos < end {
		at, ok, err := scan.next(pos)
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
