package wheel

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
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
	"github.com/rocmdoctor/rocmdoctor/internal/record"
	"github.com/rocmdoctor/rocmdoctor/internal/safefile"
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
	zw     *zipx.Writer
	recs   []zipx.Record           // the input's central directory, by entry
	old    map[string]record.Entry // the input's RECORD by path
	record map[int]string
	// fixed says, by input index, why an entry's line is not the input's
	// (for the plan's notes).
	fixed  map[int]string
	copied chan error  // copyUnchanged's result
	stop   atomic.Bool // set by discard: copyUnchanged gives up
}

// bigEntry is the size from which an entry's data is copied by the kernel
// (directly from the old wheel's pages where the offsets agree: dcopy)
// rather than through this process.
const bigEntry = 1 << 20

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
	if w.recs, err = centralRecords(raw, zr); err != nil {
		raw.Close()
		return nil, fmt.Errorf("%s: %w", d.input, err)
	}
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
	if free, ok := d.tune.freeSpace(outDir); ok && least > free {
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
	if base := d.tune.outputBase; base > 0 {
		// Tests: the archive begins past a hole, its offsets absolute.
		if _, err := w.tmp.Seek(base, io.SeekStart); err != nil {
			w.out.cp.Close()
			w.tmp.Discard()
			raw.Close()
			return nil, err
		}
		w.out.off = base
	}
	w.zw = zipx.NewWriter(w.out, w.out.off)
	w.copied = make(chan error, 1)
	go func() { w.copied <- w.copyUnchanged(ctx) }()
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

// centralRecords reads the input's central directory records, one per
// entry of zr in the same order.
func centralRecords(raw *os.File, zr *zip.Reader) ([]zipx.Record, error) {
	st, err := raw.Stat()
	if err != nil {
		return nil, err
	}
	recs, err := zipx.CentralRecords(raw, st.Size())
	if err != nil {
		return nil, err
	}
	if len(recs) != len(zr.File) {
		return nil, fmt.Errorf("%w: %d central directory records, %d entries", zip.ErrFormat, len(recs), len(zr.File))
	}
	for i, zf := range zr.File {
		if recs[i].Name() != zf.Name {
			return nil, fmt.Errorf("%w: central directory record %d names %q, not %q", zip.ErrFormat, i, recs[i].Name(), zf.Name)
		}
	}
	return recs, nil
}

// copyRaw copies entry i as it is stored, byte for byte (local header,
// extra fields, data, data descriptor), and records its RECORD line; its
// central record is the input's with the new offset.
func (w *wheelOutput) copyRaw(i int, zf *zip.File) error {
	rec := w.recs[i]
	loc, err := zipx.LocalOf(w.raw, rec)
	if err != nil {
		return w.d.errAt(zf.Name, err)
	}
	if err := w.alignFor(loc); err != nil {
		return err
	}
	at := w.zw.Offset()
	if err := w.copyRange(loc.Header, loc.Data-loc.Header); err != nil {
		return w.d.errAt(zf.Name, err)
	}
	if err := w.copyRange(loc.Data, loc.End-loc.Data-loc.Descriptor); err != nil {
		return w.d.errAt(zf.Name, err)
	}
	if err := w.copyRange(loc.End-loc.Descriptor, loc.Descriptor); err != nil {
		return w.d.errAt(zf.Name, err)
	}
	w.zw.Central(i, rec.WithOffset(at))
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
	for i, zf := range w.zr.File {
		name := zf.Name
		switch {
		case !w.late(zf):
		case isSignature(name):
			p.Notes = append(p.Notes, "removed the signature "+name+": it signed the old RECORD")
		case name == w.d.record:
			recordAt = i
		case dropped[name]:
		case last[name] != i:
			p.Notes = append(p.Notes, fmt.Sprintf("left out the first of two entries named %s (the later one is kept)", name))
		case changed[name]:
			path := filepath.Join(w.d.root, filepath.FromSlash(name))
			// Relink began the digest when it patched the file.
			dg := w.d.digests[name]
			ow := w.outEntry(i)
			line, sp, err := writeSpliced(ow, zf, w.raw, w.d.index[name], w.d.edited[name], path, dg)
			if dg.sparse && (errors.Is(err, errHole) || errors.Is(err, inflate.ErrNotWorthSplicing)) {
				// The splice needs bytes the scratch copy does not
				// have (predict.go): inflate it in full, edit it again.
				if err := w.refill(p, name); err != nil {
					return err
				}
				dg = w.d.digests[name]
				line, sp, err = writeSpliced(ow, zf, w.raw, w.d.index[name], w.d.edited[name], path, dg)
			}
			switch {
			case errors.Is(err, inflate.ErrNotWorthSplicing):
				line, err = writeChanged(ow, zf, path, dg)
			case err == nil:
				p.Notes = append(p.Notes, fmt.Sprintf("%s: %d of %d bytes kept in the original compressed form, %d compressed again",
					name, sp.Reused, sp.Reused+sp.Compressed, sp.Compressed))
			}
			if err != nil {
				return err
			}
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
		if err := w.outEntry(recordAt).writeBytes(w.zr.File[recordAt], []byte(b.String())); err != nil {
			return err
		}
	}
	// The central directory in the input's order: zip readers and pip list
	// the entries as they were; only their placement in the file differs.
	if err := w.zw.Close(); err != nil {
		return err
	}
	if err := w.d.tune.syncFile(w.tmp.File); err != nil {
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
	w.out.cp.Close()
	w.tmp.Discard()
	w.raw.Close()
}

// wheelOut is the new wheel's file.
type wheelOut struct {
	f   *os.File
	cp  *dcopy.Copier // from the old wheel into f
	off int64         // bytes in the file
}

func (o *wheelOut) Write(p []byte) (int, error) {
	m, err := o.f.Write(p)
	o.off += int64(m)
	return m, err
}

// copyRange appends the n bytes at off in the old wheel to the new one:
// small ranges through this process, large ones by the kernel (directly
// from the old wheel's pages where the offsets agree modulo the block
// size, by copy_file_range otherwise).
func (w *wheelOutput) copyRange(off, n int64) error {
	o := w.out
	if n < bigEntry {
		_, err := io.Copy(w.zw, io.NewSectionReader(w.raw, off, n))
		return err
	}
	if _, err := o.cp.Copy(o.off, off, n); err != nil {
		return err
	}
	o.off += n
	w.zw.Skip(n)
	_, err := o.f.Seek(o.off, io.SeekStart)
	return err
}

// alignFor leaves unused space (less than dcopy.Align bytes) before a
// large entry whose data would otherwise land at another offset modulo
// dcopy.Align than in the old wheel, so that its data is written directly
// from the old wheel's pages. Zip readers go by the central directory's
// offsets (unzip -t, zip -T, Python's zipfile and pip read such a file);
// the entry itself stays byte for byte the input's.
func (w *wheelOutput) alignFor(loc zipx.Local) error {
	if loc.End-loc.Descriptor-loc.Data < bigEntry || !w.out.cp.Direct() {
		return nil
	}
	gap := (loc.Data - (w.zw.Offset() + loc.Data - loc.Header)) % dcopy.Align
	if gap < 0 {
		gap += dcopy.Align
	}
	if gap == 0 {
		return nil
	}
	_, err := w.zw.Write(make([]byte, gap))
	return err
}

// entryOut writes a changed entry, i of the input, at the end of the new
// wheel: its local header made from the old one, its data, and its
// central record from the old one with the new values.
type entryOut struct {
	w   *wheelOutput
	i   int
	old []byte // the input's local header, name and extra fields
	err error
}

func (w *wheelOutput) outEntry(i int) *entryOut {
	e := &entryOut{w: w, i: i}
	loc, err := zipx.LocalOf(w.raw, w.recs[i])
	if err == nil {
		e.old = make([]byte, loc.Data-loc.Header)
		_, err = w.raw.ReadAt(e.old, loc.Header)
	}
	if err != nil {
		e.err = w.d.errAt(w.zr.File[i].Name, err)
	}
	return e
}

// begin writes the local header for the values given (zero, with the
// data descriptor flag, when they follow the data) and returns where it
// begins.
func (e *entryOut) begin(crc uint32, csize, usize uint64, flags uint16) (int64, error) {
	if e.err != nil {
		return 0, e.err
	}
	at := e.w.zw.Offset()
	_, err := e.w.zw.Write(zipx.NewLocal(e.old, crc, csize, usize, flags))
	return at, err
}

// end adds the entry's central record.
func (e *entryOut) end(at int64, crc uint32, csize, usize uint64, flags uint16) {
	e.w.zw.Central(e.i, e.w.recs[e.i].WithValues(crc, csize, usize, flags, at))
}

// writeBytes writes data (RECORD) as the entry, compressed with the
// entry's method (deflate or store).
func (e *entryOut) writeBytes(zf *zip.File, data []byte) error {
	body := data
	if zf.Method == zip.Deflate {
		var b bytes.Buffer
		fw, _ := flate.NewWriter(&b, flate.DefaultCompression)
		fw.Write(data)
		fw.Close()
		body = b.Bytes()
	}
	crc := crc32.ChecksumIEEE(data)
	flags := e.w.recs[e.i].Flags() &^ dataDescriptorFlag
	at, err := e.begin(crc, uint64(len(body)), uint64(len(data)), flags)
	if err != nil {
		return err
	}
	if _, err := e.w.zw.Write(body); err != nil {
		return err
	}
	e.end(at, crc, uint64(len(body)), uint64(len(data)), flags)
	return nil
}

const dataDescriptorFlag = 0x8
