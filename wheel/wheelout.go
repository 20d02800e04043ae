package wheel

import (
	"archive/zip"
	"compress/flate"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/rocmdoctor/rocmdoctor/internal/dcopy"
	"github.com/rocmdoctor/rocmdoctor/internal/inflate"
	"github.com/rocmdoctor/rocmdoctor/internal/pflate"
	"github.com/rocmdoctor/rocmdoctor/internal/record"
	"github.com/rocmdoctor/rocmdoctor/internal/safefile"
	"github.com/rocmdoctor/rocmdoctor/internal/writeback"
	"github.com/rocmdoctor/rocmdoctor/internal/zipx"
)

// wheelOutput is a relinked wheel being written next to its destination.
// The entries that cannot change (everything but the ELF members, RECORD
// and its signatures) are copied raw while the ELF members are still being
// inflated and planned (copyUnchanged, on its own goroutine); finish then
// adds the ELF members, changed or not, and the new RECORD. The central
// directory is put back in the input's order at the end, so zip readers
// and pip list the entries in the order they had; only their placement in
// the file differs.
type wheelOutput struct {
	d      *dist
	raw    *os.File
	zr     *zip.Reader
	tmp    *safefile.Temp
	out    *wheelOut
	dst    string
	zw     *zip.Writer
	old    map[string]record.Entry // the input's RECORD by path
	order  []int                   // input index of each entry written, in write order
	record map[int]string
	// fixed says, by input index, why an entry's line is not the input's
	// (for the plan's notes).
	fixed  map[int]string
	copied chan error  // copyUnchanged's result
	stop   atomic.Bool // set by discard: copyUnchanged gives up
	// flushed is closed when the early fsync of the copied entries (see
	// newWheelOutput) has returned, with its error in flushErr.
	flushed  chan struct{}
	flushErr error
	// pending is what archive/zip still writes for the entry before the
	// next one when that one begins (its data descriptor), -1 when that
	// is not known (an entry it compressed): see copyRaw.
	pending int64
}

// bigEntry is the size from which an entry's data is copied by the kernel
// (and, where it can be, directly: see alignExtra) rather than through
// archive/zip.
const bigEntry = 1 << 20

// earlyFlushMin is how much copyUnchanged must have written for the
// output to be fsynced as soon as it is done.
var earlyFlushMin int64 = 32 << 20

// outputBase, when tests set it, is where the new archive begins in its
// file (a sparse hole before it), so that its entries lie past 4 GiB
// without 4 GiB being written.
var outputBase int64

// syncFile is f.Sync; tests replace it.
var syncFile = (*os.File).Sync

// newWheelOutput checks where the output goes, opens the temporary file
// and starts copying the entries that cannot change (until ctx is done).
func newWheelOutput(ctx context.Context, d *dist, o Options) (*wheelOutput, error) {
	outDir := o.Output
	if o.InPlace || outDir == "" {
		outDir = filepath.Dir(d.input)
	}
	dst := filepath.Join(outDir, filepath.Base(d.input))
	if !o.InPlace && o.Output == "" {
		return nil, fmt.Errorf("give -o DIR or --in-place")
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, err
	}
	if !o.InPlace && sameFile(dst, d.input) {
		return nil, fmt.Errorf("-o %s would overwrite the input; use --in-place", outDir)
	}
	raw, zr, err := zipx.OpenFile(d.input)
	if err != nil {
		return nil, err
	}
	w := &wheelOutput{d: d, raw: raw, zr: zr, dst: dst, old: map[string]record.Entry{}, record: map[int]string{}, fixed: map[int]string{}}
	if d.record != "" {
		for _, zf := range zr.File {
			if zf.Name != d.record {
				continue
			}
			rc, err := zipx.Open(zf)
			if err != nil {
				raw.Close()
				return nil, d.errAt(zf.Name, err)
			}
			// Its lines are trusted for the entries copied as they are,
			// so a RECORD that does not read back whole (a CRC-32 that does
			// not match) is an error. Past 64 MiB the lines not read are
			// hashed from the entries instead.
			b, err := io.ReadAll(io.LimitReader(rc, 64<<20))
			rc.Close()
			if err != nil {
				raw.Close()
				return nil, d.errAt(zf.Name, err)
			}
			for _, r := range record.Parse(string(b)) {
				w.old[r.Path] = r
			}
		}
	}
	// The entries copied as they are take at least their stored size in
	// the new wheel, whatever else is dropped or spliced: a disk that
	// cannot hold them is said before the relink starts.
	var least uint64
	for _, zf := range zr.File {
		if !w.late(zf) {
			least += min(zf.CompressedSize64, math.MaxUint64-least)
		}
	}
	if free, ok := freeSpace(outDir); ok && least > free {
		raw.Close()
		return nil, fmt.Errorf("%s: the new wheel takes at least %s (the entries copied as they are), and %s has %s free",
			d.input, needed(least), outDir, available(free))
	}
	safefile.Sweep(outDir, filepath.Base(dst), func(msg string) { d.notes = append(d.notes, msg) })
	if w.tmp, err = safefile.CreateTemp(outDir, filepath.Base(dst)); err != nil {
		raw.Close()
		return nil, err
	}
	w.out = &wheelOut{f: w.tmp.File, cp: dcopy.New(raw, w.tmp.File)}
	w.zw = zip.NewWriter(w.out)
	if outputBase > 0 {
		// Tests: the archive begins past a hole, its offsets absolute.
		if _, err := w.tmp.Seek(outputBase, io.SeekStart); err != nil {
			w.out.cp.Close()
			w.tmp.Discard()
			raw.Close()
			return nil, err
		}
		w.out.off, w.out.started = outputBase, outputBase
		w.zw.SetOffset(outputBase)
	} else if st, err := raw.Stat(); err == nil {
		// The new wheel is about the size of the old one: its disk space
		// is taken in one go (finish truncates it to what was written).
		writeback.Reserve(w.tmp.File, st.Size())
	}
	// Changed libraries are the only entries compressed again, at the
	// fastest deflate level and on every core (the size cost is a few per
	// cent on shared objects).
	w.zw.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) {
		return pflate.NewWriter(out, flate.BestSpeed)
	})
	w.copied = make(chan error, 1)
	w.flushed = make(chan struct{})
	go func() {
		defer close(w.flushed)
		err := w.copyUnchanged(ctx)
		copied := w.out.off // read before finish takes over w.out
		w.copied <- err
		// What was copied is made durable now, while the ELF members are
		// still being inflated, edited and verified, instead of by the
		// fsync before the rename. sync_file_range (wheelOut.Write) only
		// starts the write-back; a virtual disk's cache flush, which the
		// fsync waits for, still costs in proportion to everything
		// written since the last one: a third of the relink when it was
		// all left to the end (docs/performance.md).
		if err == nil && copied >= earlyFlushMin && !w.stop.Load() {
			w.flushErr = syncFile(w.tmp.File)
		}
	}()
	return w, nil
}

// late reports the entries written by finish: the ELF members, RECORD and
// its signatures.
func (w *wheelOutput) late(zf *zip.File) bool {
	return w.d.isELF[zf.Name] || zf.Name == w.d.record || isSignature(zf.Name)
}

func isSignature(name string) bool {
	return strings.HasSuffix(name, ".dist-info/RECORD.jws") || strings.HasSuffix(name, ".dist-info/RECORD.p7s")
}

func (w *wheelOutput) copyUnchanged(ctx context.Context) error {
	for i, zf := range w.zr.File {
		if w.stop.Load() {
			return errors.New("abandoned")
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if !w.late(zf) {
			if err := w.copyRaw(i, zf); err != nil {
				return err
			}
		}
	}
	return nil
}

// copyRaw copies entry i as it is stored (no recompression; same times
// and attributes) and records its RECORD line.
func (w *wheelOutput) copyRaw(i int, zf *zip.File) error {
	h := reusedHeader(zf.FileHeader)
	off, err := zipx.DataOffset(zf) // of its data in the old wheel
	if err != nil {
		return w.d.errAt(zf.Name, err)
	}
	if zf.CompressedSize64 >= bigEntry && w.out.cp.Direct() && w.pending >= 0 {
		// Where the entry's data will begin: its header goes after what
		// is written so far and the previous entry's data descriptor.
		if err := w.zw.Flush(); err != nil {
			return err
		}
		if w.out.skip == 0 {
			h.Extra = alignExtra(h.Extra, w.out.off+w.pending+localHeaderLen+int64(len(h.Name)), off)
		}
	}
	size := int64(zf.CompressedSize64)
	if zf.FileInfo().IsDir() {
		// A directory entry may carry the few bytes of an empty deflate
		// stream (zipfile.writestr("pkg/", "") in a deflated zip), which
		// archive/zip will not write for a directory: stored empty, as
		// it decodes.
		h.Method, h.CompressedSize64, h.UncompressedSize64, h.CRC32 = zip.Store, 0, 0, 0
		size = 0
	}
	out, err := w.zw.CreateRaw(&h)
	if err != nil {
		return err
	}
	w.pending = descriptorLen(&h)
	if err := w.out.copyData(w.zw, out, off, size, w.raw); err != nil {
		return w.d.errAt(zf.Name, err)
	}
	w.order = append(w.order, i)
	if zf.FileInfo().IsDir() {
		return nil
	}
	r, listed := w.old[zf.Name]
	var dg *fileDigest
	if w.late(zf) {
		// Only finish copies these, once Relink has begun their digests:
		// copyUnchanged, running meanwhile, must not read the map.
		dg = w.d.checks[zf.Name]
	}
	if dg != nil {
		// A library left as it is: the line comes from its staged copy.
		line, err := dg.line(zf.Name, int64(zf.UncompressedSize64))
		if err != nil {
			return w.d.errAt(zf.Name, err)
		}
		if listed && line != record.Line(zf.Name, r.Hash, atoi(r.Size)) {
			w.fixed[i] = staleLine(zf.Name, r)
		}
		w.record[i] = line
		return nil
	}
	// Any other entry keeps its line, unless the line's size is not the
	// entry's (its hash is only checked by reading it all).
	if listed && r.Hash != "" && r.Size == strconv.FormatUint(zf.UncompressedSize64, 10) {
		line := record.Line(zf.Name, r.Hash, atoi(r.Size))
		w.record[i] = line
		return nil
	}
	if listed {
		w.fixed[i] = staleLine(zf.Name, r)
	} else {
		w.fixed[i] = zf.Name + " was not listed in RECORD: added"
	}
	// Hashed now, from its data.
	rd, err := zipx.Open(zf)
	if err != nil {
		return w.d.errAt(zf.Name, err)
	}
	sum, n, err := hashStream(rd)
	rd.Close()
	if err != nil {
		return w.d.errAt(zf.Name, err)
	}
	line := record.Line(zf.Name, sum, n)
	w.record[i] = line
	return nil
}

// finish writes the ELF members (spliced when changed, raw otherwise,
// dropped ones left out), the new RECORD, the central directory in the
// input's order, and renames the result into place.
func (w *wheelOutput) finish(p *Plan) (err error) {
	defer func() {
		if err != nil {
			w.discard()
		}
	}()
	changed, dropped := p.changes()
	if err := <-w.copied; err != nil {
		w.copied = nil
		return err
	}
	w.copied = nil
	// A name listed twice: the later entry is the one staged and kept.
	last := map[string]int{}
	for i, zf := range w.zr.File {
		last[zf.Name] = i
	}
	recordAt := -1
	var recordHeader zip.FileHeader
	for i, zf := range w.zr.File {
		name := zf.Name
		switch {
		case !w.late(zf):
		case isSignature(name):
			p.Notes = append(p.Notes, "removed the signature "+name+": it signed the old RECORD")
		case name == w.d.record:
			recordAt, recordHeader = i, reusedHeader(zf.FileHeader)
		case dropped[name]:
		case last[name] != i:
			p.Notes = append(p.Notes, fmt.Sprintf("left out the first of two entries named %s (the later one is kept)", name))
		case changed[name]:
			path := filepath.Join(w.d.root, filepath.FromSlash(name))
			// Relink began the digest when it patched the file.
			dg := w.d.digests[name]
			w.pending = -1 // compressed here, or spliced: its descriptor's size is archive/zip's
			line, sp, err := writeSpliced(w.zw, zf, w.raw, w.d.index[name], w.d.edited[name], path, dg)
			if dg.sparse && (errors.Is(err, errHole) || errors.Is(err, inflate.ErrNotWorthSplicing)) {
				// The splice needs bytes the scratch copy does not
				// have (predict.go): inflate it in full, edit it again.
				if err := w.refill(p, name); err != nil {
					return err
				}
				dg = w.d.digests[name]
				line, sp, err = writeSpliced(w.zw, zf, w.raw, w.d.index[name], w.d.edited[name], path, dg)
			}
			switch {
			case errors.Is(err, inflate.ErrNotWorthSplicing):
				line, err = writeChanged(w.zw, reusedHeader(zf.FileHeader), path, dg)
			case err == nil:
				p.Notes = append(p.Notes, fmt.Sprintf("%s: %d of %d bytes kept in the original compressed form, %d compressed again",
					name, sp.Reused, sp.Reused+sp.Compressed, sp.Compressed))
			}
			if err != nil {
				return err
			}
			w.order = append(w.order, i)
			w.record[i] = line
		default:
			if err := w.copyRaw(i, zf); err != nil {
				return err
			}
		}
	}
	if recordAt >= 0 {
		var b strings.Builder
		idx := make([]int, 0, len(w.record))
		for i := range w.record {
			idx = append(idx, i)
		}
		sort.Ints(idx)
		for _, i := range idx {
			b.WriteString(w.record[i] + "\n")
			if why := w.fixed[i]; why != "" {
				p.Notes = append(p.Notes, why)
			}
		}
		b.WriteString(record.Line(w.d.record, "", 0) + "\n")
		h := recordHeader
		h.CompressedSize64, h.UncompressedSize64, h.CRC32 = 0, 0, 0
		out, err := w.zw.CreateHeader(&h)
		if err != nil {
			return err
		}
		if _, err := io.WriteString(out, b.String()); err != nil {
			return err
		}
		w.order = append(w.order, recordAt)
	}
	if err := w.zw.Close(); err != nil {
		return err
	}
	// The file was reserved at the input's size (newWheelOutput).
	if err := w.tmp.File.Truncate(w.out.off); err != nil {
		return err
	}
	if err := sortCentralDirectory(w.tmp.File, w.order); err != nil {
		return fmt.Errorf("%s: writing %s: %w", w.d.input, w.tmp.Name(), err)
	}
	// The early fsync's error is reported here: the kernel reports a
	// write-back error to one fsync per open file, so the one below
	// would not see it again.
	<-w.flushed
	if w.flushErr != nil {
		return fmt.Errorf("%s: writing %s: %w", w.d.input, w.tmp.Name(), w.flushErr)
	}
	if err := syncFile(w.tmp.File); err != nil {
		return fmt.Errorf("%s: writing %s: %w", w.d.input, w.tmp.Name(), err)
	}
	if err := w.tmp.Chmod(0o644); err != nil {
		return err
	}
	if err := w.tmp.Commit(w.dst); err != nil {
		return err
	}
	w.out.cp.Close()
	w.raw.Close()
	p.Output = w.dst
	return nil
}

// refill inflates the predicted member name again in full and edits it
// again as p says, with a digest of its own.
func (w *wheelOutput) refill(p *Plan, name string) error {
	for _, fp := range p.Files {
		if fp.Path != name {
			continue
		}
		if err := w.d.refill(w.d.big, fp.Edits); err != nil {
			return w.d.fileErr(name, err)
		}
		return nil
	}
	return fmt.Errorf("%s: internal error: no plan for %s", w.d.input, name)
}

// discard abandons the output: the copy is waited for, the temporary
// file removed.
func (w *wheelOutput) discard() {
	w.stop.Store(true)
	if w.copied != nil {
		<-w.copied
		w.copied = nil
	}
	<-w.flushed
	w.out.cp.Close()
	w.tmp.Discard()
	w.raw.Close()
}

// wheelOut is the new wheel's file under archive/zip. Unchanged entries'
// data is copied from the old wheel by the kernel (copy_file_range) rather
// than through archive/zip, which is then handed that many zero bytes so
// that it counts them for its offsets; wheelOut drops them. Every
// writebackChunk bytes it starts their write-back to disk, so the fsync
// before the rename does not wait for the whole wheel at the end.
type wheelOut struct {
	f       *os.File
	cp      *dcopy.Copier // from the old wheel into f
	off     int64         // bytes in the file
	skip    int64         // bytes archive/zip will pass that are already in the file
	started int64         // write-back started below this offset
	zeros   []byte
}

const writebackChunk = 8 << 20

func (o *wheelOut) Write(p []byte) (int, error) {
	n := len(p)
	if o.skip > 0 {
		k := min(o.skip, int64(len(p)))
		o.skip -= k
		p = p[k:]
	}
	if len(p) > 0 {
		m, err := o.f.Write(p)
		o.off += int64(m)
		if err != nil {
			return n - len(p) + m, err
		}
	}
	if o.off-o.started >= writebackChunk {
		writeback.Start(o.f, o.started, o.off-o.started)
		o.started = o.off
	}
	return n, nil
}

// copyData writes the n bytes of an entry's data stored at off in the old
// wheel src as the entry w that zw has just begun.
func (o *wheelOut) copyData(zw *zip.Writer, w io.Writer, off, n int64, src *os.File) error {
	if n < bigEntry {
		_, err := io.Copy(w, io.NewSectionReader(src, off, n))
		return err
	}
	// The entry's header must be in the file before the data after it.
	if err := zw.Flush(); err != nil {
		return err
	}
	// Directly from the old wheel's pages where the offsets agree (the
	// header's padding saw to it), by copy_file_range otherwise; both
	// write at an offset, so the file's own offset is moved past it.
	if _, err := o.cp.Copy(o.off, off, n); err != nil {
		return err
	}
	o.off += n
	if _, err := o.f.Seek(o.off, io.SeekStart); err != nil {
		return err
	}
	o.skip += n
	if o.zeros == nil {
		o.zeros = make([]byte, 1<<20)
	}
	for left := n; left > 0; {
		k := min(left, int64(len(o.zeros)))
		if _, err := w.Write(o.zeros[:k]); err != nil {
			return err
		}
		left -= k
	}
	if err := zw.Flush(); err != nil {
		return err
	}
	if o.skip != 0 {
		return errors.New("internal error: archive/zip did not pass the entry's data through")
	}
	return nil
}

// reusedHeader is the header of an input entry as it is written again.
// Its zip64 extra field is left out: archive/zip appends one of its own
// where the new file needs it (an offset or size of 4 GiB or more), and
// readers, Python's zipfile (pip) and archive/zip among them, take the
// 64-bit values from the first zip64 field, which would be the input's,
// holding other values or fewer of them ("Corrupt zip64 extra field" for
// a wheel past 4 GiB, as PyTorch's ROCm wheels are). A field that runs
// past the end of the extra data ends it. An entry of 4 GiB or more gets
// a data descriptor, which is where archive/zip writes the 64-bit sizes
// that its local header cannot hold, as it does for entries it compresses.
func reusedHeader(h zip.FileHeader) zip.FileHeader {
	var extra []byte
	for b := h.Extra; len(b) >= 4; {
		id, n := binary.LittleEndian.Uint16(b), 4+int(binary.LittleEndian.Uint16(b[2:]))
		if n > len(b) {
			break
		}
		if id != zip64ExtraID && id != alignExtraID {
			extra = append(extra, b[:n]...)
		}
		b = b[n:]
	}
	h.Extra = extra
	if h.CompressedSize64 >= math.MaxUint32 || h.UncompressedSize64 >= math.MaxUint32 {
		h.Flags |= dataDescriptorFlag
	}
	return h
}

const (
	zip64ExtraID       = 0x0001
	alignExtraID       = 0xd935 // Android's zipalign
	dataDescriptorFlag = 0x8
	localHeaderLen     = 30 // before the name and the extra field
)

// descriptorLen is the size of the data descriptor archive/zip writes
// after the data of an entry it was given raw with header h (when the next
// entry begins).
func descriptorLen(h *zip.FileHeader) int64 {
	switch {
	case h.Flags&dataDescriptorFlag == 0 || strings.HasSuffix(h.Name, "/"):
		return 0
	case h.CompressedSize64 >= math.MaxUint32 || h.UncompressedSize64 >= math.MaxUint32:
		return 24
	}
	return 16
}

// alignExtra returns extra with a padding field that puts the data of an
// entry, whose local header is written at headerOff (name included), at
// the offset of its data in the old wheel, dataOff, modulo dcopy.Align,
// so that the data can be written directly from the old wheel's pages
// (internal/dcopy). The field is zipalign's (ID 0xd935: the alignment,
// then zeros), which zip readers pass over as they do every field they do
// not know. extra is returned as it is when no padding is needed or the
// field would not fit.
func alignExtra(extra []byte, headerOff, dataOff int64) []byte {
	at := headerOff + int64(len(extra)) // the data, unpadded
	pad := (dataOff - at) % dcopy.Align
	if pad < 0 {
		pad += dcopy.Align
	}
	if pad == 0 {
		return extra
	}
	for pad < 6 { // the field's ID and length, and the alignment
		pad += dcopy.Align
	}
	if len(extra)+int(pad) > math.MaxUint16 {
		return extra
	}
	f := make([]byte, pad)
	binary.LittleEndian.PutUint16(f, alignExtraID)
	binary.LittleEndian.PutUint16(f[2:], uint16(pad-4))
	binary.LittleEndian.PutUint16(f[4:], dcopy.Align)
	return append(extra[:len(extra):len(extra)], f...)
}

// sortCentralDirectory reorders the central directory archive/zip wrote at
// the end of f, whose records are in write order, so that they follow
// order (the input index of each record): same records, same total size,
// so the end records stay valid.
func sortCentralDirectory(f *os.File, order []int) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	var eocd [22]byte
	if size < 22 {
		return errors.New("zip output too short")
	}
	if _, err := f.ReadAt(eocd[:], size-22); err != nil {
		return err
	}
	le := binary.LittleEndian
	if le.Uint32(eocd[:]) != 0x06054b50 {
		return errors.New("zip output: no end of central directory record where archive/zip writes it")
	}
	count, cdSize, cdOff := uint64(le.Uint16(eocd[10:])), uint64(le.Uint32(eocd[12:])), uint64(le.Uint32(eocd[16:]))
	if count == 0xffff || cdSize == 0xffffffff || cdOff == 0xffffffff {
		var loc [20]byte
		if size < 42 {
			return errors.New("zip output: no zip64 locator")
		}
		if _, err := f.ReadAt(loc[:], size-42); err != nil {
			return err
		}
		var rec [56]byte
		off := int64(le.Uint64(loc[8:]))
		if le.Uint32(loc[:]) != 0x07064b50 || off < 0 || off > size-56 {
			return errors.New("zip output: bad zip64 locator")
		}
		if _, err := f.ReadAt(rec[:], off); err != nil {
			return err
		}
		if le.Uint32(rec[:]) != 0x06064b50 {
			return errors.New("zip output: bad zip64 end record")
		}
		count, cdSize, cdOff = le.Uint64(rec[32:]), le.Uint64(rec[40:]), le.Uint64(rec[48:])
	}
	if count != uint64(len(order)) || cdOff > uint64(size) || cdSize > uint64(size)-cdOff {
		return fmt.Errorf("zip output: %d central directory records at 0x%x, %d entries written", count, cdOff, len(order))
	}
	cd := make([]byte, cdSize)
	if _, err := f.ReadAt(cd, int64(cdOff)); err != nil {
		return err
	}
	type rec struct {
		at   int
		data []byte
	}
	recs := make([]rec, 0, len(order))
	for b := cd; len(b) > 0; {
		if len(b) < 46 || le.Uint32(b) != 0x02014b50 {
			return errors.New("zip output: malformed central directory record")
		}
		n := 46 + int(le.Uint16(b[28:])) + int(le.Uint16(b[30:])) + int(le.Uint16(b[32:]))
		if n > len(b) || len(recs) == len(order) {
			return errors.New("zip output: malformed central directory record")
		}
		recs = append(recs, rec{order[len(recs)], b[:n]})
		b = b[n:]
	}
	if len(recs) != len(order) {
		return errors.New("zip output: central directory records missing")
	}
	sort.SliceStable(recs, func(i, j int) bool { return recs[i].at < recs[j].at })
	out := make([]byte, 0, len(cd))
	for _, r := range recs {
		out = append(out, r.data...)
	}
	_, err = f.WriteAt(out, int64(cdOff))
	return err
}
