package wheel

import (
	"archive/zip"
	"bufio"
	"compress/flate"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/rocmdoctor/rocmdoctor/internal/inflate"
	"github.com/rocmdoctor/rocmdoctor/internal/mapfile"
	"github.com/rocmdoctor/rocmdoctor/internal/pflate"
	"github.com/rocmdoctor/rocmdoctor/internal/record"
	"github.com/rocmdoctor/rocmdoctor/internal/safefile"
	"github.com/rocmdoctor/rocmdoctor/internal/zipx"
)

// changes are the paths p rewrites and the ones it drops.
func (p *Plan) changes() (changed, dropped map[string]bool) {
	changed, dropped = map[string]bool{}, map[string]bool{}
	for _, fp := range p.Files {
		if len(fp.Edits) > 0 {
			changed[fp.Path] = true
		}
	}
	for _, r := range p.Drop {
		dropped[r] = true
	}
	return changed, dropped
}

// writeFiles patches a directory or installed distribution: changed files
// are replaced atomically, dropped ones removed, then RECORD rewritten.
func writeFiles(d *dist, p *Plan) error {
	changed, dropped := p.changes()
	// RECORD lines of the replaced files, hashed as they are copied.
	lines := map[string]string{}
	top := d.source("")
	for rel := range changed {
		dst := d.source(rel)
		// A package directory that is a symbolic link (pip install -e,
		// a shared store) is written through, and said so: the file
		// rewritten lies outside the distribution's directory.
		if real, err := filepath.EvalSymlinks(dst); err == nil {
			if base, err := filepath.EvalSymlinks(top); err == nil && !strings.HasPrefix(real, base+string(filepath.Separator)) {
				p.Notes = append(p.Notes, fmt.Sprintf("%s is %s, outside %s (a symbolic link leads there): rewritten there", dst, real, top))
			}
		}
		sum, n, err := replaceFile(filepath.Join(d.root, filepath.FromSlash(rel)), dst)
		if err != nil {
			return err
		}
		lines[rel] = record.Line(rel, sum, n)
	}
	for rel := range dropped {
		if err := os.Remove(d.source(rel)); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	if d.record == "" {
		p.Notes = append(p.Notes, "no .dist-info/RECORD: nothing to update")
		return nil
	}
	recPath := d.source(d.record)
	recs, err := readRecord(recPath)
	if err != nil {
		return err
	}
	var b strings.Builder
	for _, r := range recs {
		switch {
		case dropped[r.Path]:
			continue
		case r.Path == d.record:
			b.WriteString(record.Line(r.Path, "", 0) + "\n")
		case changed[r.Path]:
			b.WriteString(lines[r.Path] + "\n")
		case d.checks[r.Path] != nil:
			// A library left as it is: the line comes from the file.
			dg := d.checks[r.Path]
			<-dg.done
			if dg.err != nil {
				return d.fileErr(r.Path, dg.err)
			}
			line := record.Line(r.Path, dg.sum, dg.size)
			if line != record.Line(r.Path, r.Hash, atoi(r.Size)) {
				p.Notes = append(p.Notes, staleLine(r.Path, r))
			}
			b.WriteString(line + "\n")
		default:
			b.WriteString(record.Line(r.Path, r.Hash, atoi(r.Size)) + "\n")
		}
	}
	return safefile.WriteFile(recPath, []byte(b.String()), 0o644)
}

// staleLine is the plan's note for an entry whose RECORD line r did not
// match it and was written anew.
func staleLine(name string, r record.Entry) string {
	return fmt.Sprintf("RECORD's line for %s (%s, %s bytes) did not match it: written from the file (it was changed after RECORD was made; installers refuse such a line)", name, r.Hash, r.Size)
}

func atoi(s string) int64 {
	var n int64
	fmt.Sscanf(s, "%d", &n)
	return n
}

// replaceFile puts a copy of src in place of dst (its owner, group,
// extended attributes and mode kept; a symbolic link written through),
// through a temporary file, fsync and rename, and returns the copy's
// RECORD digest and size, computed as it is written.
func replaceFile(src, dst string) (string, int64, error) {
	tg, err := safefile.Resolve(dst)
	if err != nil {
		return "", 0, err
	}
	if tg.Kind != safefile.Regular {
		return "", 0, fmt.Errorf("%s: not a regular file: not replaced", dst)
	}
	in, err := os.Open(src)
	if err != nil {
		return "", 0, err
	}
	defer in.Close()
	tmp, err := safefile.CreateTemp(filepath.Dir(tg.Real), filepath.Base(tg.Real))
	if err != nil {
		return "", 0, err
	}
	sum, n, err := hashStream(io.TeeReader(in, tmp))
	if err == nil {
		err = tmp.CopyMeta(tg.Real, tg.Info)
	}
	if err != nil {
		tmp.Discard()
		return "", 0, err
	}
	if err := tmp.Commit(tg.Real); err != nil {
		return "", 0, err
	}
	return sum, n, nil
}

// hashStream is the RECORD digest and size of everything r yields, read
// in one pass without holding it.
func hashStream(r io.Reader) (string, int64, error) {
	sum := sha256.New()
	n, err := io.Copy(sum, r)
	if err != nil {
		return "", 0, err
	}
	return record.Digest(sum.Sum(nil)), n, nil
}

// writeChanged streams a rewritten file into the archive as entry e,
// compressed with the entry's method (deflate at the fastest level, on
// every core), under the original entry's name, times and attributes, and
// returns its RECORD line; the digest was started when the file was
// patched. Its CRC-32 and sizes follow the data in a data descriptor.
func writeChanged(e *entryOut, zf *zip.File, path string, dg *fileDigest) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	flags := e.w.recs[e.i].Flags() | dataDescriptorFlag
	at, err := e.begin(0, 0, 0, flags)
	if err != nil {
		return "", err
	}
	cw := &countingWriter{w: e.w.zw}
	var dst io.Writer = cw
	var fw io.WriteCloser
	if zf.Method == zip.Deflate {
		if fw, err = pflate.NewWriter(cw, flate.BestSpeed); err != nil {
			return "", err
		}
		dst = fw
	}
	crc := crc32.NewIEEE()
	n, err := io.Copy(io.MultiWriter(dst, crc), bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	if fw != nil {
		if err := fw.Close(); err != nil {
			return "", err
		}
	}
	sum := crc.Sum32()
	if _, err := e.w.zw.Write(zipx.Descriptor(sum, uint64(cw.n), uint64(n))); err != nil {
		return "", err
	}
	e.end(at, sum, uint64(cw.n), uint64(n), flags)
	if !dg.checked {
		return dg.line(zf.Name, n)
	}
	// A digest taken before the file was final needs its CRC-32.
	return dg.lineChecked(zf.Name, n, sum)
}

// countingWriter counts what passes through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// writeSpliced writes a changed library deflated the way it was, reusing
// every block of the original member whose bytes (and the 32 KiB before
// them) the edits left alone and compressing only the rest: for a 100 MB
// library with a new RUNPATH that is a few hundred KB instead of all of it.
// The new file is read here once, for the block comparison, which gives
// its CRC-32 as well, while its RECORD digest, started when it was
// patched, is computed on another core. ErrNotWorthSplicing (also for
// members that were stored or had no index) sends the caller to
// writeChanged.
func writeSpliced(e *entryOut, zf *zip.File, raw *os.File, idx *inflate.Index, edited [][2]int64, path string, dg *fileDigest) (line string, sp *inflate.Spliced, err error) {
	if idx == nil || zf.Method != zip.Deflate {
		return "", nil, inflate.ErrNotWorthSplicing
	}
	f, err := os.Open(path)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	// The new data: which blocks differ from the original's, and its
	// CRC-32. A scratch copy with a hole (predict.go) is read only where
	// the edits wrote, the blocks they touched, and never in the hole.
	var newData io.ReaderAt = f
	var n int64
	var changed []bool
	var crc uint32
	if dg.sparse {
		st, err := f.Stat()
		if err != nil {
			return "", nil, err
		}
		n, changed = st.Size(), idx.Touched(edited)
		newData = holeGuard{f, dg.hole}
		if crc, err = idx.CRCWith(changed, newData, n); err != nil {
			return "", nil, err
		}
	} else {
		changes := idx.NewChanges()
		n, err = scanFile(f, func(p []byte) error {
			_, err := changes.Write(p)
			return err
		})
		if err != nil {
			return "", nil, fmt.Errorf("%s: %w", path, err)
		}
		for _, r := range edited {
			changes.Mark(r[0], r[1])
		}
		changed, crc = changes.Changed(), changes.CRC()
	}
	off, err := zipx.DataOffset(zf)
	if err != nil {
		return "", nil, err
	}
	orig := io.NewSectionReader(raw, off, int64(zf.CompressedSize64))
	sp, err = inflate.PlanSplice(orig, idx, newData, n, changed, flate.BestSpeed, n/4)
	if err != nil {
		return "", nil, err
	}
	flags := e.w.recs[e.i].Flags() &^ dataDescriptorFlag
	at, err := e.begin(crc, uint64(sp.Size()), uint64(n), flags)
	if err != nil {
		return "", nil, err
	}
	if _, err := sp.WriteTo(e.w.zw); err != nil {
		return "", nil, err
	}
	e.end(at, crc, uint64(sp.Size()), uint64(n), flags)
	line, err = dg.lineChecked(zf.Name, n, crc)
	return line, sp, err
}

// fileDigest computes the RECORD digest of a file on its own goroutine,
// from the moment the file is final: the rest of the relink (verifying,
// comparing blocks, writing the archive) goes on meanwhile.
type fileDigest struct {
	path string
	done chan struct{}
	stop atomic.Bool
	sum  string
	size int64
	err  error
	// checked: a digest taken before the file was final (predict.go),
	// which stands only if crc, the CRC-32 of what it hashed, is the
	// file's. sparse: the file was left with a hole (never written
	// there), so it cannot be hashed again.
	checked, sparse bool
	crc             uint32
	hole            [2]int64
}

// errHole: something was about to read the hole of a scratch copy
// (predict.go); the member is inflated again in full.
var errHole = errors.New("read in the unwritten part of a scratch copy")

// holeGuard reads a scratch copy with a hole, refusing reads in it.
type holeGuard struct {
	f    io.ReaderAt
	hole [2]int64
}

func (g holeGuard) ReadAt(b []byte, off int64) (int, error) {
	if off < g.hole[1] && off+int64(len(b)) > g.hole[0] {
		return 0, errHole
	}
	return g.f.ReadAt(b, off)
}

var errDigestStopped = errors.New("digest stopped")

func startDigest(path string) *fileDigest {
	dg := &fileDigest{path: path, done: make(chan struct{})}
	go func() {
		defer close(dg.done)
		f, err := os.Open(path)
		if err != nil {
			dg.err = err
			return
		}
		defer f.Close()
		s := sha256.New()
		dg.size, dg.err = scanFile(f, func(p []byte) error {
			if dg.stop.Load() {
				return errDigestStopped
			}
			s.Write(p)
			return nil
		})
		if dg.err == nil {
			dg.sum = record.Digest(s.Sum(nil))
		}
	}()
	return dg
}

// line waits for the digest and makes the RECORD line of name. The file
// was read twice, here and by the writer: both must have seen n bytes.
func (dg *fileDigest) line(name string, n int64) (string, error) {
	<-dg.done
	if dg.err != nil {
		return "", fmt.Errorf("%s: %w", dg.path, dg.err)
	}
	if dg.size != n {
		return "", fmt.Errorf("%s: changed while it was written (%d bytes hashed, %d written)", dg.path, dg.size, n)
	}
	return record.Line(name, dg.sum, n), nil
}

// lineChecked is line for a file whose CRC-32 the caller computed as it
// wrote it: a digest taken before the file was final is used only if it
// hashed bytes with that CRC-32 and that size, and otherwise the file is
// hashed again now.
func (dg *fileDigest) lineChecked(name string, n int64, crc uint32) (string, error) {
	if !dg.checked {
		return dg.line(name, n)
	}
	<-dg.done
	if dg.err != nil || dg.size != n || dg.crc != crc {
		if dg.sparse {
			return "", fmt.Errorf("%s: internal error: the digest taken while it was inflated does not match the file (%d bytes with CRC-32 %08x hashed, %d with %08x written; a bug in rocmdoctor)", dg.path, dg.size, dg.crc, n, crc)
		}
		return startDigest(dg.path).line(name, n)
	}
	predictionsUsed.Add(1)
	return record.Line(name, dg.sum, n), nil
}

// cancel stops the digest and waits for its goroutine.
func (dg *fileDigest) cancel() {
	dg.stop.Store(true)
	<-dg.done
}

func sameFile(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// scanWindow is how much of a file scanFile maps at a time (a multiple
// of the page size and of 1 MiB).
const scanWindow = 4 << 20

// scanFile hands fn the contents of f, just opened, 1 MiB at a time, and
// returns how many bytes it handed. A regular file is mapped, a window at
// a time, and handed from the mapping: the relinked libraries are read
// whole two or three times (digest, block comparison), and a mapping
// saves read's copy; the window keeps what is mapped (and counted as the
// process's resident memory) small. It is only for the relink's private
// scratch files, which nothing truncates while they are read. An error
// from fn stops the scan and is returned.
func scanFile(f *os.File, fn func([]byte) error) (int64, error) {
	return scanFileIn(f, scanWindow, fn)
}

// scanFileIn is scanFile with mappings of window bytes.
func scanFileIn(f *os.File, window int64, fn func([]byte) error) (int64, error) {
	const step = 1 << 20
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if st.Mode().IsRegular() {
		if n, mapped, err := scanMapped(f, st.Size(), window, step, fn); mapped {
			return n, err
		}
	}
	buf := make([]byte, step)
	var n int64
	for {
		k, err := io.ReadFull(f, buf)
		if k > 0 {
			if err := fn(buf[:k]); err != nil {
				return n, err
			}
			n += int64(k)
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// scanMapped is scanFile through mappings of window bytes; mapped is
// false when the first mapping could not be made (nothing was handed).
func scanMapped(f *os.File, size, window int64, step int, fn func([]byte) error) (n int64, mapped bool, err error) {
	for at := int64(0); at < size; at += window {
		data, err := mapfile.MapRange(f.Fd(), at, min(size-at, window))
		if err != nil {
			return at, at > 0, err
		}
		for off := 0; off < len(data); off += step {
			if err := fn(data[off:min(len(data), off+step)]); err != nil {
				mapfile.Unmap(data)
				return at + int64(off), true, err
			}
		}
		mapfile.Unmap(data)
	}
	return size, size > 0, nil
}
