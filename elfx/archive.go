package elfx

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/rocmdoctor/rocmdoctor/internal/regfile"
	"github.com/rocmdoctor/rocmdoctor/internal/saferio"
)

/*
The ar format.

An archive starts with the 8-byte magic "!<arch>\n" (or "!<thin>\n" for a
thin archive) followed by members. Each member has a 60-byte header of ASCII
fields padded with spaces:

	offset  size  field
	0       16    name
	16      12    modification time (decimal seconds)
	28      6     owner id (decimal)
	34      6     group id (decimal)
	40      8     mode (octal)
	48      10    size of the data in bytes (decimal)
	58      2     terminator "`\n"

The data follows the header and is padded to an even offset with "\n".

Name conventions:

	GNU/SysV  "name/"       a short name, terminated by '/'
	          "/"           the symbol index: a 4-byte big-endian count n,
	                        n 4-byte big-endian header offsets, n NUL-terminated names
	          "/SYM64/"     the same with 8-byte count and offsets
	          "//"          the long-name table: names terminated by "/\n"
	          "/123"        the name at offset 123 of the long-name table
	BSD       "#1/20"       the first 20 bytes of the data are the name; the
	                        member's own data follows them
	          "__.SYMDEF", "__.SYMDEF SORTED"
	                        the symbol index: a 4-byte size of the ranlib array,
	                        (string offset, header offset) pairs of 4 bytes, a
	                        4-byte string-table size, then the strings; the
	                        integers are in the target's byte order
	          "__.SYMDEF_64" the same with 8-byte integers

In a thin archive the index and the long-name table are stored as usual, but
ordinary members have no data in the archive: their names (always long names)
are paths relative to the archive's directory, and the size field gives the
size of that external file.
*/

// ArchiveKind is the dialect of an archive.
type ArchiveKind int

const (
	ArchiveGNU  ArchiveKind = iota // GNU/SysV names ("/", "//", "name/")
	ArchiveBSD                     // BSD names ("#1/len", "__.SYMDEF")
	ArchiveThin                    // "!<thin>": members stored outside
)

func (k ArchiveKind) String() string {
	return [...]string{"gnu", "bsd", "thin"}[k]
}

const (
	arMagic     = "!<arch>\n"
	arThinMagic = "!<thin>\n"
	arHdrSize   = 60
)

// Member is one archive member. Data is read only when asked for.
type Member struct {
	Name    string
	Header  int64 // offset of the member header in the archive
	Offset  int64 // offset of the data: in the archive, or 0 in the external file for thin members
	Size    int64
	Mode    uint32
	ModTime int64
	UID     int
	GID     int
	// External is the path of a thin archive's member, resolved against the
	// archive's directory; empty for ordinary archives.
	External string
}

// ArchiveSymbol is an entry of the archive's symbol index.
type ArchiveSymbol struct {
	Name   string
	Member int // index into Archive.Members, -1 when the offset names no member
}

// Archive is an open static archive.
type Archive struct {
	Path    string
	Kind    ArchiveKind
	Members []Member
	// Symbols is the archive symbol index in file order; nil when the archive
	// has none. HasIndex distinguishes an empty index from a missing one.
	Symbols  []ArchiveSymbol
	HasIndex bool
	Size     int64

	r       io.ReaderAt
	heads   []memberHead // the start of each member's data, read with its header
	noNames bool         // the index is checked but its names are not kept (Probe.ArchiveMembers)
	dir     string       // directory thin members are relative to
	closer  io.Closer
	opened  []*os.File
}

// memberHeadSize is how much of each member's data parse keeps: an ELF64
// header.
const memberHeadSize = 64

type memberHead struct {
	n uint8
	b [memberHeadSize]byte
}

// memberReader reads an archive member's data through the archive's
// reader, serving the reads that fall inside its first bytes (kept when
// its header was read) from them. A check of an archive's members reads
// each one's type and ELF header first: without this, a pread each.
type memberReader struct {
	r    io.ReaderAt
	off  int64 // the member's data in the archive
	head []byte
}

func (m *memberReader) ReadAt(p []byte, off int64) (int, error) {
	if in := off - m.off; in >= 0 && in <= int64(len(m.head)) && int64(len(p)) <= int64(len(m.head))-in {
		return copy(p, m.head[in:]), nil
	}
	return m.r.ReadAt(p, off)
}

// IsArchive reports whether r starts with an ar magic.
func IsArchive(r io.ReaderAt) bool {
	var m [8]byte
	n, _ := r.ReadAt(m[:], 0)
	return n == 8 && (string(m[:]) == arMagic || string(m[:]) == arThinMagic)
}

// OpenArchive opens the named archive. Thin members are resolved relative to
// its directory. The caller must Close it.
func OpenArchive(path string) (*Archive, error) {
	h, st, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	// Member headers are read one by one; for archives of small members
	// (libc.a has 1,700) the block cache turns that into a read per 4 KiB.
	return openArchive(h, newBlockReader(h, st.Size()), st.Size(), path, true)
}

// openArchive parses an opened archive read through br; the Archive owns
// h, which is closed on failure.
func openArchive(h *handle, br *blockReader, size int64, path string, names bool) (*Archive, error) {
	a, err := newArchive(br, size, path, names)
	if err != nil {
		br.release()
		h.Close()
		return nil, err
	}
	a.closer = h
	return a, nil
}

// NewArchive parses an archive from r. Thin members resolve relative to the
// current directory unless the archive came from OpenArchive.
func NewArchive(r io.ReaderAt) (*Archive, error) {
	size, ok := saferio.Size(r)
	if !ok {
		size = math.MaxInt64
	}
	return NewArchiveSize(r, size, "")
}

// NewArchiveSize parses an archive of the given size; name is used in errors
// and as the base for thin members.
func NewArchiveSize(r io.ReaderAt, size int64, name string) (*Archive, error) {
	return newArchive(r, size, name, true)
}

// newArchive is NewArchiveSize; without names, Symbols stays nil.
func newArchive(r io.ReaderAt, size int64, name string, names bool) (*Archive, error) {
	a := &Archive{Path: name, Size: size, r: r, dir: filepath.Dir(name), noNames: !names}
	if name == "" {
		a.dir = "."
	}
	if err := a.parse(); err != nil {
		return nil, err
	}
	return a, nil
}

// Close releases the archive and any thin members opened through it.
func (a *Archive) Close() error {
	var first error
	for _, f := range a.opened {
		if err := f.Close(); err != nil && first == nil {
			first = err
		}
	}
	a.opened = nil
	if br, ok := a.r.(*blockReader); ok {
		br.release()
	}
	if a.closer != nil {
		if err := a.closer.Close(); err != nil && first == nil {
			first = err
		}
		a.closer = nil
	}
	return first
}

func (a *Archive) errAt(off int64, what string, err error) error {
	return &FormatError{Path: a.Path, Offset: off, What: what, Err: err}
}

type rawIndex struct {
	kind string // "gnu32", "gnu64", "bsd32", "bsd64"
	data []byte
	off  int64
}

// parse reads the archive's member headers, its long-name table and its
// symbol index.
func (a *Archive) parse() error {
	var magic [8]byte
	if n, _ := a.r.ReadAt(magic[:], 0); n < 8 {
		return fmt.Errorf("%s: %w", nameOr(a.Path), ErrNotArchive)
	}
	switch string(magic[:]) {
	case arMagic:
		a.Kind = ArchiveGNU
	case arThinMagic:
		a.Kind = ArchiveThin
	default:
		return fmt.Errorf("%s: %w", nameOr(a.Path), ErrNotArchive)
	}
	ps := &arParse{byHeader: map[int64]int{}, direct: a.r}
	defer ps.done()
	// A header that follows a member larger than a block is read by
	// itself, around the block cache: the cache would copy a whole block
	// for its 124 bytes, and LLVM's members average 60 KB (20 MB copied
	// for 5,000 headers). Headers among small members (libc.a's) share
	// cached blocks.
	if br, ok := a.r.(*blockReader); ok {
		ps.direct = br.r
	}
	off, prevSize := int64(8), int64(0)
	for off < a.Size {
		if a.Size-off == 1 { // a trailing pad byte some writers leave
			break
		}
		hdr, err := a.readHeader(ps, off, prevSize)
		if err != nil {
			if a.Size == math.MaxInt64 && errors.Is(err, io.ErrUnexpectedEOF) {
				break // unknown size: end of data
			}
			return a.errAt(off, "member header", err)
		}
		next, err := a.member(ps, off, hdr)
		if err != nil {
			return err
		}
		if next <= off {
			return a.errAt(off, "member header", errors.New("member does not advance"))
		}
		off, prevSize = next, next-off-arHdrSize
	}
	if ps.index != nil {
		syms, err := parseIndex(ps.index, ps.byHeader, !a.noNames)
		if err != nil {
			return a.errAt(ps.index.off, "archive symbol index", err)
		}
		if a.noNames {
			syms = nil // a BSD index is decoded to be checked
		}
		a.Symbols, a.HasIndex = syms, true
	}
	return nil
}

// arParse is the state of one parse.
type arParse struct {
	longNames []byte
	index     *rawIndex
	byHeader  map[int64]int // member index by header offset, for the symbol index
	direct    io.ReaderAt   // the file around the block cache
	hb        [arHdrSize + memberHeadSize]byte
	release   func() // returns the buffer a checked index was read into
}

func (ps *arParse) done() {
	if ps.release != nil {
		ps.release()
	}
}

// readHeader reads the member header at off, and with it the start of the
// member's data where the archive's size is known: Open's readers serve
// their first reads (file type, ELF header) from it. prevSize is the size
// of the member before it. The bytes are ps's until the next call.
func (a *Archive) readHeader(ps *arParse, off, prevSize int64) ([]byte, error) {
	if err := saferio.CheckRead(a.Size, off, arHdrSize, 0); err != nil {
		return nil, err
	}
	n := arHdrSize
	if a.Size != math.MaxInt64 {
		n += int(min(memberHeadSize, a.Size-off-arHdrSize))
	}
	src := a.r
	if prevSize > blockSize {
		src = ps.direct
	}
	if err := saferio.ReadFull(src, ps.hb[:n], off); err != nil {
		return nil, err
	}
	return ps.hb[:n], nil
}

// member takes in the member whose header, at off, is hdr: a symbol index,
// the long-name table, or a member; next is where the next header is.
func (a *Archive) member(ps *arParse, off int64, hdr []byte) (next int64, err error) {
	if hdr[58] != '`' || hdr[59] != '\n' {
		return 0, a.errAt(off, "member header", fmt.Errorf("bad terminator %q", hdr[58:60]))
	}
	rawName := strings.TrimRight(string(hdr[0:16]), " ")
	size, err := parseDec(hdr[48:58])
	if err != nil {
		return 0, a.errAt(off+48, "member size", err)
	}
	m := Member{Header: off, Offset: off + arHdrSize, Size: size}
	m.ModTime, _ = parseDec(hdr[16:28])
	uid, _ := parseDec(hdr[28:34])
	gid, _ := parseDec(hdr[34:40])
	m.UID, m.GID = int(uid), int(gid)
	if mode, err := strconv.ParseUint(strings.TrimSpace(string(hdr[40:48])), 8, 32); err == nil {
		m.Mode = uint32(mode)
	}
	special := rawName == "/" || rawName == "//" || rawName == "/SYM64/" ||
		strings.HasPrefix(rawName, "__.SYMDEF") || rawName == "ARFILENAMES/"
	// In a thin archive only the special members carry data.
	stored := a.Kind != ArchiveThin || special
	if stored {
		if err := saferio.Check(a.Size, m.Offset, size); err != nil {
			return 0, a.errAt(off, fmt.Sprintf("member %q data", rawName), err)
		}
	}
	switch {
	case rawName == "/" || rawName == "/SYM64/":
		err = a.readGNUIndex(ps, m, rawName == "/SYM64/")
	case rawName == "//" || rawName == "ARFILENAMES/":
		ps.longNames, err = saferio.ReadAt(a.r, a.Size, m.Offset, size, maxTableBytes)
		if err != nil {
			err = a.errAt(m.Offset, "archive long-name table", err)
		}
	case strings.HasPrefix(rawName, "#1/"):
		err = a.bsdMember(ps, m, rawName)
	case strings.HasPrefix(rawName, "__.SYMDEF"):
		a.Kind = ArchiveBSD
		m.Name = rawName
		err = a.readBSDIndexMember(&ps.index, m)
	default:
		err = a.namedMember(ps, m, rawName, hdr)
	}
	if err != nil {
		return 0, err
	}
	next = off + arHdrSize
	if stored {
		next += size
		if next%2 == 1 {
			next++
		}
	}
	return next, nil
}

// readGNUIndex reads the GNU symbol index m (the 64-bit one when is64),
// into a reused buffer when it is only checked.
func (a *Archive) readGNUIndex(ps *arParse, m Member, is64 bool) error {
	kind := "gnu32"
	if is64 {
		kind = "gnu64"
	}
	var b []byte
	err := saferio.CheckRead(a.Size, m.Offset, m.Size, maxTableBytes)
	if err == nil {
		if a.noNames {
			bp := indexBufs.Get().(*[]byte)
			ps.done() // an earlier index's buffer
			ps.release = func() {
				if cap(*bp) > keptScratch {
					*bp = nil
				}
				indexBufs.Put(bp)
			}
			*bp = grow(*bp, uint64(m.Size))
			b = *bp
		} else {
			b = make([]byte, m.Size)
		}
		err = saferio.ReadFull(a.r, b, m.Offset)
	}
	if err != nil {
		return a.errAt(m.Offset, "archive symbol index", err)
	}
	ps.index = &rawIndex{kind: kind, data: b, off: m.Offset}
	return nil
}

// bsdMember takes in a member whose name follows its header (#1/LEN, BSD
// ar): a symbol index or a member.
func (a *Archive) bsdMember(ps *arParse, m Member, rawName string) error {
	if a.Kind == ArchiveGNU {
		a.Kind = ArchiveBSD
	}
	n, err := strconv.ParseInt(rawName[3:], 10, 64)
	if err != nil || n < 0 || n > m.Size {
		return a.errAt(m.Header, "BSD long member name", fmt.Errorf("bad length %q for member of %d bytes", rawName[3:], m.Size))
	}
	nb, err := saferio.ReadAt(a.r, a.Size, m.Offset, n, 0)
	if err != nil {
		return a.errAt(m.Offset, "BSD long member name", err)
	}
	if i := indexByte(nb, 0); i >= 0 {
		nb = nb[:i]
	}
	m.Name = string(nb)
	m.Offset += n
	m.Size -= n
	if strings.HasPrefix(m.Name, "__.SYMDEF") {
		return a.readBSDIndexMember(&ps.index, m)
	}
	ps.byHeader[m.Header] = len(a.Members)
	a.Members = append(a.Members, m)
	a.heads = append(a.heads, memberHead{})
	return nil
}

// namedMember takes in a member named in its header or the long-name
// table (GNU, and thin archives, whose members are files of their own).
func (a *Archive) namedMember(ps *arParse, m Member, rawName string, hdr []byte) error {
	name, err := memberName(rawName, ps.longNames)
	if err != nil {
		return a.errAt(m.Header, "member name", err)
	}
	m.Name = name
	if a.Kind == ArchiveThin {
		m.External = name
		if !filepath.IsAbs(name) {
			m.External = filepath.Join(a.dir, name)
		}
		m.Offset = 0
	}
	ps.byHeader[m.Header] = len(a.Members)
	a.Members = append(a.Members, m)
	var h memberHead
	if a.Kind != ArchiveThin {
		h.n = uint8(copy(h.b[:], hdr[arHdrSize:min(int64(len(hdr)), arHdrSize+m.Size)]))
	}
	a.heads = append(a.heads, h)
	return nil
}

func (a *Archive) readBSDIndexMember(index **rawIndex, m Member) error {
	b, err := saferio.ReadAt(a.r, a.Size, m.Offset, m.Size, maxTableBytes)
	if err != nil {
		return a.errAt(m.Offset, "archive symbol index", err)
	}
	kind := "bsd32"
	if strings.HasPrefix(m.Name, "__.SYMDEF_64") {
		kind = "bsd64"
	}
	*index = &rawIndex{kind: kind, data: b, off: m.Offset}
	return nil
}

func parseDec(b []byte) (int64, error) {
	s := strings.TrimSpace(string(b))
	if s == "" {
		return 0, nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("bad decimal field %q", s)
	}
	return v, nil
}

func memberName(raw string, longNames []byte) (string, error) {
	if strings.HasPrefix(raw, "/") && len(raw) > 1 {
		n, err := strconv.ParseUint(raw[1:], 10, 64)
		if err != nil {
			return "", fmt.Errorf("bad long-name reference %q", raw)
		}
		if n >= uint64(len(longNames)) {
			return "", fmt.Errorf("long-name reference %d outside table of %d bytes", n, len(longNames))
		}
		rest := longNames[n:]
		end := len(rest)
		for i, c := range rest {
			if c == '\n' || c == 0 {
				end = i
				break
			}
		}
		name := strings.TrimSuffix(string(rest[:end]), "/")
		return name, nil
	}
	return strings.TrimSuffix(raw, "/"), nil
}

// indexBufs hold symbol indexes that are checked but not kept.
var indexBufs = sync.Pool{New: func() any { return new([]byte) }}

// parseIndex decodes the index; without names it only checks it (the
// same errors) and returns no symbols.
func parseIndex(ix *rawIndex, byHeader map[int64]int, names bool) ([]ArchiveSymbol, error) {
	b := ix.data
	// Consecutive entries mostly name the same member.
	lastOff, last := uint64(math.MaxUint64), -1
	member := func(off uint64) int {
		if off == lastOff {
			return last
		}
		i, ok := byHeader[int64(off)]
		if off > math.MaxInt64 || !ok {
			i = -1
		}
		lastOff, last = off, i
		return i
	}
	switch ix.kind {
	case "gnu32", "gnu64":
		w := 4
		if ix.kind == "gnu64" {
			w = 8
		}
		if len(b) < w {
			return nil, errors.New("truncated count")
		}
		n := readUint(binary.BigEndian, b, w)
		if n > uint64((len(b)-w)/w) {
			return nil, fmt.Errorf("count %d does not fit in %d bytes", n, len(b))
		}
		offs := b[w : w+int(n)*w]
		strs := b[w+int(n)*w:]
		if !names {
			// The names follow one another, each ending in NUL: name i
			// is terminated when there are more than i NULs.
			if nuls := bytes.Count(strs, []byte{0}); nuls < int(n) {
				return nil, fmt.Errorf("symbol %d: name not terminated", nuls)
			}
			return nil, nil
		}
		out := make([]ArchiveSymbol, 0, n)
		all := string(strs) // one copy; the names are slices of it
		pos := 0
		for i := 0; i < int(n); i++ {
			end := strings.IndexByte(all[pos:], 0)
			if end < 0 {
				return nil, fmt.Errorf("symbol %d: name not terminated", i)
			}
			out = append(out, ArchiveSymbol{Name: all[pos : pos+end], Member: member(readUint(binary.BigEndian, offs[i*w:], w))})
			pos += end + 1
		}
		return out, nil
	case "bsd32", "bsd64":
		w := 4
		if ix.kind == "bsd64" {
			w = 8
		}
		// The integers are in the target's byte order; pick the order in
		// which the sizes are consistent with the member size.
		for _, bo := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
			out, err := parseBSDIndex(b, w, bo, member)
			if err == nil {
				return out, nil
			}
			if bo == binary.BigEndian {
				return nil, err
			}
		}
	}
	return nil, fmt.Errorf("unknown index kind %s", ix.kind)
}

func parseBSDIndex(b []byte, w int, bo binary.ByteOrder, member func(uint64) int) ([]ArchiveSymbol, error) {
	if len(b) < w {
		return nil, errors.New("truncated ranlib size")
	}
	rsz := readUint(bo, b, w)
	if rsz > uint64(len(b)-w) || rsz%uint64(2*w) != 0 {
		return nil, fmt.Errorf("ranlib size %d does not fit", rsz)
	}
	ents := b[w : w+int(rsz)]
	rest := b[w+int(rsz):]
	if len(rest) < w {
		return nil, errors.New("truncated string table size")
	}
	ssz := readUint(bo, rest, w)
	if ssz > uint64(len(rest)-w) {
		return nil, fmt.Errorf("string table size %d does not fit", ssz)
	}
	strs := rest[w : w+int(ssz)]
	n := len(ents) / (2 * w)
	out := make([]ArchiveSymbol, 0, n)
	for i := 0; i < n; i++ {
		strx := readUint(bo, ents[i*2*w:], w)
		off := readUint(bo, ents[i*2*w+w:], w)
		name, ok := saferio.CString(strs, strx)
		if !ok {
			return nil, fmt.Errorf("symbol %d: name offset %d outside string table", i, strx)
		}
		out = append(out, ArchiveSymbol{Name: name, Member: member(off)})
	}
	return out, nil
}

func readUint(bo binary.ByteOrder, b []byte, w int) uint64 {
	if w == 8 {
		return bo.Uint64(b)
	}
	return uint64(bo.Uint32(b))
}

// Open returns a reader over member i's data. Thin members are opened from
// disk and stay open until the archive is closed.
func (a *Archive) Open(i int) (*io.SectionReader, error) {
	if i < 0 || i >= len(a.Members) {
		return nil, fmt.Errorf("%s: member %d out of range", nameOr(a.Path), i)
	}
	m := a.Members[i]
	if m.External == "" {
		if h := &a.heads[i]; h.n > 0 {
			return io.NewSectionReader(&memberReader{r: a.r, off: m.Offset, head: h.b[:h.n]}, m.Offset, m.Size), nil
		}
		return io.NewSectionReader(a.r, m.Offset, m.Size), nil
	}
	fh, err := regfile.Open(m.External)
	if err != nil {
		return nil, fmt.Errorf("%s: thin member %q: %w", nameOr(a.Path), m.Name, err)
	}
	st, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, err
	}
	a.opened = append(a.opened, fh)
	return io.NewSectionReader(fh, 0, st.Size()), nil
}

// OpenELF opens member i as an ELF file named "archive(member)".
func (a *Archive) OpenELF(i int) (*File, error) {
	sr, err := a.Open(i)
	if err != nil {
		return nil, err
	}
	return NewFileSize(sr, sr.Size(), a.MemberPath(i))
}

// MemberPath is "archive(member)", the spelling nm and the linkers use.
func (a *Archive) MemberPath(i int) string {
	return fmt.Sprintf("%s(%s)", nameOr(a.Path), a.Members[i].Name)
}

// firstIndexWindow is the size of EachIndexName's first read.
const firstIndexWindow = 4 << 10

// indexWindows are EachIndexName's read windows.
var indexWindows = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// EachIndexName calls fn with each name in the symbol index of an archive
// of the given size read from r (name is used in errors), stopping when fn
// returns false, without reading any member header but the index's own:
// deciding what an archive defines costs one read instead of one per
// member (libc.a has 1,700). The name passed to fn is only valid during
// the call. ok is false when the archive does not start with a GNU index
// ("/" or "/SYM64/"; BSD archives and archives without an index): the
// caller falls back to OpenArchive.
func EachIndexName(r io.ReaderAt, size int64, name string, fn func(name []byte) bool) (ok bool, err error) {
	return EachIndexNames(r, size, name, func(names []byte) bool {
		for len(names) > 0 {
			e := indexByte(names, 0)
			if !fn(names[:e]) {
				return false
			}
			names = names[e+1:]
		}
		return true
	})
}

// EachIndexNames is EachIndexName for a caller that scans the names in
// its own loop: fn is called with runs of whole names, each followed by
// its NUL, in index order, as they are read (one pass over a run beats a
// call per name: docs/performance.md). The run is only valid during the call.
func EachIndexNames(r io.ReaderAt, size int64, name string, fn func(names []byte) bool) (ok bool, err error) {
	fail := func(off int64, what string, err error) (bool, error) {
		return false, &FormatError{Path: name, Offset: off, What: what, Err: err}
	}
	var buf [8 + arHdrSize]byte
	got, _ := r.ReadAt(buf[:], 0)
	if got < 8 || (string(buf[:8]) != arMagic && string(buf[:8]) != arThinMagic) {
		return false, fmt.Errorf("%s: %w", nameOr(name), ErrNotArchive)
	}
	if got < len(buf) {
		return false, nil // no whole first member: OpenArchive says what is wrong
	}
	hdr := buf[8:]
	w := 0
	switch strings.TrimRight(string(hdr[0:16]), " ") {
	case "/":
		w = 4
	case "/SYM64/":
		w = 8
	default:
		return false, nil
	}
	if hdr[58] != '`' || hdr[59] != '\n' {
		return fail(8, "member header", fmt.Errorf("bad terminator %q", hdr[58:60]))
	}
	n, err := parseDec(hdr[48:58])
	if err != nil {
		return fail(8+48, "member size", err)
	}
	// The names are read a window at a time: an index of any size costs
	// the same memory, and a caller that finds what it wants early
	// reads no further.
	const at = 8 + arHdrSize
	if err := saferio.CheckRead(size, at, n, maxTableBytes); err != nil {
		return fail(at, "archive symbol index", err)
	}
	if n < int64(w) {
		return fail(at, "archive symbol index", errors.New("truncated count"))
	}
	var cb [8]byte
	if err := saferio.ReadFull(r, cb[:w], at); err != nil {
		return fail(at, "archive symbol index", err)
	}
	count := readUint(binary.BigEndian, cb[:w], w)
	if count > uint64((n-int64(w))/int64(w)) {
		return fail(at, "archive symbol index", fmt.Errorf("count %d does not fit in %d bytes", count, n))
	}
	off, end := at+int64(w)+int64(count)*int64(w), at+n
	win := indexWindows.Get().(*[]byte)
	defer indexWindows.Put(win)
	names := (*win)[:0] // unread names at the front
	// The first read is short: a caller that looks for one kind of name
	// (check asks whether an archive holds LLVM code) mostly finds it in
	// the first few; 64 KB for each of LLVM's 189 archives was 12 MB.
	first := int64(firstIndexWindow)
	for i := 0; i < int(count); {
		if len(names) == cap(names) {
			// One name longer than the window: the window grows.
			nb := make([]byte, len(names), 2*cap(names))
			copy(nb, names)
			names, *win = nb, nb[:0]
		}
		k := min(int64(cap(names)-len(names)), end-off, first)
		first = math.MaxInt64
		if k == 0 {
			return fail(at, "archive symbol index", fmt.Errorf("symbol %d: name not terminated", i))
		}
		if err := saferio.ReadFull(r, names[len(names):len(names)+int(k)], off); err != nil {
			return fail(at, "archive symbol index", err)
		}
		off += k
		strs := names[:len(names)+int(k)]
		// The whole names read so far, up to the index's count.
		run := strs[:bytes.LastIndexByte(strs, 0)+1]
		if c := bytes.Count(run, []byte{0}); c < int(count)-i {
			i += c
		} else {
			e := 0
			for ; i < int(count); i++ {
				e += bytes.IndexByte(run[e:], 0) + 1
			}
			run = run[:e]
		}
		if len(run) > 0 && !fn(run) {
			return true, nil
		}
		names = names[:copy(names[:cap(names)], strs[len(run):])]
	}
	return true, nil
}
