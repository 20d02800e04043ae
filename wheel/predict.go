package wheel

import (
	"archive/zip"
	"cmp"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/internal/inflate"
	"github.com/rocmdoctor/rocmdoctor/internal/record"
	"github.com/rocmdoctor/rocmdoctor/internal/zipx"
	"github.com/rocmdoctor/rocmdoctor/patchelf"
)

// Relinking a wheel whose one large library changes is, step by step:
// inflate the library into a scratch file, plan and make the edits, hash
// the result for RECORD. The hash cannot begin before the edits are known
// (they change the program headers at the start of the file), and the
// edits cannot be known before the dynamic section and string table are,
// which lie at the end. So the hash of a large library followed its
// inflation, and writing the inflated library into the page cache kept
// the second core busy meanwhile (docs/performance.md has the figures).
//
// A prediction takes both off the critical path. While the library is
// inflated, the end of its deflate stream is decoded on its own
// (inflate.Tail, a few tens of ms) and the wheel's edits are planned with
// the library read from what is inflated so far and that end (the other
// ELF files of the wheel are small and staged by then). From then on the
// inflating goroutine hashes the library through the predicted edits as
// it writes it, and it no longer writes the bulk of the code and data (the
// hole: the inside of the longest run of such sections, which nothing in a
// relink reads; the scratch file is sparse there).
//
// Nothing of the guess is trusted. Once the library is inflated, the
// relink plans and edits it as always; the digest is used only if the
// real edit writes exactly the bytes the predicted one did, and the new
// data's CRC-32, made from the decoder's own block CRCs and the changed
// blocks read back from the edited file, must be the CRC-32 of what was
// hashed (a mismatch there is a bug, and the relink fails without writing).
// A prediction that is not confirmed, or a splice that would read the
// hole, inflates the library again in full and goes the usual way.

// Counters for tests: digests taken from predictions, scratch copies left
// with a hole, and holes filled again.
var predictionsUsed, holesLeft, holesFilled atomic.Int64

// bigMember is the member of a wheel whose edits are worth predicting: the
// largest deflated one, from predictMin compressed bytes; nil when there is
// none or no second core to predict on.
func bigMember(elfs []*zip.File, procs int, predictMin int64) *zip.File {
	if procs < 2 {
		return nil
	}
	var big *zip.File
	for _, zf := range elfs {
		if zf.Method == zip.Deflate && int64(zf.CompressedSize64) >= predictMin && (big == nil || zf.CompressedSize64 > big.CompressedSize64) {
			big = zf
		}
	}
	return big
}

// prediction follows one member of a wheel while it is inflated.
type prediction struct {
	rel  string
	zf   *zip.File
	path string // its scratch copy
	size int64  // its size, as the archive declares it
	// others is closed when every other ELF member is staged.
	others chan struct{}
	// started is set when run was begun (not for a dry run).
	started bool
	stop    atomic.Bool
	quit    chan struct{} // closed when stop is set
	done    chan struct{} // run has returned
	// ready is closed when run has published a plan or given up.
	ready chan struct{}

	// Written by run before it publishes plan, read by the writer after.
	hole   [2]int64 // [from, to) of the scratch copy not written; to 0: none
	digest *fileDigest

	// The writer's side: what it wrote, and the digest through the plan.
	mu      sync.Mutex
	cond    *sync.Cond
	written int64
	ended   bool
	plan    atomic.Pointer[patchelf.Plan] // published
	file    *os.File
	h       hash.Hash
	c       hash.Hash32
	hashed  int64
	buf     []byte
	holed   bool // the copy has a hole now
	tune    *tuning
}

func newPrediction(zf *zip.File, path string, tune *tuning) *prediction {
	p := &prediction{rel: zf.Name, zf: zf, path: path, size: int64(zf.UncompressedSize64), tune: tune,
		others: make(chan struct{}), quit: make(chan struct{}), done: make(chan struct{}), ready: make(chan struct{})}
	p.cond = sync.NewCond(&p.mu)
	return p
}

// start begins predicting (a goroutine) for a relink that writes.
func (p *prediction) start(ctx context.Context, d *dist, targets map[string][]targetLib, o Options, dirs []string) {
	p.started = true
	go func() {
		defer close(p.done)
		defer close(p.ready)
		p.run(ctx, d, targets, o, dirs)
	}()
}

// cancel stops the prediction and waits for it.
func (p *prediction) cancel() {
	if p == nil || !p.started {
		return
	}
	if !p.stop.Swap(true) {
		close(p.quit)
	}
	p.wake()
	<-p.done
}

// confirmed is the RECORD digest of the scratch copy after the edits real
// made (Relink, once the member is inflated), when p predicted exactly
// those and hashed the whole member through them; nil otherwise.
func (p *prediction) confirmed(real *patchelf.Plan) *fileDigest {
	if p == nil || !p.started {
		return nil
	}
	<-p.ready
	pl := p.plan.Load()
	if pl == nil {
		return nil
	}
	if p.tune.tamperPlan != nil {
		p.tune.tamperPlan(pl)
	}
	if !pl.SameWrites(real) {
		return nil
	}
	if <-p.digest.done; p.digest.err != nil {
		return nil
	}
	return p.digest
}

// refill inflates the member again in full, when its scratch copy has a
// hole and the prediction did not stand, makes edits to it (again), and
// records what they wrote and a digest of the result.
func (d *dist) refill(p *prediction, edits []patchelf.Edit) error {
	holesFilled.Add(1)
	// The staging's zip reader is closed: the member is found again, as
	// stageWheel took it (the last entry of its name).
	raw, zr, err := zipx.OpenFile(d.input)
	if err != nil {
		return err
	}
	defer raw.Close()
	var zf *zip.File
	for _, f := range zr.File {
		if f.Name == p.rel {
			zf = f
		}
	}
	if zf == nil {
		return fmt.Errorf("%s is no longer in %s", p.rel, d.input)
	}
	idx, err := extract(zf, raw, p.path, nil)
	if err != nil {
		return err
	}
	d.index[p.rel], p.holed = idx, false
	pp, err := patchelf.EditFile(p.path, edits, patchelf.Options{}, patchelf.WriteOptions{InPlace: true, NoSync: true})
	if err != nil {
		return err
	}
	d.edited[p.rel], d.digests[p.rel] = pp.WrittenRanges(), startDigest(p.path)
	return nil
}

func (p *prediction) run(ctx context.Context, d *dist, targets map[string][]targetLib, o Options, dirs []string) {
	// The scratch copy exists once something is written to it.
	if have, _ := p.wait(1); have == 0 {
		return
	}
	staged, err := os.Open(p.path)
	if err != nil {
		return
	}
	defer staged.Close()
	head := &growingFile{f: staged, p: p}
	from, ok := tailFrom(head, p.size, int64(p.zf.CompressedSize64))
	if !ok {
		return
	}
	end, err := p.tail(d.input, from)
	if err != nil {
		return
	}
	defer end.Release()
	if end.Len() > p.size {
		return
	}
	view := &tailView{head: head, tail: end, at: p.size - end.Len()}
	select {
	case <-p.others:
	case <-p.quit:
		return
	case <-ctx.Done():
		return
	}
	// The plan of the whole wheel, with this member read through view:
	// its edits are what the relink will make if the guess is right.
	pd := *d
	pd.preview = func() (*elfx.File, error) { return elfx.NewFileSize(view, p.size, p.path) }
	pp := &Plan{TargetDirs: dirs}
	if err := plan(ctx, &pd, targets, o, pp); err != nil {
		return
	}
	var edits []patchelf.Edit
	for _, fp := range pp.Files {
		if fp.Path == p.rel {
			edits = fp.Edits
		}
	}
	if len(edits) == 0 {
		return
	}
	f, err := pd.preview()
	if err != nil {
		return
	}
	defer f.Close()
	pl, err := patchelf.PlanFile(f, edits, patchelf.Options{})
	// A relink's edits add a segment of a few MB at most; anything else
	// is not worth hashing through.
	if err != nil || !pl.Changed || pl.SizeAfter(p.size) > p.size+p.size/4+(16<<20) {
		return
	}
	p.hole = holeIn(f, pl, p.tune)
	if p.tune.tamperHole != nil {
		p.hole = p.tune.tamperHole(p.hole)
	}
	p.digest = &fileDigest{path: p.path, done: make(chan struct{}), checked: true}
	p.mu.Lock()
	if !p.ended {
		p.plan.Store(pl)
	}
	p.mu.Unlock()
}

// shtX86_64Unwind is .eh_frame's type on x86-64 (SHT_LOPROC + 1).
const shtX86_64Unwind = elf.SectionType(0x70000001)

// holeIn is the part of f that a relink need not write: the inside of the
// longest run of sections that hold code and data (machine code, read-only
// data, unwind tables, initialised data), holeMargin from either end and
// outside everything pl writes; [0, 0) when that leaves less than holeMin.
// Nothing in a relink reads those bytes: planning reads the headers, the
// dynamic section and its string table, patchelf the dynamic-linking
// sections it edits or moves, verification the symbol and version tables
// and the hash tables, the splice the deflate blocks around the edits
// (checked against the hole as it reads them).
func holeIn(f *elfx.File, pl *patchelf.Plan, tune *tuning) [2]int64 {
	holeMin, holeMargin := tune.holeMin, tune.holeMargin
	bulk := func(s *elf.Section) bool {
		switch s.Type {
		case elf.SHT_PROGBITS, elf.SHT_NOBITS, elf.SHT_INIT_ARRAY, elf.SHT_FINI_ARRAY, elf.SHT_PREINIT_ARRAY, shtX86_64Unwind:
		default:
			return false
		}
		if s.Flags&elf.SHF_ALLOC == 0 || s.Flags&elf.SHF_COMPRESSED != 0 {
			return false
		}
		for _, ph := range f.ELF().Progs {
			switch ph.Type {
			case elf.PT_INTERP, elf.PT_DYNAMIC, elf.PT_NOTE, elf.PT_PHDR:
				if ph.Off < s.Offset+s.FileSize && s.Offset < ph.Off+ph.Filesz {
					return false
				}
			}
		}
		return true
	}
	var secs []*elf.Section
	for _, s := range f.ELF().Sections {
		if s.Type != elf.SHT_NULL && (s.Type == elf.SHT_NOBITS || s.FileSize > 0) {
			secs = append(secs, s)
		}
	}
	slices.SortFunc(secs, func(a, b *elf.Section) int { return cmp.Compare(a.Offset, b.Offset) })
	var best, run [2]int64
	inRun := false
	for _, s := range secs {
		if s.Type == elf.SHT_NOBITS {
			continue // no bytes in the file; what it overlaps is judged by the others
		}
		if !bulk(s) {
			inRun = false
			continue
		}
		from, to := int64(s.Offset), int64(s.Offset+s.FileSize)
		if !inRun {
			run, inRun = [2]int64{from, to}, true
		} else {
			run[1] = max(run[1], to)
		}
		if h := [2]int64{run[0] + holeMargin, run[1] - holeMargin}; h[1]-h[0] > best[1]-best[0] && h[1] <= f.Size && !pl.Writes(h[0], h[1]) {
			best = h
		}
	}
	if best[1]-best[0] < holeMin {
		return [2]int64{}
	}
	return best
}

// tail decodes the end of the member on its own.
func (p *prediction) tail(input string, from int64) (*inflate.End, error) {
	raw, err := os.Open(input)
	if err != nil {
		return nil, err
	}
	defer raw.Close()
	off, err := zipx.DataOffset(p.zf)
	if err != nil {
		return nil, err
	}
	n := int64(p.zf.CompressedSize64)
	return inflate.Tail(io.NewSectionReader(raw, off, n), n, from, &p.stop)
}

// tailFrom reads the ELF header and program headers of the library being
// inflated and says where in its compressed stream to begin decoding the
// end on its own: before the dynamic section and the section headers, by
// their share of the file less a margin (deflate does not compress
// evenly). False when that is not worth it (the dynamic section is in the
// first half) or the headers are not ELF's.
func tailFrom(head io.ReaderAt, size, n int64) (int64, bool) {
	var eh [64]byte
	if _, err := head.ReadAt(eh[:], 0); err != nil || string(eh[:4]) != "\x7fELF" || eh[5] != 1 {
		return 0, false
	}
	le := binary.LittleEndian
	var phoff, shoff int64
	var phentsize, phnum, want int
	switch eh[4] {
	case 1:
		phoff, shoff = int64(le.Uint32(eh[28:])), int64(le.Uint32(eh[32:]))
		phentsize, phnum, want = int(le.Uint16(eh[42:])), int(le.Uint16(eh[44:])), 32
	case 2:
		phoff, shoff = int64(le.Uint64(eh[32:])), int64(le.Uint64(eh[40:]))
		phentsize, phnum, want = int(le.Uint16(eh[54:])), int(le.Uint16(eh[56:])), 56
	default:
		return 0, false
	}
	if phentsize != want || phnum == 0 || phnum > 1024 || phoff <= 0 || phoff >= size {
		return 0, false
	}
	ph := make([]byte, phentsize*phnum)
	if _, err := head.ReadAt(ph, phoff); err != nil {
		return 0, false
	}
	first := size
	if shoff > 0 && shoff < size {
		first = shoff
	}
	for i := range phnum {
		e := ph[i*phentsize:]
		if le.Uint32(e) != uint32(elf.PT_DYNAMIC) {
			continue
		}
		off := int64(le.Uint32(e[4:]))
		if eh[4] == 2 {
			off = int64(le.Uint64(e[8:]))
		}
		first = min(first, off)
	}
	if first < size/2 || first >= size {
		return 0, false
	}
	from := int64(float64(n)*float64(first)/float64(size)) - n/64 - 64<<10
	return max(0, from), true
}

// tailView is the library being inflated, its end known in advance.
type tailView struct {
	head *growingFile
	tail *inflate.End
	at   int64 // where tail begins in the file
}

func (v *tailView) ReadAt(b []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("negative offset")
	}
	n := 0
	if off < v.at {
		k, err := v.head.ReadAt(b[:min(int64(len(b)), v.at-off)], off)
		n += k
		if err != nil {
			return n, err
		}
	}
	if n == len(b) {
		return n, nil
	}
	k, err := v.tail.ReadAt(b[n:], off+int64(n)-v.at)
	return n + k, err
}

// growingFile reads the scratch copy while it is written: a read waits
// until the writer has gone past it (or stopped).
type growingFile struct {
	f *os.File
	p *prediction
}

var errPredictionStopped = errors.New("prediction stopped")

func (g *growingFile) ReadAt(b []byte, off int64) (int, error) {
	have, ended := g.p.wait(off + int64(len(b)))
	switch {
	case g.p.stop.Load():
		return 0, errPredictionStopped
	case have >= off+int64(len(b)):
		return g.f.ReadAt(b, off)
	case !ended:
		return 0, errPredictionStopped
	case have <= off:
		return 0, io.EOF
	}
	k, err := g.f.ReadAt(b[:have-off], off)
	if err == nil {
		err = io.EOF
	}
	return k, err
}

// wait waits until n bytes are written, writing ended or the prediction
// stopped, and returns how many are written and whether writing ended.
func (p *prediction) wait(n int64) (int64, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.written < n && !p.ended && !p.stop.Load() {
		p.cond.Wait()
	}
	return p.written, p.ended
}

// wake makes waiting readers look at the stop flag.
func (p *prediction) wake() {
	p.mu.Lock()
	p.cond.Broadcast()
	p.mu.Unlock()
}

// writer is where the decoder writes the member: f, the scratch copy.
func (p *prediction) writer(f *os.File) io.Writer {
	p.file = f
	return predictionWriter{p}
}

type predictionWriter struct{ p *prediction }

// Write, on the decoder's writing goroutine: the bytes go to the scratch
// copy (but for the hole, once there is a plan) and, through the plan,
// into the digest.
func (w predictionWriter) Write(b []byte) (int, error) {
	p := w.p
	off, end := p.written, p.written+int64(len(b)) // only this goroutine changes written
	if hold := p.tune.holdStaging; hold > 0 && off > 0 {
		select {
		case <-p.ready:
		case <-time.After(hold):
		}
	}
	skip := [2]int64{end, end} // the part of b not written
	if pl := p.plan.Load(); pl != nil {
		if p.digest.err == nil {
			p.hash(pl, off, b)
		}
		if h := p.hole; h[1] > 0 {
			skip = [2]int64{max(off, h[0]), min(end, h[1])}
		}
	}
	if skip[0] >= skip[1] {
		skip = [2]int64{end, end}
	} else {
		p.holed = true
	}
	for _, r := range [][2]int64{{off, skip[0]}, {skip[1], end}} {
		if r[0] < r[1] {
			if _, err := p.file.WriteAt(b[r[0]-off:r[1]-off], r[0]); err != nil {
				return 0, err
			}
		}
	}
	p.mu.Lock()
	p.written = end
	p.cond.Broadcast()
	p.mu.Unlock()
	return len(b), nil
}

// hash adds b, at off in the member, to the digest as the plan makes it.
// The first call catches up with what was written before the plan was
// published, reading it back (it was written whole).
func (p *prediction) hash(pl *patchelf.Plan, off int64, b []byte) {
	if p.h == nil {
		p.h, p.c, p.buf = sha256.New(), crc32.NewIEEE(), make([]byte, 1<<20)
		for p.hashed < off {
			k := min(int64(len(p.buf)), off-p.hashed)
			if _, err := p.file.ReadAt(p.buf[:k], p.hashed); err != nil {
				p.digest.err = err
				return
			}
			p.add(pl, p.hashed, p.buf[:k])
		}
	}
	if pl.Writes(off, off+int64(len(b))) || p.tune.tamperHashed != nil {
		// Edited here: through a copy (b is the decoder's buffer).
		for len(b) > 0 {
			k := min(len(b), len(p.buf))
			p.add(pl, off, append(p.buf[:0], b[:k]...))
			off, b = off+int64(k), b[k:]
		}
		return
	}
	p.add(pl, off, b)
}

// add hashes b (its own bytes, or p.buf) at off through the plan.
func (p *prediction) add(pl *patchelf.Plan, off int64, b []byte) {
	pl.Overlay(b, off)
	if p.tune.tamperHashed != nil {
		p.tune.tamperHashed(off, b)
	}
	p.h.Write(b)
	p.c.Write(b)
	p.hashed = off + int64(len(b))
}

// staged is called when the member's writing is over, whatever happened:
// the digest takes the bytes the plan appends past the member's end and
// is done.
func (p *prediction) staged() {
	p.mu.Lock()
	p.ended = true
	p.cond.Broadcast()
	p.mu.Unlock()
	pl := p.plan.Load()
	if pl == nil {
		return
	}
	dg := p.digest
	defer close(dg.done)
	if p.holed {
		holesLeft.Add(1)
	}
	dg.sparse, dg.hole = p.holed, p.hole
	switch {
	case dg.err != nil:
		return
	case p.h == nil || p.hashed != p.size:
		dg.err = errors.New("the prediction did not see the whole member")
		return
	}
	for size := pl.SizeAfter(p.size); p.hashed < size; {
		k := min(int64(len(p.buf)), size-p.hashed)
		b := p.buf[:k]
		clear(b)
		p.add(pl, p.hashed, b)
	}
	dg.sum, dg.size, dg.crc = record.Digest(p.h.Sum(nil)), p.hashed, p.c.Sum32()
}
